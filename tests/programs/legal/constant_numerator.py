# Legal: constant numerators stay in place (1/x is div with a constant numerator, not rcp);
# a scalar may replace any single-register read input, typed or as a Python literal.
from tilecheck.program import T


@T.function
def constant_numerator(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
    x = T.alloc_local((4, 1), "float32")
    q = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], x, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], q, T.float32(1), x)
    T.cuda.tile.apply(T.ptx["div.full.f32"], q, 2, q)
    T.cuda.tile.apply(T.ptx["div.approx.ftz.f32"], q, 0.5, q)
    T.cuda.tile.apply(T.ptx["fma.rn.f32"], q, 3.0, q, T.float32(-1))
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, q)
