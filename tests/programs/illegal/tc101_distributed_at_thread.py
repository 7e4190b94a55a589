# At thread scope every register must be the issuing thread's own; row 3 of a
# lane-distributed buffer belongs to lane 3 only.
# expect: TC101 line 12 operand 0

from tilecheck.program import T


@T.function
def distributed_at_thread(A: T.Tensor((4, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 4, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r[3], A)
