# Legal: cta scope with a 2-D block (32 x 4 = 4 warps): warp_in_cta = 4; strided repeat views and
# a reshape of a gapped view (split/merge only where elements are evenly spaced).
from tilecheck.program import T


@T.function
def cta_2d(A: T.Tensor((4, 32, 4), "float32"), Out: T.Tensor((4, 32, 2), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(2, 1), block=(32, 4)))
    r = T.alloc_local((4, 32, 4, 1), "float32", layout=T.TileLayout("warpid", "laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r.reshape(4, 32, 1, 4), A[:, :, None, :], scope="cta")
    T.cuda.tile.apply(T.ptx["div.rz.f32"], r[:, :, 0:4:2], r[:, :, 0:4:2], r[:, :, 1:4:2], scope="cta")
    T.cuda.tile.apply(T.ptx["st.global.v2.f32"], Out[:, :, None, :], r[:, :, 0:2].reshape(4, 32, 1, 2), scope="cta")
