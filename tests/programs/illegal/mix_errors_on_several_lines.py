# Interaction: violations on different apply calls are all reported, each at its own line.
# expect: TC205 line 16 operand 0 axis 1
# expect: TC205 line 16 operand 1 axis 1
# expect: TC002 line 17
# expect: TC101 line 18 operand 0 axis 0
# expect: TC101 line 18 operand 1 axis 0
# expect: TC202 line 18 operand 0 axis 0
# expect: TC202 line 18 operand 1 axis 0

from tilecheck.program import T


@T.function
def several(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.approx.f64"], r, r)
    T.cuda.tile.apply(T.ptx["rcp.rn.f32"], r, r, scope="warp")
