# ld's memory operand must be a global tensor; registers are not addressable.
# expect: TC601 line 12 operand 1

from tilecheck.program import T


@T.function
def load_from_registers(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["ld.global.f32"], s, r)
