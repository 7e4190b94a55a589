# Legal: a file may define several programs; each is checked (tilecheck check reports both).
from tilecheck.program import T


@T.function
def first(A: T.Tensor((2, 1), "float32"), Out: T.Tensor((2, 1), "float32")):
    r = T.alloc_local((2, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply("rsqrt.approx.f32", r, r)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)


@T.function
def second(A: T.Tensor((2, 1), "float32"), Out: T.Tensor((2, 1), "float32")):
    r = T.alloc_local((2, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.ftz.rn.f32"], r, r, r)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
