"""sin(x) and cos(x) exactly enough to judge them: the bound's reach, the allowed ranges, RN.

``sin.approx.f32`` and ``cos.approx.f32`` are bounded by the PTX ISA in absolute terms, by a bound
that depends on where the operand lies (``spec/ptx/sin.yaml``: 2^-20.5 on [-2pi, 2pi], 2^-14.7 on
[-100pi, 100pi], nothing beyond). The judging is :mod:`tilecheck.model.transcendental`'s, on
this module's two layers:

* :meth:`Circular.enclosure`: float64 bounds holding f(x) for every lane, from this module's own
  evaluation (Cody-Waite reduction by pi/2 in three parts, Taylor polynomials) and its proved
  error bound (see there);
* :meth:`Circular.compare`: one lane exactly, in decimal arithmetic (pi from the series of
  Python's decimal recipes, Taylor series, precision doubled until the sign is certain).

Binary32 operands and results only (the one format sin and cos have); operands within
``|x| <= LIMIT``, past every range the ISA bounds.
"""

from __future__ import annotations

import decimal
import functools
import math
from fractions import Fraction

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import transcendental

FUNCTIONS = ("sin", "cos")

LIMIT = 512.0
"""Largest |x| :func:`enclosure` is proved for (the reduction's quotient stays below 2^9)."""

_RELATIVE_ERROR = 2.0 ** -45
"""Bound on the relative error of the polynomial evaluation (proved below 2^-47; see
:func:`enclosure`), taken four times larger so that no decision rests on the analysis' last bits."""

_REDUCTION_ERROR = 2.0 ** -50
"""Bound on the absolute error of the reduced argument where the quotient is not zero (proved
below 2^-52.9; see :func:`enclosure`), four times larger."""

_TINY = 2.0 ** -1074  # keeps an enclosure strict where f(x) underflows (sin of a subnormal)


@functools.lru_cache(maxsize=None)
def _pi(prec: int) -> decimal.Decimal:
    """pi to ``prec`` significant digits (the series of the Python :mod:`decimal` documentation's
    recipe, computed with two guard digits and rounded once)."""
    ctx = decimal.Context(prec=prec + 2)
    three = decimal.Decimal(3)
    lasts, t, s, n, na, d, da = 0, three, three, 1, 0, 0, 24
    while s != lasts:
        lasts = s
        n, na = n + na, na + 8
        d, da = d + da, da + 32
        t = ctx.divide(ctx.multiply(t, n), d)
        s = ctx.add(s, t)
    return decimal.Context(prec=prec).plus(s)


def _split_half_pi() -> tuple[float, float, float]:
    """pi/2 = C1 + C2 + C3 + e, |e| < 2^-130: C1 a multiple of 2^-24 (25 bits, so that q C1 and
    x - q C1 are exact for binary32 x >= 2^-1 and |q| < 2^9), C2 and C3 the next binary64 parts."""
    half_pi = Fraction(_pi(60)) / 2  # within 10^-59
    c1 = Fraction(round(half_pi * 2 ** 24), 2 ** 24)
    c2 = float(half_pi - c1)
    c3 = float(half_pi - c1 - Fraction(c2))
    return float(c1), c2, c3


_C1, _C2, _C3 = _split_half_pi()
_TWO_OVER_PI = float(2 / (Fraction(_pi(40))))


def _coefficients(first: int, count: int) -> list[float]:
    """RN64((-1)^i / (first + 2i)!) for i < count (one rounding each: exact Fractions)."""
    return [float(Fraction((-1) ** i, math.factorial(first + 2 * i))) for i in range(count)]


_SIN = _coefficients(1, 8)  # sin r = r (1 - z/3! + ... - z^7/15!), z = r^2; next term z^8/17!
_COS = _coefficients(0, 9)  # cos r = 1 - z/2! + ... + z^8/16!; next term z^9/18!


def supports(fmt: Format) -> bool:
    """Whether this module handles operands and results of ``fmt`` (binary32 only)."""
    return fmt.name == "f32"


@functools.lru_cache(maxsize=None)
def magnitude_limit(multiple_of_pi: int) -> float:
    """The largest binary32 value at most ``multiple_of_pi`` * pi, as a float64: for binary32 x,
    |x| <= k pi exactly when |x| <= this (k pi is irrational, so no binary32 value equals it; the
    neighbours are checked against a 60-digit pi)."""
    exact = Fraction(_pi(60)) * multiple_of_pi
    below = float(np.float32(float(exact)))
    if Fraction(below) > exact:
        below = float(np.nextafter(np.float32(below), np.float32(0)))
    above = float(np.nextafter(np.float32(below), np.float32(np.inf)))
    slack = Fraction(1, 10 ** 55) * multiple_of_pi
    if not (Fraction(below) < exact - slack and exact + slack < Fraction(above)):
        raise AssertionError(f"{multiple_of_pi}pi: binary32 neighbours not separated")
    return below


def _poly(coeffs: list[float], z):
    out = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        out = out * z + c
    return out


def enclosure(xp, fn: str, x):
    """``(lo, hi)``: float64 bounds with lo < f(x) < hi (``fn`` ``sin`` or ``cos``) for float64
    values ``x`` of binary32 with |x| <= :data:`LIMIT`.

    Proof of the width. q = rint(x 2/pi) (|q| <= 327; any integer would do, it only keeps |r| <=
    pi/4 + 2^-40). r = ((x - q C1) - q C2) - q C3: q C1 and x - q C1 are exact (multiples of 2^-24
    below 2^53 of them: x >= 2^-1 where q != 0), q C2 errs by at most 2^-53 |q C2| < 2^-69, the
    two subtractions by 2^-54 each (|r| < 1), q C3 and the split's e by less than 2^-120: |r -
    (x - q pi/2)| < 2^-52.9 where q != 0, and r = x exactly where q = 0. With z = fl(r^2) (relative
    error 2^-53, |z| < 0.63), the polynomials' truncation (the first omitted terms of alternating
    series with decreasing terms, z^8/17! and z^9/18!) is below 2^-55 relative to sin r / r >=
    0.89 and cos r >= 0.70, and Horner's rule of degree n = 7 and 8 with coefficients within 2^-53
    and z within 2^-53 errs by at most (2n + 4) 2^-53 sum |c_i| z^i / |p(z)| (the ratio is
    sinh(0.79)/sin(0.79) < 1.24 and cosh(0.79)/cos(0.79) < 1.9): below 2^-47.5 relative, the
    final product by r included. So the
    float64 value y has |y - f(x)| < 2^-47 |y| + 2^-52.9 [q != 0]; the enclosure takes
    :data:`_RELATIVE_ERROR` and :data:`_REDUCTION_ERROR`, four times those (the test
    ``tests/model/test_sincos.py`` measures the true error against MPFR)."""
    with np.errstate(all="ignore"):
        q = xp.rint(x * _TWO_OVER_PI)
        r = ((x - q * _C1) - q * _C2) - q * _C3
        z = r * r
        s = r * _poly(_SIN, z)
        c = _poly(_COS, z)
        n = (q.astype(xp.int64) + (1 if fn == "cos" else 0)) & 3  # cos x = sin(x + pi/2)
        y = xp.where(n == 0, s, xp.where(n == 1, c, xp.where(n == 2, -s, -c)))
        w = _RELATIVE_ERROR * xp.abs(y) + xp.where(q != 0, _REDUCTION_ERROR, 0.0) + _TINY
    return y - w, y + w


def _value(fn: str, x: Fraction, prec: int) -> tuple[decimal.Decimal, decimal.Decimal]:
    """(f(x), err) in decimal arithmetic of ``prec`` digits with |f(x) - value| <= err, |x| <= 512.

    x is converted exactly (a binary32 value has at most 150 decimal digits; the context holds
    them with guard digits), reduced by q pi/2 with pi to ``prec + 10`` digits, and the Taylor
    series summed until a term is below 10^-(prec + 5); every operation rounds within
    10^-(prec + 8) of |r| <= 1, so the total stays below 10^-prec."""
    w = prec + 10
    with decimal.localcontext(decimal.Context(prec=w + 160, Emin=-999999, Emax=999999)):
        # (every operator below rounds to the local context: unary minus and abs() included)
        xd = decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)
        half_pi = _pi(w + 5) / 2
        q = int((xd / half_pi).to_integral_value())
    with decimal.localcontext(decimal.Context(prec=w, Emin=-999999, Emax=999999)):
        r = xd - decimal.Decimal(q) * half_pi
        n = (q + (1 if fn == "cos" else 0)) & 3
        z = r * r
        term = r if n in (0, 2) else decimal.Decimal(1)
        k = 1 if n in (0, 2) else 0
        total = term
        eps = decimal.Decimal(10) ** -(prec + 5)
        while abs(term) > eps:
            term = -term * z / ((k + 1) * (k + 2))
            k += 2
            total = total + term
        if n >= 2:
            total = -total
    return total, decimal.Decimal(10) ** -prec


def compare(fn: str, x: Fraction, base: Fraction, offset_log2: float = 0.0, sign: int = 0) -> int:
    """Exactly: the sign of f(x) - (base + sign * 2^offset_log2) (-1 or 1; never 0 for x != 0)
    (:func:`tilecheck.model.transcendental.exact_sign` on :func:`_value`)."""
    return transcendental.exact_sign(lambda v, prec: _value(fn, v, prec), x, base, offset_log2, sign, fn)


def bound_log2(xp, x, ranges):
    """``(t, bounded)`` per lane for float64 ``x`` of binary32: the first of ``ranges`` (pairs
    ``(k, t)``: |x| <= k pi bounds the error by 2^t) that holds, and whether any does (beyond the
    last the ISA bounds nothing)."""
    ax = xp.abs(x)
    t = xp.zeros(x.shape, dtype=xp.float64)
    bounded = xp.zeros(x.shape, dtype=bool)
    for k, log2 in ranges:
        hit = ~bounded & (ax <= magnitude_limit(k))
        t = xp.where(hit, log2, t)
        bounded = bounded | hit
    return t, bounded


class Circular:
    """sin or cos as :mod:`tilecheck.model.transcendental` reads a function: its enclosure and
    its exact comparison."""

    def __init__(self, name: str):
        if name not in FUNCTIONS:
            raise ValueError(name)
        self.name = name

    def enclosure(self, xp, x):
        """:func:`enclosure` of this function."""
        return enclosure(xp, self.name, x)

    def compare(self, x: Fraction, base: Fraction, offset_log2: float = 0.0, sign: int = 0) -> int:
        """:func:`compare` of this function."""
        return compare(self.name, x, base, offset_log2, sign)


_FUNCTION = {name: Circular(name) for name in FUNCTIONS}


def within(xp, fn: str, fmt: Format, x, r_bits, t, ftz: bool):
    """Per lane: is result ``r_bits`` within 2^t (``t`` per lane) of fn(x)? (an absolute bound:
    :func:`tilecheck.model.transcendental.within_absolute`)."""
    return transcendental.within_absolute(xp, _FUNCTION[fn], fmt, x, r_bits, t, ftz)


def crossing(xp, fn: str, x, t, margin: float = 0.0):
    """Per lane: |fn(x)| <= 2^t + ``margin`` (:func:`tilecheck.model.transcendental.crossing`)."""
    return transcendental.crossing(xp, _FUNCTION[fn], x, t, margin)


def rounded(xp, fn: str, fmt: Format, x):
    """RN(fn(x)) in binary32 (uint64 patterns), |x| <= :data:`LIMIT`, x != 0."""
    return transcendental.rounded(xp, _FUNCTION[fn], fmt, x)


def ranges(xp, fn: str, fmt: Format, x, t, ftz: bool):
    """``(k_lo, k_hi, ok)``: the first and last allowed result of each lane as order keys (see
    :func:`tilecheck.model.order.order_key`), bound 2^t per lane, each confirmed exactly (the ends
    allowed, the values just outside not); ``ok`` False where that fails or (``.ftz``) where the
    bound reaches a flushed zero, so that the allowed values are no single run."""
    f = _FUNCTION[fn]
    k_lo, k_hi, ok, enclosed = transcendental.bound_ranges(xp, f, fmt, x, t)
    if ftz:
        ok = ok & ~transcendental.reaches(xp, f, x, t, 2.0 ** fmt.emin, enclosed)
    return k_lo, k_hi, ok
