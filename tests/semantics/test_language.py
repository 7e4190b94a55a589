"""The semantics language: every construct, located errors, and the two backends agreeing."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.errors import SemanticsError
from tilecheck.semantics import T_BOOL, T_INT, T_ROUNDING, Origin, block_scalar_origin, compile_body, float_type, run
from tilecheck.model.semantics import NumpyBackend

F64 = float_type("f64")
ORIGIN = Origin("spec/amdgpu/x.yaml", 40, 7)


def compile_(body, inputs=None, outputs=None, params=None, constants=None, fmt="f64"):
    t = float_type(fmt)
    return compile_body(body, ORIGIN, fmt=fmt, inputs=inputs or {"A": t, "B": t}, outputs=outputs or {"D": t},
                        params=params if params is not None else {"rm": T_ROUNDING, "flag": T_BOOL},
                        constants=constants or {})


def run_np(program, params=None, **inputs):
    arrays = {k: np.asarray(v, dtype=np.uint64) for k, v in inputs.items()}
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    return run(program, NumpyBackend(shape), arrays, params or {"rm": "rn", "flag": True})


def f64(*values):
    return np.array(values, dtype=np.float64).view(np.uint64)


def located(body, fragment, line, column, **kw):
    with pytest.raises(SemanticsError) as info:
        compile_(body, **kw)
    err = info.value
    assert fragment in err.message, err.message
    assert (err.location.path, err.location.line, err.location.column) == ("spec/amdgpu/x.yaml", line, column), str(err)
    return err


# ---- located errors ---------------------------------------------------------------------------


def test_syntax_error_is_located_in_the_file():
    # body line 2, column 9 ("+" without a right operand) -> file line 41, column 7 + 8
    located("D = A\nD = A +\n", "syntax error", 41, 14)


def test_unknown_primitive_is_located_at_the_call():
    err = located("D = A\nD = fmaa(rm, A, B, A)\n", "unknown primitive 'fmaa'", 41, 11)
    assert "did you mean fma" in err.message


def test_unknown_name_is_located():
    located("D = A + C\n", "unknown name 'C'", 40, 15)


def test_constructs_outside_the_language_are_refused():
    for body, what in [("for i in A:\n    D = A\n", "for loops"), ("D = A.x\n", "attribute access"),
                       ("D = A[0]\n", "subscripts"), ("D = fma(rm, A, B, c=A)\n", "keyword arguments"),
                       ("D = A\nD += B\n", "augmented assignment"), ("import os\nD = A\n", "imports"),
                       ("D = (lambda x: x)(A)\n", "lambdas"), ("D = 'x'\n", "str literals")]:
        with pytest.raises(SemanticsError) as info:
            compile_(body)
        assert what in info.value.message, (body, info.value.message)


def test_output_must_be_assigned_on_every_path():
    located("if is_nan(A):\n    D = A\n", "not assigned on every path", 40, 7)
    located("X = A\n", "output 'D' is never assigned", 40, 7)


def test_read_before_assignment_on_some_path():
    located("if is_nan(A):\n    X = A\nD = X\n", "'X' is not assigned on every path", 42, 11)


def test_type_errors_are_located():
    located("D = A + 1.5\nD = exponent(A) + A\n", "cannot apply", 41, 11)
    located("D = fma(A, A, B, A)\n", "rounding mode", 40, 15)
    located("D = A + 0.1\n", "not exactly representable in f32", 40, 15, fmt="f32", outputs={"D": float_type("f32")})
    located("D = ldexp(A, 1.5)\n", "not an integer", 40, 20)
    located("D = is_nan(A)\n", "output 'D' must be float f64, got bool", 40, 7)


def test_assigning_a_primitive_or_parameter_is_refused():
    located("fma = A\nD = A\n", "cannot assign to 'fma'", 40, 7)
    located("rm = A\nD = A\n", "cannot assign to 'rm'", 40, 7)


def test_block_scalar_origin_maps_lines_and_indentation():
    text = "a: 1\nbody: |\n    x = 1\n    y = 2\n"
    origin = block_scalar_origin("f.yaml", text, 2, 7)
    assert (origin.line, origin.column) == (3, 5)
    with pytest.raises(SemanticsError):
        block_scalar_origin("f.yaml", "body: >\n  x\n", 1, 7)


# ---- semantics --------------------------------------------------------------------------------


def test_arithmetic_comparisons_and_branches():
    p = compile_(
        "x = A * B + 1.0\n"
        "if x > 10.0 and not is_nan(x):\n"
        "    D = x\n"
        "elif x == 0.0 or is_inf(x):\n"
        "    D = -x\n"
        "else:\n"
        "    D = 2.0 ** 3 if exponent(x) >= BIAS else MIN_NORMAL\n")
    out = run_np(p, A=f64(3.0, 1.0, 2.0, 0.25), B=f64(4.0, -1.0, 1.0, -0.5))
    d = out["D"].view(np.float64)
    assert list(d) == [13.0, 0.0, 8.0, 2.0 ** -1022]
    assert np.signbit(d[1])  # -(+0.0)


def test_compile_time_conditions_pick_one_branch():
    p = compile_("if flag:\n    D = A\nelse:\n    D = B\n")
    a, b = f64(1.0), f64(2.0)
    assert run_np(p, {"rm": "rn", "flag": True}, A=a, B=b)["D"][0] == a[0]
    assert run_np(p, {"rm": "rn", "flag": False}, A=a, B=b)["D"][0] == b[0]


def test_rounding_parameter_reaches_the_primitives():
    p = compile_("D = div(rm, A, B)\n")
    one, three = f64(1.0), f64(3.0)
    down = run_np(p, {"rm": "rz", "flag": True}, A=one, B=three)["D"][0]
    up = run_np(p, {"rm": "rp", "flag": True}, A=one, B=three)["D"][0]
    assert int(up) - int(down) == 1


def test_bit_level_primitives():
    p = compile_("D = with_sign(quiet(A), is_neg(B)) if same(A, A) else copysign(abs(A), B)\n")
    snan = np.array([0x7ff0000000000001], dtype=np.uint64)
    out = run_np(p, A=snan, B=f64(-1.0))["D"][0]
    assert int(out) == 0xfff8000000000001


def test_int_primitives_and_constants():
    p = compile_("n = max(exponent(A), K) - min(3, 4) * 2\nD = ldexp(A, abs(-n) - n - 1)\n", constants={"K": 5})
    # n = max(1026, 5) - 6 = 1020; abs(-n) - n - 1 = -1: 8 * 2^-1 = 4
    assert run_np(p, A=f64(8.0), B=f64(1.0))["D"].view(np.float64)[0] == 4.0


def test_fma_scaled_and_cvt():
    p = compile_("x = cvt(NEAREST_EVEN, A, f32)\nD = fma_scaled(rm, cvt(NEAREST_EVEN, x, f64), B, B, 3)\n")
    out = run_np(p, A=f64(1.0 / 3.0), B=f64(2.0))["D"].view(np.float64)[0]
    assert out == (float(np.float32(1.0 / 3.0)) * 2.0 + 2.0) * 8


def test_numpy_and_z3_backends_agree_on_a_body():
    z3 = pytest.importorskip("z3")
    from tilecheck.smt import fp
    from tilecheck.smt.semantics import Z3Backend

    body = ("if not flag:\n    A = flush(A)\n"
            "e = exponent(A) - exponent(B)\n"
            "if e > 3:\n    D = fma_scaled(rm, A, B, B, -7)\n"
            "elif is_subnormal(A) or A < B:\n    D = ldexp(A, e, rm)\n"
            "else:\n    D = sub(rm, A, B) if is_finite(A) else quiet(A)\n")
    p = compile_(body)
    rng = np.random.default_rng(1)
    n = 150
    e = rng.integers(0, 2048, n).astype(np.uint64)
    e = np.where(rng.random(n) < 0.3, np.uint64(0), e)
    a = (e << np.uint64(52)) | (rng.integers(0, 1 << 52, n, dtype=np.uint64))
    b = (rng.integers(1000, 1050, n).astype(np.uint64) << np.uint64(52)) | rng.integers(0, 1 << 52, n, dtype=np.uint64)
    for params in ({"rm": "rn", "flag": True}, {"rm": "rm", "flag": False}):
        want = run_np(p, params, A=a, B=b)["D"]
        for i in range(n):
            got = run(p, Z3Backend(), {"A": z3.BitVecVal(int(a[i]), 64), "B": z3.BitVecVal(int(b[i]), 64)}, params)["D"]
            assert fp.value_of(got) == int(want[i]), (params, hex(int(a[i])), hex(int(b[i])))


def test_types_of_parameters_must_be_compile_time():
    p = compile_("D = A\n")
    with pytest.raises(SemanticsError):
        run(p, NumpyBackend((1,)), {"A": f64(1.0), "B": f64(1.0)}, {"rm": np.array(["rn"]), "flag": True})
    assert T_INT.kind == "int"
