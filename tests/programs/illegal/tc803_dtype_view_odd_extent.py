# Three float16 values cannot be seen as whole uint32 words.
# expect: TC803 line 10

from tilecheck.program import T


@T.function
def odd_halves(A: T.Tensor((3,), "float16")):
    h = T.alloc_local((3,), "float16")
    w = h.view("uint32")
