# div.rn.f64 needs a 64-bit constant; T.float32(4) is a 32-bit one.
# expect: TC401 line 11 operand 2

from tilecheck.program import T


@T.function
def narrow_constant(A: T.Tensor((4, 1), "float64")):
    r = T.alloc_local((4, 1), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.f64"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f64"], r, r, T.float32(4))
