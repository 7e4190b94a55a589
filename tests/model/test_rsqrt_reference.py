"""The vectorised correctly rounded 1/sqrt (contracts' reference for rsqrt forms) against
1/sqrt computed with Python integers (``isqrt`` on rationals) and against MPFR's ``rec_sqrt``."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.model import contracts, ops
from tilecheck.oracle.mpfr import mpfr_op


def _positive_finite(fmt, a, flush):
    a = a.astype(np.uint64)
    ok = (a > 0) & (a < fmt.exponent_mask)
    return ok & (a >= fmt.min_normal) if flush else ok


def _vectorised(fmt, a, rounding, flush):
    mode = ops.Mode(rounding, flush)
    rule = ops.NanRule(False, fmt.canonical_nan, fixed=fmt.canonical_nan)
    return contracts._rsqrt_rn(np, fmt, a.astype(np.uint64), mode, rule)


@pytest.mark.parametrize("name", ["f16", "bf16"])
@pytest.mark.parametrize("rounding", ["rn", "rz", "rm", "rp"])
def test_every_16_bit_input_matches_integer_path(name, rounding):
    fmt = get_format(name)
    a = np.arange(1, fmt.exponent_mask, dtype=np.uint64)
    got = _vectorised(fmt, a, rounding, False)
    mode = ops.Mode(rounding)
    want = np.array([contracts._rsqrt_exact_bits(fmt, int(x), mode) for x in a], dtype=np.uint64)
    assert np.array_equal(got, want)


def _f32_inputs():
    rng = np.random.default_rng(20261201)
    return np.concatenate([
        rng.integers(1, 0x7F800000, 20000, dtype=np.uint64),
        np.arange(1, 600, dtype=np.uint64),                       # smallest subnormals
        np.arange(0x00800000 - 300, 0x00800000 + 300, dtype=np.uint64),
        np.arange(0x7F7FFE00, 0x7F800000, dtype=np.uint64),       # largest normals
        np.array([0x3F800000, 0x40800000, 0x3E800000, 0x00000004], dtype=np.uint64),  # exact roots
    ])


@pytest.mark.parametrize("rounding", ["rn", "rz", "rm", "rp"])
@pytest.mark.parametrize("flush", [False, True])
def test_f32_matches_mpfr(rounding, flush):
    fmt = get_format("f32")
    a = _f32_inputs()
    got = _vectorised(fmt, a, rounding, flush)
    keep = _positive_finite(fmt, a, flush)
    want = [mpfr_op("rsqrt", fmt, rounding, int(x), ftz=flush) for x in a[keep]]
    assert np.array_equal(got[keep], np.array(want, dtype=np.uint64))


def test_one_ulp_error_would_be_seen():
    """The comparison above can fail: a result one unit off differs from MPFR's."""
    fmt = get_format("f32")
    a = np.array([0x40000000], dtype=np.uint64)  # 1/sqrt(2), inexact
    got = int(_vectorised(fmt, a, "rn", False)[0])
    want = mpfr_op("rsqrt", fmt, "rn", 0x40000000)
    assert got == want and got + 1 != want


def test_special_operands_follow_one_over_sqrt():
    """+-0 -> +-inf, +inf -> +0, NaN and negatives -> the fixed NaN; the direct table and the
    general 1/sqrt(x) evaluation agree."""
    fmt = get_format("f32")
    rule = ops.NanRule(False, fmt.canonical_nan, fixed=fmt.canonical_nan)
    a = np.array([0, fmt.sign_mask, fmt.inf, fmt.inf | fmt.sign_mask, fmt.canonical_nan, 0x7F800001,
                  0xBF800000, 0x80000001], dtype=np.uint64)
    direct = contracts._ieee_special(np, "rsqrt", fmt, [a], rule)
    assert direct.tolist() == [fmt.inf, fmt.inf | fmt.sign_mask, 0] + [fmt.canonical_nan] * 5
    general = contracts._ieee_special(np, "rsqrt", fmt, [a], ops.NanRule(False, fmt.canonical_nan,
                                                                          fixed=None))
    assert np.array_equal(direct[:3], general[:3])
