"""Fast paths for binary32 division, reciprocal and square root and binary64 division.

They compute exactly what :mod:`tilecheck.model.ops` computes (tests compare them bit for bit
on edge-biased inputs and on every TestFloat vector) with a handful of native float operations
instead of integer significand arithmetic:

* **binary32** goes through binary64: ``q = RN64(x)`` and ``c = RN32(q)`` is the correctly rounded
  nearest result (53 >= 2*24 + 2, so the double rounding is innocuous). For directed rounding the
  sign of ``q - c`` says on which side of ``c`` the exact result lies. When ``q == c`` the result
  is exact: ``|x - c| <= 2**-53 |c|`` would make ``a - c*b`` (resp. ``a - c*c``) a non-zero
  multiple of ``lsb(c)*lsb(b)`` smaller than that unit, which is impossible. No binary32 quotient
  or square root over- or underflows binary64, so no scaling is needed.
* **binary64 division**: ``q = RN64(a/b)`` (native division rounds correctly, subnormal results
  included). The side of the exact quotient is the sign of the integer
  ``D = ma * 2**k - mq * mb`` (integer significands, ``k = Ea - Eq - Eb`` from the exponents of
  their last bits). ``|D| <= mb/2 < 2**52`` whenever q is finite and non-zero, so computing D
  modulo 2**64 with wrapping uint64 arithmetic gives it exactly (``ma << k`` is 0 modulo 2**64 for
  k >= 64). A quotient that over- or underflowed to inf or 0 lies beyond it in the direction of x.

Directed results then step ``c`` one unit toward the exact result on its bit pattern, which moves
correctly across binade boundaries, to or from infinity, and out of zero. Blocks take and return
arrays in the format's container dtype; callers feed blocks small enough to stay in cache.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import ops
from tilecheck.model.ieee import flush_subnormal_bits


def applicable(op: str, fmt: Format, mode: ops.Mode) -> bool:
    """Whether a fast path covers this operation (tininess 'before' with ftz stays exact-path)."""
    if mode.ftz and mode.tininess != "after":
        return False
    if fmt.name == "f32":
        return op in ("div", "sqrt", "rcp")
    if fmt.name == "f64":
        return op in ("div", "rcp") and not mode.ftz
    return False


def _step(xp, c, side, rounding: str, c_wide=None):
    """Bits of ``c`` moved one representable value toward the exact result where needed.

    ``c`` is the round-to-nearest result as a float array; ``side`` > 0 when the exact result is
    above ``c`` in value, < 0 below, 0 when exact (or NaN). On the sign-magnitude pattern, +1 moves
    away from zero and -1 toward it, for either sign, across binade boundaries, out of zero and
    between the largest finite number and infinity. (Much cheaper than ``nextafter``.)
    Works in place on ``c``'s buffer and may overwrite ``side``.
    """
    sint = xp.int32 if c.dtype == xp.float32 else xp.int64
    bits = c.view(sint)
    if rounding == "rz":
        # toward zero where c overshoots, i.e. side and c have opposite signs
        wide = c_wide if c_wide is not None else c
        overshoot = xp.multiply(side, wide, out=side) < 0 if side.dtype.kind == "f" else (side * wide) < 0
        xp.subtract(bits, overshoot, out=bits, casting="unsafe")
        return bits
    # +1 for a non-negative pattern, -1 for a negative one: a step up in value
    up = bits >> sint(bits.dtype.itemsize * 8 - 1)
    xp.bitwise_or(up, sint(1), out=up)
    move = side > 0 if rounding == "rp" else side < 0
    xp.multiply(up, move, out=up, casting="unsafe")
    if rounding == "rp":
        xp.add(bits, up, out=bits)
    else:
        xp.subtract(bits, up, out=bits)
    return bits


def _fix_nans(xp, fmt: Format, out, operands, rule: ops.NanRule):
    """Replace native NaNs (x86 default NaN, propagated payloads) by the rule's choice."""
    mag = out & fmt.uint(fmt.magnitude_mask)
    is_nan = mag > fmt.uint(fmt.exponent_mask)
    if not bool(is_nan.any()):
        return out
    if rule.fixed is not None:
        return xp.where(is_nan, fmt.uint(rule.fixed), out)
    chosen = xp.full(out.shape, fmt.uint(rule.invalid), dtype=out.dtype)
    if rule.propagate:
        for op in reversed(operands):
            op_nan = (op & fmt.uint(fmt.magnitude_mask)) > fmt.uint(fmt.exponent_mask)
            chosen = xp.where(op_nan, op | fmt.uint(fmt.quiet_bit), chosen)
    return xp.where(is_nan, chosen, out)


def f32_block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule):
    """binary32 div/sqrt/rcp on one block of uint32 patterns; returns uint32 result patterns.

    Written with explicit ``out=`` buffers: fresh temporaries per ufunc call cost more than
    the arithmetic at this block size.
    """
    a = operands[0]
    if mode.ftz:
        a = flush_subnormal_bits(xp, fmt, a).astype(xp.uint32)
    n = a.shape[0]
    q = xp.empty(n, dtype=xp.float64)
    t = xp.empty(n, dtype=xp.float64)
    if op == "sqrt":
        xp.copyto(q, a.view(xp.float32))
        xp.sqrt(q, out=q)
        srcs = [a]
    else:
        if op == "rcp":
            b = a
            q.fill(1.0)
            srcs = [xp.full(n, 0x3F800000, dtype=xp.uint32), b]
        else:
            b = operands[1]
            if mode.ftz:
                b = flush_subnormal_bits(xp, fmt, b).astype(xp.uint32)
            xp.copyto(q, a.view(xp.float32))
            srcs = [a, b]
        xp.copyto(t, b.view(xp.float32))
        xp.divide(q, t, out=q)
    c = q.astype(xp.float32)
    if mode.rounding != "rn":
        xp.copyto(t, c)
        xp.subtract(q, t, out=q)  # q now holds the side: exact result minus c
        cbits = _step(xp, c, q, mode.rounding, t).view(xp.uint32)
    else:
        cbits = c.view(xp.uint32)
    if mode.ftz:
        cbits = flush_subnormal_bits(xp, fmt, cbits).astype(xp.uint32)
    return _fix_nans(xp, fmt, cbits, srcs, rule)


def f64_div_block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule):
    """binary64 division (or reciprocal) on one block of uint64 patterns; returns uint64 patterns.

    Lanes whose operands and quotient are all normal numbers take the short formula (hidden bits
    set, ``k = 52 + (ma < mb)``); the others -- subnormal or special operands, quotients that are
    subnormal or over/underflowed -- take :func:`_f64_div_general` on the gathered subset.
    """
    if op == "rcp":
        b = operands[0]
        a = xp.full(b.shape, 0x3FF0000000000000, dtype=xp.uint64)
    else:
        a, b = operands
    q = a.view(xp.float64) / b.view(xp.float64)
    qb = q.view(xp.uint64)
    u = xp.uint64
    one, s53 = u(1), u(1 << 53)
    span = u(2046 << 53)
    # exponent field in [1, 2046]  <=>  (x << 1) - 2**53 < 2046 * 2**53 (unsigned wrap-around)
    regular = ((a << one) - s53) < span
    regular &= ((b << one) - s53) < span
    q_mag = qb << one
    # subnormal quotients need the general path: 0 < |q| < 2**-1022
    regular &= (q_mag - one) >= (s53 - one)
    if mode.rounding != "rn":
        mant, hidden = u((1 << 52) - 1), u(1 << 52)
        ma = (a & mant) | hidden
        mb = (b & mant) | hidden
        mq = (qb & mant) | hidden
        k = (ma < mb).astype(xp.uint64) + u(52)
        d = ((ma << k) - mq * mb).view(xp.int64)  # exact: |D| < 2**52 (module docstring)
        sign = qb.view(xp.int64) >> xp.int64(63)  # 0 or -1: the side in value flips for q < 0
        side = (d ^ sign) - sign
        # a quotient that overflowed to inf or underflowed to 0 lies beyond x: x is toward zero
        # from inf and away from zero from 0 (the operands are normal here, so x is finite, != 0)
        x_sign = sign | xp.int64(1)
        side = xp.where(q_mag == 0, x_sign, side)
        side = xp.where(q_mag == u(0x7FF << 53), -x_sign, side)
        qb = _step(xp, q, side, mode.rounding, xp.sign(q)).view(xp.uint64)
    if bool(regular.all()):
        return qb  # quotients of normal operands are never NaN
    idx = xp.nonzero(~regular)[0]
    out = qb.copy()
    out[idx] = _f64_div_general(xp, "div", fmt, [a[idx], b[idx]], mode, rule)
    return out


def _f64_div_general(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule):
    """binary64 division for any lanes (subnormal/special operands, out-of-range quotients)."""
    if op == "rcp":
        b = operands[0]
        a = xp.full(b.shape, 0x3FF0000000000000, dtype=xp.uint64)
    else:
        a, b = operands
    with np.errstate(all="ignore"):
        q = a.view(xp.float64) / b.view(xp.float64)
    qb = q.view(xp.uint64)
    if mode.rounding != "rn":
        u = xp.uint64
        mant = u((1 << 52) - 1)
        s52 = u(52)
        emask = u(0x7FF)
        ea = (a >> s52) & emask
        eb = (b >> s52) & emask
        eq = (qb >> s52) & emask
        ma = (a & mant) | ((ea != 0).astype(xp.uint64) << s52)
        mb = (b & mant) | ((eb != 0).astype(xp.uint64) << s52)
        mq = (qb & mant) | ((eq != 0).astype(xp.uint64) << s52)
        one = u(1)
        k = (xp.maximum(ea, one).astype(xp.int64) - xp.maximum(eq, one).astype(xp.int64)
             - xp.maximum(eb, one).astype(xp.int64) + 1075)
        # doubled (k + 1 >= 0 even for the smallest subnormal quotients); |2D| < 2**54
        k = k + 1
        shifted = xp.where(k >= 64, u(0), ma << xp.clip(k, 0, 63).astype(xp.uint64))
        d = (shifted - ((mq * mb) << one)).view(xp.int64)
        q_neg = (qb >> u(63)).astype(bool)
        side = xp.where(q_neg, -d, d)
        # a quotient that over/underflowed to inf/0 lies beyond x: x is toward zero from inf and
        # away from zero from 0 -- unless an operand was zero/inf/NaN (then q is exact or NaN)
        special_op = (ea == emask) | (eb == emask) | ((a << one) == 0) | ((b << one) == 0)
        q_mag = qb << one
        q_inf = q_mag == u(0x7FF << 53)
        q_zero = q_mag == 0
        x_sign = xp.where(q_neg, -1, 1)
        side = xp.where(q_zero, x_sign, xp.where(q_inf, -x_sign, side))
        side = xp.where(special_op, 0, side)
        # side is an integer here: its sign (not a float product) decides an rz overshoot
        qb = _step(xp, q, side, mode.rounding, xp.sign(q)).view(xp.uint64)
    return _fix_nans(xp, fmt, qb, [a, b], rule)


def block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule):
    """Evaluate one block through the fast path for ``fmt`` (see :func:`applicable`)."""
    with np.errstate(all="ignore"):  # NaN/inf lanes raise flags that the NaN fix-up handles
        if fmt.name == "f32":
            return f32_block(xp, op, fmt, [o.astype(xp.uint32, copy=False) for o in operands], mode, rule)
        return f64_div_block(xp, op, fmt, [o.astype(xp.uint64, copy=False) for o in operands], mode, rule)
