# Interaction: a target-gated form is still checked operand by operand (gate + dtype).
# expect: TC003 line 14
# expect: TC401 line 14 operand 0
# expect: TC401 line 14 operand 1
# expect: TC401 line 14 operand 2

from tilecheck.program import T


@T.function
def gate_and_dtype(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["add.rn.f32x2"], r, r, r)
