# Legal: pred forms: a bool comparison of thread indices, a uint32 parameter, an int32 expression,
# a Python bool; preserve_dst after a load, and again after a preserving write (state is kept).
from tilecheck.program import T


@T.function
def predicates(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32"), flag: T.uint32, n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=(T.thread_id() % 2 == 0) & (T.warp_id() < n),
                      preserve_dst=True)
    T.cuda.tile.apply(T.ptx["rcp.rn.f32"], r, r, pred=flag, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["rcp.rn.f32"], r, r, pred=n - T.lane_id(), preserve_dst=True)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r, r, 1.0, pred=True)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r, r, 1.0, pred=1, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
