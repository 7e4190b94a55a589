# Index 4 is outside an axis of extent 4 (reported where the view is made).
# expect: TC803 line 11

from tilecheck.program import T


@T.function
def past_the_end(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[4], r[3])
