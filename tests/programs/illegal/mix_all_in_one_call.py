# Interaction: one call breaking three conditions reports all three (repeat extent,
# operand dtype, pred type).
# expect: TC204 line 15 operand 2 axis 0
# expect: TC401 line 15 operand 2
# expect: TC501 line 15

from tilecheck.program import T


@T.function
def three_faults(A: T.Tensor((4, 1), "float32"), x: T.float32):
    r = T.alloc_local((4, 1), "float32")
    d = T.alloc_local((3, 1), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, d, pred=x)
