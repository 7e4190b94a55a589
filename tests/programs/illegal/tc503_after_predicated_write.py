# Interaction: a predicated write without preserve_dst leaves inactive results undefined,
# so a later preserve_dst on that destination keeps undefined values.
# expect: TC503 line 14 operand 0

from tilecheck.program import T


@T.function
def undefined_after_pred(A: T.Tensor((4, 1), "float32"), n: T.int32):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r, pred=T.thread_id() < n)
    T.cuda.tile.apply(T.ptx["rcp.rn.f32"], s, r, pred=T.thread_id() < n, preserve_dst=True)
