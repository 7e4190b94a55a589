# pred expressions beyond comparisons: floor division and modulo of negative values, shifts,
# unsigned and 64-bit parameters, bool parameters, xor of comparisons; cta scope over 64 threads.
from tilecheck.program import T


@T.function
def int_predicates(A: T.Tensor((2, 32, 4), "float32"), Out: T.Tensor((2, 32, 4), "float32"),
                   k: T.int32, big: T.int64, mask: T.uint32, on: T.bool):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=64))
    r = T.alloc_local((2, 32, 4, 1), "float32", layout=T.TileLayout("warpid", "laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r.reshape(2, 32, 1, 4), A[:, :, None, :], scope="cta")
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r[:, :, 0:1], r[:, :, 0:1], 1.0, scope="cta",
                      pred=((T.thread_id() - k) // 3) % 4 == -1 + 2, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r[:, :, 1:2], r[:, :, 1:2], 2.0, scope="cta",
                      pred=(((mask >> T.uint32(3)) & T.uint32(1)) == 1) ^ (T.lane_id() < k), preserve_dst=True)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r[:, :, 2:3], r[:, :, 2:3], 4.0, scope="cta",
                      pred=(big * T.int64(3) + T.int64(1)) >> T.int64(1) > T.int64(10), preserve_dst=True)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r[:, :, 3:4], r[:, :, 3:4], 8.0, scope="cta",
                      pred=on | (T.warp_id() == 1), preserve_dst=True)
    T.cuda.tile.apply(T.ptx["st.global.v4.f32"], Out[:, :, None, :], r.reshape(2, 32, 1, 4), scope="cta")
