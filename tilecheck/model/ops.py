"""Correctly rounded IEEE operations on bit patterns: add, sub, mul, fma, div, sqrt, rcp, ldexp, convert.

Each operation computes its exact result (or a significand with guard bits and a sticky flag) with
integer arithmetic, or for binary64 division and square root with error-free float64 transforms,
and rounds once through :func:`tilecheck.model.ieee.round_pack`. Special operands (zeros,
infinities, NaNs) are resolved separately and merged with ``where``.

NaN results follow a :class:`NanRule`: a NaN operand is returned quieted (first NaN in operand
order) unless the rule fixes one pattern for every NaN result; invalid operations (0/0, inf-inf,
0*inf, sqrt of a negative) give ``rule.invalid``.

Beyond the IEEE operations the semantics language needs three exact primitives: :func:`fma` with
a fused power-of-two ``scale`` (AMD ``V_DIV_FMAS``: ``(a*b + c) * 2**n`` rounded once),
:func:`ldexp` and :func:`convert` between formats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import wide
from tilecheck.model.ieee import Unpacked, flush_subnormal_bits, normalize, quiet, round_pack, unpack
from tilecheck.model.xp import bit_length, broadcast_all, shift_right_jam, u64
from tilecheck.spec.registry import OPERATIONS, TININESS_DEFAULT

OPS = ("add", "sub", "mul", "fma", "div", "sqrt", "rcp")
ARITY = {op: OPERATIONS[op] for op in OPS}

_TOP = 61  # significands are aligned with their top bit here for addition (3 bits of headroom)

_SCALE_LIMIT = 1 << 20
"""Power-of-two scales are clamped to +-this: every non-zero exact result here has an exponent
within a few thousand, so beyond it each one over- or underflows exactly as with the true scale,
and the clamp keeps the int64 exponent arithmetic far from wrapping."""


@dataclass(frozen=True)
class NanRule:
    """How NaN results are chosen.

    ``propagate``: a NaN operand is returned quieted (the first in operand order); otherwise
    every NaN result is ``fixed``. ``invalid`` is the pattern for invalid operations.
    """

    propagate: bool
    invalid: int
    fixed: int | None = None

    @staticmethod
    def ieee(fmt: Format) -> "NanRule":
        """Quiet the first NaN operand; invalid operations give the format's default NaN."""
        return NanRule(True, fmt.default_nan)


@dataclass(frozen=True)
class Mode:
    """Rounding and flush-to-zero settings of one evaluation.

    ``ftz`` flushes subnormal inputs and subnormal results (PTX ``.ftz``). AMD's MODE register
    controls the two separately, so ``ftz_in`` / ``ftz_out`` override ``ftz`` for the inputs or
    the results alone when given (``None``: follow ``ftz``). ``tininess`` says whether a result
    counts as subnormal after rounding or on its exact value (see :func:`round_pack`). Read the
    effective settings from :attr:`flush_in` and :attr:`flush_out`.
    """

    rounding: str = "rn"
    ftz: bool = False
    tininess: str = TININESS_DEFAULT
    ftz_in: bool | None = None
    ftz_out: bool | None = None

    @property
    def flush_in(self) -> bool:
        """Whether subnormal operands are replaced by zeros of the same sign."""
        return self.ftz if self.ftz_in is None else self.ftz_in

    @property
    def flush_out(self) -> bool:
        """Whether subnormal results (judged per ``tininess``) become zeros of the same sign."""
        return self.ftz if self.ftz_out is None else self.ftz_out


def _signed_zero(xp, fmt: Format, sign):
    return sign << u64(xp, fmt.width - 1)


def _signed_inf(xp, fmt: Format, sign):
    return (sign << u64(xp, fmt.width - 1)) | u64(xp, fmt.inf)


def _exact_zero_sum_sign(xp, sx, sy, rounding: str):
    """Sign of an exact zero sum x + y (IEEE 754 §6.3): the common sign if both agree, else +0
    (-0 when rounding toward -inf)."""
    opposite_sign = u64(xp, 1 if rounding == "rm" else 0)
    return xp.where(sx == sy, sx, opposite_sign)


def _nan_merge(xp, fmt: Format, result, operands: list[Unpacked], invalid, rule: NanRule):
    """Overwrite NaN-producing lanes: NaN operands first, then invalid operations."""
    any_nan = xp.zeros(result.shape, dtype=bool)
    for u in operands:
        any_nan = any_nan | u.nan
    if rule.fixed is not None:
        return xp.where(any_nan | invalid, u64(xp, rule.fixed), result)
    out = xp.where(invalid, u64(xp, rule.invalid), result)
    if rule.propagate:
        chosen = None
        for u in reversed(operands):  # the first NaN operand wins
            q = quiet(xp, fmt, u.bits)
            chosen = q if chosen is None else xp.where(u.nan, q, chosen)
        return xp.where(any_nan, chosen, out)
    return xp.where(any_nan, u64(xp, rule.invalid), out)


def _saturate(xp, fmt: Format, bits):
    """``.sat``: clamp to [+0, 1.0]; NaN and every negative value (-0 included) give +0."""
    one = fmt.from_fraction(1)
    mag = bits & u64(xp, fmt.magnitude_mask)
    negative = (bits >> u64(xp, fmt.width - 1)) != 0
    is_nan = mag > u64(xp, fmt.exponent_mask)
    out = xp.where(mag > u64(xp, one), u64(xp, one), bits)
    return xp.where(negative | is_nan, u64(xp, 0), out)


# ---------------------------------------------------------------------------------------------
# addition (and the addition step of fma), any precision up to 53 bits


def _add_core(xp, fmt: Format, sx, mx, ex, sy, my, ey, mode: Mode):
    """Round ``(-1)**sx*mx*2**ex + (-1)**sy*my*2**ey`` (non-zero significands below 2**62).

    Returns (bits, exact_zero) where exact_zero marks lanes whose exact sum is zero (the caller
    applies the sign rule for those).
    """
    mx, ex = normalize(xp, mx, ex, _TOP + 1)
    my, ey = normalize(xp, my, ey, _TOP + 1)
    x_big = ex >= ey
    hi_m = xp.where(x_big, mx, my)
    lo_m = xp.where(x_big, my, mx)
    hi_s = xp.where(x_big, sx, sy)
    lo_s = xp.where(x_big, sy, sx)
    e = xp.where(x_big, ex, ey)
    d = xp.abs(ex - ey)
    lo_m = shift_right_jam(xp, lo_m, d)
    same = hi_s == lo_s
    total = hi_m + lo_m
    hi_ge = hi_m >= lo_m
    diff = xp.where(hi_ge, hi_m - lo_m, lo_m - hi_m)
    m = xp.where(same, total, diff)
    sign = xp.where(same | hi_ge, hi_s, lo_s)
    exact_zero = m == 0
    # the sum of two 62-bit values can carry into bit 62: narrow to stay below 2**62
    carry = m >> u64(xp, _TOP + 1) != 0
    m = xp.where(carry, shift_right_jam(xp, m, 1), m)
    e = e + carry.astype(xp.int64)
    bits = round_pack(xp, fmt, sign, xp.where(exact_zero, u64(xp, 1), m), e,
                      xp.zeros(m.shape, dtype=bool), mode.rounding, mode.flush_out, mode.tininess)
    return bits, exact_zero


def add(xp, fmt: Format, a, b, mode: Mode, rule: NanRule, negate_b: bool = False):
    """a + b (or a - b with ``negate_b``), correctly rounded."""
    ua = unpack(xp, fmt, a, mode.flush_in)
    ub = unpack(xp, fmt, b, mode.flush_in)
    sb = ub.sign ^ u64(xp, 1) if negate_b else ub.sign
    bits, exact_zero = _add_core(xp, fmt, ua.sign, xp.where(ua.zero, u64(xp, 1), ua.sig), ua.exp,
                                 sb, xp.where(ub.zero, u64(xp, 1), ub.sig), ub.exp, mode)
    # zeros: x + 0 = x exactly; 0 + 0 and exact cancellation follow the zero-sum sign rule
    b_signed = ub.bits ^ u64(xp, fmt.sign_mask) if negate_b else ub.bits
    bits = xp.where(ub.zero & ~ua.zero, ua.bits, bits)
    bits = xp.where(ua.zero & ~ub.zero, b_signed, bits)
    if mode.flush_out:
        # a subnormal x passed through as x + 0 is a subnormal result like any other: output
        # flushing replaces it (only reachable when inputs are not flushed, e.g. AMD's
        # "allow input, flush output" denormal mode); its exact value is tiny under either tininess
        bits = flush_subnormal_bits(xp, fmt, bits)
    zsign = _exact_zero_sum_sign(xp, ua.sign, sb, mode.rounding)
    cancelled = exact_zero & ~ua.zero & ~ub.zero  # zero operands were given stand-in values
    bits = xp.where((ua.zero & ub.zero) | cancelled, _signed_zero(xp, fmt, zsign), bits)
    # infinities
    invalid = ua.inf & ub.inf & (ua.sign != sb)
    bits = xp.where(ua.inf, ua.bits, xp.where(ub.inf, _signed_inf(xp, fmt, sb), bits))
    return _nan_merge(xp, fmt, bits, [ua, ub], invalid, rule)


# ---------------------------------------------------------------------------------------------
# multiplication and fused multiply-add (exact 128-bit products)


def _product(xp, ua: Unpacked, ub: Unpacked):
    """Exact product significand (hi, lo) and exponent of two unpacked operands."""
    hi, lo = wide.mul_64x64(xp, ua.sig, ub.sig)
    return hi, lo, ua.exp + ub.exp


def _narrow(xp, hi, lo, e):
    """Narrow a non-zero 128-bit significand to at most 62 bits (jamming), adjusting the exponent."""
    bl = wide.bit_length128(xp, hi, lo)
    n = xp.maximum(bl - (_TOP + 1), 0)
    _, m = wide.shift_right_jam(xp, hi, lo, n)
    return m, e + n


def mul(xp, fmt: Format, a, b, mode: Mode, rule: NanRule):
    """a * b, correctly rounded."""
    ua = unpack(xp, fmt, a, mode.flush_in)
    ub = unpack(xp, fmt, b, mode.flush_in)
    sign = ua.sign ^ ub.sign
    hi, lo, e = _product(xp, ua, ub)
    zero = ua.zero | ub.zero
    m, e = _narrow(xp, hi, xp.where(zero, u64(xp, 1), lo), e)
    bits = round_pack(xp, fmt, sign, m, e, xp.zeros(m.shape, dtype=bool), mode.rounding, mode.flush_out, mode.tininess)
    bits = xp.where(zero, _signed_zero(xp, fmt, sign), bits)
    inf = ua.inf | ub.inf
    invalid = inf & zero
    bits = xp.where(inf, _signed_inf(xp, fmt, sign), bits)
    return _nan_merge(xp, fmt, bits, [ua, ub], invalid, rule)


def _clamped_scale(xp, scale):
    """``scale`` (int or integer array) as int64 clamped to +-:data:`_SCALE_LIMIT`."""
    if isinstance(scale, (int, np.integer)):
        return max(-_SCALE_LIMIT, min(_SCALE_LIMIT, int(scale)))
    return xp.clip(xp.asarray(scale, dtype=xp.int64), -_SCALE_LIMIT, _SCALE_LIMIT)


def fma(xp, fmt: Format, a, b, c, mode: Mode, rule: NanRule, scale=None):
    """a * b + c with a single rounding; with ``scale`` (an int or int64 array, broadcast against
    the operands) the exact ``(a*b + c) * 2**scale`` rounded once.

    The scale only moves the exponent handed to :func:`round_pack`, so overflow, subnormal results
    and flushing are judged on the scaled value; exact zeros, infinities and NaNs are returned as
    without it (an infinite ``a*b + c`` is not scaled).
    """
    ua = unpack(xp, fmt, a, mode.flush_in)
    ub = unpack(xp, fmt, b, mode.flush_in)
    uc = unpack(xp, fmt, c, mode.flush_in)
    sp = ua.sign ^ ub.sign
    ph, pl, ep = _product(xp, ua, ub)
    pzero = ua.zero | ub.zero
    ph = xp.where(pzero, u64(xp, 0), ph)
    pl = xp.where(pzero, u64(xp, 1), pl)
    # align the product (up to 106 bits) and c in a 128-bit window, top bit at 125
    pbl = wide.bit_length128(xp, ph, pl)
    psh = 126 - pbl
    ph, pl = wide.shift_left(xp, ph, pl, psh)
    ep = ep - psh
    csig = xp.where(uc.zero, u64(xp, 1), uc.sig)
    cbl = bit_length(xp, csig)
    ch, cl = wide.shift_left(xp, xp.zeros_like(csig), csig, 126 - cbl)
    ec = uc.exp - (126 - cbl)
    # a zero addend must not shift the product: push it far below; likewise a zero product
    ec = xp.where(uc.zero, ep - 300, ec)
    ep = xp.where(pzero & ~uc.zero, ec - 300, ep)
    p_big = ep >= ec
    d = xp.abs(ep - ec)
    xh = xp.where(p_big, ph, ch)
    xl = xp.where(p_big, pl, cl)
    yh = xp.where(p_big, ch, ph)
    yl = xp.where(p_big, cl, pl)
    sx = xp.where(p_big, sp, uc.sign)
    sy = xp.where(p_big, uc.sign, sp)
    e = xp.where(p_big, ep, ec)
    yh, yl = wide.shift_right_jam(xp, yh, yl, d)
    yh = xp.where(uc.zero & p_big | pzero & ~p_big, u64(xp, 0), yh)
    yl = xp.where(uc.zero & p_big | pzero & ~p_big, u64(xp, 0), yl)
    same = sx == sy
    sh, sl = wide.add(xp, xh, xl, yh, yl)
    x_ge = wide.greater_equal(xp, xh, xl, yh, yl)
    dh1, dl1 = wide.sub(xp, xh, xl, yh, yl)
    dh2, dl2 = wide.sub(xp, yh, yl, xh, xl)
    rh = xp.where(same, sh, xp.where(x_ge, dh1, dh2))
    rl = xp.where(same, sl, xp.where(x_ge, dl1, dl2))
    sign = xp.where(same | x_ge, sx, sy)
    exact_zero = (rh == 0) & (rl == 0)
    m, e = _narrow(xp, rh, xp.where(exact_zero, u64(xp, 1), rl), e)
    if scale is not None:
        e = e + _clamped_scale(xp, scale)
        m = xp.broadcast_to(m, e.shape)  # a scale array may be larger than the operands
    bits = round_pack(xp, fmt, sign, m, e, xp.zeros(m.shape, dtype=bool), mode.rounding, mode.flush_out, mode.tininess)
    zsign = _exact_zero_sum_sign(xp, sp, uc.sign, mode.rounding)
    bits = xp.where((pzero & uc.zero) | exact_zero, _signed_zero(xp, fmt, zsign), bits)
    # infinities: an infinite product (with no zero factor) or an infinite addend
    pinf = (ua.inf | ub.inf) & ~pzero
    invalid = ((ua.inf | ub.inf) & pzero) | (pinf & uc.inf & (sp != uc.sign))
    bits = xp.where(uc.inf, uc.bits, bits)
    bits = xp.where(pinf, _signed_inf(xp, fmt, sp), bits)
    return _nan_merge(xp, fmt, bits, [ua, ub, uc], invalid, rule)


# ---------------------------------------------------------------------------------------------
# division


def _two_product_error(xp, x, y, p):
    """Exact error of the float64 product ``p = fl(x*y)`` (Dekker/Veltkamp): x*y == p + err.

    Valid when no split overflows and the error does not underflow; callers use operands in
    [0.5, 4).
    """
    split = xp.float64(134217729.0)  # 2**27 + 1
    t = split * x
    xh = t - (t - x)
    xl = x - xh
    t = split * y
    yh = t - (t - y)
    yl = y - yh
    return ((xh * yh - p) + xh * yl + xl * yh) + xl * yl


def _from_rn_float(xp, q, residual_sign, e_offset):
    """Significand, exponent and sticky for round_pack from a float64 ``q`` = RN(x) and the sign
    of ``x - q``.

    ``x`` lies within half an ulp of ``q`` (a quarter below a power of two) and never exactly on a
    midpoint (true for quotients and square roots). Scaling q's significand by 4 leaves room to
    represent "just below q" as ``4*sig - 1`` plus sticky, which rounds identically to ``x`` at
    every precision up to 53 bits, on the subnormal grid too.
    """
    qb = q.view(xp.uint64)
    sig = (qb & u64(xp, (1 << 52) - 1)) | u64(xp, 1 << 52)
    exp = ((qb >> u64(xp, 52)) & u64(xp, 0x7FF)).astype(xp.int64) - (1023 + 52)
    m = sig << u64(xp, 2)
    below = residual_sign < 0
    m = xp.where(below, m - u64(xp, 1), m)
    sticky = residual_sign != 0
    return m, exp - 2 + e_offset, sticky


def _div_specials(xp, fmt, ua, ub, bits, rule):
    sign = ua.sign ^ ub.sign
    to_zero = (ua.zero & ~ub.zero) | (ub.inf & ~ua.inf)
    to_inf = (ub.zero & ~ua.zero) | (ua.inf & ~ub.inf)
    invalid = (ua.zero & ub.zero) | (ua.inf & ub.inf)
    bits = xp.where(to_zero, _signed_zero(xp, fmt, sign), bits)
    bits = xp.where(to_inf, _signed_inf(xp, fmt, sign), bits)
    return _nan_merge(xp, fmt, bits, [ua, ub], invalid, rule)


def div(xp, fmt: Format, a, b, mode: Mode, rule: NanRule):
    """a / b, correctly rounded."""
    ua = unpack(xp, fmt, a, mode.flush_in)
    ub = unpack(xp, fmt, b, mode.flush_in)
    sign = ua.sign ^ ub.sign
    p = fmt.precision
    sa, ea = normalize(xp, xp.where(ua.zero, u64(xp, 1), ua.sig), ua.exp, p)
    sb, eb = normalize(xp, xp.where(ub.zero, u64(xp, 1), ub.sig), ub.exp, p)
    if p <= 30:
        # integer long division with p+2 quotient bits and the remainder as sticky
        k = p + 2
        num = sa << u64(xp, k)
        q = num // sb
        sticky = (num - q * sb) != 0
        m, e = q, ea - eb - k
    else:
        scale = xp.float64(2.0 ** -(p - 1))
        fa = sa.astype(xp.float64) * scale
        fb = sb.astype(xp.float64) * scale
        q = fa / fb
        prod = q * fb
        r = (fa - prod) - _two_product_error(xp, q, fb, prod)
        rs = xp.sign(r)
        m, e, sticky = _from_rn_float(xp, q, rs, ea - eb + 0)
    bits = round_pack(xp, fmt, sign, m, e, sticky, mode.rounding, mode.flush_out, mode.tininess)
    return _div_specials(xp, fmt, ua, ub, bits, rule)


def rcp(xp, fmt: Format, a, mode: Mode, rule: NanRule):
    """1 / a, correctly rounded."""
    one = xp.full(a.shape, fmt.from_fraction(1), dtype=xp.uint64)
    return div(xp, fmt, one, a, mode, rule)


# ---------------------------------------------------------------------------------------------
# square root


def sqrt(xp, fmt: Format, a, mode: Mode, rule: NanRule):
    """Square root of a, correctly rounded (sqrt(-0) = -0)."""
    ua = unpack(xp, fmt, a, mode.flush_in)
    p = fmt.precision
    sa, ea = normalize(xp, xp.where(ua.zero, u64(xp, 1), ua.sig), ua.exp, p)
    odd = (ea & 1) == 1
    sa = xp.where(odd, sa << u64(xp, 1), sa)  # make the exponent even: value = sa * 2**ea
    ea = ea - odd.astype(xp.int64)
    if 2 * p + 5 <= 53:
        # integer square root of sa * 2**k with >= p+2 result bits; N < 2**53 so float64 holds
        # it exactly and the float square root is off by at most one
        k = p + 4 + ((p + 4) & 1)
        n = sa << u64(xp, k)
        r = xp.floor(xp.sqrt(n.astype(xp.float64))).astype(xp.uint64)
        r = xp.where(r * r > n, r - u64(xp, 1), r)
        r = xp.where((r + u64(xp, 1)) * (r + u64(xp, 1)) <= n, r + u64(xp, 1), r)
        sticky = r * r != n
        m, e = r, (ea - k) // 2
    else:
        # value = fa * 2**(ea + p - 1) with fa in [1, 4); ea + p - 1 is even for binary64
        fa = sa.astype(xp.float64) * xp.float64(2.0 ** -(p - 1))
        s = xp.sqrt(fa)
        prod = s * s
        r = (fa - prod) - _two_product_error(xp, s, s, prod)
        half_exp = (ea + (p - 1)) // 2
        m, e, sticky = _from_rn_float(xp, s, xp.sign(r), half_exp)
    bits = round_pack(xp, fmt, xp.zeros_like(ua.sign), m, e, sticky, mode.rounding, mode.flush_out, mode.tininess)
    bits = xp.where(ua.zero, ua.bits, bits)
    bits = xp.where(ua.inf & (ua.sign == 0), ua.bits, bits)
    invalid = (ua.sign == 1) & ~ua.zero & ~ua.nan
    return _nan_merge(xp, fmt, bits, [ua], invalid, rule)


# ---------------------------------------------------------------------------------------------
# scaling and conversion


def ldexp(xp, fmt: Format, x, n, mode: Mode, rule: NanRule):
    """``x * 2**n`` rounded once (``n`` an int or int64 array, broadcast against ``x``).

    Subnormal results are rounded on the subnormal grid and overflow gives infinity or the largest
    finite number as the rounding direction demands (``mode`` flushing applies to the operand and
    the result). Zeros and infinities are returned unchanged; a NaN follows ``rule`` (IEEE:
    quieted).
    """
    x, n = broadcast_all(xp, xp.asarray(x, dtype=xp.uint64), xp.asarray(n, dtype=xp.int64))
    ux = unpack(xp, fmt, x, mode.flush_in)
    e = ux.exp + _clamped_scale(xp, n)
    sig = xp.where(ux.zero, u64(xp, 1), ux.sig)
    bits = round_pack(xp, fmt, ux.sign, sig, e, xp.zeros(sig.shape, dtype=bool), mode.rounding, mode.flush_out,
                      mode.tininess)
    bits = xp.where(ux.zero | ux.inf, ux.bits, bits)
    return _nan_merge(xp, fmt, bits, [ux], xp.zeros(bits.shape, dtype=bool), rule)


def convert(xp, src_fmt: Format, dst_fmt: Format, x, mode: Mode, rule: NanRule):
    """Patterns of ``src_fmt`` converted to ``dst_fmt``: the exact value rounded once per ``mode``
    (exact when widening), zeros and infinities keeping their sign.

    ``mode`` flushes subnormal operands of ``src_fmt`` and subnormal results of ``dst_fmt``.
    NaNs: with ``rule.fixed`` every NaN becomes that pattern, and without ``rule.propagate`` it
    becomes ``rule.invalid`` (both ``dst_fmt`` patterns). Otherwise (IEEE) a NaN stays a quiet
    NaN of the same sign whose fraction is the operand's fraction aligned at its top bit: widening
    appends zero bits, narrowing keeps the top ``dst_fmt.mantissa_bits`` bits and drops the rest;
    the quiet bit is then set. That is what x86 and Arm conversions do, and what the Z3 backend of
    the semantics language encodes.
    """
    ux = unpack(xp, src_fmt, xp.asarray(x, dtype=xp.uint64), mode.flush_in)
    sig = xp.where(ux.zero, u64(xp, 1), ux.sig)
    bits = round_pack(xp, dst_fmt, ux.sign, sig, ux.exp, xp.zeros(sig.shape, dtype=bool), mode.rounding,
                      mode.flush_out, mode.tininess)
    bits = xp.where(ux.zero, _signed_zero(xp, dst_fmt, ux.sign), bits)
    if dst_fmt.specials == "ieee":
        bits = xp.where(ux.inf, _signed_inf(xp, dst_fmt, ux.sign), bits)
    else:  # no infinity (E4M3): an infinite operand overflows, to the NaN pattern (OCP OFP8 §5.1)
        bits = xp.where(ux.inf, (ux.sign << u64(xp, dst_fmt.width - 1)) | u64(xp, dst_fmt.magnitude_mask), bits)
    if rule.fixed is not None:
        nan = u64(xp, rule.fixed)
    elif not rule.propagate:
        nan = u64(xp, rule.invalid)
    else:
        shift = dst_fmt.mantissa_bits - src_fmt.mantissa_bits
        payload = ux.bits & u64(xp, src_fmt.mantissa_mask)
        payload = payload << u64(xp, shift) if shift >= 0 else payload >> u64(xp, -shift)
        nan = (_signed_inf(xp, dst_fmt, ux.sign) | u64(xp, dst_fmt.quiet_bit)
               | (payload & u64(xp, dst_fmt.mantissa_mask)))
    return xp.where(ux.nan, nan, bits)


def apply(xp, op: str, fmt: Format, operands: list, mode: Mode, rule: NanRule, scale=None):
    """Dispatch ``op`` over uint64 operand arrays; returns uint64 result bits.

    ``scale`` (``fma`` only) is the fused power-of-two scale of :func:`fma`.
    """
    if scale is not None and op != "fma":
        raise ValueError(f"only fma takes a scale, not {op!r}")
    with np.errstate(all="ignore"):  # special lanes compute garbage that `where` discards
        if op == "add":
            return add(xp, fmt, *operands, mode, rule)
        if op == "sub":
            return add(xp, fmt, *operands, mode, rule, negate_b=True)
        if op == "mul":
            return mul(xp, fmt, *operands, mode, rule)
        if op == "fma":
            return fma(xp, fmt, *operands, mode, rule, scale)
        if op == "div":
            return div(xp, fmt, *operands, mode, rule)
        if op == "rcp":
            return rcp(xp, fmt, *operands, mode, rule)
        if op == "sqrt":
            return sqrt(xp, fmt, *operands, mode, rule)
    raise ValueError(f"unknown operation {op!r}; known: {', '.join(OPS)}")
