# ld.global.v4 moves four words per instruction: both operands must end in (4,).
# expect: TC205 line 11 operand 0 axis 1
# expect: TC205 line 11 operand 1 axis 1

from tilecheck.program import T


@T.function
def vector_atom(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r, A)
