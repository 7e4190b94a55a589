# pred accepts bool, uint32 and int32 only; an int64 comparison operand gives an int64 value.
# expect: TC501 line 11

from tilecheck.program import T


@T.function
def wide_pred(A: T.Tensor((4, 1), "float32"), n: T.int64):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=n)
