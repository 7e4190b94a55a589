# Legal: views may select gapped and permuted registers: a step-2 slice, a reversed destination,
# explicit strides in container elements and a transposed 2-D repeat.
from tilecheck.program import T


@T.function
def gapped(A: T.Tensor((8, 1), "float32"), Out: T.Tensor((8, 1), "float32")):
    r = T.alloc_local((8, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[0:8:2], r[1:8:2])
    T.cuda.tile.apply(T.ptx["rcp.rn.f32"], r[::-1], r)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], r.as_strided((2, 2, 1), (4, 2, 1), offset=1), r[0:4].reshape(2, 2, 1), 1.0)
    T.cuda.tile.apply(T.ptx["mul.rn.f32"], r.reshape(2, 4, 1).permute(1, 0, 2), r.reshape(4, 2, 1), 2.0)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
