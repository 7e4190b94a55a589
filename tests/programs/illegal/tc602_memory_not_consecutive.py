# The four words of one .v4 access must be consecutive; this view takes every other word.
# expect: TC602 line 10 operand 1 axis 1

from tilecheck.program import T


@T.function
def gapped_vector(A: T.Tensor((8,), "float32")):
    r = T.alloc_local((1, 4), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r, A.reshape(1, 8)[:, 0:8:2])
