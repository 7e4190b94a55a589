"""log2(x) exactly enough to judge it: the correctly rounded value, the bound and the allowed ranges.

``lg2.approx.f32`` is bounded by the PTX ISA against log2(x), a transcendental number for every
positive rational x that is not a power of two (log2 x = p/q would make x^q = 2^p). What a
contract needs is on which side of a rational threshold (a rounding midpoint, an end of the error
bound) log2(x) lies, and that is decidable: a power of two is compared exactly, anything else
never equals a rational threshold.

Two layers decide it, as :mod:`tilecheck.model.exp2` does for 2^x:

* :func:`enclosure`: an interval [lo, hi] (float64) holding log2(x) for every lane, from numpy's
  ``log2`` widened by :data:`GUARD` and then *proved* with :func:`tilecheck.model.exp2.estimate`
  (relative error below 2^-50): 2^lo < x < 2^hi. A lane whose proof fails (never seen) is left to
  the exact layer. Thresholds outside the enclosure, by more than their own float64 rounding, are
  decided here;
* :func:`compare`: the rest, one lane at a time, in decimal arithmetic whose ``ln`` is correctly
  rounded (Python's :mod:`decimal`), with an error bound carried along and the precision doubled
  until the sign is certain.

The bound (``spec/ptx/lg2.yaml``): absolute, ``|r - log2 x| <= 2^t``, for x strictly between
``2^lo`` and ``2^hi`` (the ISA's (0.5, 2)), relative, ``|r - log2 x| <= 2^t |log2 x|``, elsewhere.
Binary32 operands and results only (the one format lg2 has).
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import exp2
from tilecheck.model.order import from_key
from tilecheck.model.transcendental import confirmed_ranges, host, settle
from tilecheck.model.xp import u64

GUARD = 2.0 ** -44
"""Half-width of the enclosure, relative to max(1, |log2 x|): far above numpy's log2 error (a few
ulps of binary64) and far below every threshold distance that matters (2^-22 bounds)."""

_EXP2_ERROR = 2.0 ** -49  # twice exp2.ESTIMATE_ERROR: the proof's margin
_TINY = 2.0 ** -1074


def supports(fmt: Format) -> bool:
    """Whether this module handles operands and results of ``fmt`` (binary32 only)."""
    return fmt.name == "f32"


def enclosure(xp, x):
    """``(lo, hi, proved)``: float64 bounds with lo < log2(x) < hi where ``proved``, for positive
    finite float64 values ``x`` of binary32. The proof: 2^lo (1 + 2^-49) < x and 2^hi (1 - 2^-49) > x
    with 2^lo, 2^hi from :func:`tilecheck.model.exp2.estimate` (within 2^-50 relative)."""
    with np.errstate(all="ignore"):
        y = xp.log2(x)
        g = GUARD * xp.maximum(1.0, xp.abs(y))
        lo, hi = y - g, y + g
        proved = (exp2.estimate(xp, lo) * (1 + _EXP2_ERROR) < x) & (exp2.estimate(xp, hi) * (1 - _EXP2_ERROR) > x)
    return lo, hi, proved


def compare(x: Fraction, t: Fraction) -> int:
    """Exactly: the sign of log2(x) - t (-1, 0 or 1), for x > 0.

    A power of two compares its exponent. Otherwise ``d = ln x - t ln 2`` is computed in decimal
    arithmetic of ``P`` digits (``u = 10^(1-P)``, each operation within ``u`` relative of its
    result; ``ln`` correctly rounded): the conversions of x and t, ln 2, the product, ln and the
    difference err by less than ``(|ln x| + 3 |t| + |d| + 3) u`` in all, and the sign is taken when
    ``|d|`` exceeds that; otherwise ``P`` doubles. The loop ends: log2 x is irrational there."""
    n, d = x.numerator, x.denominator
    if n & (n - 1) == 0 and d & (d - 1) == 0:  # x = 2^k exactly
        k = n.bit_length() - d.bit_length()
        return (k > t) - (k < t)
    prec = 40
    while True:
        ctx = decimal.Context(prec=prec, Emin=-999999, Emax=999999)
        xd = ctx.divide(decimal.Decimal(n), decimal.Decimal(d))
        td = ctx.divide(decimal.Decimal(t.numerator), decimal.Decimal(t.denominator))
        ln_x = ctx.ln(xd)
        diff = ctx.subtract(ln_x, ctx.multiply(td, ctx.ln(decimal.Decimal(2))))
        err = (abs(ln_x) + 3 * abs(td) + abs(diff) + 3) * decimal.Decimal(10) ** (1 - prec)
        if abs(diff) > err:
            return 1 if diff > 0 else -1
        prec *= 2


def _at_least(xp, x, lo, hi, proved, t_float, t_exact):
    """Per lane: log2(x) >= t. ``t_float`` the float64 thresholds (within 2^-51 relative of the
    exact ones), ``t_exact(i)`` lane i's exact threshold (a Fraction) where the float one does not
    decide."""
    with np.errstate(all="ignore"):
        slack = xp.abs(t_float) * 2.0 ** -51 + _TINY
        yes = proved & (lo > t_float + slack)
        no = proved & (hi < t_float - slack)
    return settle(xp, x, yes, ~yes & ~no, lambda v, i: compare(v, t_exact(i)) >= 0)


def _at_most(xp, x, lo, hi, proved, t_float, t_exact):
    """Per lane: log2(x) <= t (as :func:`_at_least`)."""
    with np.errstate(all="ignore"):
        slack = xp.abs(t_float) * 2.0 ** -51 + _TINY
        yes = proved & (hi < t_float - slack)
        no = proved & (lo > t_float + slack)
    return settle(xp, x, yes, ~yes & ~no, lambda v, i: compare(v, t_exact(i)) <= 0)


def absolute_lanes(xp, x, absolute):
    """Lanes whose bound is absolute: ``2^lo < x < 2^hi`` for ``absolute = (t, lo, hi)``."""
    _, lo, hi = absolute
    return (x > 2.0 ** lo) & (x < 2.0 ** hi)


def _bound_thresholds(xp, r, absolute_lane, negative, t_abs: float, t_rel: float):
    """(float64 lower and upper thresholds on log2 x for result values ``r``, and the exact ones
    as a function of the lane): |r - L| <= 2^t_abs where ``absolute_lane``, else |r - L| <= 2^t_rel |L|
    with L's sign (``negative``: x < 1) known."""
    a, e = 2.0 ** t_abs, 2.0 ** t_rel
    with np.errstate(all="ignore"):
        # L >= r - a and L <= r + a; L > 0: r / (1 + e) <= L <= r / (1 - e); L < 0: r / (1 - e) <= L <= r / (1 + e)
        low = xp.where(absolute_lane, r - a, xp.where(negative, r / (1 - e), r / (1 + e)))
        high = xp.where(absolute_lane, r + a, xp.where(negative, r / (1 + e), r / (1 - e)))
    fa, fe = _power(t_abs), _power(t_rel)
    r, absolute_lane, negative = host(r), host(absolute_lane), host(negative)  # for the exact lanes

    def exact(i: int, upper: bool) -> Fraction:
        ri = Fraction(float(r[i]))
        if absolute_lane[i]:
            return ri + fa if upper else ri - fa
        return ri / (1 + fe) if upper == bool(negative[i]) else ri / (1 - fe)
    return low, high, exact


def _power(t: float) -> Fraction:
    if not float(t).is_integer():
        raise NotImplementedError("lg2 bounds are integer powers of two (the ISA's 2^-22)")
    return Fraction(2) ** int(t)


def within(xp, fmt: Format, x, r_bits, contract, ftz: bool, enclosed=None):
    """Per lane: is result ``r_bits`` (uint64 patterns of binary32) within ``contract``'s bound
    for positive finite ``x`` (float64)? NaN and infinite results never are (|log2 x| <= 149). With
    ``ftz`` a subnormal result never is, and a zero is where a value within the bound would flush
    to it (|log2 x| <= 2^t + 2^-126 in the absolute region). ``enclosed``: :func:`enclosure` of
    ``x`` when the caller has it (several results judged for the same operands)."""
    absolute = contract.bound.absolute
    t_rel = contract.relative_log2
    mag = r_bits & u64(xp, fmt.magnitude_mask)
    special = mag >= u64(xp, fmt.exponent_mask)
    r = xp.where(special, u64(xp, 0), r_bits).astype(xp.uint32).view(xp.float32).astype(xp.float64)
    lo, hi, proved = enclosure(xp, x) if enclosed is None else enclosed
    abs_lane = absolute_lanes(xp, x, absolute)
    negative = x < 1.0
    low, high, exact = _bound_thresholds(xp, r, abs_lane, negative, absolute[0], t_rel)
    ok = _at_least(xp, x, lo, hi, proved, low, lambda i: exact(i, False)) & \
        _at_most(xp, x, lo, hi, proved, high, lambda i: exact(i, True))
    if ftz:
        sub = (mag != 0) & (mag < u64(xp, fmt.min_normal))
        reach = abs_lane & _at_least(xp, x, lo, hi, proved, xp.full(x.shape, -(2.0 ** absolute[0] + 2.0 ** fmt.emin)),
                                     lambda i: -(_power(absolute[0]) + Fraction(2) ** fmt.emin)) & \
            _at_most(xp, x, lo, hi, proved, xp.full(x.shape, 2.0 ** absolute[0] + 2.0 ** fmt.emin),
                     lambda i: _power(absolute[0]) + Fraction(2) ** fmt.emin)
        ok = xp.where(sub, False, xp.where(mag == 0, reach, ok))
    return ok & ~special


def crossing(xp, fmt: Format, x, contract):
    """Per lane: does the bound reach zero (|log2 x| <= 2^t in the absolute region), so that the
    allowed values have both signs? Under ``.ftz`` those lanes have no single run of values.

    Only lanes with |x - 1| < 2 * 2^t can: |log2 x| <= 2^t puts x in [2^-2^t, 2^2^t], within
    2^t ln 2 of 1 (x - 1 is exact in float64 there). The enclosure, the costly part, is computed
    for those lanes alone: a block of operands far from 1 costs one comparison per lane."""
    absolute = contract.bound.absolute
    a = 2.0 ** absolute[0]
    flat = x.reshape(-1)
    with np.errstate(all="ignore"):
        near = absolute_lanes(xp, flat, absolute) & (xp.abs(flat - 1.0) < 2.0 * a)
    out = xp.zeros(flat.shape, dtype=bool)
    idx = xp.nonzero(near)[0]
    if int(idx.size):
        xs = flat[idx]
        lo, hi, proved = enclosure(xp, xs)
        out[idx] = _at_least(xp, xs, lo, hi, proved, xp.full(xs.shape, -a), lambda i: -_power(absolute[0])) & \
            _at_most(xp, xs, lo, hi, proved, xp.full(xs.shape, a), lambda i: _power(absolute[0]))
    return out.reshape(x.shape)


def rounded(xp, fmt: Format, x):
    """RN(log2 x) in binary32 (uint64 patterns) for positive finite float64 ``x`` of binary32:
    the binary32 value nearest the estimate, moved one step where the exact comparison with a
    neighbouring midpoint says so (log2 x is never a midpoint: it is irrational or an integer)."""
    lo, hi, proved = enclosure(xp, x)
    with np.errstate(all="ignore"):
        cand = ((lo + hi) * 0.5).astype(xp.float32)
        down = xp.nextafter(cand, xp.float32(-np.inf))
        up = xp.nextafter(cand, xp.float32(np.inf))
        m_lo = (cand.astype(xp.float64) + down.astype(xp.float64)) * 0.5  # exact in binary64
        m_hi = (cand.astype(xp.float64) + up.astype(xp.float64)) * 0.5
        inside = proved & (lo > m_lo) & (hi < m_hi)
    todo = np.flatnonzero(host(~inside))
    if todo.size:
        cand = host(cand).copy()
        xs = host(x)
    for i in todo:
        xi = Fraction(float(xs[i]))
        c = np.float32(cand[i])
        for _ in range(4):  # the estimate is within a step of RN: at most one move
            below = Fraction((float(c) + float(np.nextafter(c, np.float32(-np.inf)))) / 2)
            above = Fraction((float(c) + float(np.nextafter(c, np.float32(np.inf)))) / 2)
            if compare(xi, below) < 0:
                c = np.nextafter(c, np.float32(-np.inf))
            elif compare(xi, above) > 0:
                c = np.nextafter(c, np.float32(np.inf))
            else:
                # a tie goes to the even significand: log2 x is a midpoint only if it is an integer,
                # and no integer of |log2 x| <= 149 is a binary32 midpoint
                break
        cand[i] = c
    bits = xp.asarray(cand).view(xp.uint32).astype(xp.uint64)
    return xp.where(x == 1.0, u64(xp, 0), bits)  # log2(1) = +0 (cand may be -0 or +0)


def ranges(xp, fmt: Format, x, contract, ftz: bool):
    """``(k_lo, k_hi, ok)``: the first and last allowed result of each lane as order keys (see
    :func:`tilecheck.model.order.order_key`), for positive finite float64 ``x`` of binary32,
    each confirmed exactly by :func:`within` (the ends allowed, the values just outside not);
    ``ok`` False where that fails or (``.ftz``) where the allowed values are no single run."""
    absolute = contract.bound.absolute
    enclosed = enclosure(xp, x)
    lo, hi, _ = enclosed
    y = (lo + hi) * 0.5
    abs_lane = absolute_lanes(xp, x, absolute)
    with np.errstate(all="ignore"):
        width = xp.where(abs_lane, 2.0 ** absolute[0], xp.abs(y) * 2.0 ** contract.relative_log2)

    def allowed(key):
        return within(xp, fmt, x, from_key(xp, fmt, key, 1), contract, ftz, enclosed)
    k_lo, k_hi, ok = confirmed_ranges(xp, fmt, allowed, y - width, y + width)
    if ftz:
        ok = ok & ~crossing(xp, fmt, x, contract)
    return k_lo, k_hi, ok
