# div.f32 needs .approx, .full or a rounding modifier; the tile layer never picks one.
# expect: TC002 line 11

from tilecheck.program import T


@T.function
def no_rounding(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.f32"], r, r, T.float32(4))
