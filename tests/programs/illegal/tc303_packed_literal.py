# A packed f16x2 constant must encode both halves; a Python float is ambiguous.
# expect: TC303 line 12 operand 2

from tilecheck.program import T


@T.function
def packed_literal(A: T.Tensor((8,), "float16")):
    h = T.alloc_local((8,), "float16")
    w = h.view("uint32").reshape(4, 1)
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], w.reshape(1, 4), A.view("uint32").reshape(1, 4))
    T.cuda.tile.apply(T.ptx["add.rn.f16x2"], w, w, 1.0)
