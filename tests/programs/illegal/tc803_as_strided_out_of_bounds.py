# Explicit strides that reach past the buffer's last register.
# expect: TC803 line 11

from tilecheck.program import T


@T.function
def strides_too_far(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r.as_strided((4, 1), (2, 1)))
