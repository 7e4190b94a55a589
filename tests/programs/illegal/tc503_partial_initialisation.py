# Only the first two registers were loaded; preserving all four keeps two undefined ones.
# expect: TC503 line 11 operand 0

from tilecheck.program import T


@T.function
def half_loaded(A: T.Tensor((4, 1), "float32"), n: T.int32):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r[0:2], A[0:2])
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=T.thread_id() < n, preserve_dst=True)
