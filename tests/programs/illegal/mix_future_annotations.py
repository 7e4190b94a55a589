# Interaction: string annotations (from __future__ import annotations) are evaluated;
# the violation is still found at its line.
# expect: TC501 line 15

from __future__ import annotations

from tilecheck.program import T


@T.function
def lazy_annotations(A: T.Tensor((4, 1), "float32"), n: T.uint32):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=n, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=T.float32(1))
