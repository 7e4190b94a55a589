# pred is a bool/uint32/int32 expression; a float32 parameter is none of them.
# expect: TC501 line 11

from tilecheck.program import T


@T.function
def float_pred(A: T.Tensor((4, 1), "float32"), x: T.float32):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=x)
