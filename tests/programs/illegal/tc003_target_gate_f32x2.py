# add.rn.f32x2 needs sm_100; checked for the default target sm_90 (operands are otherwise legal).
# expect: TC003 line 12

from tilecheck.program import T


@T.function
def packed_pairs(A: T.Tensor((4, 2), "float32")):
    r = T.alloc_local((4, 2), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], r, A)
    w = r.view("uint64")
    T.cuda.tile.apply(T.ptx["add.rn.f32x2"], w, w, w)
