# Legal: scalar kernel parameters as read inputs (broadcast over the repeats) and in pred.
from tilecheck.program import T


@T.function
def scaled(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32"), scale: T.float32, n: T.int32):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["mul.rn.f32"], r, r, scale)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, scale, r, pred=n > 0, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
