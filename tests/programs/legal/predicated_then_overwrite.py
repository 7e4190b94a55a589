# Legal: a predicated write leaves inactive results undefined, but an unconditional write
# initialises the destination again, so a later preserve_dst is fine.
from tilecheck.program import T


@T.function
def overwrite(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32"), n: T.int32):
    r = T.alloc_local((4, 1), "float32")
    s = T.alloc_local((4, 1), "float32")
    T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r, pred=T.thread_id() < n)
    T.cuda.tile.apply(T.ptx["add.rn.f32"], s, r, 0.0)
    T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], s, r, pred=T.thread_id() < n, preserve_dst=True)
    T.cuda.tile.apply(T.ptx["st.global.f32"], Out, s)
