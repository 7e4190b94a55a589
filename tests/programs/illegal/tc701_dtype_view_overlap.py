# Interaction of dtype views and strides: uint32 words 0..3 overlap through a view whose
# repeat stride is half a word in float16 units... expressed as words 0,1,1,2.
# expect: TC701 line 13 operand 0

from tilecheck.program import T


@T.function
def word_overlap(A: T.Tensor((8,), "float16")):
    h = T.alloc_local((8,), "float16")
    w = h.view("uint32")
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], w.reshape(1, 4), A.view("uint32").reshape(1, 4))
    T.cuda.tile.apply(T.ptx["add.rn.f16x2"], w.as_strided((2, 2, 1), (1, 1, 1)), w.reshape(2, 2, 1), T.uint32(0))
