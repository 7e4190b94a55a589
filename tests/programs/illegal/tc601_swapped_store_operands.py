# Interaction: st takes (memory, registers); swapped, the register buffer lands
# in the memory slot and the global tensor in the register slot.
# expect: TC601 line 13 operand 0
# expect: TC102 line 13 operand 1

from tilecheck.program import T


@T.function
def swapped_store(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["st.global.f32"], r, Out)
