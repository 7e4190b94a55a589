"""The exact vectorised kernel of the numpy backend against MPFR and exact rationals.

Every operation in every rounding mode and IEEE format, on patterns biased toward the hard cases
(edge values, near-one exponents for cancellation, random patterns), plus the fused scaled FMA
and ``ldexp`` that V_DIV_FMAS / V_DIV_SCALE need, and a large-array comparison with the
reference model (an independent implementation).
"""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.semantics import npfloat as nf
from tilecheck.testing.edges import edge_values

from mpfr_ref import is_nan_bits, ieee, scaled_fma

FORMATS = ("f16", "bf16", "f32", "f64")
ROUNDINGS = ("rn", "rz", "rm", "rp")


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
def test_ops_match_mpfr(fmt_name, op):
    fmt = get_format(fmt_name)
    rng = np.random.default_rng(hash((fmt_name, op)) % 2**32)
    arity = 3 if op == "fma" else 2
    n = 250
    for rounding in ROUNDINGS:
        ops = [patterns(fmt, n, rng) for _ in range(arity)]
        got = getattr(nf, op)(fmt, rounding, *ops)
        for i in range(n):
            want = ieee(fmt, op, rounding, *[int(o[i]) for o in ops])
            g = int(got[i])
            if want is None:
                assert is_nan_bits(fmt, g), (op, rounding, [hex(int(o[i])) for o in ops], hex(g))
            else:
                assert g == want, (op, rounding, [hex(int(o[i])) for o in ops], hex(want), hex(g))


@pytest.mark.parametrize("fmt_name", ["f32", "f64"])
def test_fused_scaled_fma_and_ldexp_match_rationals(fmt_name):
    fmt = get_format(fmt_name)
    rng = np.random.default_rng(7)
    n = 400

    def values(lo, hi):
        e = rng.integers(lo, hi, n).astype(np.uint64)
        m = rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(fmt.mantissa_mask)
        s = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(fmt.width - 1)
        return s | (e << np.uint64(fmt.mantissa_bits)) | m

    a, b, c = values(1, 2 * fmt.bias), values(fmt.bias - 3, fmt.bias + 3), values(0, 2 * fmt.bias)
    scale = rng.integers(-3 * fmt.bias, 3 * fmt.bias, n)
    from fractions import Fraction

    for rounding in ROUNDINGS:
        got = nf.fma(fmt, rounding, a, b, c, scale)
        got_ldexp = nf.ldexp(fmt, rounding, a, scale)
        checked = 0
        for i in range(n):
            want = scaled_fma(fmt, rounding, int(a[i]), int(b[i]), int(c[i]), int(scale[i]))
            if want is not None:
                assert int(got[i]) == want, (rounding, hex(int(a[i])), hex(int(b[i])), hex(int(c[i])), int(scale[i]))
                checked += 1
            exact = fmt.to_fraction(int(a[i])) * Fraction(2) ** int(scale[i])
            assert int(got_ldexp[i]) == fmt.from_fraction(exact, rounding, negative_zero=bool(int(a[i]) >> (fmt.width - 1)))
        assert checked > n * 0.9  # guard: the comparison really ran


def test_fused_scale_rounds_once_in_the_subnormal_range():
    # (1 + 2^-52) * 2^-1074 * 2^... : a value that double rounding would get wrong
    fmt = get_format("f64")
    a = np.array([0x3ff0000000000001], dtype=np.uint64)  # 1 + 2^-52
    one = np.array([0x3ff0000000000000], dtype=np.uint64)
    zero = np.array([0], dtype=np.uint64)
    # (1 + 2^-52) * 2^-1074 is just above the smallest subnormal: one rounding gives 2^-1074
    assert int(nf.fma(fmt, "rn", a, one, zero, -1074)[0]) == 1
    # 1.5 * 2^-1074 is a tie -> even (2 * 2^-1074); (1.5 + 2^-52) * 2^-1074 must round up
    x = np.array([0x3ff8000000000001], dtype=np.uint64)
    assert int(nf.fma(fmt, "rn", x, one, zero, -1074)[0]) == 2
    assert int(nf.fma(fmt, "rz", x, one, zero, -1074)[0]) == 1


@pytest.mark.parametrize("fmt_name", FORMATS)
def test_kernel_agrees_with_the_reference_model_on_large_arrays(fmt_name):
    from tilecheck.model.api import ieee_op

    fmt = get_format(fmt_name)
    rng = np.random.default_rng(3)
    n = 20000
    for op in ("add", "mul", "fma", "div"):
        arity = 3 if op == "fma" else 2
        ops = [patterns(fmt, n, rng) for _ in range(arity)]
        for rounding in ROUNDINGS:
            got = getattr(nf, op)(fmt, rounding, *ops)
            want = np.asarray(ieee_op(op, fmt, rounding, *ops)).astype(np.uint64)
            both_nan = nf.is_nan(fmt, got) & nf.is_nan(fmt, want)
            bad = np.nonzero((got != want) & ~both_nan)[0]
            assert bad.size == 0, (op, rounding, [hex(int(o[bad[0]])) for o in ops], hex(int(want[bad[0]])),
                                   hex(int(got[bad[0]])))


def test_convert_widens_exactly_and_narrows_correctly():
    f16, f32 = get_format("f16"), get_format("f32")
    rng = np.random.default_rng(5)
    x = patterns(f16, 2000, rng)
    wide = nf.convert(f16, f32, "rn", x)
    back = nf.convert(f32, f16, "rn", wide)
    finite = ~nf.is_nan(f16, x)
    assert np.all(back[finite] == x[finite])
    assert np.all(nf.is_nan(f32, wide) == nf.is_nan(f16, x))


def test_bit_length_is_exact_near_powers_of_two():
    values = [0, 1, 2, 3, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]
    got = nf.bit_length(np.array(values, dtype=np.uint64))
    assert list(got) == [v.bit_length() for v in values]
