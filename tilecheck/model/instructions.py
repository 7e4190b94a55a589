"""Model semantics of the instructions around the arithmetic (registry kind ``function``).

Conversions (``cvt``), comparisons (``setp``), selection (``selp``), moves (``mov``), sign
operations (``abs neg copysign``), ``min/max``, ``testp``, integer arithmetic, logic and shifts.
Each key of :mod:`tilecheck.spec.registry` whose kind is ``function`` has one implementation here,
registered in :data:`IMPLEMENTATIONS`; :func:`tilecheck.model.api.evaluate` dispatches to it.

Operand values are uint64 arrays holding patterns of each operand's own type (8-bit integer types
as 8-bit values: the caller extends them into registers), predicates are bool arrays. Results are
uint64 patterns of the destination type, or bool arrays for predicate destinations.

Floating-point rounding goes through the model's single rounding point
(:func:`tilecheck.model.ieee.round_pack`, via :func:`tilecheck.model.ops.convert` for format
changes); rounding to an integral value (``.rni .rzi .rmi .rpi``) uses numpy's exact ``rint``,
``trunc``, ``floor`` and ``ceil`` on binary64, which holds every value of every format here.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.model import ops, wide
from tilecheck.model.ieee import flush_subnormal_bits, round_pack
from tilecheck.model.xp import bit_length, shift_right_jam, u64
from tilecheck.spec.forms import Form
from tilecheck.spec.types import PTX_TYPES
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.spec.types import INTEGER_KIND, PTX_TYPES

F64 = "f64"


def _mask(width: int) -> int:
    return (1 << width) - 1


def width_of(ptx_type: str) -> int:
    """Bits of one value of a PTX type token (1 for .pred)."""
    return PTX_TYPES[ptx_type].bits


def signed_value(xp, bits, width: int):
    """Patterns of ``width`` bits read as two's complement, as int64."""
    b = bits.astype(xp.uint64) & u64(xp, _mask(width))
    if width < 64:
        sign = u64(xp, 1 << (width - 1))
        b = (b ^ sign) - sign  # wraps in uint64 to the sign-extended pattern
    return b.view(xp.int64)


def _sext64(xp, bits, width: int):
    """Sign-extend ``width``-bit patterns to 64-bit patterns (uint64)."""
    return signed_value(xp, bits, width).view(xp.uint64)


def _is_signed(ptx_type: str) -> bool:
    return INTEGER_KIND.get(ptx_type) == "s"


def _as_array(xp, a, dtype):
    return xp.asarray(a).astype(dtype, copy=False).reshape(xp.asarray(a).shape)


# ---------------------------------------------------------------------------------------------
# NaN handling shared by the float keys


def _nan_bits(form: Form, fmt: Format) -> int:
    """The form's NaN pattern (its policy's bits, else the format's canonical NaN)."""
    return form.nan.bits if form.nan.bits is not None else fmt.canonical_nan


def _is_nan(xp, fmt: Format, bits):
    mag = bits & u64(xp, fmt.magnitude_mask)
    if fmt.specials != "ieee":  # E4M3: S.1111.111 only
        return mag == u64(xp, fmt.magnitude_mask)
    return mag > u64(xp, fmt.exponent_mask)


def _is_inf(xp, fmt: Format, bits):
    if fmt.specials != "ieee":
        return xp.zeros(xp.shape(bits), dtype=bool)
    return (bits & u64(xp, fmt.magnitude_mask)) == u64(xp, fmt.exponent_mask)


def _nan_rule(form: Form, fmt: Format) -> ops.NanRule:
    bits = _nan_bits(form, fmt)
    return ops.NanRule(False, bits, fixed=bits)


def _to_f64(xp, fmt: Format, bits, f64: Format):
    """Exact binary64 values of patterns of ``fmt`` (NaN patterns give some NaN); ``f64`` is the
    database's binary64 format."""
    if fmt.name == F64:
        return bits.astype(xp.uint64).view(xp.float64)
    wide_bits = ops.convert(xp, fmt, f64, bits, ops.Mode("rn"), ops.NanRule(False, f64.default_nan,
                                                                         fixed=f64.default_nan))
    return wide_bits.view(xp.float64)


def _from_f64(xp, fmt: Format, values, nan: int, f64: Format):
    """Patterns of ``fmt`` for binary64 values that ``fmt`` holds exactly (NaN -> ``nan``)."""
    bits = xp.asarray(values, dtype=xp.float64).view(xp.uint64)
    if fmt.name == F64:
        return xp.where(xp.isnan(values), u64(xp, nan), bits)
    return ops.convert(xp, f64, fmt, bits, ops.Mode("rn"), ops.NanRule(False, nan, fixed=nan))


def _flush(xp, fmt: Format, bits, on: bool):
    return flush_subnormal_bits(xp, fmt, bits) if on else bits


# ---------------------------------------------------------------------------------------------
# bits and integers


def _mov(xp, form, args, p):
    (a,) = args
    d = form.destinations[0].ptx_type
    return a if d == "pred" else a & u64(xp, _mask(width_of(d)))


def _logic(fn_bits, fn_pred):
    def run(xp, form, args, p):
        t = form.destinations[0].ptx_type
        if t == "pred":
            return fn_pred(*args)
        return fn_bits(*args) & u64(xp, _mask(width_of(t)))
    return run


def _cnot(xp, form, args, p):
    return ((args[0] & u64(xp, _mask(width_of(form.type)))) == 0).astype(xp.uint64)


def _shift(left: bool):
    def run(xp, form, args, p):
        a, n = args
        w = width_of(form.type)
        n = n & u64(xp, 0xFFFFFFFF)
        big = n >= u64(xp, w)
        safe = xp.minimum(n, u64(xp, w - 1))
        if left:
            out = xp.where(big, u64(xp, 0), a << safe)
        elif _is_signed(form.type):
            # arithmetic: amounts at or above the width fill with the sign bit (clamped, not modulo)
            out = (signed_value(xp, a, w) >> safe.astype(xp.int64)).view(xp.uint64)
        else:
            out = xp.where(big, u64(xp, 0), (a & u64(xp, _mask(w))) >> safe)
        return out & u64(xp, _mask(w))
    return run


def _clip_signed(xp, values, width: int):
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return xp.clip(values, lo, hi).view(xp.uint64) & u64(xp, _mask(width))


def _add_sub(negate: bool):
    def run(xp, form, args, p):
        a, b = args
        w = width_of(form.type)
        if p.get("sat"):  # .sat exists for .s32 only: the exact sum fits int64
            x, y = signed_value(xp, a, w), signed_value(xp, b, w)
            return _clip_signed(xp, x - y if negate else x + y, w)
        return (a - b if negate else a + b) & u64(xp, _mask(w))
    return run


def integer_product(xp, a, b, w: int, signed: bool):
    """The exact 2w-bit product of two w-bit operands as (hi, lo) w-bit halves (uint64); the
    simulator's extended-precision steps (``mad.cc``, ``madc``) take theirs from here too."""
    if w <= 32:
        if signed:
            full = (signed_value(xp, a, w) * signed_value(xp, b, w)).view(xp.uint64)
        else:
            full = (a & u64(xp, _mask(w))) * (b & u64(xp, _mask(w)))
        return (full >> u64(xp, w)) & u64(xp, _mask(w)), full & u64(xp, _mask(w))
    hi, lo = wide.mul_64x64(xp, a, b)
    if signed:  # two's complement correction of the unsigned high word
        hi = hi - xp.where((a >> u64(xp, 63)) != 0, b, u64(xp, 0)) - xp.where((b >> u64(xp, 63)) != 0, a, u64(xp, 0))
    return hi, lo


def _mul(xp, form, args, p):
    a, b = args
    w = width_of(form.type)
    signed = _is_signed(form.type)
    hi, lo = integer_product(xp, a, b, w, signed)
    mode = p.get("mode", "lo")
    if mode == "lo":
        return lo
    if mode == "hi":
        return hi
    return ((hi << u64(xp, w)) | lo) & u64(xp, _mask(2 * w))


def _mad(xp, form, args, p):
    a, b, c = args
    w = width_of(form.type)
    signed = _is_signed(form.type)
    hi, lo = integer_product(xp, a, b, w, signed)
    mode = p.get("mode", "lo")
    if mode == "wide":
        return (((hi << u64(xp, w)) | lo) + c) & u64(xp, _mask(2 * w))
    part = lo if mode == "lo" else hi
    if p.get("sat"):  # mad.hi.sat.s32: the exact sum high(a*b) + c, clamped
        return _clip_signed(xp, signed_value(xp, part, w) + signed_value(xp, c, w), w)
    return (part + c) & u64(xp, _mask(w))


def _int_neg(xp, form, args, p):
    return (u64(xp, 0) - args[0]) & u64(xp, _mask(width_of(form.type)))


def _int_abs(xp, form, args, p):
    w = width_of(form.type)
    negative = signed_value(xp, args[0], w) < 0
    return xp.where(negative, (u64(xp, 0) - args[0]) & u64(xp, _mask(w)), args[0] & u64(xp, _mask(w)))


def integer_quotient(xp, a, b, w: int, signed: bool, remainder: bool):
    """``div``/``rem`` of ``w``-bit patterns (uint64 arrays): ``(bits, unspecified)``. The quotient
    truncates toward zero (the ISA's semantics, C's ``d = a / b``) and the remainder is
    ``a - b * (a / b)`` (the dividend's sign). ``unspecified`` marks the inputs whose result the
    ISA leaves open (:data:`UNSPECIFIED_WHY`); their bits are a representative: 0 where any value
    stands, C's remainder where a signed remainder may also be the one of the quotient rounded down."""
    with np.errstate(over="ignore"):  # negation and b * q wrap modulo 2^64 on purpose
        return _quotient(xp, a, b, w, signed, remainder)


def _quotient(xp, a, b, w: int, signed: bool, remainder: bool):
    mask = u64(xp, _mask(w))
    ua, ub = a & mask, b & mask
    zero = ub == 0
    one = u64(xp, 1)
    if not signed:
        divisor = xp.where(zero, one, ub)
        bits = ua % divisor if remainder else ua // divisor
        return xp.where(zero, u64(xp, 0), bits), zero
    # magnitudes as uint64 (the most negative value's too); the quotient's sign applied modulo 2^w
    top = u64(xp, 1 << (w - 1))
    neg_a, neg_b = (ua & top) != 0, (ub & top) != 0
    mag_a = xp.where(neg_a, (~ua + one) & mask, ua)
    mag_b = xp.where(neg_b, (~ub + one) & mask, ub)
    q = mag_a // xp.where(zero, one, mag_b)
    q = xp.where(neg_a != neg_b, ~q + one, q) & mask
    r = (ua - ub * q) & mask  # a - b * q modulo 2^w: the remainder's two's complement bits
    free = zero | ((ua == top) & (ub == mask))  # a zero divisor; the most negative over -1: any value
    bits = xp.where(free, u64(xp, 0), r if remainder else q)
    if remainder:  # where rounding the quotient down would give another remainder (C's is the representative)
        return bits, free | ((r != 0) & (neg_a != neg_b))
    return bits, free


UNSPECIFIED_WHY = {
    "zero": "PTX ISA 9.1 §9.7.1.8-9: division by zero yields an unspecified, machine-specific value",
    "overflow": ("the most negative value divided by -1 does not fit: C leaves it undefined and the PTX ISA does "
                 "not say"),
    "negative": ("PTX ISA 9.1 §9.7.1.9: rem's behavior for negative numbers is machine-dependent (the quotient "
                 "rounded toward zero or toward negative infinity), and the two remainders differ here"),
}
"""Why an integer ``div``/``rem`` result is left open, by case (:func:`integer_quotient`)."""


OPEN_KEYS = ("int.div", "int.rem")
"""The semantics keys some of whose results the ISA leaves open (:func:`unspecified`)."""


def _div_rem(remainder: bool):
    def run(xp, form, args, p):
        a, b = args
        return integer_quotient(xp, a, b, width_of(form.type), _is_signed(form.type), remainder)[0]
    return run


def unspecified(xp, form: Form, arrays: list):
    """Per input, whether ``form``'s result is one the ISA leaves open (any value stands: an
    integer division by zero), or None for a form whose every result is specified."""
    key = form.semantics.key
    if key not in OPEN_KEYS:
        return None
    a, b = arrays
    return integer_quotient(xp, a, b, width_of(form.type), _is_signed(form.type), key == "int.rem")[1]


def unspecified_why(form: Form, a: int, b: int) -> str | None:
    """Why ``form``'s result on the operand patterns ``a``, ``b`` is left open (None: it is not)."""
    w = width_of(form.type)
    if unspecified(np, form, [np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64)]) is None:
        return None
    if not bool(unspecified(np, form, [np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64)])[0]):
        return None
    if b & _mask(w) == 0:
        return UNSPECIFIED_WHY["zero"]
    if b & _mask(w) == _mask(w) and a & _mask(w) == 1 << (w - 1):
        return UNSPECIFIED_WHY["overflow"]
    return UNSPECIFIED_WHY["negative"]


def _int_minmax(is_min: bool):
    def run(xp, form, args, p):
        a, b = args
        w = width_of(form.type)
        if _is_signed(form.type):
            x, y = signed_value(xp, a, w), signed_value(xp, b, w)
            r = xp.minimum(x, y) if is_min else xp.maximum(x, y)
            if p.get("relu"):
                r = xp.maximum(r, 0)
            return r.view(xp.uint64) & u64(xp, _mask(w))
        x, y = a & u64(xp, _mask(w)), b & u64(xp, _mask(w))
        return xp.minimum(x, y) if is_min else xp.maximum(x, y)
    return run


def _selp(xp, form, args, p):
    a, b, c = args
    return xp.where(c, a, b)


def _prmt(xp, form, args, p):
    """prmt.b32, the generic form: byte i of d is byte ``c[4i+2:4i]`` of the pair {b, a}, or that
    byte's top bit replicated over its 8 bits where ``c[4i+3]`` is set."""
    a, b, c = args
    pair = ((b & u64(xp, 0xFFFFFFFF)) << u64(xp, 32)) | (a & u64(xp, 0xFFFFFFFF))
    out = u64(xp, 0) * a
    for i in range(4):
        selector = (c >> u64(xp, 4 * i)) & u64(xp, 0xF)
        byte = (pair >> ((selector & u64(xp, 7)) * u64(xp, 8))) & u64(xp, 0xFF)
        sign = xp.where((byte >> u64(xp, 7)) & u64(xp, 1), u64(xp, 0xFF), u64(xp, 0))
        byte = xp.where(selector >= u64(xp, 8), sign, byte)
        out = out | (byte << u64(xp, 8 * i))
    return out


def _cvta(xp, form, args, p):
    if p.get("space") != "global":
        raise UsageError(f"{form.name}: the model has one memory, global, whose addresses are generic; "
                         f"the .{p.get('space')} window is not modelled")
    return args[0]


# ---------------------------------------------------------------------------------------------
# conversions


def _int_range(ptx_type: str) -> tuple[int, int]:
    w = width_of(ptx_type)
    if _is_signed(ptx_type):
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return 0, (1 << w) - 1


def _cvt_int(xp, form, args, p):
    (a,) = args
    d, s = form.destinations[0].ptx_type, form.sources[0].ptx_type
    wd, ws = width_of(d), width_of(s)
    src = a & u64(xp, _mask(ws))
    wide64 = _sext64(xp, src, ws) if _is_signed(s) else src  # the source value as a 64-bit pattern
    if not p.get("sat"):
        return wide64 & u64(xp, _mask(wd))
    lo, hi = _int_range(d)
    if _is_signed(s):
        v = wide64.view(xp.int64)
        out = xp.where(v < max(lo, -(1 << 63)), u64(xp, lo & _mask(64)), wide64)
        if hi < (1 << 63) - 1:
            out = xp.where(v > hi, u64(xp, hi), out)
        return out & u64(xp, _mask(wd))
    out = xp.where(wide64 > u64(xp, hi), u64(xp, hi), wide64)  # unsigned source: only the top clamps
    return out & u64(xp, _mask(wd))


_INTEGRAL = ("rni", "rzi", "rmi", "rpi")


def _integral(xp, rounding: str, x):
    fn = {"rni": xp.rint, "rzi": xp.trunc, "rmi": xp.floor, "rpi": xp.ceil}[rounding]
    return fn(x)


def _cvt_to_int(xp, form, args, p):
    (a,) = args
    d, s = form.destinations[0].ptx_type, form.sources[0].ptx_type
    fmt = form.format_of(s)
    wd = width_of(d)
    bits = _flush(xp, fmt, a, bool(p.get("ftz")))
    x = _to_f64(xp, fmt, bits, form.format_of(F64))
    nan = xp.isnan(x)
    r = _integral(xp, p["rounding"], xp.where(nan, 0.0, x))
    lo, hi = _int_range(d)
    too_low = r < float(lo)  # lo is 0 or -2**(w-1): exact in binary64
    too_high = r >= float(hi + 1)  # hi + 1 is a power of two: exact
    inside = xp.where(too_low | too_high, 0.0, r)
    big = inside >= 2.0 ** 63  # only for u64: convert through the upper half
    low_part = xp.where(big, inside - 2.0 ** 63, inside).astype(xp.int64).view(xp.uint64)
    out = xp.where(big, low_part + u64(xp, 1 << 63), low_part)
    out = xp.where(too_low, u64(xp, lo & _mask(64)), out)
    out = xp.where(too_high, u64(xp, hi), out)
    # NaN: 0, but 1 << (N-1) when the source is .f64 or the destination 64-bit (reference note §1)
    nan_value = (1 << (wd - 1)) if (s == F64 or wd == 64) else 0
    out = xp.where(nan, u64(xp, nan_value), out)
    return out & u64(xp, _mask(wd))


def _cvt_from_int(xp, form, args, p):
    (a,) = args
    d, s = form.destinations[0].ptx_type, form.sources[0].ptx_type
    fmt = form.format_of(d)
    ws = width_of(s)
    src = a & u64(xp, _mask(ws))
    if _is_signed(s):
        v = _sext64(xp, src, ws)
        negative = (v >> u64(xp, 63)) != 0
        magnitude = xp.where(negative, u64(xp, 0) - v, v)
    else:
        negative = xp.zeros(src.shape, dtype=bool)
        magnitude = src
    sign = negative.astype(xp.uint64)
    m = xp.where(magnitude == 0, u64(xp, 1), magnitude)
    # round_pack takes significands below 2**62: narrow the 63/64-bit magnitudes, jamming the
    # shifted-out bits into bit 0 (far below the <= 53 bits any format here keeps)
    shift = xp.maximum(bit_length(xp, m) - 62, 0)
    m = shift_right_jam(xp, m, shift)
    flush_out = bool(p.get("ftz")) and d == "f32"
    bits = round_pack(xp, fmt, sign, m, shift.astype(xp.int64), xp.zeros(m.shape, dtype=bool),
                      p["rounding"], flush_out, p.get("tininess", TININESS_DEFAULT))
    bits = xp.where(magnitude == 0, u64(xp, 0), bits)
    if p.get("sat"):
        bits = ops._saturate(xp, fmt, bits)
    return bits


def _cvt_float(xp, form, args, p):
    (a,) = args
    d, s = form.destinations[0].ptx_type, form.sources[0].ptx_type
    return _convert(xp, form, a, p, form.format_of(s), form.format_of(d), same_type=d == s)


def _convert(xp, form, a, p, src, dst, same_type: bool = False):
    """One floating-point conversion of ``src`` patterns to ``dst`` under the form's qualifiers
    (``p``): rounding (or rounding to an integral value), .ftz on the f32 side, .satfinite, .relu, .sat."""
    f64 = form.format_of(F64)
    rounding = p["rounding"]
    ftz = bool(p.get("ftz"))
    nan = _nan_bits(form, dst)
    if rounding in _INTEGRAL:
        x = _to_f64(xp, src, _flush(xp, src, a, ftz), f64)
        out = _from_f64(xp, dst, _integral(xp, rounding, x), nan, f64)
    elif same_type:
        out = _flush(xp, src, a, ftz)
        out = xp.where(_is_nan(xp, src, out), u64(xp, nan), out)
    else:
        # .ftz acts on the f32 side only: f32 inputs flushed, f32 results flushed
        mode = ops.Mode("rn" if rounding == "" else rounding, False, p.get("tininess", TININESS_DEFAULT),
                        ftz_in=ftz and src.name == "f32", ftz_out=ftz and dst.name == "f32")
        out = ops.convert(xp, src, dst, a, mode, ops.NanRule(False, nan, fixed=nan))
    is_nan = _is_nan(xp, dst, out)
    if p.get("satfinite"):
        # beyond the largest finite value, infinities included: that value, with the sign (an
        # E4M3 result has no infinity: its overflow is the NaN pattern, told apart from a NaN
        # operand by the source)
        beyond = _is_inf(xp, dst, out) | (is_nan & ~_is_nan(xp, src, a))
        out = xp.where(beyond, (out & u64(xp, dst.sign_mask)) | u64(xp, dst.max_finite), out)
        is_nan = is_nan & ~beyond
    if p.get("relu"):
        negative = (out & u64(xp, dst.sign_mask)) != 0
        out = xp.where(negative & ~is_nan, u64(xp, 0), out)
    if p.get("sat"):
        out = ops._saturate(xp, dst, out)
    return out


def _cvt_pack(xp, form, args, p):
    """``cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2,e4m3x2,e5m2x2}.f32 d, a, b``: each source converted
    as the scalar conversion does, ``a`` into the upper half and ``b`` into the lower (PTX ISA 9.1
    §9.7.9.21)."""
    a, b = args
    dst = form.format_of(form.destinations[0].ptx_type)
    src = form.format_of(form.sources[0].ptx_type)
    width = u64(xp, dst.width)
    return (_convert(xp, form, a, p, src, dst) << width) | _convert(xp, form, b, p, src, dst)


def _cvt_lanes(xp, form, args, p):
    """``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a`` and ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}
    d, a``: each lane of ``a`` converted, the upper lane into the upper half of ``d`` (PTX ISA 9.1
    §9.7.9.21)."""
    (a,) = args
    d_type, s_type = PTX_TYPES[form.destinations[0].ptx_type], PTX_TYPES[form.sources[0].ptx_type]
    dst, src = form.format_of(d_type.element), form.format_of(s_type.element)
    out = u64(xp, 0)
    for lane in range(s_type.lanes):
        bits = (a >> u64(xp, lane * src.width)) & u64(xp, (1 << src.width) - 1)
        out = out | (_convert(xp, form, bits, p, src, dst) << u64(xp, lane * dst.width))
    return out


# ---------------------------------------------------------------------------------------------
# comparisons, sign operations, min/max, classes


_ORDERED = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
            "lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def _relation(xp, op: str, x, y):
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


def compare(xp, form: Form, cmp: str, a, b, ftz: bool):
    """``a CMP b`` for the source type of ``form`` (bool array); float lanes as given."""
    t = form.sources[0].ptx_type
    fmt_name = PTX_TYPES[t].element
    if fmt_name is None:
        w = width_of(t)
        if _is_signed(t):
            x, y = signed_value(xp, a, w), signed_value(xp, b, w)
        else:
            x, y = a & u64(xp, _mask(w)), b & u64(xp, _mask(w))
        return _relation(xp, _ORDERED[cmp], x, y)
    return _compare_floats(xp, form.format_of(fmt_name), cmp, a, b, ftz, form.format_of(F64))


def _combine(xp, boolop: str, t, c):
    return {"and": t & c, "or": t | c, "xor": t ^ c}[boolop]


def _setp_lanes(xp, form, a, b, p):
    """Per-lane comparison results: one bool array per lane (element 0 first)."""
    t = form.sources[0].ptx_type
    elem, lanes = PTX_TYPES[t].element, PTX_TYPES[t].lanes
    if lanes == 1:
        return [compare(xp, form, p["cmp"], a, b, bool(p.get("ftz")))]
    fmt, f64 = form.format_of(elem), form.format_of(F64)
    out = []
    for i in range(lanes):
        shift = u64(xp, i * fmt.width)
        m = u64(xp, _mask(fmt.width))
        out.append(_compare_floats(xp, fmt, p["cmp"], (a >> shift) & m, (b >> shift) & m, bool(p.get("ftz")), f64))
    return out


def _compare_floats(xp, fmt, cmp: str, a, b, ftz: bool, f64: Format):
    """``a CMP b`` on patterns of float format ``fmt`` (inputs flushed under ``ftz``)."""
    x = _to_f64(xp, fmt, _flush(xp, fmt, a, ftz), f64)
    y = _to_f64(xp, fmt, _flush(xp, fmt, b, ftz), f64)
    unordered = xp.isnan(x) | xp.isnan(y)
    if cmp == "num":
        return ~unordered
    if cmp == "nan":
        return unordered
    if cmp.endswith("u"):
        return _relation(xp, cmp[:-1], x, y) | unordered
    return _relation(xp, cmp, x, y) & ~unordered  # ordered: false on NaN, ne included


def _setp(xp, form, args, p, destinations: int = 1):
    a, b = args[0], args[1]
    c = args[2] if len(args) > 2 else None
    lanes = _setp_lanes(xp, form, a, b, p)
    if len(lanes) == 2:
        # packed half setp: p from the low lane, q from the high lane (not the complement)
        if destinations != 2:
            raise UsageError(f"{form.name} writes p|q (p: low lane, q: high lane); pass destinations=2 "
                             "(a single destination is not defined by the ISA)")
        if c is not None:
            return tuple(_combine(xp, p["boolop"], t, c) for t in lanes)
        return tuple(lanes)
    t = lanes[0]
    pp = _combine(xp, p["boolop"], t, c) if c is not None else t
    if destinations == 1:
        return pp
    qq = _combine(xp, p["boolop"], ~t, c) if c is not None else ~t
    return pp, qq


def _fp_sign(op: str):
    def run(xp, form, args, p):
        (a,) = args
        fmt = form.format
        bits = _flush(xp, fmt, a, bool(p.get("ftz")))
        sign = u64(xp, fmt.sign_mask)
        out = bits & ~sign & u64(xp, _mask(fmt.width)) if op == "abs" else bits ^ sign
        if form.nan.policy == "none":  # abs.f64: a NaN input comes back unchanged (§9.7.3.9)
            return xp.where(_is_nan(xp, fmt, a), a, out)
        return xp.where(_is_nan(xp, fmt, a), u64(xp, _nan_bits(form, fmt)), out)
    return _lanes(run)


def _lanes(fn):
    """Apply a one-lane float implementation to each lane of packed types."""
    def run(xp, form, args, p):
        t = form.destinations[0].ptx_type
        lanes = PTX_TYPES[t].lanes
        if lanes == 1:
            return fn(xp, form, args, p)
        fmt = form.format_of(t)
        m = u64(xp, _mask(fmt.width))
        out = None
        for i in range(lanes):
            shift = u64(xp, i * fmt.width)
            lane = fn(xp, _LaneForm(form, PTX_TYPES[t].element), [(x >> shift) & m for x in args], p) & m
            out = lane << shift if out is None else out | (lane << shift)
        return out
    return run


class _LaneForm:
    """A view of a packed form as its element type (for per-lane implementations)."""

    def __init__(self, form: Form, elem: str):
        self._form = form
        self.element_format = elem
        self.format = form.format_of(elem)
        self.nan = form.nan
        self.name = form.name

    def __getattr__(self, name):
        return getattr(self._form, name)


def _order_key(xp, fmt: Format, bits):
    """A total-order key of non-NaN patterns with -0 < +0 (int64)."""
    mag = (bits & u64(xp, fmt.magnitude_mask)).astype(xp.int64)
    negative = (bits & u64(xp, fmt.sign_mask)) != 0
    return xp.where(negative, -mag - 1, mag)


def _fp_minmax(is_min: bool):
    def run(xp, form, args, p):
        a, b = args
        fmt = form.format
        ftz = bool(p.get("ftz"))
        a, b = _flush(xp, fmt, a, ftz), _flush(xp, fmt, b, ftz)
        sign = u64(xp, fmt.sign_mask)
        xorsign = (a ^ b) & sign  # the operands' sign bits, before .abs takes them away
        if p.get("xorsign"):
            a, b = a & ~sign, b & ~sign
        ka, kb = _order_key(xp, fmt, a), _order_key(xp, fmt, b)
        pick_a = ka <= kb if is_min else ka >= kb
        out = xp.where(pick_a, a, b)
        na, nb = _is_nan(xp, fmt, a), _is_nan(xp, fmt, b)
        nan = u64(xp, _nan_bits(form, fmt))
        if p.get("nan"):
            out = xp.where(na | nb, nan, out)
        else:
            out = xp.where(na & ~nb, b, out)
            out = xp.where(nb & ~na, a, out)
            out = xp.where(na & nb, nan, out)
        if p.get("xorsign"):  # a NaN result keeps its own bits
            out = xp.where(_is_nan(xp, fmt, out), out, (out & ~sign) | xorsign)
        return out
    return _lanes(run)


def _copysign(xp, form, args, p):
    a, b = args  # PTX order: the sign comes from a, the magnitude from b
    fmt = form.format
    sign = u64(xp, fmt.sign_mask)
    return (a & sign) | (b & u64(xp, fmt.magnitude_mask))


def _testp(xp, form, args, p):
    (a,) = args
    fmt = form.format_of(form.sources[0].ptx_type)
    mag = a & u64(xp, fmt.magnitude_mask)
    inf_bits = u64(xp, fmt.exponent_mask)
    test = p["test"]
    if test == "finite":
        return mag < inf_bits
    if test == "infinite":
        return mag == inf_bits
    if test == "number":
        return mag <= inf_bits
    if test == "notanumber":
        return mag > inf_bits
    subnormal = (mag != 0) & (mag < u64(xp, fmt.min_normal))
    if test == "subnormal":
        return subnormal
    return (mag < inf_bits) & ~subnormal  # normal: zeros count as normal (§9.7.3.1)


IMPLEMENTATIONS: dict[str, Callable] = {
    "bits.mov": _mov,
    "bits.and": _logic(lambda a, b: a & b, lambda a, b: a & b),
    "bits.or": _logic(lambda a, b: a | b, lambda a, b: a | b),
    "bits.xor": _logic(lambda a, b: a ^ b, lambda a, b: a ^ b),
    "bits.not": _logic(lambda a: ~a, lambda a: ~a),
    "bits.cnot": _cnot,
    "bits.shl": _shift(True),
    "bits.shr": _shift(False),
    "int.add": _add_sub(False),
    "int.sub": _add_sub(True),
    "int.mul": _mul,
    "int.mad": _mad,
    "int.abs": _int_abs,
    "int.neg": _int_neg,
    "int.div": _div_rem(False),
    "int.rem": _div_rem(True),
    "int.min": _int_minmax(True),
    "int.max": _int_minmax(False),
    "cvt.float": _cvt_float,
    "cvt.pack": _cvt_pack,
    "cvt.lanes": _cvt_lanes,
    "cvt.to_int": _cvt_to_int,
    "cvt.from_int": _cvt_from_int,
    "cvt.int": _cvt_int,
    "cmp.setp": _setp,
    "cmp.setp_bool": _setp,
    "sel.selp": _selp,
    "bits.prmt": _prmt,
    "float.abs": _fp_sign("abs"),
    "float.neg": _fp_sign("neg"),
    "float.min": _fp_minmax(True),
    "float.max": _fp_minmax(False),
    "float.copysign": _lanes(_copysign),
    "float.testp": _testp,
    "addr.cvta": _cvta,
}


def apply(xp, form: Form, arrays: list, tininess: str = TININESS_DEFAULT, destinations: int = 1):
    """Evaluate a ``function`` form on broadcast operand arrays (see the module docstring).

    Returns the destination array, or a tuple when ``destinations`` is 2 (``setp p|q``).
    """
    key = form.semantics.key
    fn = IMPLEMENTATIONS.get(key)
    if fn is None:
        raise UsageError(f"{form.name}: no model implementation for {key}")
    params = dict(form.semantics.params)
    params["tininess"] = tininess
    with np.errstate(all="ignore"):
        if key.startswith("cmp.setp"):
            return fn(xp, form, arrays, params, destinations)
        if destinations != 1:
            raise UsageError(f"{form.name} has one destination, not {destinations}")
        return fn(xp, form, arrays, params)
