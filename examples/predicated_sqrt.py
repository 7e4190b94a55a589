"""``pred`` and ``preserve_dst``: lanes below ``n`` take the square root, the others keep their value.

``r`` is initialised by the load, so ``preserve_dst=True`` may keep it where the predicate is
false (the emitter binds the destination read-write). The second call predicates on a constant
comparison of the thread index without preserving: inactive results are undefined there, which
is fine because nothing reads them afterwards.
"""

from tilecheck.program import T


@T.function
def predicated_sqrt(A: T.Tensor((32, 2), "float32"), Out: T.Tensor((32, 2), "float32"), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 2, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    s = T.alloc_local((32, 2, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], r.permute(0, 2, 1), A[:, None, :], scope="warp")
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, scope="warp", pred=T.lane_id() < n, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["st.global.v2.f32"], Out[:, None, :], r.permute(0, 2, 1), scope="warp")
    T.cuda.tile.apply(T.ptx["rcp.rn.f32"], s, r, scope="warp", pred=T.thread_id() >= 16)
