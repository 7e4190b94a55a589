# Legal: thread scope with a two-axis repeat (2, 3): six add/sub/mul instructions each, row-major.
from tilecheck.program import T


@T.function
def repeats_2d(A: T.Tensor((2, 3, 1), "float32"), B: T.Tensor((2, 3, 1), "float32"),
               Out: T.Tensor((2, 3, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    a = T.alloc_local((2, 3, 1), "float32")
    b = T.alloc_local((2, 3, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], a, A)
    T.cuda.tile.apply(T.ptx["ld.global.f32"], b, B)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], a, a, b)
    T.cuda.tile.apply(T.ptx["sub.rz.f32"], b, a, b)
    T.cuda.tile.apply(T.ptx["mul.rn.ftz.f32"], a, a, b)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, a)
