# Rounding is a qualifier of the opcode, not an apply parameter.
# expect: TC006 line 11

from tilecheck.program import T


@T.function
def rounding_kwarg(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, rounding="rn")
