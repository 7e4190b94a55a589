# add.rn.f16 takes float16 (or a 16-bit integer container); bfloat16 is another format.
# expect: TC401 line 12 operand 2

from tilecheck.program import T


@T.function
def wrong_half(A: T.Tensor((4, 1), "float16")):
    h = T.alloc_local((4, 1), "float16")
    b = T.alloc_local((4, 1), "bfloat16")
    T.cuda.tile.apply(T.ptx["ld.global.b16"], h, A)
    T.cuda.tile.apply(T.ptx["add.rn.f16"], h, h, b)
