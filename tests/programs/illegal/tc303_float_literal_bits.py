# st.global.b32 stores bits: a Python float does not say which 32-bit pattern.
# expect: TC303 line 9 operand 1

from tilecheck.program import T


@T.function
def float_bits(Out: T.Tensor((4, 1), "uint32")):
    T.cuda.tile.apply(T.ptx["st.global.b32"], Out, 1.5)
