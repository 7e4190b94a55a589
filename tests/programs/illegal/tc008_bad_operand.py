# An operand must be a view or a scalar expression; a Python list is neither.
# expect: TC008 line 11 operand 2

from tilecheck.program import T


@T.function
def list_operand(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, [4.0, 4.0, 4.0, 4.0])
