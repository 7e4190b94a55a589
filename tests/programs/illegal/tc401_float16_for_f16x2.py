# f16x2 operands are uint32/int32 carriers; a float16 buffer needs .view('uint32').
# expect: TC401 line 12 operand 0
# expect: TC401 line 12 operand 1
# expect: TC401 line 12 operand 2

from tilecheck.program import T


@T.function
def unviewed_halves(A: T.Tensor((8,), "float16")):
    h = T.alloc_local((4, 1), "float16")
    T.cuda.tile.apply(T.ptx["add.rn.f16x2"], h, h, h)
