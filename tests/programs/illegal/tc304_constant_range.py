# T.uint32(-1) is outside uint32's range.
# expect: TC304 line 12 operand 2

from tilecheck.program import T


@T.function
def out_of_range(A: T.Tensor((8,), "float16")):
    h = T.alloc_local((8,), "float16")
    w = h.view("uint32").reshape(4, 1)
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], w.reshape(1, 4), A.view("uint32").reshape(1, 4))
    T.cuda.tile.apply(T.ptx["add.rn.f16x2"], w, w, T.uint32(-1))
