# A 'laneid' layout axis must have extent 32 (one index per lane).
# expect: TC802 line 9

from tilecheck.program import T


@T.function
def short_lane_axis(A: T.Tensor((16, 1), "float32")):
    r = T.alloc_local((16, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
