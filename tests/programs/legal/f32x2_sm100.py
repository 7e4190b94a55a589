# Legal on sm_100: packed f32x2 in uint64 carriers (a float32 buffer seen as 64-bit words).
# target: sm_100
from tilecheck.program import T


@T.function
def f32x2(A: T.Tensor((4, 2), "float32"), Out: T.Tensor((4, 2), "float32")):
    r = T.alloc_local((4, 2), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], r, A)
    w = r.view("uint64")
    T.cuda.tile.apply(T.ptx["add.rn.f32x2"], w, w, w)
    T.cuda.tile.apply(T.ptx["mul.rn.f32x2"], w, w, T.uint64(0x4000000040000000))
    T.cuda.tile.apply(T.ptx["st.global.v2.f32"], Out, r)
