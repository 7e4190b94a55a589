# f32x2 occupies one b64 container (uint64/int64); uint32 words are half of one.
# target: sm_100
# expect: TC401 line 14 operand 0
# expect: TC401 line 14 operand 1
# expect: TC401 line 14 operand 2

from tilecheck.program import T


@T.function
def half_container(A: T.Tensor((4, 1), "uint32")):
    w = T.alloc_local((4, 1), "uint32")
    T.cuda.tile.apply(T.ptx["ld.global.b32"], w, A)
    T.cuda.tile.apply(T.ptx["add.rn.f32x2"], w, w, w)
