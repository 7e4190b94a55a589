# A constant-true pred initialises its destination (the checker counts it as unconditional), so a
# later preserve_dst on it is legal; the emitted PTX guards both calls and must keep the value
# written by the first one for threads the second one leaves inactive.
from tilecheck.program import T


@T.function
def constant_pred(A: T.Tensor((32, 2), "float32"), Out: T.Tensor((32, 2), "float32"), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 2, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    s = T.alloc_local((32, 2, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], r.permute(0, 2, 1), A[:, None, :], scope="warp")
    T.cuda.tile.apply(T.ptx["add.rn.f32"], s, r, 1.0, scope="warp", pred=True)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r, scope="warp", pred=T.lane_id() < n, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["st.global.v2.f32"], Out[:, None, :], s.permute(0, 2, 1), scope="warp")
