"""Warpgroup scope: 4 warps x 32 lanes, each thread computing ``d = a * b + c`` on two registers.

Group axes (warp_in_group, lane) address the buffer's ``warpid`` and ``laneid`` axes; the
addend ``c`` is read through a zero-stride view (one value per thread broadcast over both
repeats), which is fine for a read-only input.
"""

from tilecheck.program import T


@T.function
def warpgroup_fma(A: T.Tensor((4, 32, 2), "float32"), C: T.Tensor((4, 32, 1), "float32"),
                  Out: T.Tensor((4, 32, 2), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    layout = T.TileLayout("warpid", "laneid", "m", "m")
    a = T.alloc_local((4, 32, 2, 1), "float32", layout=layout)
    c = T.alloc_local((4, 32, 1, 1), "float32", layout=layout)
    T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], a.reshape(4, 32, 1, 2), A[:, :, None, :], scope="warpgroup")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], c, C[:, :, None, :], scope="warpgroup")
    T.cuda.tile.apply(T.ptx["fma.rn.f32"], a, a, a, c.broadcast_to((4, 32, 2, 1)), scope="warpgroup")
    T.cuda.tile.apply(T.ptx["st.global.v2.f32"], Out[:, :, None, :], a.reshape(4, 32, 1, 2), scope="warpgroup")
