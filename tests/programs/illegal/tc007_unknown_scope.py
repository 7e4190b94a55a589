# scope='block' is not an execution scope (thread, warp, warpgroup, cta).
# expect: TC007 line 11

from tilecheck.program import T


@T.function
def block_scope(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, scope="block")
