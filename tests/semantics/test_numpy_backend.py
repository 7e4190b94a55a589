"""The numpy backend's float primitives (the reference model's arithmetic under the semantics
language's conventions) against MPFR and hand-computed vectors.

Arithmetic: every operation in every rounding mode and IEEE format, on patterns biased toward the
hard cases (edge values, near-one exponents for cancellation, random patterns), unflushed, with the
IEEE NaN rule; the fused scale reaches only ``fma``. Classification, quieting, flushing and
comparisons: every edge value of every format.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.formats import ROUNDINGS, get_format
from tilecheck.model.semantics import NumpyBackend
from tilecheck.inputs.edges import edge_values

from mpfr_ref import ieee, is_nan_bits

FORMATS = ("f16", "bf16", "f32", "f64")


def patterns(fmt, n, rng):
    """Edge values, near-one values (cancellation, ties) and random patterns."""
    edges = np.array(edge_values(fmt), dtype=np.uint64)
    kind = rng.integers(0, 3, n)
    out = rng.integers(0, 1 << 62, n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, n, dtype=np.uint64)
    out = out & np.uint64((1 << fmt.width) - 1)
    near = (rng.integers(0, 2, n).astype(np.uint64) << np.uint64(fmt.width - 1)) | (
        rng.integers(fmt.bias - 3, fmt.bias + 4, n).astype(np.uint64) << np.uint64(fmt.mantissa_bits)) | (
        rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(fmt.mantissa_mask))
    out = np.where(kind == 0, edges[rng.integers(0, edges.size, n)], out)
    return np.where(kind == 1, near, out)


@pytest.mark.parametrize("fmt_name", FORMATS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma"])
def test_arithmetic_matches_mpfr(fmt_name, op):
    fmt = get_format(fmt_name)
    rng = np.random.default_rng(sum(map(ord, fmt_name + op)))
    arity = 3 if op == "fma" else 2
    n = 250
    backend = NumpyBackend((n,))
    for rounding in ROUNDINGS:
        operands = [patterns(fmt, n, rng) for _ in range(arity)]
        got = backend.float_arith(fmt, op, rounding, operands, 0)
        assert got.dtype == np.uint64 and got.shape == (n,)
        for i in range(n):
            want = ieee(fmt, op, rounding, *[int(o[i]) for o in operands])
            g = int(got[i])
            if want is None:
                assert is_nan_bits(fmt, g), (op, rounding, [hex(int(o[i])) for o in operands], hex(g))
            else:
                assert g == want, (op, rounding, [hex(int(o[i])) for o in operands], hex(want), hex(g))


def test_scalar_constants_broadcast_against_case_arrays():
    f64 = get_format("f64")
    backend = NumpyBackend((3,))
    xs = np.array([0x3FF0000000000000, 0x4000000000000000, 0x7FF0000000000000], dtype=np.uint64)
    one = backend.float_const(f64, 0x3FF0000000000000)
    got = backend.float_arith(f64, "add", "rn", [xs, one], 0)
    assert got.tolist() == [0x4000000000000000, 0x4008000000000000, 0x7FF0000000000000]
    # a 0-d case (shape ()) works too, without numpy scalar-overflow warnings (filterwarnings=error)
    scalar = NumpyBackend(()).float_arith(f64, "sub", "rn", [one, one], 0)
    assert int(scalar) == 0


def test_only_fma_takes_a_scale():
    f32 = get_format("f32")
    backend = NumpyBackend((2,))
    one = np.full(2, 0x3F800000, dtype=np.uint64)
    zero = np.zeros(2, dtype=np.uint64)
    got = backend.float_arith(f32, "fma", "rn", [one, one, zero], np.array([3, -3], dtype=np.int64))
    assert got.tolist() == [0x41000000, 0x3E000000]
    assert backend.float_arith(f32, "fma", "rn", [one, one, zero], 5).tolist() == [0x42000000] * 2
    with pytest.raises(ValueError, match="only fma"):
        backend.float_arith(f32, "mul", "rn", [one, one], 1)


def test_ldexp_and_convert():
    f16, f32 = get_format("f16"), get_format("f32")
    backend = NumpyBackend((3,))
    x = np.array([0x3F800000, 0x00000003, 0x7F800001], dtype=np.uint64)
    assert backend.float_ldexp(f32, "rn", x, -1).tolist() == [0x3F000000, 0x00000002, 0x7FC00001]
    assert backend.float_ldexp(f32, "rp", x, np.array([1, -2, 0])).tolist() == [0x40000000, 0x00000001, 0x7FC00001]
    assert backend.float_convert(f32, f16, "rn", np.array([0x3F800000, 0x33000000, 0x7F812345])).tolist() \
        == [0x3C00, 0x0000, 0x7E09]
    assert backend.float_convert(f16, f32, "rn", np.array([0xFC01])).tolist() == [0xFFC02000]


@pytest.mark.parametrize("fmt_name", FORMATS)
def test_classification_quiet_flush_and_exponent(fmt_name):
    f = get_format(fmt_name)
    backend = NumpyBackend()
    bits = np.array(edge_values(f), dtype=np.uint64)
    top = (1 << f.exponent_bits) - 1
    for b, nan, snan, inf, zero, sub, normal, finite, neg, expo, quiet, flushed in zip(
            bits.tolist(), *(backend.float_test(f, w, bits).tolist() for w in
                             ("nan", "snan", "inf", "zero", "subnormal", "normal", "finite", "neg")),
            backend.float_exponent(f, bits).tolist(), backend.float_quiet(f, bits).tolist(),
            backend.float_flush(f, bits).tolist()):
        mag = b & f.magnitude_mask
        field = mag >> f.mantissa_bits
        assert nan == (mag > f.exponent_mask), hex(b)
        assert snan == (nan and not b & f.quiet_bit), hex(b)
        assert inf == (mag == f.exponent_mask), hex(b)
        assert zero == (mag == 0), hex(b)
        assert sub == (field == 0 and mag != 0), hex(b)
        assert normal == (0 < field < top), hex(b)
        assert finite == (field != top), hex(b)
        assert neg == bool(b & f.sign_mask), hex(b)
        assert expo == field, hex(b)
        assert quiet == (b | f.quiet_bit if nan else b), hex(b)  # only NaNs change
        assert flushed == (b & f.sign_mask if sub else b), hex(b)


def test_comparisons_are_ieee():
    f32 = get_format("f32")
    backend = NumpyBackend((4,))
    a = np.array([0x00000000, 0x7FC00000, 0x3F800000, 0x00000001], dtype=np.uint64)
    b = np.array([0x80000000, 0x7FC00000, 0x40000000, 0x00000000], dtype=np.uint64)
    assert backend.float_cmp(f32, "==", a, b).tolist() == [True, False, False, False]  # -0 == +0; NaN unordered
    assert backend.float_cmp(f32, "!=", a, b).tolist() == [False, True, True, True]
    assert backend.float_cmp(f32, "<", a, b).tolist() == [False, False, True, False]
    assert backend.float_cmp(f32, ">", a, b).tolist() == [False, False, False, True]  # subnormal > 0
