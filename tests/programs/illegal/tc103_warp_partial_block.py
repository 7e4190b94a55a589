# scope='warp' needs whole warps; a 16-thread block has none.
# expect: TC103 line 11

from tilecheck.program import T


@T.function
def half_warp(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
    r = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, scope="warp")
