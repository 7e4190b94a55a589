# Legal: read-only inputs may overlap: a zero-stride view broadcasts one register over the repeats,
# and the same buffer may be read twice in one call (and also be the destination, in place).
from tilecheck.program import T


@T.function
def broadcast(A: T.Tensor((4, 1), "float32"), S: T.Tensor((1, 1), "float32"),
              Out: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((1, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["ld.global.f32"], s, S)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, s.broadcast_to((4, 1)))
    T.cuda.tile.apply(T.ptx["fma.rn.f32"], r, r, r, s[0:1].as_strided((4, 1), (0, 0)))
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
