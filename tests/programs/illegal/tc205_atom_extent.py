# The final axis counts native registers (1 for f32), not values: (4,) is four registers.
# expect: TC205 line 11 operand 0 axis 1
# expect: TC205 line 11 operand 1 axis 1

from tilecheck.program import T


@T.function
def atom_four(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((1, 4), "float32")
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r)
