"""Triton's float64 -> bfloat16 on sm_80 (no ``cvt.rn.bf16.f64`` before sm_90): ``cvt.rn.f32.f64``,
then one step toward the input where that was inexact and landed on an even pattern (rounding to
odd), then ``cvt.rn.bf16.f32``. Rounding to odd first makes the second rounding exact; rounding to
nearest first would not.

Checked on the inputs where it matters -- float64 values on and a hair beside bfloat16 midpoints --
against MPFR (gmpy2), which shares no arithmetic with the model: the kernel misrounds none of them
against ``cvt.rn.bf16.f64``, and against the plain composition ``cvt.rn.bf16.f32(cvt.rn.f32.f64(a))``
it differs exactly where MPFR says rounding twice to nearest goes wrong (so the check can fail).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.verify.compiled import prepare, run_inputs

gmpy2 = pytest.importorskip("gmpy2")

PTX = Path(__file__).resolve().parents[2] / "examples" / "triton" / "convert_f64_bf16_sm80.ptx"
BF16 = gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True)
F32 = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True)


def _inputs(n: int, seed: int) -> np.ndarray:
    """float64 patterns: bfloat16 midpoints (normal range), the same nudged by 2^-52 .. 2^-25
    relative either way, and random finite values."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0x0080, 0x7F00, n).astype(np.uint32) | (rng.integers(0, 2, n).astype(np.uint32) << 15)
    mid = ((b << 16) | 0x8000).view(np.float32).astype(np.float64)
    nudged = mid * (1 + rng.choice([-1.0, 1.0], n) * np.ldexp(1.0, rng.integers(-52, -24, n)))
    rand = rng.integers(0, 1 << 64, n, dtype=np.uint64)
    rand = rand[(rand & 0x7FF0000000000000) != 0x7FF0000000000000]
    return np.concatenate([mid.view(np.uint64), nudged.view(np.uint64), rand])


def _bits(x) -> int:
    return int(np.float32(float(x)).view(np.uint32)) >> 16 if not gmpy2.is_nan(x) else 0x7FC0


def test_f64_to_bf16_on_sm80_rounds_once(db):
    xs = _inputs(4000, 5)
    once = prepare(str(PTX), "convert_kernel", "cvt.rn.bf16.f64", db=db)
    assert not run_inputs(once, [xs]).bad.any()
    twice = prepare(str(PTX), "convert_kernel", "cvt.rn.bf16.f32(cvt.rn.f32.f64(a))", db=db)
    got = run_inputs(twice, [xs]).bad
    predicted = np.zeros(xs.size, dtype=bool)
    for i, x in enumerate(xs.view(np.float64)):
        with gmpy2.context(BF16):
            right = gmpy2.mpfr(float(x))
        with gmpy2.context(F32):
            narrowed = gmpy2.mpfr(float(x))
        with gmpy2.context(BF16):
            wrong = gmpy2.mpfr(narrowed)
        predicted[i] = _bits(right) != _bits(wrong)
    assert predicted.sum() >= 100, "the inputs must reach double roundings"
    assert np.array_equal(got, predicted), np.flatnonzero(got != predicted)[:5]


@pytest.mark.parametrize("source,result", [("f64", "f32"), ("f64", "bf16"), ("f64", "f16"), ("f32", "bf16"),
                                           ("f32", "f16"), ("f16", "bf16")])
def test_narrowing_midpoints_lie_on_or_beside_a_tie_of_the_result(source, result):
    """Each pattern, by fractions: on a midpoint of two neighbouring ``result`` values (or the
    rounding boundary to infinity), or within three ``source`` ulps or 2^-(p+2) relative of one."""
    from tilecheck.formats import get_format
    from tilecheck.inputs.boundaries import narrowing_midpoints
    s, r = get_format(source), get_format(result)
    pats = narrowing_midpoints(s, r, 600, np.random.default_rng(9))
    assert pats.size == 600 and int(pats.max()) < (1 << s.width)
    on, near = 0, 0
    for b in pats.tolist():
        v = abs(s.to_fraction(b))
        lo_bits = r.from_fraction(v, "rz")
        lo = r.to_fraction(lo_bits)
        hi = r.to_fraction(lo_bits + 1) if lo_bits + 1 < r.exponent_mask else \
            lo + (lo - r.to_fraction(lo_bits - 1))  # past the largest finite value: its ulp again
        mid = (lo + hi) / 2
        ulp_s = abs(s.to_fraction((b & s.magnitude_mask) + 1) - s.to_fraction(b & s.magnitude_mask))
        on += v == mid
        near += abs(v - mid) <= 3 * ulp_s or abs(v - mid) <= mid / 2 ** (r.mantissa_bits + 2)
    assert on >= 150 and near == pats.size
    assert narrowing_midpoints("f32", "f64", 10, np.random.default_rng(1)) is None
