# Legal: at warp scope a view may permute and gap each lane's own registers, as long as lane l
# always addresses row l of the 'laneid' axis.
from tilecheck.program import T


@T.function
def warp_permuted(A: T.Tensor((32, 4), "float32"), Out: T.Tensor((32, 4), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    r = T.alloc_local((32, 2, 2, 1), "float32", layout=T.TileLayout("laneid", "m", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], r.reshape(32, 1, 4), A.reshape(32, 1, 4), scope="warp")
    T.cuda.tile.apply(T.ptx["sub.rn.f32"], r.permute(0, 2, 1, 3), r, r[:, ::-1], scope="warp")
    T.cuda.tile.apply(T.ptx["sqrt.approx.ftz.f32"], r[:, 1], r[:, 0], scope="warp")
    T.cuda.tile.apply(T.ptx["st.global.v4.b32"], Out.reshape(32, 1, 4), r.reshape(32, 1, 4), scope="warp")
