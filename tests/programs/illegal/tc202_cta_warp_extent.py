# At cta scope warp_in_cta is threads/32 = 2 for a 64-thread block; the buffer has 4 warps.
# expect: TC202 line 12 operand 0 axis 0
# expect: TC202 line 12 operand 1 axis 0

from tilecheck.program import T


@T.function
def wrong_warps(A: T.Tensor((4, 32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    r = T.alloc_local((4, 32, 1, 1), "float32", layout=T.TileLayout("warpid", "laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, scope="cta")
