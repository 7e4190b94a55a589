"""tanh(x) as tilecheck.model.tanh decides it, against MPFR (gmpy2), which shares no code with it.

* the float64 enclosure holds MPFR's value on random binary32 operands of every magnitude, on
  both sides of the branches (|x| = 1/4 and 20) and on subnormals;
* RN(tanh x) equals MPFR's correctly rounded value: binary32 sampled, binary16 and bfloat16 on
  every finite non-zero input;
* the exact comparison agrees with MPFR at 400 bits on thresholds a hair either side of tanh(x);
* the contracts: each lane's allowed run is exactly what the ISA's words give with tanh(x) and
  2^-10.987 computed by MPFR (ends inside, the values just outside not): tanh.approx.f32 relative
  2^-11 (its sign, no zero), .f16 absolute 2^-10.987 and .bf16 absolute 2^-8 (both signs near 0),
  every finite non-zero half input; .f16x2 judges each half alone.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilecheck.model import api, tanh

gmpy2 = pytest.importorskip("gmpy2")

WIDE = gmpy2.context(precision=4000, emin=-100000, emax=100000)
"""4000 bits: tanh(x) differs from +-1 by 2 e^-2|x|, which binary32 results and the bound's ends
resolve (1 + 2^-11 = (1 + 2^-11) tanh(x) exactly when tanh(x) = 1): to |x| = 1000 it is above
2^-2886."""
ROUND = {"f32": gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True),
         "f16": gmpy2.context(precision=11, emin=-23, emax=16, subnormalize=True),
         "bf16": gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True)}


def _f32(bits: int) -> float:
    return float(np.uint32(bits).view(np.float32))


def _value(fmt: str, bits: int) -> float:
    if fmt == "f32":
        return _f32(bits)
    if fmt == "f16":
        return float(np.uint16(bits).view(np.float16))
    return _f32(bits << 16)


def _bits(fmt: str, v: float) -> int:
    if fmt == "f32":
        return int(np.float32(v).view(np.uint32))
    if fmt == "f16":
        return int(np.float16(v).view(np.uint16))
    return int(np.float32(v).view(np.uint32)) >> 16  # exact: v is a bfloat16 value


def _f32_inputs(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pats = [rng.integers(1, 0x7F800000, n, dtype=np.uint64),  # every magnitude
            np.frombuffer(rng.uniform(-25, 25, n).astype(np.float32).tobytes(), dtype=np.uint32).astype(np.uint64),
            np.array([1, 2, 0x7FFFFF, 0x800000, 0x3E800000 - 1, 0x3E800000, 0x41A00000 - 1, 0x41A00000,
                      0x7F7FFFFF], dtype=np.uint64)]
    pats = np.concatenate(pats)
    pats = pats[(pats & 0x7FFFFFFF) != 0]
    both = np.concatenate([pats, pats | 0x80000000])
    return np.unique(both).astype(np.uint32)


def _half_inputs() -> np.ndarray:
    """Every finite non-zero 16-bit pattern (binary16 and bfloat16 share the exponent mask
    position only in width: each format filters its own)."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def _finite_nonzero(fmt: str, pats: np.ndarray) -> np.ndarray:
    mag = pats.astype(np.uint32) & 0x7FFF
    top = 0x7C00 if fmt == "f16" else 0x7F80
    return pats[(mag != 0) & (mag < top)]


def _mpfr(bits: int, fmt: str = "f32"):
    """tanh(x) by MPFR; from |x| = 1000 on (beyond 4000 bits) +-(1 - 2^-3500), which lies, as
    tanh(x) does, strictly between +-1 and every threshold of a 24-bit result below it."""
    v = _value(fmt, bits)
    with gmpy2.context(WIDE):
        if abs(v) >= 1000:
            return gmpy2.copy_sign(1 - gmpy2.exp2(-3500), gmpy2.mpfr(v))
        return gmpy2.tanh(gmpy2.mpfr(v, 53))


def test_enclosure_holds_mpfrs_value():
    xs = _f32_inputs(3000, 1)
    lo, hi = tanh.enclosure(np, xs.view(np.float32).astype(np.float64))
    bad = []
    for x, a, b in zip(xs, lo, hi):
        v = _mpfr(int(x))
        with gmpy2.context(WIDE):
            if not (gmpy2.mpfr(float(a)) < v < gmpy2.mpfr(float(b))):
                bad.append(f"{int(x):#010x}: [{a!r}, {b!r}] misses {v}")
    assert not bad, bad[:5]


@pytest.mark.parametrize("fmt", ["f32", "f16", "bf16"])
def test_rounded_is_mpfrs(fmt):
    xs = _f32_inputs(2000, 2) if fmt == "f32" else _finite_nonzero(fmt, _half_inputs())
    got = np.asarray(api.reference(f"tanh.approx.{fmt}", xs))
    wrong = []
    for x, g in zip(xs, got):
        with gmpy2.context(ROUND[fmt]):
            want = _bits(fmt, float(gmpy2.tanh(gmpy2.mpfr(_value(fmt, int(x)), 53))))
        if int(g) != want:
            wrong.append(f"{int(x):#x}: model {int(g):#x}, MPFR {want:#x}")
    assert not wrong, wrong[:10]


def test_compare_agrees_with_mpfr_a_hair_either_side():
    xs = _f32_inputs(150, 3)
    for x in xs[:: max(1, xs.size // 250)]:
        num, den = _mpfr(int(x)).as_integer_ratio()
        t = Fraction(int(num), int(den))
        xf = Fraction(_f32(int(x)))
        hair = abs(t) * Fraction(1, 1 << 100) + Fraction(1, 1 << 1000)
        assert tanh.compare(xf, t + hair) == -1 and tanh.compare(xf, t - hair) == 1, hex(int(x))


def _within_mpfr(fmt: str, x: int, r: int) -> bool:
    """The ISA's words with MPFR: f32 |r - T| <= 2^-11 |T|; f16 |r - T| <= 2^-10.987; bf16 2^-8."""
    top = 0x7F800000 if fmt == "f32" else (0x7C00 if fmt == "f16" else 0x7F80)
    if (r & (0x7FFFFFFF if fmt == "f32" else 0x7FFF)) >= top:
        return False
    t = _mpfr(x, fmt)
    with gmpy2.context(WIDE):
        err = abs(gmpy2.mpfr(_value(fmt, r), 53) - t)
        if fmt == "f32":
            return err <= abs(t) / 2048
        return err <= gmpy2.exp2(gmpy2.mpfr(-10987) / 1000 if fmt == "f16" else gmpy2.mpfr(-8))


def _key(fmt: str, bits: int) -> int:
    sign = 0x80000000 if fmt == "f32" else 0x8000
    return -(bits & (sign - 1)) - 1 if bits & sign else bits


def _pattern(fmt: str, key: int) -> int:
    sign = 0x80000000 if fmt == "f32" else 0x8000
    return (-key - 1) | sign if key < 0 else key


@pytest.mark.parametrize("fmt", ["f32", "f16", "bf16"])
def test_allowed_runs_are_the_isas_words(fmt):
    name = f"tanh.approx.{fmt}"
    xs = _f32_inputs(400, 4) if fmt == "f32" else _finite_nonzero(fmt, _half_inputs())[::3]
    r = api.allowed_results(name, xs)
    assert not r.unbounded.any() and not r.empty.any()
    dtype = np.uint32 if fmt == "f32" else np.uint16
    for i, x in enumerate(xs):
        x = int(x)
        k_lo, k_hi = _key(fmt, int(r.lo[i])), _key(fmt, int(r.hi[i]))
        for key, want in ((k_lo, True), (k_hi, True), (k_lo - 1, False), (k_hi + 1, False)):
            assert _within_mpfr(fmt, x, _pattern(fmt, key)) == want, f"{name} {x:#x}: {_pattern(fmt, key):#x}"
        if fmt == "f32":  # a relative bound: tanh's sign, no zero
            assert (k_lo < 0) == (k_hi < 0) and k_lo not in (-1, 0) and k_hi not in (-1, 0)
    ends = np.concatenate([r.lo, r.hi]).astype(dtype)
    assert np.asarray(api.allowed(name, ends, np.concatenate([xs, xs]))).all()


def test_packed_halves_are_judged_each_alone():
    a = np.array([(0x3800 << 16) | 0xB800], dtype=np.uint32)  # (0.5, -0.5)
    good = np.array([(0x3765 << 16) | 0xB765], dtype=np.uint32)  # RN(tanh) of each half
    assert bool(np.asarray(api.allowed("tanh.approx.f16x2", good, a))[0])
    swapped = np.array([(0xB765 << 16) | 0x3765], dtype=np.uint32)
    assert not bool(np.asarray(api.allowed("tanh.approx.f16x2", swapped, a))[0])


def test_the_series_coefficients_and_truncation():
    """tanh's series from Bernoulli numbers: 1, -1/3, 2/15, -17/315, 62/2835 (the known start), and
    the first term left out below 2^-62 |x| for |x| < 1/4, as the enclosure's proof takes it."""
    c = tanh._EXACT_TAYLOR
    assert c[:5] == [Fraction(1), Fraction(-1, 3), Fraction(2, 15), Fraction(-17, 315), Fraction(62, 2835)]
    assert abs(c[12]) * Fraction(1, 4) ** 24 < Fraction(1, 2 ** 62)
    assert all(abs(c[i + 1]) < abs(c[i]) for i in range(12))  # shrinking, alternating terms
    assert all((c[i] > 0) != (c[i + 1] > 0) for i in range(12))
