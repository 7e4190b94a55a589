"""The seed's approximate-reciprocal variant: ``rcp.approx.ftz.f32`` replaces the arithmetic.

A distinct numerical contract (1 ulp, subnormals flushed); for input [[4],[16],[36],[64]] the
result is within 1 ulp of [[0.25],[0.0625],[0.02777...],[0.015625]].
"""

from tilecheck.program import T


@T.function
def reciprocal(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    r = T.alloc_local((4, 1), "float32", layout="default")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["rcp.approx.ftz.f32"], r, r)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
