# No launch configuration (one warp is implied by scope="warp"), reversed memory views: negative
# group strides in the address arithmetic and negative immediate offsets, an rsqrt.approx (model
# reference value on the CPU).
from tilecheck.program import T


@T.function
def warp_reversed(A: T.Tensor((32, 2), "float32"), Out: T.Tensor((32, 2), "float32")):
    r = T.alloc_local((32, 2, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A[::-1, :, None], scope="warp")
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[:, 0:1], r[:, 1:2], scope="warp")
    T.cuda.tile.apply(T.ptx["rsqrt.approx.ftz.f32"], r[:, 1:2], r[:, 1:2], scope="warp")
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out[::-1, ::-1, None], r, scope="warp")
