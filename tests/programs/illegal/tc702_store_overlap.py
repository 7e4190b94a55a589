# Two repeats store to the same global element.
# expect: TC702 line 11 operand 0 axis 0

from tilecheck.program import T


@T.function
def store_twice(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out.as_strided((4, 1), (0, 1)), r)
