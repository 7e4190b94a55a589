# At warp scope a tensor operand is (lane, *repeat, atom): a 1-D view has no atom axis.
# expect: TC201 line 11 operand 1

from tilecheck.program import T


@T.function
def flat_at_warp(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 1), "float32", layout=T.TileLayout("laneid", "m"))
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r[:, 0], scope="warp")
