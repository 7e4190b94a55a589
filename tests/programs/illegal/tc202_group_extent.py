# The lane axis has extent 32; a half-warp slice has 16.
# expect: TC202 line 12 operand 0 axis 0
# expect: TC202 line 12 operand 1 axis 0

from tilecheck.program import T


@T.function
def half_lanes(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[0:16], r[0:16], scope="warp")
