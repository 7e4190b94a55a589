"""Z3 floating-point building blocks shared by the form encodings and the semantics backend.

Z3's FP theory has IEEE arithmetic in the four rounding modes with subnormals, but a single NaN.
tilecheck therefore keeps *bit patterns* as Z3 bit-vectors wherever NaN payloads matter and goes
through the FP sort only for arithmetic:

* ``to_fp(fmt, bv)`` reinterprets a pattern (any NaN pattern becomes Z3's NaN);
* ``to_bits(fmt, x, nan_bits)`` turns an FP result back into a pattern, substituting ``nan_bits``
  (a bit-vector term chosen by a NaN policy) for Z3's NaN -- this ``If`` is where NaN bits are
  handled outside the FP theory;
* :func:`propagate_nan` builds the "quiet first NaN operand, else default NaN" pattern on
  bit-vectors.

FTZ is explicit: :func:`flush_bits` / :func:`flush_fp` on inputs, :func:`flush_result` on results
with tininess judged after rounding (default) or before (from the same operation rounded toward
zero). The fused scaled FMA and ``ldexp`` round exactly once by computing in a wider sort (and with
round-to-odd where the wider result itself must round). ``z3`` is imported when this module is.
"""

from __future__ import annotations

from functools import lru_cache

import z3

from tilecheck.formats import Format, get_format


@lru_cache(maxsize=None)
def _sort(ebits: int, sbits: int) -> z3.FPSortRef:
    return z3.FPSort(ebits, sbits)


def sort(fmt: Format | str) -> z3.FPSortRef:
    """The Z3 FP sort of a format (``sbits`` includes the hidden bit); a name is looked up in the
    default spec root's formats (kept for callers without a database: only the geometry matters)."""
    fmt = get_format(fmt)
    return _sort(fmt.exponent_bits, fmt.precision)


def wide_sort(fmt: Format, extra_exponent: int = 2, extra_precision: int = 0) -> z3.FPSortRef:
    """A sort with a larger exponent range (and optionally more precision) than ``fmt``."""
    return _sort(fmt.exponent_bits + extra_exponent, fmt.precision + extra_precision)


def rounding_mode(rounding: str) -> z3.FPRMRef:
    """Z3 rounding mode of ``rn``/``rz``/``rm``/``rp``."""
    if rounding == "rn":
        return z3.RNE()
    if rounding == "rz":
        return z3.RTZ()
    if rounding == "rm":
        return z3.RTN()
    if rounding == "rp":
        return z3.RTP()
    raise ValueError(f"unknown rounding {rounding!r}")


def bv(fmt: Format, value) -> z3.BitVecRef:
    """``value`` (a Python int or a bit-vector term of the format's width) as a bit-vector term."""
    if isinstance(value, z3.BitVecRef):
        if value.size() != fmt.width:
            raise ValueError(f"{fmt.name} needs a {fmt.width}-bit vector, got {value.size()} bits")
        return value
    return z3.BitVecVal(int(value), fmt.width)


def to_fp(fmt: Format, bits) -> z3.FPRef:
    """Reinterpret a pattern as an FP term (NaN payloads are lost here)."""
    if isinstance(bits, z3.FPRef):
        return bits
    return z3.fpBVToFP(bv(fmt, bits), sort(fmt))


def to_bits(fmt: Format, x: z3.FPRef, nan_bits) -> z3.BitVecRef:
    """The pattern of FP term ``x``, with ``nan_bits`` where ``x`` is NaN."""
    return z3.If(z3.fpIsNaN(x), bv(fmt, nan_bits), z3.fpToIEEEBV(x))


def const(fmt: Format, bits: int) -> z3.BitVecRef:
    """A constant pattern."""
    return z3.BitVecVal(bits, fmt.width)


def is_nan_bits(fmt: Format, b) -> z3.BoolRef:
    """NaN test on a pattern."""
    return z3.UGT(b & fmt.magnitude_mask, fmt.exponent_mask)


def is_subnormal_bits(fmt: Format, b) -> z3.BoolRef:
    """Subnormal test on a pattern."""
    mag = b & fmt.magnitude_mask
    return z3.And(mag != 0, z3.ULT(mag, fmt.min_normal))


def quiet_bits(fmt: Format, b) -> z3.BitVecRef:
    """Set the quiet bit of a NaN pattern; others unchanged."""
    return z3.If(is_nan_bits(fmt, b), b | fmt.quiet_bit, b)


def flush_bits(fmt: Format, b) -> z3.BitVecRef:
    """Subnormal pattern -> zero of the same sign."""
    return z3.If(is_subnormal_bits(fmt, b), b & fmt.sign_mask, b)


def flush_fp(x: z3.FPRef) -> z3.FPRef:
    """Subnormal FP term -> zero of the same sign."""
    s = x.sort()
    zero = z3.If(z3.fpIsNegative(x), z3.fpMinusZero(s), z3.fpPlusZero(s))
    return z3.If(z3.fpIsSubnormal(x), zero, x)


def propagate_nan(fmt: Format, operands, default: int | None = None) -> z3.BitVecRef:
    """Quiet first NaN operand (patterns), else ``default`` (the format's default NaN)."""
    out = const(fmt, fmt.default_nan if default is None else default)
    for b in reversed(list(operands)):
        b = bv(fmt, b)
        out = z3.If(is_nan_bits(fmt, b), b | fmt.quiet_bit, out)
    return out


def min_normal_fp(fmt: Format) -> z3.FPRef:
    """Smallest positive normal as an FP constant."""
    return z3.fpBVToFP(const(fmt, fmt.min_normal), sort(fmt))


def flush_result(fmt: Format, r: z3.FPRef, r_toward_zero: z3.FPRef | None, tininess: str) -> z3.FPRef:
    """FTZ on a result: subnormal -> signed zero.

    ``tininess="after"`` judges the rounded result ``r``. ``"before"`` judges the exact value, which
    is below the smallest normal iff the same operation rounded toward zero (``r_toward_zero``) is:
    the smallest normal is representable, so truncation cannot cross it. A result that rounded up
    to +-min-normal is then flushed too.
    """
    flushed = flush_fp(r)
    if tininess == "after":
        return flushed
    if tininess != "before":
        raise ValueError(f"tininess must be 'after' or 'before', got {tininess!r}")
    if r_toward_zero is None:
        raise ValueError("tininess 'before' needs the result rounded toward zero")
    mn = min_normal_fp(fmt)
    tiny_exact = z3.And(z3.Not(z3.fpIsZero(r_toward_zero)), z3.fpLT(z3.fpAbs(r_toward_zero), mn))
    zero = z3.If(z3.fpIsNegative(r), z3.fpMinusZero(r.sort()), z3.fpPlusZero(r.sort()))
    return z3.If(z3.And(z3.fpIsNormal(r), tiny_exact), zero, flushed)


def ieee(op: str, rounding: str, *xs: z3.FPRef) -> z3.FPRef:
    """One correctly rounded IEEE operation on FP terms (add sub mul div fma sqrt rcp)."""
    rm = rounding_mode(rounding)
    if op == "add":
        return z3.fpAdd(rm, *xs)
    if op == "sub":
        return z3.fpSub(rm, *xs)
    if op == "mul":
        return z3.fpMul(rm, *xs)
    if op == "div":
        return z3.fpDiv(rm, *xs)
    if op == "fma":
        return z3.fpFMA(rm, *xs)
    if op == "sqrt":
        return z3.fpSqrt(rm, *xs)
    if op == "rcp":
        (x,) = xs
        return z3.fpDiv(rm, z3.FPVal(1.0, x.sort()), x)
    raise ValueError(f"unknown operation {op!r}")


def round_to_odd_bits(x_tz: z3.FPRef, exact: z3.BoolRef) -> z3.BitVecRef:
    """Round-to-odd from a truncated result: keep it when exact, else force its last bit to 1.

    Rounding to odd at precision P followed by rounding to precision <= P - 2 in any mode equals a
    single rounding (Boldo & Melquiond); this is how one wide FMA gives a single narrow rounding.
    """
    b = z3.fpToIEEEBV(x_tz)
    return z3.If(exact, b, b | 1)


def fma_scaled(fmt: Format, rounding: str, a: z3.FPRef, b: z3.FPRef, c: z3.FPRef, n: int) -> z3.FPRef:
    """``(a*b + c) * 2**n`` rounded once to ``fmt`` (finite, non-NaN paths; infinities stay).

    In a sort with two more exponent bits and two more significand bits the scaled operands are
    exact; the FMA there is rounded to odd (truncate, then force the last bit when RTN != RTP) and
    finally rounded to ``fmt`` once.
    """
    if n == 0:
        return z3.fpFMA(rounding_mode(rounding), a, b, c)
    w = wide_sort(fmt, 2, 2)
    limit = 2 * (fmt.emax + fmt.precision) + 4
    scale = _pow2(w, max(-limit, min(limit, n)))
    rm = rounding_mode(rounding)
    aw = z3.fpMul(z3.RNE(), z3.fpToFP(z3.RNE(), a, w), scale)
    bw = z3.fpToFP(z3.RNE(), b, w)
    cw = z3.fpMul(z3.RNE(), z3.fpToFP(z3.RNE(), c, w), scale)
    tz = z3.fpFMA(z3.RTZ(), aw, bw, cw)
    exact = z3.fpEQ(z3.fpFMA(z3.RTN(), aw, bw, cw), z3.fpFMA(z3.RTP(), aw, bw, cw))
    ro = z3.fpBVToFP(round_to_odd_bits(tz, exact), w)
    # Zeros and infinities are exact in the wide sort; the sign of an exact zero sum depends on
    # the final rounding mode, so take those from the FMA in that mode.
    ro = z3.If(z3.Or(z3.fpIsZero(tz), z3.fpIsInf(tz)), z3.fpFMA(rm, aw, bw, cw), ro)
    return z3.fpToFP(rm, ro, sort(fmt))


def _pow2(w: z3.FPSortRef, n: int) -> z3.FPRef:
    """2**n exactly in sort ``w`` (as a pattern: exponent field n + bias)."""
    ebits, sbits = w.ebits(), w.sbits()
    bias = (1 << (ebits - 1)) - 1
    field = n + bias
    if not 0 < field < (1 << ebits) - 1:
        raise ValueError(f"2**{n} is outside the range of {w}")
    return z3.fpBVToFP(z3.BitVecVal(field << (sbits - 1), ebits + sbits), w)


def pow2_symbolic(w: z3.FPSortRef, n: z3.BitVecRef, limit: int) -> z3.FPRef:
    """2**n in sort ``w`` for a 32-bit signed term ``n`` clamped to [-limit, limit] (the caller
    picks ``w`` so that the clamped range is inside its normal range)."""
    ebits, sbits = w.ebits(), w.sbits()
    bias = (1 << (ebits - 1)) - 1
    nn = z3.If(n > limit, z3.BitVecVal(limit, 32), z3.If(n < -limit, z3.BitVecVal(-limit, 32), n))
    field = z3.Extract(ebits - 1, 0, nn + bias)
    return z3.fpBVToFP(z3.Concat(z3.BitVecVal(0, 1), field, z3.BitVecVal(0, sbits - 1)), w)


def ldexp(fmt: Format, rounding: str, x: z3.FPRef, n) -> z3.FPRef:
    """``x * 2**n`` rounded once to ``fmt``; ``n`` a Python int or a 32-bit term."""
    # three more exponent bits: |x| * 2**limit must stay finite in the wide sort (two are not
    # enough for f16, whose 7-bit wide exponent overflows at 2**64 < 65504 * 2**56)
    w = wide_sort(fmt, 3, 0)
    limit = 2 * (fmt.emax + fmt.precision) + 4
    xw = z3.fpToFP(z3.RNE(), x, w)
    if isinstance(n, int):
        n = max(-limit, min(limit, n))
        scale = _pow2(w, n)
    else:
        scale = pow2_symbolic(w, n, limit)
    return z3.fpToFP(rounding_mode(rounding), z3.fpMul(z3.RNE(), xw, scale), sort(fmt))


def value_of(term) -> int:
    """The Python int of a simplified bit-vector constant; raises if it is not constant."""
    v = z3.simplify(term)
    if not z3.is_bv_value(v):
        raise ValueError(f"term did not simplify to a constant: {v}")
    return v.as_long()
