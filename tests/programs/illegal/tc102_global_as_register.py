# Arithmetic reads registers; the global tensor must be loaded first.
# expect: TC102 line 11 operand 2

from tilecheck.program import T


@T.function
def global_denominator(A: T.Tensor((4, 1), "float32"), B: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, B)
