# A destination must be registers; a constant cannot be written.
# expect: TC301 line 11 operand 0

from tilecheck.program import T


@T.function
def scalar_dst(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], T.float32(0), r)
