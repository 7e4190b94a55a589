# Interaction: a malformed view is reported where it is made; the apply using it
# adds nothing for that operand.
# expect: TC803 line 11

from tilecheck.program import T


@T.function
def poisoned_operand(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    bad = r.reshape(3, 1)
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, bad)
