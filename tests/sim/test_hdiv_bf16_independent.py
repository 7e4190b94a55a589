"""nvcc's bfloat16 ``__hdiv`` against an independent interpretation, choice by choice, in fractions.

The verifier runs ``examples/cuda/half.ptx`` (``k_hdiv_bf16``: both operands widened to binary32,
a divisor of magnitude 2^126 or more scaled by 1/4, ``div.approx.f32``, the quotient scaled back by
an FMA, ``cvt.rn.bf16.f32``) with every result ``div.approx.f32``'s contract allows. Here the same
sequence is written out with Python fractions and integer rounding, sharing no arithmetic with the
model: the allowed quotients are every binary32 value within 2 ulp of the exact quotient (ulp of its
binade, never below the subnormal spacing) or within 2 values of its correctly rounded value, with
the IEEE sign of the quotient (the sign rule of ``spec/rules/contracts.yaml``), an infinity of that
sign past the largest finite value. The sets of pairs that misround -- at all, and in value -- must
be the same, on random pairs, tiny and huge quotients (where a bound read through zero admitted the
wrong sign), scaled divisors, and every pair the verifier flags in whole blocks of dividends.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tilecheck.spec.database import load_database
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
HALF = str(ROOT / "examples" / "cuda" / "half.ptx")
TWO = Fraction(2)


def _value(bits: int, mant: int, ebits: int) -> Fraction | None:
    """The value of a finite pattern of a binary format with ``mant`` fraction bits (None: inf/NaN)."""
    bias = (1 << (ebits - 1)) - 1
    e, m = (bits >> mant) & ((1 << ebits) - 1), bits & ((1 << mant) - 1)
    if e == (1 << ebits) - 1:
        return None
    v = Fraction(m, 1 << mant) * TWO ** (1 - bias) if e == 0 else Fraction((1 << mant) + m, 1 << mant) * TWO ** (e - bias)
    return -v if bits >> (mant + ebits) else v


class Binary:
    """Round-to-nearest-even and value steps of one binary format, on fractions."""

    def __init__(self, mant: int, ebits: int):
        self.mant, self.ebits = mant, ebits
        self.emin = 2 - (1 << (ebits - 1))
        self.emax = (1 << (ebits - 1)) - 1
        self.max = (2 - Fraction(1, 1 << mant)) * TWO ** self.emax
        self.tiny = TWO ** (self.emin - mant)  # the subnormal spacing

    def binade(self, v: Fraction) -> int:
        """floor(log2 |v|) for v != 0."""
        v = abs(v)
        e = v.numerator.bit_length() - v.denominator.bit_length()
        return e - 1 if TWO ** e > v else e

    def spacing(self, v: Fraction) -> Fraction:
        """ulp of |v|'s binade, never below the subnormal spacing (v != 0)."""
        return TWO ** (max(self.binade(v), self.emin) - self.mant)

    def nearest(self, v: Fraction):
        """RN(v) as a fraction; ('inf', sign) past the overflow threshold. Zeros keep v's sign
        as ('zero', sign) when v rounds to zero."""
        sign = -1 if v < 0 else 1
        a = abs(v)
        if a >= self.max + self.spacing(self.max) / 2:
            return ("inf", sign)
        if a == 0:
            return ("zero", sign)
        u = self.spacing(a) if a >= TWO ** self.emin else self.tiny
        q = a / u
        n = q.numerator // q.denominator
        rest = q - n
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
            n += 1
        r = n * u
        return ("zero", sign) if r == 0 else sign * r

    def index(self, v) -> int:
        """Position in real order of a value (a fraction on the grid, ('zero', s) or ('inf', s)):
        both zeros are 0, infinity one past the largest finite value."""
        if isinstance(v, tuple):
            return 0 if v[0] == "zero" else v[1] * (self.count() + 1)
        a = abs(v)
        if a < TWO ** self.emin:
            n = int(a / self.tiny)
        else:
            e = self.binade(a)
            n = (e - self.emin + 1) * (1 << self.mant) + int(a / TWO ** (e - self.mant)) - (1 << self.mant)
        return n if v > 0 else -n

    def count(self) -> int:
        """Positive finite values."""
        return self.index(self.max)

    def at(self, i: int):
        """The value at position ``i`` (a zero as ('zero', 1), infinities as ('inf', s))."""
        if i == 0:
            return ("zero", 1)
        sign = 1 if i > 0 else -1
        n = abs(i)
        if n > self.count():
            return ("inf", sign)
        if n < (1 << self.mant):
            return sign * n * self.tiny
        e = self.emin + n // (1 << self.mant) - 1
        m = n % (1 << self.mant)
        return sign * Fraction((1 << self.mant) + m, 1 << self.mant) * TWO ** e


F32, BF16 = Binary(23, 8), Binary(7, 8)


def _same(x, y) -> bool:
    return x == y


def _numeric(x):
    """A value for comparing in value: both zeros the same."""
    return ("zero", 0) if isinstance(x, tuple) and x[0] == "zero" else x


def _allowed_quotients(q: Fraction) -> list:
    """Every binary32 value div.approx.f32 may return for the exact quotient ``q`` (a normal
    divisor of magnitude at most 2^126), under either ulp reading, with the quotient's sign."""
    sign = -1 if q < 0 else 1
    out = []
    bound = 2 * F32.spacing(q)
    centre = F32.index(F32.nearest(q))
    for i in range(centre - 12, centre + 13):
        r = F32.at(i)
        if isinstance(r, tuple) and r[0] == "inf":
            ok = r[1] == sign and (abs(q) > F32.max or abs(i - centre) <= 2)
        else:
            value = Fraction(0) if isinstance(r, tuple) else r
            ok = abs(value - q) <= bound or abs(i - centre) <= 2
            if isinstance(r, tuple):  # a zero: the one of the quotient's sign
                r = ("zero", sign)
            elif (r < 0) != (sign < 0):
                ok = False
        if ok and r not in out:
            out.append(r)
    return out


def _times_quarter(r):
    """fma.rn.f32(r, 0.25, -0.0): r / 4 rounded (a zero keeps its sign: -0 + -0, +0 + -0 = +0)."""
    if isinstance(r, tuple):
        return r if r[0] == "inf" or r[1] < 0 else ("zero", 1)
    return F32.nearest(r / 4)


def _to_bf16(r):
    """cvt.rn.bf16.f32 of a binary32 value."""
    if isinstance(r, tuple):
        return r
    return BF16.nearest(r)


def independent_misrounds(a_bits: int, b_bits: int) -> tuple[bool, bool]:
    """(misrounds at all, misrounds in value) for finite non-zero ``a`` and normal ``b``."""
    a, b = _value(a_bits, 7, 8), _value(b_bits, 7, 8)
    want = BF16.nearest(a / b)
    scaled = abs(b) >= TWO ** 126
    divisor = b / 4 if scaled else b
    anywhere = in_value = False
    for r in _allowed_quotients(a / divisor):
        got = _to_bf16(_times_quarter(r) if scaled else r)
        if not _same(got, want):
            anywhere = True
            in_value |= _numeric(got) != _numeric(want)
    return anywhere, in_value


def _bf16(value: float) -> int:
    return int(np.array([value], dtype=np.float32).view(np.uint32)[0]) >> 16


def _pairs(rng) -> list[tuple[int, int]]:
    sign = lambda: int(rng.integers(0, 2)) << 15  # noqa: E731
    def finite(lo=0x0001, hi=0x7F7F):
        return sign() | int(rng.integers(lo, hi + 1))
    normal = lambda: finite(0x0080, 0x7F7F)  # noqa: E731
    pairs = [(finite(), normal()) for _ in range(700)]
    pairs += [(finite(0x0001, 0x00FF), sign() | int(rng.integers(0x4000, 0x7F80))) for _ in range(250)]  # tiny quotients
    pairs += [(finite(0x0001, 0x0100), sign() | int(rng.integers(0x7E00, 0x7F80))) for _ in range(150)]  # tiny, scaled divisor
    pairs += [(finite(0x7E00, 0x7F7F), sign() | int(rng.integers(0x0080, 0x0300))) for _ in range(150)]  # overflow
    pairs += [(finite(), sign() | int(rng.integers(0x7E80, 0x7F80))) for _ in range(150)]  # scaled divisors
    pairs += [(0x0001, 0x4000), (0x0003, 0x4000), (0xA5FF, 0x6500), (0x0001, 0x7000), (0x8001, 0x7000)]
    return pairs


def _verifier_flags(p, pairs) -> tuple[set, set, set]:
    """The pairs the verifier finds misrounded, misrounded in value, and unknown."""
    a = np.array([x for x, _ in pairs], dtype=np.uint16)
    b = np.array([y for _, y in pairs], dtype=np.uint16)
    res = compiled.run_inputs(p, [a, b])
    return tuple({pairs[i] for i in np.flatnonzero(flags)} for flags in (res.bad, res.by_value, res.unknown))


def independent_sets(pairs, misrounds) -> tuple[set, set]:
    """The pairs ``misrounds(a, b) -> (at all, in value)`` finds misrounded, and misrounded in value."""
    flags = {xy: misrounds(*xy) for xy in pairs}
    return {xy for xy, f in flags.items() if f[0]}, {xy for xy, f in flags.items() if f[1]}


@pytest.fixture(scope="module")
def prepared():
    return compiled.prepare(HALF, "k_hdiv_bf16", "div.rn.bf16", db=load_database())


def test_the_independent_model_knows_the_sign_rule():
    """2^-133 / 2: the quotient 2^-134 is positive; no allowed value is negative."""
    assert all(not (isinstance(r, Fraction) and r < 0) and r != ("zero", -1)
               for r in _allowed_quotients(Fraction(1, 2 ** 134)))
    assert independent_misrounds(0x0001, 0x4000) == (True, True)  # (2^-133) / 2: RN+1 gives 0x0001


def test_misrounded_pairs_match_an_independent_enumeration(prepared):
    rng = np.random.default_rng(20261201)
    pairs = sorted(set(_pairs(rng)))
    # every pair the verifier flags in whole blocks of dividends (a tiny, a middling, a huge divisor)
    for divisor in (0x4000, 0x3F81, 0x7E90, 0xC2B7):
        tally = compiled.run_range(prepared, divisor << 16, (divisor + 1) << 16)
        flagged = [(int(x[0]), int(x[1])) for x in tally.inputs]
        pairs += [xy for xy in flagged if _value(xy[0], 7, 8) not in (None, 0)][:200]
    pairs = sorted(set(pairs))
    ours_bad, ours_value, _ = _verifier_flags(prepared, pairs)
    theirs_bad, theirs_value = independent_sets(pairs, independent_misrounds)
    assert ours_value == theirs_value
    assert ours_bad == theirs_bad
    assert ours_value  # the pairs hold misroundings in value
    assert ours_bad == ours_value  # with the sign rule no pair misrounds only by a zero's sign
