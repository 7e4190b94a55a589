# preserve_dst is a static Python bool, not an integer.
# expect: TC504 line 11

from tilecheck.program import T


@T.function
def preserve_int(A: T.Tensor((4, 1), "float32"), n: T.int32):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=n, preserve_dst=1)
