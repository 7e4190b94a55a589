# div takes three operands (d, a, b); the denominator is missing.
# expect: TC004 line 11

from tilecheck.program import T


@T.function
def two_operands(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r)
