# scope='cta' takes its warp count from the block size; without T.device_entry
# there is none.
# expect: TC103 line 11

from tilecheck.program import T


@T.function
def cta_no_launch(A: T.Tensor((1, 32, 1), "float32")):
    r = T.alloc_local((1, 32, 1), "float32", layout=T.TileLayout("warpid", "laneid", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[:, :, None, :], r[:, :, None, :], scope="cta")
