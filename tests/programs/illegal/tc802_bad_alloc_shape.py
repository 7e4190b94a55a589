# A local buffer needs positive extents.
# expect: TC802 line 9

from tilecheck.program import T


@T.function
def empty_alloc(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 0), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
