"""Triton's ``tl.fma`` on bfloat16 compiled for sm_75 (no bf16 arithmetic there): ``fma.rn.f32`` of
the widened operands, then float32 to bfloat16 by integer rounding code (``cvt.rn.bf16.f32`` is
sm_80). Two roundings where ``fma.rn.bf16`` makes one.

The simulator's verdicts are checked against MPFR (gmpy2), which shares no arithmetic with the
model: an input is misrounded against ``fma.rn.bf16`` exactly where RN_bf16(a b + c) differs from
RN_bf16(RN_f32(a b + c)), and the kernel matches the float32 composition everywhere. Inputs: random
finite operands, and products on a bfloat16 midpoint plus a tiny addend (where double rounding
bites).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.verify.compiled import prepare, run_inputs

gmpy2 = pytest.importorskip("gmpy2")

PTX = Path(__file__).resolve().parents[2] / "examples" / "triton" / "fma_bf16_sm75.ptx"
BF16 = gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True)
F32 = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True)
WIDE = gmpy2.context(precision=400, emin=-100000, emax=100000)


def _value(bits: int) -> float:
    return float(np.uint32(bits << 16).view(np.float32))


def _inputs(n: int, seed: int):
    """Finite bf16 triples: random ones, and products that fall exactly on a bfloat16 midpoint with
    an addend far below the product's float32 ulp (float32 rounds the sum onto the midpoint, and the
    tie then goes to even whichever side the addend was on)."""
    rng = np.random.default_rng(seed)
    patterns = np.arange(1 << 16, dtype=np.uint32)
    finite = patterns[(patterns & 0x7F80) != 0x7F80]
    a, b, c = (rng.choice(finite, n).astype(np.uint16) for _ in range(3))
    # products of normal operands in a safe range, exact in float64
    ea = rng.integers(0x3C00, 0x4300, 40 * n).astype(np.uint32)
    eb = rng.integers(0x3C00, 0x4300, 40 * n).astype(np.uint32)
    prod = (ea << 16).view(np.float32).astype(np.float64) * (eb << 16).view(np.float32).astype(np.float64)
    mant, _ = np.frexp(prod)
    scaled = np.abs(mant) * 2.0 ** 8  # bfloat16's 8 significant bits above the point, a midpoint at .5
    on_midpoint = (scaled - np.floor(scaled)) == 0.5
    pick = np.flatnonzero(on_midpoint)[: n // 2]
    assert pick.size >= n // 4
    exp = np.frexp(prod[pick])[1]
    tiny = np.ldexp(1.0, exp - 30) * rng.choice([-1.0, 1.0], pick.size)  # far below float32's ulp
    k = np.arange(pick.size)
    a[k], b[k] = ea[pick].astype(np.uint16), eb[pick].astype(np.uint16)
    c[k] = (tiny.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return a, b, c


def _exact(a: int, b: int, c: int):
    with gmpy2.context(WIDE):
        return gmpy2.mpfr(_value(a)) * gmpy2.mpfr(_value(b)) + gmpy2.mpfr(_value(c))


def _round(ctx, x):
    with gmpy2.context(ctx):
        return gmpy2.mpfr(x)


def test_fma_bf16_on_sm75_misrounds_exactly_where_mpfr_double_rounds(db):
    a, b, c = _inputs(1500, 11)
    one = prepare(str(PTX), "fma_kernel", "fma.rn.bf16", db=db)
    two = prepare(str(PTX), "fma_kernel", "cvt.rn.bf16.f32(fma.rn.f32(cvt.f32.bf16(a), cvt.f32.bf16(b), cvt.f32.bf16(c)))",
                  db=db)
    got_one = run_inputs(one, [a, b, c]).bad
    got_two = run_inputs(two, [a, b, c]).bad
    predicted = np.zeros(a.size, dtype=bool)
    for i in range(a.size):
        x = _exact(int(a[i]), int(b[i]), int(c[i]))
        once, twice = _round(BF16, x), _round(BF16, _round(F32, x))
        # an infinite result rounds alike either way; zeros compare by value and sign
        predicted[i] = not (once == twice and gmpy2.is_signed(once) == gmpy2.is_signed(twice))
    assert predicted.sum() >= 5, "the inputs must reach some double roundings"
    assert np.array_equal(got_one, predicted), np.flatnonzero(got_one != predicted)[:5]
    assert not got_two.any()
