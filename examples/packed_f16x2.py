"""Packed half precision: a float16 buffer seen as uint32 words (two halves per b32 register).

``h.view("uint32")`` reinterprets the storage (no conversion); the atom axis counts registers, so
eight halves are four f16x2 registers ``(4, 1)``. ``T.uint32(0x3c003c00)`` is a packed constant
encoding 1.0 in both halves. Result: ``Out = (A + 1) * A + A[0:2]`` lane-wise (fma broadcasts the
first word over the four repeats through a zero-stride read-only view).
"""

from tilecheck.program import T


@T.function
def packed_f16x2(A: T.Tensor((8,), "float16"), Out: T.Tensor((8,), "float16")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    h = T.alloc_local((8,), "float16")
    t = T.alloc_local((8,), "float16")
    w = h.view("uint32").reshape(4, 1)
    u = t.view("uint32").reshape(4, 1)
    T.cuda.tile.apply(T.ptx["ld.global.v4.b32"], w.reshape(1, 4), A.view("uint32").reshape(1, 4))
    T.cuda.tile.apply(T.ptx["add.rn.f16x2"], u, w, T.uint32(0x3C003C00))
    T.cuda.tile.apply(T.ptx["fma.rn.f16x2"], u, u, w, w[0:1].broadcast_to((4, 1)))
    T.cuda.tile.apply(T.ptx["st.global.v4.b32"], Out.view("uint32").reshape(1, 4), u.reshape(1, 4))
