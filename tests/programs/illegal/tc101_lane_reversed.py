# A reversed lane axis (r[::-1]) moves values between lanes: views cannot do that.
# expect: TC101 line 12 operand 1 axis 0

from tilecheck.program import T


@T.function
def lane_reversed(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    s = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r[::-1], scope="warp")
