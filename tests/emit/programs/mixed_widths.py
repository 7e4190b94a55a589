# A float16 buffer used both as b16 halves (loads, a scalar f16 add, stores) and as packed f16x2
# words (a predicated, preserving f16x2 fma): the emitter packs/unpacks registers with mov.
from tilecheck.program import T


@T.function
def mixed_widths(A: T.Tensor((8,), "float16"), Out: T.Tensor((8,), "float16"), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    h = T.alloc_local((8,), "float16")
    T.cuda.tile.apply(T.ptx["ld.global.b16"], h.reshape(8, 1), A.reshape(8, 1))
    w = h.view("uint32").reshape(4, 1)
    T.cuda.tile.apply(T.ptx["fma.rn.f16x2"], w, w, w, T.uint32(0x3C003C00), pred=n > 2, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["add.rn.f16"], h[0:8:2].reshape(4, 1), h[1:8:2].reshape(4, 1), h[0:8:2].reshape(4, 1))
    T.cuda.tile.apply(T.ptx["st.global.b16"], Out.reshape(8, 1), h.reshape(8, 1))
