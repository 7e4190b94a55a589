# ld writes registers: a global tensor as its destination is not a register.
# expect: TC102 line 9 operand 0

from tilecheck.program import T


@T.function
def global_destination(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
    T.cuda.tile.apply(T.ptx["ld.global.f32"], Out, A)
