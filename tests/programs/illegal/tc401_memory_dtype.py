# ld.global.f32 reads 32-bit words; a float64 tensor is not one.
# expect: TC401 line 10 operand 1

from tilecheck.program import T


@T.function
def wide_memory(A: T.Tensor((4, 1), "float64")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
