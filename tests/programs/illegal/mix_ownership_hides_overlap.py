# Interaction: a lane-broadcast destination is reported once, as an ownership
# violation (lane l would write lane 0's register), not again as an overlap.
# expect: TC101 line 12 operand 0 axis 0

from tilecheck.program import T


@T.function
def lane_broadcast_dst(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[0:1].broadcast_to((32, 1, 1)), r, scope="warp")
