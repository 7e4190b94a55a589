# Operands disagree on the number of repeat axes: (4,) against (2, 2).
# expect: TC203 line 13 operand 2

from tilecheck.program import T


@T.function
def repeat_rank(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((2, 2, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["ld.global.f32"], s, A.reshape(2, 2, 1))
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, s)
