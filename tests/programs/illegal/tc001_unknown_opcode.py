# T.ptx names an instruction no spec defines (a typo of div).
# expect: TC001 line 11

from tilecheck.program import T


@T.function
def typo(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["dvi.rn.f32"], r, r, T.float32(4))
