"""Double precision: every f64 rounding of division, with one scalar parameter as the denominator.

``d`` is a float64 kernel parameter broadcast over the repeats (a scalar read input); the four
results for each element go to the columns of ``Out``.
"""

from tilecheck.program import T


@T.function
def f64_div(A: T.Tensor((2, 1), "float64"), Out: T.Tensor((2, 4), "float64"), d: T.float64):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    a = T.alloc_local((2, 1), "float64")
    q = T.alloc_local((2, 4), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.f64"], a, A)
    T.cuda.tile.apply(T.ptx["div.rn.f64"], q[:, 0:1], a, d)
    T.cuda.tile.apply(T.ptx["div.rz.f64"], q[:, 1:2], a, d)
    T.cuda.tile.apply(T.ptx["div.rm.f64"], q[:, 2:3], a, d)
    T.cuda.tile.apply(T.ptx["div.rp.f64"], q[:, 3:4], a, d)
    T.cuda.tile.apply(T.ptx["st.global.v2.f64"], Out.reshape(4, 2), q.reshape(4, 2))
