# Every lane of the warp stores to the same address: the lane axis of the memory view has stride 0.
# expect: TC702 line 11 operand 0 axis 0

from tilecheck.program import T


@T.function
def lanes_collide(Out: T.Tensor((1, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    r = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out[None].broadcast_to((32, 1, 1)), r, scope="warp")
