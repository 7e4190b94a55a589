# Legal: string annotations (from __future__ import annotations) are evaluated when tracing.
from __future__ import annotations

from tilecheck.program import T


@T.function
def lazy(A: T.Tensor((4, 1), "float64"), Out: T.Tensor((4, 1), "float64"), d: T.float64):
    r = T.alloc_local((4, 1), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.f64"], r, A)
    T.cuda.tile.apply(T.ptx["div.rp.f64"], r, r, d)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f64"], r, r)
    T.cuda.tile.apply(T.ptx["st.global.f64"], Out, r)
