# A zero-stride destination writes one register from every repeat.
# expect: TC701 line 11 operand 0 axis 0

from tilecheck.program import T


@T.function
def broadcast_dst(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[0:1].broadcast_to((4, 1)), r)
