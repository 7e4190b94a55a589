# f16x2 packs two halves in one b32 register: the atom is (1,) words, not (2,) halves' words.
# expect: TC205 line 14 operand 0 axis 1
# expect: TC205 line 14 operand 1 axis 1
# expect: TC205 line 14 operand 2 axis 1

from tilecheck.program import T


@T.function
def packed_atom(A: T.Tensor((8,), "float16")):
    h = T.alloc_local((8,), "float16")
    w = h.view("uint32").reshape(2, 2)
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], h.view("uint32").reshape(1, 4), A.view("uint32").reshape(1, 4))
    T.cuda.tile.apply(T.ptx["add.rn.f16x2"], w, w, w)
