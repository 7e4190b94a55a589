# f64 scalars and vectors: a v2.f64 load, a 64-bit scalar parameter, an f64 immediate, rcp.approx.ftz.f64
# (approximate), and a 256-bit ld.global.v4.f64 / st.global.v4.f64 pair (sm_100 only).
# target: sm_100
from tilecheck.program import T


@T.function
def f64_vectors(A: T.Tensor((2, 4), "float64"), Out: T.Tensor((2, 4), "float64"), s: T.float64):
    r = T.alloc_local((2, 4), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.v4.f64"], r.reshape(1, 2, 4)[0], A)
    T.cuda.tile.apply(T.ptx["fma.rn.f64"], r.reshape(8, 1), r.reshape(8, 1), s, 0.5)
    T.cuda.tile.apply(T.ptx["sqrt.rz.f64"], r[0].reshape(4, 1), r[1].reshape(4, 1))
    T.cuda.tile.apply(T.ptx["st.global.v4.f64"], Out, r)
