# The first argument of apply must be T.ptx[...] (or an opcode string), not a dtype.
# expect: TC005 line 11

from tilecheck.program import T


@T.function
def dtype_as_instruction(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.float32, r, r)
