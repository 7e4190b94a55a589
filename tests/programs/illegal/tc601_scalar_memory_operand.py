# st's memory operand (the address) cannot be a scalar.
# expect: TC601 line 11 operand 0

from tilecheck.program import T


@T.function
def store_to_scalar(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["st.global.f32"], 0, r)
