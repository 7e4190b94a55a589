# preserve_dst=True on a destination nothing has written yet.
# expect: TC503 line 12 operand 0

from tilecheck.program import T


@T.function
def preserve_fresh(A: T.Tensor((4, 1), "float32"), n: T.int32):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r, pred=T.thread_id() < n, preserve_dst=True)
