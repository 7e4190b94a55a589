"""sin(x) and cos(x) as tilecheck.model.sincos decides them, against MPFR (gmpy2), which shares no
code with it.

* the float64 enclosure holds MPFR's value on random operands, on the binary32 values nearest
  k pi/2 (k up to 200: the reduction's hard cases), on tiny operands and near the range limits;
* RN(sin x), RN(cos x) in binary32 equal MPFR's correctly rounded values;
* the exact comparison agrees with MPFR at 400 bits on thresholds a hair either side of f(x);
* the contracts of sin.approx{.ftz}.f32 and cos.approx{.ftz}.f32: each lane's allowed run is
  exactly what the ISA's words give with f(x) and 2^-20.5, 2^-14.7 computed by MPFR (ends inside,
  the values just outside not; both signs where the bound reaches zero); |x| <= 2pi takes
  2^-20.5 and |x| <= 100pi 2^-14.7, decided for the binary32 values either side of 2pi and
  100pi by MPFR; beyond 100pi, and under .ftz where the bound reaches a flushed zero, unknown.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilecheck.model import api, sincos

gmpy2 = pytest.importorskip("gmpy2")

WIDE = gmpy2.context(precision=400, emin=-100000, emax=100000)
F32 = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True)
FORMS = ["sin.approx.f32", "sin.approx.ftz.f32", "cos.approx.f32", "cos.approx.ftz.f32"]


def _value(bits: int) -> float:
    return float(np.uint32(bits).view(np.float32))


def _bits(v) -> int:
    return int(np.float32(v).view(np.uint32))


def _near_half_pi_multiples(kmax: int = 200) -> list[int]:
    """The binary32 patterns within 3 steps of k pi/2, 0 < |k| <= kmax, found with MPFR's pi."""
    out = []
    with gmpy2.context(WIDE):
        pi = gmpy2.const_pi()
        for k in range(-kmax, kmax + 1):
            if k == 0:
                continue
            b = _bits(float(k * pi / 2))
            out += [b + d for d in range(-3, 4)]
    return out


def _inputs(n: int, seed: int) -> np.ndarray:
    """Binary32 patterns with |x| <= 100pi: random magnitudes, tiny values, the hard reductions
    and the values either side of 2pi and 100pi."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-315, 315, n).astype(np.float32)
    tiny = (rng.standard_normal(n // 4) * 10.0 ** rng.uniform(-40, -1, n // 4)).astype(np.float32)
    limits = []
    for k in (2, 100):
        b = _bits(sincos.magnitude_limit(k))
        limits += [b - 1, b, b + 1, b | 0x80000000, (b + 1) | 0x80000000]
    pats = np.concatenate([x.view(np.uint32), tiny.view(np.uint32), np.array(_near_half_pi_multiples(), dtype=np.uint32),
                           np.array(limits + [1, 0x80000001, 0x7FFFFF, 0x800000, 0x3F800000], dtype=np.uint32)])
    pats = pats[(pats & 0x7FFFFFFF) != 0]
    return np.unique(pats)


def _mpfr(fn: str, bits: int):
    with gmpy2.context(WIDE):
        return getattr(gmpy2, fn)(gmpy2.mpfr(_value(bits), 53))


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_enclosure_holds_mpfrs_value(fn):
    xs = _inputs(4000, 1)
    xs = xs[np.abs(xs.view(np.float32)) <= sincos.LIMIT]
    lo, hi = sincos.enclosure(np, fn, xs.view(np.float32).astype(np.float64))
    bad = []
    for x, a, b in zip(xs, lo, hi):
        v = _mpfr(fn, int(x))
        with gmpy2.context(WIDE):
            if not (gmpy2.mpfr(float(a)) < v < gmpy2.mpfr(float(b))):
                bad.append(f"{int(x):#010x}: [{a!r}, {b!r}] misses {v}")
    assert not bad, bad[:5]


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_rounded_is_mpfrs(fn):
    xs = _inputs(3000, 2)
    got = np.asarray(api.reference(f"{fn}.approx.f32", xs))
    wrong = []
    for x, g in zip(xs, got):
        with gmpy2.context(F32):
            want = _bits(float(getattr(gmpy2, fn)(gmpy2.mpfr(_value(int(x)), 53))))
        if int(g) != want:
            wrong.append(f"{int(x):#010x}: model {int(g):#010x}, MPFR {want:#010x}")
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_compare_agrees_with_mpfr_a_hair_either_side(fn):
    xs = _inputs(200, 3)
    for x in xs[:: max(1, xs.size // 300)]:
        num, den = _mpfr(fn, int(x)).as_integer_ratio()
        t = Fraction(int(num), int(den))
        xf = Fraction(_value(int(x)))
        for hair in (Fraction(1, 1 << 70), Fraction(1, 1 << 120)):
            assert sincos.compare(fn, xf, t + hair) == -1 and sincos.compare(fn, xf, t - hair) == 1, hex(int(x))


def _bound(bits: int):
    """The ISA's bound for this operand, with the range decided by MPFR's pi (None beyond 100pi)."""
    with gmpy2.context(WIDE):
        ax = abs(gmpy2.mpfr(_value(bits), 53))
        pi = gmpy2.const_pi()
        if ax <= 2 * pi:
            return gmpy2.exp2(gmpy2.mpfr(-41) / 2)
        if ax <= 100 * pi:
            return gmpy2.exp2(gmpy2.mpfr(-147) / 10)
    return None


def _within_mpfr(fn: str, x: int, r: int, ftz: bool) -> bool:
    """The ISA's words with MPFR: |r - f(x)| <= bound; under .ftz no subnormal result, and a zero of
    either sign where the bound holds a value that flushes to it (a subnormal of that sign, or 0)."""
    mag = r & 0x7FFFFFFF
    if mag >= 0x7F800000 or (ftz and 0 < mag < 0x800000):
        return False
    f, b = _mpfr(fn, x), _bound(x)
    with gmpy2.context(WIDE):
        if ftz and mag == 0:
            tiny = gmpy2.exp2(-126)
            if r & 0x80000000:
                return f + b > -tiny and f - b <= 0
            return f - b < tiny and f + b >= 0
        return abs(gmpy2.mpfr(_value(r), 53) - f) <= b


def _key(bits: int) -> int:
    return -(bits & 0x7FFFFFFF) - 1 if bits & 0x80000000 else bits


def _pattern(key: int) -> int:
    return (-key - 1) | 0x80000000 if key < 0 else key


@pytest.mark.parametrize("name", FORMS)
def test_allowed_runs_are_the_isas_words(name):
    fn, ftz = name.split(".")[0], ".ftz" in name
    xs = _inputs(300, 4)
    r = api.allowed_results(name, xs)
    checked = 0
    for i, x in enumerate(xs):
        x = int(x)
        b = _bound(x)
        if ftz and 0 < (x & 0x7FFFFFFF) < 0x800000:
            continue  # read as a zero: the special table (below)
        if b is None:
            assert bool(r.unbounded[i]), f"{x:#010x}: beyond 100pi must be unknown"
            continue
        f = _mpfr(fn, x)
        with gmpy2.context(WIDE):
            zero_reach = abs(f) <= b + (gmpy2.exp2(-126) if ftz else 0)
        if ftz and zero_reach:
            assert bool(r.unbounded[i]), f"{x:#010x}: under .ftz a bound reaching a flushed zero is no single run"
            continue
        assert not bool(r.unbounded[i]) and not bool(r.empty[i]), hex(x)
        k_lo, k_hi = _key(int(r.lo[i])), _key(int(r.hi[i]))
        for key, want in ((k_lo, True), (k_hi, True), (k_lo - 1, False), (k_hi + 1, False)):
            assert _within_mpfr(fn, x, _pattern(key), ftz) == want, f"{name} {x:#010x}: {_pattern(key):#010x}"
        checked += 1
        # the verdict of allowed() on the ends and beyond, one lane at a time
        for key in (k_lo - 1, k_lo, k_hi, k_hi + 1):
            got = bool(api.allowed(name, np.uint32(_pattern(key)), np.uint32(x)))
            assert got == (k_lo <= key <= k_hi), f"{name} {x:#010x}: allowed({_pattern(key):#010x})"
    assert checked > 200


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_the_ranges_change_where_mpfr_says(fn):
    """2^-20.5 up to 2pi, 2^-14.7 up to 100pi, nothing beyond: the binary32 values either side."""
    with gmpy2.context(WIDE):
        pi = gmpy2.const_pi()
        for k in (2, 100):
            below = sincos.magnitude_limit(k)
            assert gmpy2.mpfr(below) < k * pi < gmpy2.mpfr(float(np.nextafter(np.float32(below), np.float32(np.inf))))
    inside, outside = _bits(sincos.magnitude_limit(100)), _bits(sincos.magnitude_limit(100)) + 1
    r = api.allowed_results(f"{fn}.approx.f32", np.array([inside, outside, inside | 0x80000000,
                                                          outside | 0x80000000], dtype=np.uint32))
    assert [bool(u) for u in r.unbounded] == [False, True, False, True]
    two_pi = _bits(sincos.magnitude_limit(2))
    r = api.allowed_results(f"{fn}.approx.f32", np.array([two_pi, two_pi + 1], dtype=np.uint32))
    widths = [_value(int(h)) - _value(int(lo)) for lo, h in zip(r.lo, r.hi)]
    assert 45 < widths[1] / widths[0] < 70  # 2^-14.7 against 2^-20.5: 2^5.8 = 55.7 times as wide (in steps)


def test_an_absolute_bound_grants_both_signs_near_a_zero():
    x = np.array([_bits(float(np.float32(np.pi)))], dtype=np.uint32)  # sin(pi_f32) = -8.7e-8
    for name, zero_ok in (("sin.approx.f32", True), ("sin.approx.ftz.f32", None)):
        r = api.allowed_results(name, x)
        if zero_ok is None:
            assert bool(r.unbounded[0])
            continue
        assert _key(int(r.lo[0])) < -1 and _key(int(r.hi[0])) > 0
        for z in (0, 0x80000000, 0x00000001, 0x80000001):
            assert bool(api.allowed(name, np.uint32(z), x[0]))


def test_special_operands_take_the_table():
    for name in FORMS:
        fn = name.split(".")[0]
        one = 0x3F800000
        for x, want in ((0x80000000, 0x80000000 if fn == "sin" else one), (0, 0 if fn == "sin" else one)):
            assert bool(api.allowed(name, np.uint32(want), np.uint32(x)))
            assert not bool(api.allowed(name, np.uint32(want ^ 0x80000000 if fn == "sin" else 0x3F7FFFFF),
                                        np.uint32(x)))
        for x in (0x7F800000, 0xFF800000, 0x7FC00000):
            assert bool(api.allowed(name, np.uint32(0x7FFFFFFF), np.uint32(x)))
            assert not bool(api.allowed(name, np.uint32(0), np.uint32(x)))
    # .ftz reads a subnormal as a zero of its sign
    assert bool(api.allowed("sin.approx.ftz.f32", np.uint32(0x80000000), np.uint32(0x80000005)))
    assert not bool(api.allowed("sin.approx.ftz.f32", np.uint32(0x80000005), np.uint32(0x80000005)))
    assert bool(api.allowed("cos.approx.ftz.f32", np.uint32(0x3F800000), np.uint32(0x00000005)))
