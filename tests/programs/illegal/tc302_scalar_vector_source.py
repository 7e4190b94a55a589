# st.global.v4 stores four registers; a scalar replaces only single-register inputs.
# expect: TC302 line 9 operand 1

from tilecheck.program import T


@T.function
def scalar_vector(Out: T.Tensor((1, 4), "float32")):
    T.cuda.tile.apply(T.ptx["st.global.v4.f32"], Out, T.float32(0))
