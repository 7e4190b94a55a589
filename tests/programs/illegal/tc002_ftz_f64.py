# div.rn.ftz.f64 does not exist: .ftz is only for .f32 (the spec's recorded reason).
# expect: TC002 line 11

from tilecheck.program import T


@T.function
def ftz_f64(A: T.Tensor((4, 1), "float64")):
    r = T.alloc_local((4, 1), "float64")
    T.cuda.tile.apply(T.ptx["ld.global.f64"], r, A)
    T.cuda.tile.apply(T.ptx["div.rn.ftz.f64"], r, r, 2.0)
