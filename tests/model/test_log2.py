"""log2(x) as tilecheck.model.log2 decides it, against MPFR (gmpy2), which shares no code with it.

* RN(log2 x) in binary32 equals MPFR's correctly rounded log2 (subnormal inputs, powers of two,
  the values around 1, 0.5 and 2 where the bound changes kind, the largest finite value);
* the exact comparison agrees with MPFR at 300 bits on thresholds a hair either side of log2 x;
* the contract of lg2.approx.f32: each lane's allowed run is exactly what the ISA's words give
  with log2 x computed by MPFR -- its ends within the bound, the values just outside it not --
  absolute 2^-22 for x in (0.5, 2) (both signs near 1), relative 2^-22 elsewhere; under .ftz
  the lanes whose bound reaches zero are unknown, and a subnormal input is a zero (-Inf).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilecheck.model import api, log2

gmpy2 = pytest.importorskip("gmpy2")

WIDE = gmpy2.context(precision=300, emin=-100000, emax=100000)
F32 = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True)


def _inputs(n: int, seed: int, span: int = 2048) -> np.ndarray:
    """Positive finite binary32 patterns: random ones, the ``2 span`` around 1, 0.5 and 2,
    subnormals, powers of two and the largest finite value."""
    rng = np.random.default_rng(seed)
    pats = [rng.integers(1, 0x7F800000, n, dtype=np.uint64)]
    for centre in (0x3F800000, 0x3F000000, 0x40000000):
        pats.append(np.arange(centre - span, centre + span, dtype=np.uint64))
    pats.append(np.array([1, 2, 3, 0x7FFFFF, 0x800000, 0x7F7FFFFF] + [e << 23 for e in range(1, 255)], dtype=np.uint64))
    return np.unique(np.concatenate(pats)).astype(np.uint32)


def _value(bits: int) -> float:
    return float(np.uint32(bits).view(np.float32))


def _mpfr_log2(bits: int):
    with gmpy2.context(WIDE):
        return gmpy2.log2(gmpy2.mpfr(_value(bits), 53))


def test_rounded_log2_is_mpfrs():
    xs = _inputs(6000, 1)
    got = np.asarray(api.reference("lg2.approx.f32", xs))
    wrong = []
    for x, g in zip(xs, got):
        with gmpy2.context(F32):
            want = np.float32(float(gmpy2.log2(gmpy2.mpfr(_value(x), 53)))).view(np.uint32)
        if x == 0x3F800000:
            want = np.uint32(0)  # +0, as IEEE 754 gives log2(1)
        if int(g) != int(want):
            wrong.append(f"{int(x):#010x}: model {int(g):#010x}, MPFR {int(want):#010x}")
    assert not wrong, wrong[:10]


def test_compare_agrees_with_mpfr_a_hair_either_side():
    xs = _inputs(300, 2)
    for x in xs[:: max(1, xs.size // 600)]:
        exact = _mpfr_log2(int(x))
        xf = Fraction(_value(int(x)))
        for hair in (Fraction(1, 1 << 60), Fraction(1, 1 << 90)):
            num, den = exact.as_integer_ratio()
            t = Fraction(int(num), int(den))
            if xf.numerator & (xf.numerator - 1) == 0 and xf.denominator & (xf.denominator - 1) == 0:
                assert log2.compare(xf, t) == 0  # a power of two: log2 x is the integer t
                continue
            assert log2.compare(xf, t + hair) == -1 and log2.compare(xf, t - hair) == 1


def _within_mpfr(x: int, r: int, ftz: bool) -> bool:
    """The ISA's words, with log2 x by MPFR: |r - L| <= 2^-22 for x in (0.5, 2), else <= 2^-22 |L|."""
    mag = r & 0x7FFFFFFF
    if mag >= 0x7F800000:
        return False
    if ftz and 0 < mag < 0x800000:
        return False
    L = _mpfr_log2(x)
    with gmpy2.context(WIDE):
        err = abs(gmpy2.mpfr(_value(r), 53) - L)
        xv = _value(x)
        bound = gmpy2.mpfr(2) ** -22 if 0.5 < xv < 2 else gmpy2.mpfr(2) ** -22 * abs(L)
        return bool(err <= bound)


def _neighbour(bits: int, step: int) -> int:
    """The binary32 pattern ``step`` values away in real-number order (across both zeros)."""
    key = -(bits & 0x7FFFFFFF) - 1 if bits >> 31 else bits
    key += step
    return (((-key - 1) | 0x80000000) if key < 0 else key) & 0xFFFFFFFF


@pytest.mark.parametrize("name", ["lg2.approx.f32", "lg2.approx.ftz.f32"])
def test_allowed_runs_are_the_isas_words_under_mpfr(name):
    ftz = "ftz" in name
    xs = _inputs(1000, 3, span=160)
    xs = xs[(xs & 0x7FFFFFFF) >= (0x800000 if ftz else 0)]
    res = api.allowed_results(name, xs)
    wrong = []
    for i, x in enumerate(xs):
        x = int(x)
        L = _mpfr_log2(x)
        with gmpy2.context(WIDE):
            crosses = 0.5 < _value(x) < 2 and abs(L) <= gmpy2.mpfr(2) ** -22
        if ftz and crosses:
            if not bool(res.unbounded[i]):
                wrong.append(f"{x:#010x}: the bound reaches zero under .ftz, yet the lane is judged")
            continue
        lo, hi = int(res.lo[i]), int(res.hi[i])
        for r, want in ((lo, True), (hi, True), (_neighbour(lo, -1), False), (_neighbour(hi, 1), False)):
            if _within_mpfr(x, r, ftz) != want:
                wrong.append(f"{x:#010x}: {r:#010x} {'outside' if want else 'inside'} the bound by MPFR")
            if bool(api.allowed(name, r, x)) != want:
                wrong.append(f"{x:#010x}: allowed({r:#010x}) is {not want}")
    assert not wrong, wrong[:10]


def test_near_one_the_absolute_bound_allows_both_signs():
    one = 0x3F800000
    r = api.allowed_results("lg2.approx.f32", np.array([one, one + 1], dtype=np.uint32))
    for lane in range(2):
        assert r.lo[lane] >> 31 == 1 and r.hi[lane] >> 31 == 0  # negative to positive, both zeros inside
    assert bool(api.allowed("lg2.approx.f32", 0x80000000, one)) and bool(api.allowed("lg2.approx.f32", 0, one))
    assert not bool(api.allowed("lg2.approx.f32", 0x34800001, one))  # just past 2^-22


def test_specials_and_flushed_inputs():
    cases = [(0x00000000, 0xFF800000), (0x80000000, 0xFF800000), (0x7F800000, 0x7F800000)]
    for name in ("lg2.approx.f32", "lg2.approx.ftz.f32"):
        for x, want in cases:
            assert bool(api.allowed(name, want, x)), (name, hex(x))
        for x in (0xBF800000, 0xFF800000, 0x7FC00000) + (() if "ftz" in name else (0x80000001,)):
            # negative, -inf, NaN, and without .ftz a -subnormal: NaN
            assert bool(api.allowed(name, 0x7FFFFFFF, x)) and not bool(api.allowed(name, 0, x)), (name, hex(x))
    for x in (0x00000001, 0x80000001):  # under .ftz a subnormal is read as a zero of its sign: -Inf
        assert bool(api.allowed("lg2.approx.ftz.f32", 0xFF800000, x)) and \
            not bool(api.allowed("lg2.approx.ftz.f32", 0x7FFFFFFF, x))
    assert not bool(api.allowed("lg2.approx.f32", 0xFF800000, 0x00000001))  # supported: log2 = -149
    assert bool(api.allowed("lg2.approx.f32", 0xC3150000, 0x00000001))


def test_the_contract_describes_both_parts_of_its_bound():
    from tilecheck.spec.database import load_database

    text = load_database().forms["lg2.approx.f32"].contract.describe()
    assert text == "relative error 2^-22 (absolute error 2^-22 for |a| in (2^-1, 2^1))"
