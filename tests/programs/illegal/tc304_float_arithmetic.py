# Tile programs compute no floating-point scalar expressions: write the constant.
# expect: TC304 line 11 operand 2

from tilecheck.program import T


@T.function
def float_arith(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, T.float32(2) * 2)
