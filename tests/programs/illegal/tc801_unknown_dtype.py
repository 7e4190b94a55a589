# alloc_local names a dtype that does not exist (reported where it is allocated).
# expect: TC801 line 9

from tilecheck.program import T


@T.function
def typo_dtype(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float33")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
