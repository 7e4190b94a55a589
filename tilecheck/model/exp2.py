"""2^x exactly enough to judge it: the correctly rounded value and rigorous comparisons.

The approximate base-2 exponential (``ex2.approx``) is bounded by the PTX ISA relative to 2^x, a
transcendental number: no rational or float computation gives it exactly. What a contract needs
is narrower -- on which side of a given threshold (a rounding midpoint, the end of an error
bound) 2^x lies -- and that is decidable, because 2^x equals a rational threshold only where x
is an integer (2^(p/q) is irrational for a non-integer rational p/q).

Two layers decide it:

* :func:`estimate`: 2^x in binary64 for every lane, from a table of 2^(j/64) and a degree-6
  polynomial, with a proved relative error below :data:`ESTIMATE_ERROR` (see its docstring). It
  decides every comparison whose threshold lies further than :data:`GUARD` from the estimate;
* :func:`exceeds`: the rest, one lane at a time, in decimal arithmetic whose ``ln`` is correctly
  rounded (Python's :mod:`decimal`), with an error bound carried along and the precision doubled
  until the sign is certain; integer exponents are exact powers of two.

Everything here works for formats of at most 24 significant bits (binary32, binary16,
bfloat16): their values are exact in binary64 and their exponents keep 2^x within 2^+-300.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from tilecheck.formats import Format
from tilecheck.model.xp import u64

ESTIMATE_ERROR = 2.0 ** -50
"""Proved bound on the relative error of :func:`estimate` (below 2^-51 in fact; see there)."""

GUARD = 2.0 ** -44
"""Comparisons closer than this (relative) to the estimate are decided exactly: 64 times the
proved error, so that the decision never rests on the last bits of the analysis."""

_LIMIT = 300  # |x| beyond which 2^x is outside every threshold a format of <= 24 bits has
_TABLE_BITS = 6

_CTX = decimal.Context(prec=40)
_LN2 = _CTX.ln(decimal.Decimal(2))
_TABLE = np.array([float(_CTX.exp(_CTX.multiply(decimal.Decimal(j) / (1 << _TABLE_BITS), _LN2)))
                   for j in range(1 << _TABLE_BITS)])
"""RN64(2^(j/64)) up to 10^-38 relative: exp(j/64 * ln 2) at 40 digits (``ln`` and ``exp`` are
correctly rounded, the product rounds once), then ``float()``, which rounds a Decimal correctly:
within 2^-53 (1 + 2^-70) relative of 2^(j/64)."""

_COEFFS = [float(_CTX.divide(_CTX.power(_LN2, i), math.factorial(i))) for i in range(7)]
"""RN64((ln 2)^i / i!) (up to 10^-37 relative), i = 0..6: 2^r = exp(r ln 2) as its Taylor
polynomial."""


def supports(fmt: Format) -> bool:
    """Whether :func:`rounded` and :func:`within` handle results (and operands) of ``fmt``."""
    return fmt.precision <= 24 and fmt.emax <= 127


def estimate(xp, x):
    """2^x (float64) for float64 values ``x`` of a format of at most 24 significant bits.

    ``x`` is clipped to [-300, 300] first, which keeps the result normal and finite in binary64;
    a clipped lane's estimate lies on the right side of every threshold a <= 24-bit format has
    (all within 2^+-160), so comparisons stay correct.

    Method and error: ``k = trunc(64 x)``, ``r = x - k/64`` -- exact, because either ``|x| <
    1/64`` (``k = 0``) or ``x`` has a quantum of at least 2^-29 and ``|r| < 2^-6`` fits in 23
    bits -- so 2^x = 2^n * 2^(j/64) * 2^r with ``n = floor(k/64)``, ``j = k mod 64`` exactly.
    2^(j/64) comes from a table within 2^-53 relative; 2^r from the degree-6 Taylor polynomial
    of exp(r ln 2) (|r ln 2| < 0.0109: truncation below 2^-57 relative) with coefficients rounded
    to binary64 and evaluated by Horner's rule, whose rounding errors are dominated by the last
    addition (1 + r q, |r q| < 0.011): below 1.05 * 2^-53 relative. The product adds one
    rounding; ``ldexp`` by ``n`` is exact. In all below 2^-51 relative, which
    :data:`ESTIMATE_ERROR` (2^-50) bounds with a factor 2 to spare."""
    with np.errstate(all="ignore"):
        xc = xp.clip(x, -_LIMIT, _LIMIT)
        k = xp.trunc(xc * (1 << _TABLE_BITS))
        r = xc - k / (1 << _TABLE_BITS)
        ki = k.astype(xp.int64)
        n = xp.floor_divide(ki, 1 << _TABLE_BITS)
        j = ki - n * (1 << _TABLE_BITS)
        p = xp.full(r.shape, _COEFFS[6])
        for c in reversed(_COEFFS[:6]):
            p = p * r + c
        return xp.ldexp(xp.asarray(_TABLE)[j] * p, n.astype(xp.int32))


def exceeds(x: float, t: Fraction, or_equal: bool = False, scale: tuple[int, float] | None = None) -> bool:
    """Exactly: is 2^x > t (``or_equal``: 2^x >= t)? ``x`` a finite float (a value of a <= 24-bit
    format), ``t >= 0``. ``scale = (s, e)`` compares against ``t / (1 + s * 2^e)`` instead (s = +-1,
    2^e < 1/2 with ``e`` a decimal such as -9.9): the ends of a relative bound.

    Integer ``x`` without a scale compares the exact power of two. Otherwise the sign of ``d = x ln 2
    - ln t + ln(1 + s 2^e)`` is computed in decimal arithmetic of ``P`` digits, where ``ln`` and
    ``exp`` are correctly rounded and every other operation rounds once, each within ``5 * 10^-P``
    relative of its result. The roundings of ln 2, the product, ln t, the conversion of ``t`` and
    the difference bound the error by ``(|x| ln 2 + |ln t| + |d| + 1) * 10^(1-P)``; 2^e = exp(e ln 2)
    (relative error below ``(|e| + 2) * 10^(1-P)``) and ln(1 + s 2^e) (< 1 in magnitude) add less
    than ``(|e| + 4) * 10^(1-P)``. The sign is taken when ``|d|`` exceeds the sum; otherwise ``P``
    doubles. The loop ends: 2^x equals ``t`` only at integer x, and 2^x (1 + s 2^e) equals a rational
    only where x and e are both integers (otherwise 2^x + s 2^(x+e) is irrational), which is
    compared exactly."""
    if t <= 0:
        return True
    if x > _LIMIT + 200 or x < -_LIMIT - 200:
        return x > 0  # t lies within 2^+-400 for every caller (values of <= 24-bit formats)
    if float(x).is_integer() and (scale is None or float(scale[1]).is_integer()):
        # rational on both sides: 2^x, and 2^x (1 + s 2^e) for an integer e (a bound of 2^-7)
        power = Fraction(2) ** int(x)
        if scale is not None:
            t = t / (1 + scale[0] * Fraction(2) ** int(scale[1]))
        return power >= t if or_equal else power > t
    prec = 40
    dx = decimal.Decimal(x)  # exact: a binary float has a finite decimal expansion
    while True:
        ctx = decimal.Context(prec=prec, Emin=-999999, Emax=999999)
        ln2 = ctx.ln(decimal.Decimal(2))
        tt = ctx.divide(decimal.Decimal(t.numerator), decimal.Decimal(t.denominator))
        ln_t = ctx.ln(tt)
        d = ctx.subtract(ctx.multiply(dx, ln2), ln_t)
        err = abs(dx) + abs(ln_t) + 1
        if scale is not None:
            sign, e = scale
            eps = ctx.exp(ctx.multiply(decimal.Decimal(str(e)), ln2))
            d = ctx.add(d, ctx.ln(ctx.add(1, eps) if sign > 0 else ctx.subtract(1, eps)))
            err += abs(decimal.Decimal(str(e))) + 4
        err = (err + abs(d)) * decimal.Decimal(10) ** (1 - prec)
        if abs(d) > err:
            return d > 0
        prec *= 2


def _compare(xp, x, y, t):
    """(above, below, undecided): 2^x against thresholds ``t`` (float64, exact) per lane, from the
    estimate ``y`` (an exact comparison is still needed where ``undecided``)."""
    with np.errstate(all="ignore"):
        gap = y - t
        clear = xp.abs(gap) > GUARD * y
    return clear & (gap > 0), clear & (gap < 0), ~clear


def _decide(xp, x, t, above, undecided, or_equal: bool = False, scale=None):
    """``above`` with the undecided lanes decided exactly (:func:`exceeds`; ``t`` the unscaled
    thresholds when ``scale`` is given)."""
    if not bool(xp.any(undecided)):
        return above
    host = lambda a: a.get() if hasattr(a, "get") else np.asarray(a)  # noqa: E731 - CuPy -> numpy
    idx = xp.nonzero(undecided)[0]
    xs, ts = host(x[idx]), host(t[idx])
    exact = np.array([exceeds(float(a), Fraction(float(b)), or_equal, scale) for a, b in zip(xs, ts)], dtype=bool)
    out = above.copy()
    out[idx] = xp.asarray(exact)
    return out


def above(xp, x, t, or_equal: bool = False):
    """Per lane, exactly: 2^x > t (``or_equal``: 2^x >= t); ``x``, ``t`` float64 arrays, the
    thresholds ``t`` taken as the exact values they hold."""
    y = estimate(xp, x)
    hi, _, undecided = _compare(xp, x, y, t)
    return _decide(xp, x, t, hi, undecided, or_equal)


def grid_bits(xp, fmt: Format, value):
    """Bit patterns of non-negative float64 values that ``fmt`` represents exactly (or that exceed
    its largest finite value: +inf)."""
    with np.errstate(all="ignore"):
        mant = fmt.mantissa_bits
        huge = value > float(fmt.to_fraction(fmt.max_finite))
        sub = value < 2.0 ** fmt.emin
        m, e = xp.frexp(xp.where(sub | huge, 1.0, value))
        exp_field = (e.astype(xp.int64) - 1 + fmt.emax).astype(xp.uint64)
        frac = ((m * 2.0 - 1.0) * float(1 << mant)).astype(xp.uint64)
        normal = (exp_field << u64(xp, mant)) | frac
        subnormal = xp.ldexp(value, -(fmt.emin - mant)).astype(xp.uint64)
        out = xp.where(sub, subnormal, normal)
        return xp.where(huge, u64(xp, fmt.inf), out)


def rounded(xp, fmt: Format, x):
    """RN(2^x) in ``fmt`` (round to nearest, ties to even; unflushed), bit patterns (uint64), for
    finite float64 values ``x`` of a <= 24-bit format.

    2^x lies in the binade [2^floor(x), 2^(floor(x)+1)) exactly, so the quantum ``q`` of its
    result is known; the estimate picks the nearest multiple of ``q`` and a rounding midpoint
    closer than the guard is decided exactly. Integer ``x`` is an exact power of two (below the
    smallest subnormal: half of it ties to even, zero)."""
    y = estimate(xp, x)
    with np.errstate(all="ignore"):
        e = xp.floor(xp.clip(x, -_LIMIT, _LIMIT))
        qe = xp.maximum(e, fmt.emin) - fmt.mantissa_bits
        scaled = xp.ldexp(y, (-qe).astype(xp.int32))  # y / q
        lower = xp.floor(scaled)
        mid = xp.ldexp(lower + 0.5, qe.astype(xp.int32))
        up, down, undecided = _compare(xp, x, y, mid)
        up = _decide(xp, x, mid, up, undecided & ~down)
        count = lower + up
        value = xp.ldexp(count, qe.astype(xp.int32))
        exact = (x == xp.floor(x)) & (xp.abs(x) <= _LIMIT)
        if bool(xp.any(exact)):
            # a power of two: itself, or (below the subnormals) zero; half the smallest subnormal ties to zero
            tiny = x < fmt.emin - fmt.mantissa_bits
            value = xp.where(exact, xp.where(tiny, 0.0, xp.ldexp(xp.ones_like(x), e.astype(xp.int32))), value)
    return grid_bits(xp, fmt, value)


def within(xp, fmt: Format, x, r_bits, ulps: float, ftz: bool):
    """The ``exact`` reading of a ulp bound on 2^x: ``|r - 2^x| <= ulps * ulp(2^x)`` per lane, with
    ``ulp(2^x)`` the quantum of 2^x's binade (2^floor(x), never below the subnormal quantum);
    ``r`` (uint64 patterns) non-negative and not NaN. An infinite ``r`` is allowed when 2^x exceeds
    the largest finite value. With ``ftz`` a subnormal ``r`` is never allowed and a zero is when the
    bound reaches below 2^emin."""
    mag, r = _result_values(xp, fmt, r_bits)
    with np.errstate(all="ignore"):
        e = xp.floor(xp.clip(x, -_LIMIT, _LIMIT))
        bound = ulps * xp.ldexp(xp.ones_like(x), (xp.maximum(e, fmt.emin) - fmt.mantissa_bits).astype(xp.int32))
        # exact where it matters: when 2^x lies near r +- bound, r is within a few quanta of 2^x and
        # the sum spans few bits; otherwise its rounding (2^-53) cannot carry it past 2^x
        top = r + bound
        low = r - bound
    ok = ~above(xp, x, top) & ((low <= 0) | above(xp, x, low, or_equal=True))

    def reach():
        # a value below 2^emin (flushed to this zero) lies within the bound exactly when 2^x is at
        # most the largest subnormal plus the bound (the bound is at least one subnormal quantum)
        largest_sub = 2.0 ** fmt.emin - 2.0 ** (fmt.emin - fmt.mantissa_bits)
        return ~above(xp, x, largest_sub + bound)
    return _verdict(xp, fmt, x, mag, ok, reach if ftz else None)


def within_relative(xp, fmt: Format, x, r_bits, log2_bound: float, ftz: bool):
    """A relative bound on 2^x: ``|r - 2^x| <= 2^t 2^x`` (``t = log2_bound``) per lane, ``r``
    (uint64 patterns) non-negative and not NaN: ``(1 - 2^t) 2^x <= r <= (1 + 2^t) 2^x``. An
    infinite ``r`` is allowed when 2^x exceeds the largest finite value. With ``ftz`` a subnormal
    ``r`` is never allowed and a zero is when the bound reaches below 2^emin (as the other
    contracts read .ftz: some real value within the bound would be flushed)."""
    eps = 2.0 ** log2_bound
    mag, r = _result_values(xp, fmt, r_bits)
    y = estimate(xp, x)
    # r >= (1 - eps) 2^x  <=>  2^x <= r / (1 - eps);  r <= (1 + eps) 2^x  <=>  2^x >= r / (1 + eps)
    # (the float64 thresholds are within 2^-52 of the exact ones: inside the guard)
    hi, _, undecided = _compare(xp, x, y, r / (1 - eps))
    low_ok = ~_decide(xp, x, r, hi, undecided & (r > 0), scale=(-1, log2_bound)) & (r > 0)
    hi, _, undecided = _compare(xp, x, y, r / (1 + eps))
    high_ok = _decide(xp, x, r, hi, undecided & (r > 0), or_equal=True, scale=(1, log2_bound)) | (r == 0)
    ok = low_ok & high_ok

    def reach():  # (1 - eps) 2^x < 2^emin: some real value within the bound would be flushed
        tiny = xp.full(x.shape, 2.0 ** fmt.emin)
        hi, _, undecided = _compare(xp, x, y, tiny / (1 - eps))
        return ~_decide(xp, x, tiny, hi, undecided, scale=(-1, log2_bound))
    return _verdict(xp, fmt, x, mag, ok, reach if ftz else None)


def _result_values(xp, fmt: Format, r_bits):
    """(magnitude bits, float64 value of the magnitude; 0 for an infinity or NaN) of results."""
    mag = r_bits & u64(xp, fmt.magnitude_mask)
    special = mag >= u64(xp, fmt.exponent_mask)
    return mag, _values(xp, fmt, xp.where(special, u64(xp, 0), mag))


def _verdict(xp, fmt: Format, x, mag, ok, reach):
    """The verdict on results of magnitude ``mag`` from ``ok`` (the finite ones' bound): a NaN
    never; an infinity where 2^x exceeds the largest finite value; with ``.ftz`` (``reach`` given)
    a subnormal never and a zero where ``reach()`` says the bound reaches below 2^emin."""
    r_inf = mag == u64(xp, fmt.exponent_mask)
    r_nan = mag > u64(xp, fmt.exponent_mask)
    beyond = above(xp, x, xp.full(x.shape, float(fmt.to_fraction(fmt.max_finite))))
    ok = xp.where(r_inf, beyond, ok)
    if reach is not None:
        sub = (mag != 0) & (mag < u64(xp, fmt.min_normal))
        ok = xp.where(sub, False, xp.where(mag == 0, reach() | ok, ok))
    return ok & ~r_nan


def _values(xp, fmt: Format, mag):
    """float64 values of non-negative finite patterns of ``fmt``."""
    if fmt.name == "f32":
        return mag.astype(xp.uint32).view(xp.float32).astype(xp.float64)
    return xp.asarray(fmt.to_float64(mag.astype(fmt.uint)))
