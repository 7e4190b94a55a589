"""Warp scope with a lane-distributed register tile, gapped (strided) views and a constant numerator.

Each of the 32 lanes loads one row of ``A`` (four float32) into its own registers, then computes
``q[j] = 1 / r[2j+1]`` into the even registers ``r[2j]`` (j = 0, 1): the numerator stays the
constant 1.0 (it is never exchanged with the denominator), the views select gapped registers
and never cross lanes. Per lane: 1 ld.v4, 2 div.rn.f32, 1 st.v4.
"""

from tilecheck.program import T


@T.function
def warp_strided(A: T.Tensor((32, 4), "float32"), Out: T.Tensor((32, 4), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    # axis 0 is distributed over lanes (lane l holds row l); the other axes are per-thread registers
    r = T.alloc_local((32, 4, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
    words = r.permute(0, 2, 1)          # (lane, repeat=1, atom=4): one .v4 access per lane
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], words, A[:, None, :], scope="warp")
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r[:, 0:4:2], 1.0, r[:, 1:4:2], scope="warp")
    T.cuda.tile.apply(T.ptx["st.global.v4.f32"], Out[:, None, :], words, scope="warp")
