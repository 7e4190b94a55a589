"""The guide's worked example: 64 threads x 12 float32 values with ``ld.global.v4.b32`` at CTA scope.

Operand shape ``(2, 32, 3, 4)`` = group (warp_in_cta, lane), repeat 3, atom 4 words; the register
buffer distributes its first two axes over warps and lanes. Each thread issues 3 loads, 12
``mul.rn.f32`` by 2.0 and 3 stores.
"""

from tilecheck.program import T


@T.function
def cta_vector(A: T.Tensor((2, 32, 12), "float32"), Out: T.Tensor((2, 32, 12), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    r = T.alloc_local((2, 32, 12), "float32", layout=T.TileLayout("warpid", "laneid", "m"))
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], r.reshape(2, 32, 3, 4), A.reshape(2, 32, 3, 4), scope="cta")
    T.cuda.tile.apply(T.ptx["mul.rn.f32"], r.reshape(2, 32, 12, 1), r.reshape(2, 32, 12, 1), T.float32(2),
                      scope="cta")
    T.cuda.tile.apply(T.ptx["st.global.v4.b32"], Out.reshape(2, 32, 3, 4), r.reshape(2, 32, 3, 4), scope="cta")
