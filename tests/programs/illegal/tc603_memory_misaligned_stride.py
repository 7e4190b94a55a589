# Rows 6 words apart: the second .v4 atom starts at element 6, not a multiple of 4.
# expect: TC603 line 10 operand 1 axis 0

from tilecheck.program import T


@T.function
def misaligned_rows(A: T.Tensor((2, 6), "float32")):
    r = T.alloc_local((2, 4), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r, A[:, 0:4])
