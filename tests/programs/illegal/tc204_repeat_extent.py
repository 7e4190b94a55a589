# The seed's division with a denominator tile of 3 repeats against 4. The
# message reads: operand 2 ('b', denominator) axis 0 (repeat): expected extent 4, found 3.
# expect: TC204 line 13 operand 2 axis 0

from tilecheck.program import T


@T.function
def root_ratio(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    r = T.alloc_local((4, 1), "float32", layout="default")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, r[0:3])
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)
