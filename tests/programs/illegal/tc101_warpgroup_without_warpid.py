# At warpgroup scope the warp_in_group axis needs a buffer axis distributed over
# warps; this buffer only distributes lanes.
# expect: TC101 line 12 operand 0 axis 0

from tilecheck.program import T


@T.function
def no_warp_axis(A: T.Tensor((4, 32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    r = T.alloc_local((4, 32, 1), "float32", layout=T.TileLayout("m", "laneid", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r[:, :, None, :], A[:, :, None, :], scope="warpgroup")
