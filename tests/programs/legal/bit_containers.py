# Legal: equal-width bit containers: f32 arithmetic on a uint32 view, f16 on uint16, bf16x2 on
# int32 words, a .b32 store of a Python int bit pattern and an int32 load.
from tilecheck.program import T


@T.function
def containers(A: T.Tensor((4, 1), "float32"), H: T.Tensor((4, 1), "uint16"), W: T.Tensor((2, 1), "int32"),
               Out: T.Tensor((4, 1), "uint32")):
    r = T.alloc_local((4, 1), "float32")
    h = T.alloc_local((4, 1), "uint16")
    w = T.alloc_local((2, 1), "int32")
    T.cuda.tile.apply(T.ptx["ld.global.b32"], r.view("uint32"), A.view("uint32"))
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r.view("uint32"), r, r.view("int32"))
    T.cuda.tile.apply(T.ptx["ld.global.b16"], h, H)
    T.cuda.tile.apply(T.ptx["add.rn.f16"], h, h, h.view("float16"))
    T.cuda.tile.apply(T.ptx["ld.global.s32"], w, W)
    T.cuda.tile.apply(T.ptx["add.rn.bf16x2"], w, w, T.int32(0x3F803F80))
    T.cuda.tile.apply(T.ptx["st.global.b32"], Out, 0x7FC00000)
