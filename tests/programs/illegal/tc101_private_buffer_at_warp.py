# At warp scope the lane axis must address a buffer axis distributed over lanes;
# a thread-private buffer (layout default) has none.
# expect: TC101 line 13 operand 0 axis 0
# expect: TC101 line 13 operand 1 axis 0

from tilecheck.program import T


@T.function
def private_at_warp(A: T.Tensor((32, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 1, 1), "float32", layout="default")
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, scope="warp")
