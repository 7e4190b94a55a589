"""tanh(x) exactly enough to judge it: RN, the bound (relative or absolute), the allowed ranges.

``tanh.approx.f32`` is bounded by the PTX ISA relative to tanh(x) (2^-11 "over the entire floating
point range", subnormals supported), ``tanh.approx.{f16,f16x2}`` and ``{bf16,bf16x2}`` in absolute
terms (2^-10.987 and 2^-8; ``spec/ptx/tanh.yaml``). The judging is
:mod:`tilecheck.model.transcendental`'s, on this module's two layers:

* :meth:`Tanh.enclosure`: float64 bounds holding tanh(x) for every lane, from a Taylor polynomial
  near zero and (1 - e^-2|x|) / (1 + e^-2|x|) with :func:`tilecheck.model.exp2.estimate` elsewhere,
  and a proved error bound (see there);
* :meth:`Tanh.compare`: one lane exactly, in decimal arithmetic (``exp`` correctly rounded, with
  the digits its cancellation near zero costs added).

Operands and results of binary32, binary16 and bfloat16.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import exp2, transcendental

_TAYLOR_LIMIT = 0.25
_SATURATED = 20.0
_RELATIVE_ERROR = 2.0 ** -42
"""The enclosure's half-width relative to the estimate: eight times the proved 2^-45.5."""
_LOG2E = float(Fraction(decimal.Context(prec=40).divide(1, decimal.Context(prec=40).ln(2))))
_TINY = 2.0 ** -1074


def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2), from sum_{k<=m} C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


def _taylor(terms: int) -> list[Fraction]:
    """Exact c_1 .. c_terms of tanh x = sum c_n x^(2n-1): 2^2n (2^2n - 1) B_2n / (2n)!."""
    b = _bernoulli(2 * terms)
    return [Fraction(4 ** n * (4 ** n - 1)) * b[2 * n] / math.factorial(2 * n) for n in range(1, terms + 1)]


_EXACT_TAYLOR = _taylor(13)
_TAYLOR = [float(c) for c in _EXACT_TAYLOR[:12]]  # x (c_1 + c_2 z + ... + c_12 z^11), z = x^2
"""tanh's series to x^23, each coefficient rounded once; the first one left out, c_13 x^25, is
below 2^-62 |x| for |x| < 1/4 (its terms alternate in sign and shrink by x^2 (2/pi)^2 or less)."""


def supports(fmt: Format) -> bool:
    """Whether this module handles operands and results of ``fmt`` (at most 24 significant bits)."""
    return fmt.name in ("f32", "f16", "bf16")


def enclosure(xp, x):
    """``(lo, hi)``: float64 bounds with lo < tanh(x) < hi for float64 values ``x`` of binary32 (or
    of a narrower format), x != 0.

    Proof of the width. |x| < 1/4: x p(z), z = fl(x^2), Horner's rule over 12 coefficients each
    within 2^-53, errs by at most (2n + 4) 2^-53 sum |c_i| z^i / p(z) with n = 11, and sum |c_i| z^i
    / p(z) = tan(x) / tanh(x) < 1.05: below 2^-48 relative with the product by x and the series'
    truncation (< 2^-62). 1/4 <= |x| < 20: a = -2|x| log2(e) in float64 errs by at most 2^-52 |a|
    <= 2^-46.1 (|a| < 57.8), so E = 2^a from :func:`tilecheck.model.exp2.estimate` (itself within
    2^-50) is within delta = 2^-46.5 relative of e^-2|x|; with E <= e^-1/2, 1 - E errs by at most
    delta E / (1 - E) + 2^-53 < 2^-45.9 relative, 1 + E by 2^-47.9, the quotient by 2^-53: below
    2^-45.5 in all; the half-width taken is :data:`_RELATIVE_ERROR`. |x| >= 20: 1 - 2^-56.7 <
    |tanh(x)| < 1, so the enclosure is (1 - 2^-53, 1) (signed): an end at exactly 1, which decides
    every threshold at +-1 in binary64. tests/model/test_tanh.py measures the true error against
    MPFR."""
    with np.errstate(all="ignore"):
        ax = xp.abs(x)
        z = x * x
        p = _TAYLOR[-1]
        for c in reversed(_TAYLOR[:-1]):
            p = p * z + c
        small = x * p
        e = exp2.estimate(xp, xp.where(ax < _SATURATED, -2.0 * ax * _LOG2E, -1.0))
        mid = xp.where(x < 0, -1.0, 1.0) * ((1.0 - e) / (1.0 + e))
        saturated = ax >= _SATURATED
        y = xp.where(ax < _TAYLOR_LIMIT, small, mid)
        w = _RELATIVE_ERROR * xp.abs(y) + _TINY
        # saturated: 1 - 2^-56.7 < |tanh(x)| < 1, and 1 - 2^-53 is the binary64 value below 1
        below_one = 1.0 - 2.0 ** -53
        # |tanh(x)| < 1 for every finite x: an end past +-1 is moved to it (still strict), so that
        # a threshold at +-1 (r / (1 +- 2^-11) for r = 1 +- 2^-11) is decided in binary64 where
        # tanh(x) is closer to 1 than the enclosure's width (|x| from about 14.5 to 20)
        lo = xp.where(saturated, xp.where(x < 0, -1.0, below_one), xp.maximum(y - w, -1.0))
        hi = xp.where(saturated, xp.where(x < 0, -below_one, 1.0), xp.minimum(y + w, 1.0))
    return lo, hi


def _value(x: Fraction, prec: int) -> tuple[decimal.Decimal, decimal.Decimal]:
    """(tanh(x), err) in decimal with |tanh(x) - value| <= err, 0 < |x| < 1000.

    tanh x = sign(x) (1 - E) / (1 + E), E = e^-2|x|. ``exp`` rounds correctly to W digits, W =
    prec + 12 + the digits 1 - E loses to cancellation (about -log10 |x|), so that 1 - E keeps prec
    + 10 digits; with the quotient the value is within 10^-(prec + 8) relative."""
    sign = -1 if x < 0 else 1
    ax = abs(x)
    with decimal.localcontext(decimal.Context(prec=200, Emin=-999999, Emax=999999)):
        lost = max(0, -(decimal.Decimal(ax.numerator) / decimal.Decimal(ax.denominator)).adjusted()) + 2
    w = prec + 12 + lost
    with decimal.localcontext(decimal.Context(prec=w, Emin=-999999, Emax=999999)):
        axd = decimal.Decimal(ax.numerator) / decimal.Decimal(ax.denominator)
        e = (-2 * axd).exp()
        t = (1 - e) / (1 + e)
        value = t if sign > 0 else -t
        return value, abs(value) * decimal.Decimal(10) ** -prec


def compare(x: Fraction, base: Fraction, offset_log2: float = 0.0, sign: int = 0) -> int:
    """Exactly: the sign of tanh(x) - (base + sign * 2^offset_log2) (-1 or 1; never 0 for x != 0)
    (:func:`tilecheck.model.transcendental.exact_sign` on :func:`_value`).

    From |x| = 1000 on, tanh(x) lies strictly between +-1 and +-(1 - 10^-868): a threshold at +-1
    itself is beyond it, and any other one is further from +-1 than 10^-860 (the thresholds are
    results of at most 24 bits and the bounds' powers of two), so its side of +-1 decides."""
    if abs(x) >= 1000:
        limit = 1 if x > 0 else -1
        whole = float(offset_log2).is_integer()  # else 2^offset is irrational: the threshold is not +-1
        if (sign == 0 or whole) and base + sign * Fraction(2) ** int(offset_log2) == limit:
            return -limit
        return transcendental.exact_sign(lambda v, prec: (decimal.Decimal(limit), decimal.Decimal(10) ** -860), x,
                                         base, offset_log2, sign, "tanh")
    return transcendental.exact_sign(_value, x, base, offset_log2, sign, "tanh")


class Tanh:
    """tanh as :mod:`tilecheck.model.transcendental` reads a function."""

    name = "tanh"

    @staticmethod
    def enclosure(xp, x):
        """:func:`enclosure`."""
        return enclosure(xp, x)

    @staticmethod
    def compare(x: Fraction, base: Fraction, offset_log2: float = 0.0, sign: int = 0) -> int:
        """:func:`compare`."""
        return compare(x, base, offset_log2, sign)


FUNCTION = Tanh()


def within(xp, fmt: Format, x, r_bits, contract):
    """Per lane: is result ``r_bits`` within ``contract``'s bound of tanh(x) (x finite, non-zero):
    relative (binary32: it keeps tanh's sign and is no zero) or absolute (the halves: both signs
    and both zeros near x = 0)?"""
    if contract.bound.kind == "absolute":
        t = xp.full(x.shape, float(contract.bound.size))
        return transcendental.within_absolute(xp, FUNCTION, fmt, x, r_bits, t, False)
    return transcendental.within_relative(xp, FUNCTION, fmt, x, r_bits, contract.relative_log2)


def rounded(xp, fmt: Format, x):
    """RN(tanh(x)) in ``fmt`` (uint64 patterns), x finite and non-zero."""
    return transcendental.rounded(xp, FUNCTION, fmt, x)


def ranges(xp, fmt: Format, x, contract):
    """``(k_lo, k_hi, ok)``: the first and last allowed result of each lane as order keys (see
    :func:`tilecheck.model.order.order_key`), each confirmed exactly by :func:`within` (the ends
    allowed, the values just outside not)."""
    relative = contract.bound.kind != "absolute"
    t = contract.relative_log2 if relative else xp.full(x.shape, float(contract.bound.size))
    return transcendental.bound_ranges(xp, FUNCTION, fmt, x, t, relative)[:3]
