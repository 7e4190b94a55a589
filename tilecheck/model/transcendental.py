"""Judging a transcendental function's approximations: an enclosure decides, exact comparison settles.

sin, cos and tanh (:mod:`tilecheck.model.sincos`, :mod:`tilecheck.model.tanh`) are transcendental
at every rational x != 0 (Lindemann-Weierstrass), so f(x) never equals a threshold a contract
compares it with: a rational (a rounding midpoint, r/(1 +- 2^t)) or an algebraic number (r +-
2^-20.5). Which side it lies on is decidable, in two layers:

* the function's ``enclosure(xp, x)``: float64 ``(lo, hi)`` with lo < f(x) < hi, from its own
  evaluation and a proved error bound. A threshold outside the enclosure by more than its own
  float64 rounding is decided there, for whole arrays;
* the function's ``compare(x, base, offset_log2, sign)``: the sign of f(x) - (base + sign *
  2^offset_log2) for one lane, exactly (decimal arithmetic, precision doubled until certain).

This module holds what is common to every such function: thresholds on both sides, absolute and
relative bounds, the reach of a bound to zero, RN(f(x)) and the allowed runs, for formats of at
most 24 significant bits (binary32, binary16, bfloat16; their values are exact in binary64).
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np

from tilecheck.formats import Format
from tilecheck.model.ieee import float64_values
from tilecheck.model.order import from_key, order_key
from tilecheck.model.xp import u64

_TINY = 2.0 ** -1074


def host(a) -> np.ndarray:
    """A numpy copy of an array of either namespace (the exact decisions run on the host)."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


def values(xp, fmt: Format, bits):
    """float64 values of finite patterns of ``fmt`` (signed; infinities and NaNs read as 0)."""
    mag = bits & u64(xp, fmt.magnitude_mask)
    finite = mag < u64(xp, fmt.exponent_mask)
    return float64_values(xp, fmt, xp.where(finite, bits, u64(xp, 0)))


def nearest(xp, fmt: Format, y):
    """Bits (uint64) of a value of ``fmt`` within a step of float64 ``y`` (the nearest for binary32
    and binary16; bfloat16 through binary32, so perhaps the next one): a candidate that the exact
    comparisons then move."""
    with np.errstate(all="ignore"):
        if fmt.name == "f32":
            return y.astype(xp.float32).view(xp.uint32).astype(xp.uint64)
        if fmt.name == "f16":
            return y.astype(xp.float16).view(xp.uint16).astype(xp.uint64)
        w = y.astype(xp.float32).view(xp.uint32).astype(xp.uint64)  # bfloat16: the upper half, rounded
        return (w + u64(xp, 0x7FFF) + ((w >> u64(xp, 16)) & u64(xp, 1))) >> u64(xp, 16)


def exact_sign(value, x: Fraction, base: Fraction, offset_log2: float = 0.0, sign: int = 0,
               name: str = "f") -> int:
    """The sign of f(x) - (base + sign 2^offset_log2), -1 or 1, where ``value(x, prec)`` gives
    ``(v, err)``: f(x) in decimal with |f(x) - v| <= err, err shrinking with ``prec``. f(x) is
    transcendental and the threshold algebraic, so they differ and the loop, doubling ``prec``,
    ends. ``offset_log2`` is read as its shortest decimal (the spec's -14.7 is -147/10) and
    ``2^offset_log2`` computed in decimal within a few units of its last digit."""
    prec = 40
    while True:
        v, err = value(x, prec)
        with decimal.localcontext(decimal.Context(prec=prec + 10, Emin=-999999, Emax=999999)):
            # (every operator below rounds to the local context: unary minus and abs() included)
            unit = decimal.Decimal(10) ** -(prec + 8)
            t = decimal.Decimal(base.numerator) / decimal.Decimal(base.denominator)
            t_err = abs(t) * unit
            if sign:
                power = decimal.Decimal(2) ** decimal.Decimal(repr(float(offset_log2)))
                t = t + power if sign > 0 else t - power
                t_err += abs(power) * unit * 10 + abs(t) * unit
            diff = v - t
            margin = err + t_err + abs(diff) * unit
            if abs(diff) > margin:
                return 1 if diff > 0 else -1
        if prec > 4000:
            raise AssertionError(f"{name}({x}) against a threshold: undecided at {prec} digits")
        prec *= 2


def settle(xp, x, decided, undecided, exact):
    """``decided`` with the ``undecided`` lanes replaced by ``exact(Fraction(x_i), i)``."""
    idx = np.flatnonzero(host(undecided))
    if not idx.size:
        return decided
    xs = host(x)
    out = decided.copy()
    out[xp.asarray(idx)] = xp.asarray(np.array([exact(Fraction(float(xs[i])), int(i)) for i in idx], dtype=bool))
    return out


def two_sum(xp, a, b):
    """(s, e): s = fl(a + b) and its rounding error, a + b = s + e exactly (Knuth's TwoSum; finite
    values whose sum does not overflow)."""
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        return s, (a - (s - bb)) + (b - bb)


def beyond(xp, f, x, enclosed, thr, exact, above: bool, slack=None, is_exact=None):
    """Per lane: f(x) > threshold (``above``) or f(x) < threshold; never equal. ``thr``: float64
    thresholds within ``slack`` of the exact ones (default 2^-48 relative; none where ``is_exact``
    says ``thr`` is the threshold itself), ``exact(i)``: lane i's exact threshold as ``(base,
    offset_log2, sign)`` (base + sign 2^offset_log2). The enclosure is strict (lo < f(x) < hi), so
    an end at the threshold decides: tanh(x) < 1 where its enclosure ends at 1."""
    lo, hi = enclosed
    with np.errstate(all="ignore"):
        slack = xp.abs(thr) * 2.0 ** -48 + _TINY if slack is None else slack
        if is_exact is not None:
            slack = xp.where(is_exact, 0.0, slack)
        if above:
            yes, no = lo >= thr + slack, hi <= thr - slack
        else:
            yes, no = hi <= thr - slack, lo >= thr + slack

    def decide(v: Fraction, i: int) -> bool:
        s = f.compare(v, *exact(i))
        return s > 0 if above else s < 0
    return settle(xp, x, yes, ~yes & ~no, decide)


def _offset(xp, f, x, enclosed, base, t, sign: int, above: bool):
    """Per lane: f(x) beyond base + sign 2^t (float64 ``base`` exact, ``t`` per lane)."""
    base_h, t_h = host(base), host(t)
    with np.errstate(all="ignore"):
        # thr rounds twice (2^t, the sum) and t itself may be a binary64 near the spec's decimal
        # (-14.7): a slack of 2^-48 of |thr| + |base| covers all three; none where t is an integer
        # and the sum exact (bfloat16 tanh: r + 2^-8 = 1 exactly)
        power = xp.exp2(t)
        thr, err = two_sum(xp, base, sign * power)
        slack = (xp.abs(thr) + xp.abs(base)) * 2.0 ** -48 + _TINY
        is_exact = (t == xp.rint(t)) & (err == 0)
    return beyond(xp, f, x, enclosed, thr, lambda i: (Fraction(float(base_h[i])), float(t_h[i]), sign), above, slack,
                  is_exact)


def within_absolute(xp, f, fmt: Format, x, r_bits, t, ftz: bool, enclosed=None):
    """Per lane: is result ``r_bits`` within 2^t (``t`` per lane) of f(x)? NaN and infinite
    results never are; a zero is where the bound reaches zero, of either sign (an absolute bound
    grants no sign). With ``ftz`` a subnormal result never is, and a zero is also where the bound
    holds a subnormal of that zero's sign (written as that zero): +0 where f(x) - 2^t < 2^emin and
    f(x) + 2^t >= 0, -0 where f(x) + 2^t > -2^emin and f(x) - 2^t <= 0."""
    mag = r_bits & u64(xp, fmt.magnitude_mask)
    special = mag >= u64(xp, fmt.exponent_mask)
    r = values(xp, fmt, r_bits)
    enclosed = f.enclosure(xp, x) if enclosed is None else enclosed
    # f(x) never equals a threshold: "not below r - 2^t" is "at least r - 2^t"
    ok = ~_offset(xp, f, x, enclosed, r, t, -1, False) & ~_offset(xp, f, x, enclosed, r, t, 1, True)
    if ftz:
        sub = (mag != 0) & (mag < u64(xp, fmt.min_normal))
        tiny = xp.zeros(x.shape, dtype=xp.float64) + 2.0 ** fmt.emin
        zero_base = tiny * 0
        negative = (r_bits >> u64(xp, fmt.width - 1)) != 0
        pos_zero = ~_offset(xp, f, x, enclosed, tiny, t, 1, True) & ~_offset(xp, f, x, enclosed, zero_base, t, -1, False)
        neg_zero = ~_offset(xp, f, x, enclosed, -tiny, t, -1, False) & ~_offset(xp, f, x, enclosed, zero_base, t, 1, True)
        ok = xp.where(sub, False, xp.where(mag == 0, xp.where(negative, neg_zero, pos_zero), ok))
    return ok & ~special


def within_relative(xp, f, fmt: Format, x, r_bits, t: float, enclosed=None):
    """Per lane: is result ``r_bits`` within 2^t |f(x)| of f(x) (``t`` an integer)? Such a result
    has f(x)'s sign and is no zero: for f(x) > 0, r / (1 + 2^t) <= f(x) <= r / (1 - 2^t) with r > 0
    (mirrored below zero). NaN and infinite results never are."""
    if not float(t).is_integer():
        raise NotImplementedError("relative bounds of transcendental functions are integer powers of two")
    e = Fraction(2) ** int(t)
    mag = r_bits & u64(xp, fmt.magnitude_mask)
    special = mag >= u64(xp, fmt.exponent_mask)
    r = values(xp, fmt, r_bits)
    r_h = host(r)
    enclosed = f.enclosure(xp, x) if enclosed is None else enclosed
    eps, k = float(e), -int(t)
    with np.errstate(all="ignore"):
        near, far = r / (1 + eps), r / (1 - eps)  # the ends nearer to and further from zero
        # q is r / (1 +- 2^-k) itself where q (2^k +- 1) = r 2^k exactly: q 2^k +- q by TwoSum
        s, err = two_sum(xp, near * 2.0 ** k, near)
        near_exact = (s == r * 2.0 ** k) & (err == 0)
        s, err = two_sum(xp, far * 2.0 ** k, -far)
        far_exact = (s == r * 2.0 ** k) & (err == 0)

    def exact(scale):
        return lambda i: (Fraction(float(r_h[i])) / scale, 0.0, 0)
    positive = r > 0
    # r > 0: near <= f <= far; r < 0: far <= f <= near (f = near or far never holds)
    not_below = xp.where(positive, ~beyond(xp, f, x, enclosed, near, exact(1 + e), False, is_exact=near_exact),
                         ~beyond(xp, f, x, enclosed, far, exact(1 - e), False, is_exact=far_exact))
    not_above = xp.where(positive, ~beyond(xp, f, x, enclosed, far, exact(1 - e), True, is_exact=far_exact),
                         ~beyond(xp, f, x, enclosed, near, exact(1 + e), True, is_exact=near_exact))
    return not_below & not_above & (mag != 0) & ~special


def reaches(xp, f, x, t, margin: float = 0.0, enclosed=None):
    """Per lane: |f(x)| <= 2^t + ``margin`` (the bound reaches zero, or a flushed subnormal)."""
    enclosed = f.enclosure(xp, x) if enclosed is None else enclosed
    base = xp.zeros(x.shape, dtype=xp.float64) + margin
    return ~_offset(xp, f, x, enclosed, base, t, 1, True) & ~_offset(xp, f, x, enclosed, -base, t, -1, False)


def crossing(xp, f, x, t, margin: float = 0.0):
    """Per lane: does the absolute bound 2^t reach within ``margin`` of zero (|f(x)| <= 2^t +
    margin)? With ``margin`` 0 the allowed values have both signs; with 2^emin under ``.ftz`` they
    hold a flushed zero and are no single run of values. The exact layer runs only for lanes
    whose estimate lies within twice the bound of zero."""
    flat, tf = x.reshape(-1), t.reshape(-1)
    lo, hi = f.enclosure(xp, flat)
    with np.errstate(all="ignore"):
        near = xp.minimum(xp.abs(lo), xp.abs(hi)) < 2.0 * (xp.exp2(tf) + margin)
    out = xp.zeros(flat.shape, dtype=bool)
    idx = xp.nonzero(near)[0]
    if int(idx.size):
        out[idx] = reaches(xp, f, flat[idx], tf[idx], margin, (lo[idx], hi[idx]))
    return out.reshape(x.shape)


def rounded(xp, f, fmt: Format, x):
    """RN(f(x)) in ``fmt`` (uint64 patterns) for float64 ``x`` the function's enclosure holds: the
    value nearest the estimate, moved a step where the exact comparison with a neighbouring
    midpoint says so (f(x) is never a midpoint: it is transcendental)."""
    lo, hi = f.enclosure(xp, x)
    key = order_key(xp, fmt, nearest(xp, fmt, (lo + hi) * 0.5), 1)
    top = int(fmt.inf)
    for _ in range(3):  # the candidate is within a step or two of RN
        here = values(xp, fmt, from_key(xp, fmt, key, 1))
        down = values(xp, fmt, from_key(xp, fmt, xp.clip(key - 1, -top, top - 1), 1))
        up = values(xp, fmt, from_key(xp, fmt, xp.clip(key + 1, -top, top - 1), 1))
        m_lo, m_hi = (here + down) * 0.5, (here + up) * 0.5  # exact in binary64
        m_lo_h, m_hi_h = host(m_lo), host(m_hi)
        exact = xp.ones(x.shape, dtype=bool)  # midpoints of <= 24-bit values are binary64 values
        below = beyond(xp, f, x, (lo, hi), m_lo, lambda i: (Fraction(float(m_lo_h[i])), 0.0, 0), False,
                       is_exact=exact)
        above = beyond(xp, f, x, (lo, hi), m_hi, lambda i: (Fraction(float(m_hi_h[i])), 0.0, 0), True,
                       is_exact=exact)
        if not bool(xp.any(below | above)):
            break
        key = key - below.astype(xp.int64) + above.astype(xp.int64)
    # keys -1 and 0 are the two zeros: f(x) != 0 here, so a zero is only ever RN of a value below
    # half the smallest subnormal, of f(x)'s sign
    return from_key(xp, fmt, key, 1)


def confirmed_ranges(xp, fmt: Format, allowed, estimate_lo, estimate_hi):
    """``(k_lo, k_hi, ok)``: the first and last allowed result of each lane as order keys, from
    float64 estimates of the ends (within a step or two of the exact ones), each confirmed by
    ``allowed(keys)``: the ends allowed, the values just outside not; a lane still moving after a
    few rounds fails ``ok``."""
    k_lo = order_key(xp, fmt, nearest(xp, fmt, estimate_lo), 1)
    k_hi = order_key(xp, fmt, nearest(xp, fmt, estimate_hi), 1)
    for _ in range(4):
        in_lo, out_lo, in_hi, out_hi = allowed(k_lo), allowed(k_lo - 1), allowed(k_hi), allowed(k_hi + 1)
        if bool(xp.all(in_lo & ~out_lo & in_hi & ~out_hi)):
            break
        k_lo = xp.where(out_lo, k_lo - 1, xp.where(~in_lo, k_lo + 1, k_lo))
        k_hi = xp.where(out_hi, k_hi + 1, xp.where(~in_hi, k_hi - 1, k_hi))
    ok = allowed(k_lo) & allowed(k_hi) & ~allowed(k_lo - 1) & ~allowed(k_hi + 1) & (k_lo <= k_hi)
    return k_lo, k_hi, ok


def bound_ranges(xp, f, fmt: Format, x, t, relative: bool = False):
    """``(k_lo, k_hi, ok, enclosed)``: the allowed run of each lane (order keys, confirmed by
    :func:`confirmed_ranges`) under an absolute bound 2^t (``t`` per lane) or, with ``relative``, a
    relative bound 2^t (``t`` an integer); ``enclosed`` is f's enclosure of ``x``, for more tests."""
    enclosed = f.enclosure(xp, x)
    y = (enclosed[0] + enclosed[1]) * 0.5
    with np.errstate(all="ignore"):
        width = xp.exp2(xp.zeros(x.shape) + t) * (xp.abs(y) if relative else 1.0)

    def allowed(key):
        bits = from_key(xp, fmt, key, 1)
        if relative:
            return within_relative(xp, f, fmt, x, bits, t, enclosed)
        return within_absolute(xp, f, fmt, x, bits, t, False, enclosed)
    return (*confirmed_ranges(xp, fmt, allowed, y - width, y + width), enclosed)
