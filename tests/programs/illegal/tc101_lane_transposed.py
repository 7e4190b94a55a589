# A transposed view puts the lane axis on per-thread registers: lane l would read
# register l of every lane j.
# expect: TC101 line 12 operand 1 axis 0

from tilecheck.program import T


@T.function
def lane_transposed(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 32, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r.permute(1, 0, 2), scope="warp")
