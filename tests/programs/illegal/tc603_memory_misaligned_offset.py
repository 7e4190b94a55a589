# A .v4.f32 access needs 16-byte alignment; starting at element 1 gives 4 bytes.
# expect: TC603 line 10 operand 1

from tilecheck.program import T


@T.function
def misaligned_start(A: T.Tensor((12,), "float32")):
    r = T.alloc_local((2, 4), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r, A[1:9].reshape(2, 4))
