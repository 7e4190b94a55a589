# div.rn.f32 operands are float32 or a 32-bit container; the denominator is float64.
# expect: TC401 line 12 operand 2

from tilecheck.program import T


@T.function
def wide_denominator(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    d = T.alloc_local((4, 1), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, d)
