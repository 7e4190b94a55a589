# A buffer distributed over warps used at warp scope: the scope binds no warp axis,
# so the register held by warp 1 is named by every warp.
# expect: TC101 line 12 operand 0

from tilecheck.program import T


@T.function
def warp_axis_unbound(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    r = T.alloc_local((2, 32, 1), "float32", layout=T.TileLayout("warpid", "laneid", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r[1], A, scope="warp")
