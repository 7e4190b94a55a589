# Explicit strides (1, 1) over repeats (2, 2): coordinates (0, 1) and (1, 0) are the same register.
# expect: TC701 line 11 operand 0

from tilecheck.program import T


@T.function
def strided_overlap(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r.as_strided((2, 2, 1), (1, 1, 1)), r.reshape(2, 2, 1))
