# Repeat shapes (2, 4) against (2, 3): the second repeat axis differs.
# expect: TC204 line 11 operand 3 axis 1

from tilecheck.program import T


@T.function
def second_axis(A: T.Tensor((2, 4, 1), "float32")):
    r = T.alloc_local((2, 4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["fma.rn.f32"], r, r, r, r[:, 1:4])
