# Interaction: a constant numerator takes no part in shape agreement and stays in place;
# the denominator's repeats are still compared with the destination's.
# expect: TC204 line 12 operand 2 axis 0

from tilecheck.program import T


@T.function
def constant_numerator(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, T.float32(1), r[0:2])
