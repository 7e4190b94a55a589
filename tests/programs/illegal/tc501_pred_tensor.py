# pred is a scalar expression, not a tensor view.
# expect: TC501 line 12

from tilecheck.program import T


@T.function
def tensor_pred(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    m = T.alloc_local((4, 1), "uint32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=m)
