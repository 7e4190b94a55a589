# preserve_dst=True keeps the destination where pred is false: it requires pred.
# expect: TC502 line 11

from tilecheck.program import T


@T.function
def preserve_no_pred(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, preserve_dst=True)
