# Interaction: preserve_dst with an ill-typed pred reports the pred only (initialisation
# is judged only under a valid predicate).
# expect: TC501 line 13

from tilecheck.program import T


@T.function
def preserve_float_pred(A: T.Tensor((4, 1), "float32")):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r, pred=0.5, preserve_dst=True)
