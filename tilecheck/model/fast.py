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

import threading

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import narrowjit, njit, ops
from tilecheck.model.ieee import flush_subnormal_bits


def applicable(op: str, fmt: Format, mode: ops.Mode) -> bool:
    """Whether a fast path covers this operation (tininess 'before' with ftz stays exact-path)."""
    if mode.flush_out and mode.tininess != "after":
        return False
    if fmt.name == "f32":
        # add/sub/mul/fma: round to nearest, PTX-style flushing (inputs and results alike)
        return op in ("div", "sqrt", "rcp") or (op in ("add", "sub", "mul", "fma") and mode.rounding == "rn"
                                                and mode.flush_in == mode.flush_out)
    if fmt.name == "f64":
        return op in ("div", "rcp") and not (mode.flush_in or mode.flush_out)
    if fmt.name in ("f16", "bf16"):
        return op in HALF_OPS
    return False


HALF_OPS = ("add", "sub", "mul", "div", "sqrt", "rcp")
"""binary16/bfloat16 operations with a fast path (see :func:`half_block`)."""


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


class _Scratch(threading.local):
    """Per-thread reusable work arrays: allocating fresh temporaries for every ufunc call of a
    block costs more than the arithmetic itself at cache-sized blocks."""

    def __init__(self):
        self.arrays = {}

    def get(self, xp, slot: str, n: int, dtype):
        key = (id(xp), slot, dtype)
        owner, arr = self.arrays.get(key, (None, None))
        # the entry keeps its namespace alive and is checked by identity: an id() alone can be
        # reused by another namespace once the first is gone (and namespaces need not be hashable)
        if owner is not xp or arr.shape[0] < n:
            arr = xp.empty(max(n, 1), dtype=dtype)
            self.arrays[key] = (xp, arr)
        return arr[:n]


_SCRATCH = _Scratch()


def scratch(xp, slot: str, n: int, dtype):
    """A per-thread reusable work array of ``n`` elements for ``slot`` (see :class:`_Scratch`)."""
    return _SCRATCH.get(xp, slot, n, dtype)


def _nan_lanes(xp, fmt: Format, out, n: int):
    """Bool array of NaN result patterns, computed in scratch space."""
    mag = _SCRATCH.get(xp, "nan_mag", n, out.dtype)
    flag = _SCRATCH.get(xp, "nan_flag", n, bool)
    xp.bitwise_and(out, out.dtype.type(fmt.magnitude_mask), out=mag)
    xp.greater(mag, out.dtype.type(fmt.exponent_mask), out=flag)
    return flag


def fix_nans_into(xp, fmt: Format, out, operands, rule: ops.NanRule):
    """In place: replace native NaNs in ``out`` (x86 default NaN, propagated payloads)."""
    flag = _nan_lanes(xp, fmt, out, out.shape[0])
    if bool(flag.any()):
        out[...] = _fix_nans(xp, fmt, out, operands, rule)


def f32_block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """binary32 div/sqrt/rcp on one block of uint32 patterns, written into ``out`` (uint32).

    Every step writes into per-thread scratch arrays (``out=``), see :class:`_Scratch`.
    """
    a = operands[0]
    if mode.flush_in:
        a = flush_subnormal_bits(xp, fmt, a).astype(xp.uint32)
    n = a.shape[0]
    if out is None:
        out = xp.empty(n, dtype=xp.uint32)
    q = _SCRATCH.get(xp, "q", n, xp.float64)
    c = _SCRATCH.get(xp, "c", n, xp.float32)
    f64 = xp.float64
    # dtype=float64 makes numpy widen the binary32 operands on the fly, block by block in cache
    if op == "sqrt":
        xp.sqrt(a.view(xp.float32), out=q, dtype=f64)
        srcs = [a]
    elif op == "rcp":
        xp.divide(f64(1.0), a.view(xp.float32), out=q, dtype=f64)
        srcs = [xp.full(n, 0x3F800000, dtype=xp.uint32), a]
    else:
        b = operands[1]
        if mode.flush_in:
            b = flush_subnormal_bits(xp, fmt, b).astype(xp.uint32)
        xp.divide(a.view(xp.float32), b.view(xp.float32), out=q, dtype=f64)
        srcs = [a, b]
    xp.copyto(c, q, casting="same_kind")  # round to nearest binary32
    cbits = c.view(xp.int32)
    res = out.view(xp.int32)
    if mode.rounding == "rn":
        xp.copyto(res, cbits)
    else:
        xp.subtract(q, c, out=q, dtype=f64)  # q now holds the side: exact result minus c
        m = _SCRATCH.get(xp, "m", n, bool)
        if mode.rounding == "rz":
            # toward zero where c overshoots: side and c of opposite signs
            xp.multiply(q, c, out=q, dtype=f64)
            xp.less(q, 0.0, out=m)
            xp.subtract(cbits, m, out=res, casting="unsafe")
        else:
            # +1 on the pattern of a non-negative c is a step up in value, -1 on a negative one
            up = _SCRATCH.get(xp, "up", n, xp.int32)
            xp.right_shift(cbits, xp.int32(31), out=up)
            xp.bitwise_or(up, xp.int32(1), out=up)
            (xp.greater if mode.rounding == "rp" else xp.less)(q, 0.0, out=m)
            xp.multiply(up, m, out=up, casting="unsafe")
            (xp.add if mode.rounding == "rp" else xp.subtract)(cbits, up, out=res)
    if mode.flush_out:
        out[...] = flush_subnormal_bits(xp, fmt, out).astype(xp.uint32)
    fix_nans_into(xp, fmt, out, srcs, rule)
    return out


def f64_div_block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """binary64 division (or reciprocal) on one block of uint64 patterns, written into ``out``.

    Lanes whose operands are normal and whose quotient is normal, infinite or zero take the short
    formula (hidden bits set, ``k = 52 + (ma < mb)``; over/underflowed quotients lie beyond x);
    the others -- subnormal or special operands, subnormal quotients -- take
    :func:`_f64_div_general` on the gathered subset.
    """
    if op == "rcp":
        b = operands[0]
        a = xp.full(b.shape, 0x3FF0000000000000, dtype=xp.uint64)
    else:
        a, b = operands
    n = a.shape[0]
    if out is None:
        out = xp.empty(n, dtype=xp.uint64)
    u, i64 = xp.uint64, xp.int64
    q = out.view(xp.float64)
    xp.divide(a.view(xp.float64), b.view(xp.float64), out=q)
    qb = out
    s1 = _SCRATCH.get(xp, "s1", n, u)
    s2 = _SCRATCH.get(xp, "s2", n, u)
    reg = _SCRATCH.get(xp, "reg", n, bool)
    tmp = _SCRATCH.get(xp, "tmp", n, bool)
    one, s53, span = u(1), u(1 << 53), u(2046 << 53)
    # exponent field in [1, 2046]  <=>  (x << 1) - 2**53 < 2046 * 2**53 (unsigned wrap-around)
    for x, first in ((a, True), (b, False)):
        xp.left_shift(x, one, out=s1)
        xp.subtract(s1, s53, out=s1)
        if first:
            xp.less(s1, span, out=reg)
        else:
            xp.less(s1, span, out=tmp)
            xp.logical_and(reg, tmp, out=reg)
    # subnormal quotients need the general path: 0 < |q| < 2**-1022
    q_mag = _SCRATCH.get(xp, "q_mag", n, u)
    xp.left_shift(qb, one, out=q_mag)
    xp.subtract(q_mag, one, out=s1)
    xp.greater_equal(s1, s53 - one, out=tmp)
    xp.logical_and(reg, tmp, out=reg)
    if mode.rounding != "rn":
        mant, hidden = u((1 << 52) - 1), u(1 << 52)
        ma = _SCRATCH.get(xp, "ma", n, u)
        xp.bitwise_and(a, mant, out=ma)
        xp.bitwise_and(b, mant, out=s1)
        xp.less(ma, s1, out=tmp)  # same hidden bits: comparing fraction fields compares ma, mb
        xp.bitwise_or(s1, hidden, out=s1)  # mb
        xp.add(tmp, u(52), out=s2, casting="unsafe")  # k = 52 + (ma < mb)
        # ma << k modulo 2**64 is a << k: for k >= 12 the exponent bits (and the hidden bit)
        # are shifted out entirely
        xp.left_shift(a, s2, out=ma)
        xp.bitwise_and(qb, mant, out=s2)
        xp.bitwise_or(s2, hidden, out=s2)  # mq
        xp.multiply(s2, s1, out=s2)
        xp.subtract(ma, s2, out=ma)  # D modulo 2**64 = D exactly: |D| < 2**52
        d = ma.view(i64)
        x_sign = s1.view(i64)
        xp.right_shift(qb.view(i64), i64(63), out=x_sign)  # 0 or -1
        xp.bitwise_xor(d, x_sign, out=d)
        xp.subtract(d, x_sign, out=d)  # side in value: D flips for q < 0
        xp.bitwise_or(x_sign, i64(1), out=x_sign)  # sign of x (and of q) as +-1
        # a quotient that overflowed to inf or underflowed to 0 lies beyond x: x is toward zero
        # from inf and away from zero from 0 (the operands are normal here: x finite, non-zero).
        # Gathered by index: these lanes are few for typical data and a masked copy costs more.
        xp.equal(q_mag, u(0), out=tmp)
        idx = xp.nonzero(tmp)[0]
        if idx.size:
            d[idx] = x_sign[idx]
        xp.equal(q_mag, u(0x7FF << 53), out=tmp)
        idx = xp.nonzero(tmp)[0]
        if idx.size:
            d[idx] = -x_sign[idx]
        qbits = qb.view(i64)
        if mode.rounding == "rz":
            # toward zero where q overshoots: side of the opposite sign to q
            xp.multiply(d, x_sign, out=d)
            xp.less(d, i64(0), out=tmp)
            xp.subtract(qbits, tmp, out=qbits, casting="unsafe")
        else:
            # +1 on the pattern of a non-negative q is a step up in value, -1 on a negative one
            (xp.greater if mode.rounding == "rp" else xp.less)(d, i64(0), out=tmp)
            xp.multiply(x_sign, tmp, out=x_sign, casting="unsafe")
            (xp.add if mode.rounding == "rp" else xp.subtract)(qbits, x_sign, out=qbits)
    if not bool(reg.all()):
        idx = xp.nonzero(~reg)[0]
        out[idx] = _f64_div_general(xp, "div", fmt, [a[idx], b[idx]], mode, rule)
    return out  # quotients of normal operands are never NaN; the general path fixed its NaNs


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


def f32_arith_block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """binary32 add/sub/mul/fma rounded to nearest even, through float64.

    A product of two binary32 values is exact in float64 (48 bits). A float64 sum or difference of
    two binary32 values rounded again to binary32 rounds as if once (53 >= 2*24+2). fma: the exact
    product plus c is rounded to odd in float64 (RN, then the neighbour on the error's side when RN
    was even and inexact; the error comes from TwoSum, exact here) and then to binary32, which is
    correct rounding (round-to-odd with 53 >= 24+2 bits). ``.ftz`` flushes operands first and
    subnormal rounded results after (tininess after rounding; see :func:`applicable`).
    """
    srcs = list(operands)
    if mode.flush_in:
        operands = [flush_subnormal_bits(xp, fmt, o).astype(xp.uint32) for o in operands]
    f64 = xp.float64
    v = [o.view(xp.float32).astype(f64) for o in operands]
    if op == "add":
        x = v[0] + v[1]
    elif op == "sub":
        x = v[0] - v[1]
    elif op == "mul":
        x = v[0] * v[1]
    else:
        p = v[0] * v[1]
        x = p + v[2]
        bb = x - p
        err = (p - (x - bb)) + (v[2] - bb)
        bits = x.view(xp.int64)
        fix = xp.isfinite(x) & (err != 0) & ((bits & 1) == 0)
        if bool(fix.any()):
            x = xp.where(fix, xp.nextafter(x, xp.where(err > 0, f64(xp.inf), f64(-xp.inf))), x)
    r = x.astype(xp.float32).view(xp.uint32)
    if mode.flush_out:
        r = flush_subnormal_bits(xp, fmt, r).astype(xp.uint32)
    if out is None:
        out = r.copy()
    else:
        out[...] = r
    fix_nans_into(xp, fmt, out, srcs, rule)
    return out


def _half_to_f64(xp, fmt: Format, bits):
    """binary16/bfloat16 patterns (uint16) as exact float64 values."""
    if fmt.name == "f16":
        return bits.view(xp.float16).astype(xp.float64)
    return (bits.astype(xp.uint32) << xp.uint32(16)).view(xp.float32).astype(xp.float64)


def _f64_to_half_rn(xp, fmt: Format, q, out):
    """Round float64 ``q`` to nearest in ``fmt``, bits into uint16 ``out``. binary16: numpy's
    conversion (correctly rounded from float64). bfloat16: through binary32 -- both roundings to
    nearest, innocuous for results of one operation on bfloat16 operands (53 >= 2*24 + 2 and
    24 >= 2*8 + 2) -- then to nearest even on the binary32 pattern (carries reach the exponent,
    so overflow gives infinity and subnormals round on their grid). NaN lanes become a quiet NaN."""
    if fmt.name == "f16":
        xp.copyto(out.view(xp.float16), q, casting="same_kind")
        return out
    bits = q.astype(xp.float32).view(xp.uint32)
    lsb = (bits >> xp.uint32(16)) & xp.uint32(1)
    rounded = (bits + xp.uint32(0x7FFF) + lsb) >> xp.uint32(16)
    nan = (bits & xp.uint32(0x7FFFFFFF)) > xp.uint32(0x7F800000)
    xp.copyto(out, xp.where(nan, xp.uint32(fmt.default_nan), rounded), casting="unsafe")
    return out


def half_block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """binary16/bfloat16 add/sub/mul/div/sqrt/rcp on one block of uint16 patterns, into ``out``.

    ``q = RN64(x)`` of the exact operands widened to float64, ``c = RN(q)`` in the format (the
    double rounding is innocuous: 53 >= 2p + 2). Directed modes step ``c`` one unit toward the
    exact value by the sign of ``q - c``: if ``q != c`` the exact value lies on ``q``'s side
    (``RN64`` is monotone and ``c`` is a float64); if ``q == c`` the result is exact for mul (the
    product of two significands of at most 11 bits is exact), div/sqrt/rcp (as for binary32) and
    binary16 add/sub (exact in float64); bfloat16 sums of far-apart operands are not, so add/sub
    take the sign of TwoSum's error term there.
    """
    a = operands[0]
    if mode.flush_in:
        a = flush_subnormal_bits(xp, fmt, a).astype(xp.uint16)
    n = a.shape[0]
    if out is None:
        out = xp.empty(n, dtype=xp.uint16)
    x = _half_to_f64(xp, fmt, a)
    e = None
    if op == "sqrt":
        q = xp.sqrt(x)
        srcs = [a]
    elif op == "rcp":
        q = xp.divide(1.0, x)
        srcs = [xp.full(n, fmt.from_fraction(1), dtype=xp.uint16), a]
    else:
        b = operands[1]
        if mode.flush_in:
            b = flush_subnormal_bits(xp, fmt, b).astype(xp.uint16)
        y = _half_to_f64(xp, fmt, b)
        srcs = [a, b]
        if op in ("add", "sub"):
            if op == "sub":
                y = -y
            q = x + y
            if fmt.name == "bf16" and mode.rounding != "rn":
                bb = q - x  # TwoSum: e = (x - (q - bb)) + (y - bb)
                e = (x - (q - bb)) + (y - bb)
        elif op == "mul":
            q = x * y
        else:
            q = x / y
    _f64_to_half_rn(xp, fmt, q, out)
    if op in ("add", "sub") and mode.rounding == "rm":
        # an exact zero sum is -0 under rm unless both terms are +0 (IEEE 754 6.3)
        zero = q == 0
        if bool(zero.any()):
            neg = xp.signbit(x) | xp.signbit(y)
            out[...] = xp.where(zero, xp.where(neg, xp.uint16(0x8000), xp.uint16(0)), out)
    if mode.rounding != "rn":
        c = _half_to_f64(xp, fmt, out)
        side = xp.sign(q - c)  # NaN where q or c is NaN or both infinite: no step
        if e is not None:
            side = xp.where(side == 0, xp.sign(e), side)
        bits = out.view(xp.int16)
        if mode.rounding == "rz":
            overshoot = (side * xp.sign(c)) < 0
            xp.subtract(bits, overshoot, out=bits, casting="unsafe")
        else:
            up = (bits >> xp.int16(15)) | xp.int16(1)
            move = side > 0 if mode.rounding == "rp" else side < 0
            step = (up * move).astype(xp.int16)
            (xp.add if mode.rounding == "rp" else xp.subtract)(bits, step, out=bits)
    if mode.flush_out:
        # every subnormal result, x + 0 with a subnormal x included (as the exact path)
        out[...] = flush_subnormal_bits(xp, fmt, out).astype(xp.uint16)
    fix_nans_into(xp, fmt, out, srcs, rule)
    return out


def block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """Evaluate one block through the fast path for ``fmt`` (see :func:`applicable`), into
    ``out`` (the format's container dtype) when given; returns the result array."""
    with np.errstate(all="ignore"):  # NaN/inf lanes raise flags that the NaN fix-up handles
        if fmt.name == "f32" and op in ("add", "sub", "mul", "fma"):
            return f32_arith_block(xp, op, fmt, [o.astype(xp.uint32, copy=False) for o in operands], mode, rule, out)
        if fmt.name == "f32":
            words = [o.astype(xp.uint32, copy=False) for o in operands]
            if xp is np and njit.enabled():  # the same algorithm compiled
                return narrowjit.f32_block(op, words, mode, rule, out)
            return f32_block(xp, op, fmt, words, mode, rule, out)
        if fmt.name in ("f16", "bf16"):
            halves = [o.astype(xp.uint16, copy=False) for o in operands]
            if xp is np and njit.enabled():  # the same algorithm compiled (numpy's passes cost 3-8x more per lane)
                return narrowjit.block(op, fmt, halves, mode, rule, out)
            return half_block(xp, op, fmt, halves, mode, rule, out)
        return f64_div_block(xp, op, fmt, [o.astype(xp.uint64, copy=False) for o in operands], mode, rule, out)
