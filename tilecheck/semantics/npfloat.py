"""Exact, vectorised floating-point primitives on bit patterns (numpy, uint64 arrays).

This is the arithmetic the numpy backend of the semantics language needs and that IEEE hardware
through numpy cannot give: every operation in all four rounding modes, fused multiply-add (numpy
has none), and the *fused scaled* multiply-add ``(a*b + c) * 2**n`` with one rounding that AMD's
``V_DIV_FMAS`` performs. Everything is integer arithmetic on uint64/int64 arrays:

* an operand is unpacked into sign, integer significand (hidden bit included) and exponent;
* the exact result is formed as a 128-bit integer (two uint64 limbs) times a power of two, with
  every discarded 1 bit "jammed" into the lowest bit (the sticky bit);
* :func:`round_pack` rounds that to any format, subnormals and overflow included.

Values are bit patterns held in uint64 arrays whatever the format's width; the caller keeps the
format. This module is deliberately independent of :mod:`tilecheck.model` (the tests check one
against the other and against MPFR).
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format

U64 = np.uint64
I64 = np.int64
_ONE = U64(1)
_ZERO = U64(0)
_M32 = U64(0xFFFFFFFF)

ROUNDINGS = ("rn", "rz", "rm", "rp")


def u64(values) -> np.ndarray:
    """``values`` (Python ints or an integer array) as a uint64 array."""
    arr = np.asarray(values)
    if arr.dtype == np.uint64:
        return arr
    if arr.dtype == object:
        return np.array([int(v) for v in arr.ravel()], dtype=np.uint64).reshape(arr.shape)
    if arr.dtype.kind in "iu":
        return arr.astype(np.uint64)
    raise TypeError(f"bit patterns must be integers, got {arr.dtype}")


def bit_length(x: np.ndarray) -> np.ndarray:
    """Significant bits of each uint64 (0 for 0), exact for all 64-bit values.

    The float64 exponent gives the answer directly, except that converting a value just below a
    power of two may round up to it; one shift-back test corrects that off-by-one.
    """
    x = np.asarray(x, dtype=np.uint64)
    _, e = np.frexp(x.astype(np.float64))
    bl = e.astype(I64)
    probe = np.clip(bl - 1, 0, 63).astype(U64)
    # values >= 2**64 - 2**10 convert to 2**64 (exponent 65): a shift by 64 would be needed
    return bl - ((bl > 64) | ((bl > 0) & ((x >> probe) == 0)))


def _shl(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """x << n for n in [0, inf); 0 when n >= 64 (numpy/C shifts by >= 64 are undefined)."""
    n = np.asarray(n, dtype=I64)
    return np.where(n >= 64, _ZERO, x << np.clip(n, 0, 63).astype(U64))


def _shr(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """x >> n for n in [0, inf); 0 when n >= 64."""
    n = np.asarray(n, dtype=I64)
    return np.where(n >= 64, _ZERO, x >> np.clip(n, 0, 63).astype(U64))


def mul_64x64(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full 128-bit product of uint64 arrays as (high, low) limbs (32-bit schoolbook)."""
    a_lo, a_hi = a & _M32, a >> U64(32)
    b_lo, b_hi = b & _M32, b >> U64(32)
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = (ll >> U64(32)) + (lh & _M32) + (hl & _M32)  # < 3 * 2^32, no overflow
    lo = (ll & _M32) | (mid << U64(32))
    hi = hh + (lh >> U64(32)) + (hl >> U64(32)) + (mid >> U64(32))
    return hi, lo


def _bl128(hi, lo):
    return np.where(hi != 0, 64 + bit_length(hi), bit_length(lo))


def _shl128(hi, lo, n):
    """(hi, lo) << n for 0 <= n < 128 (caller guarantees no bits are lost)."""
    n = np.asarray(n, dtype=I64)
    small = n < 64
    hi_s = _shl(hi, n) | np.where(n == 0, _ZERO, _shr(lo, 64 - n))
    lo_s = _shl(lo, n)
    hi_b = _shl(lo, n - 64)
    return np.where(small, hi_s, hi_b), np.where(small, lo_s, _ZERO)


def _shr128_jam(hi, lo, n):
    """(hi, lo) >> n for n >= 0 with every lost 1 bit ORed into bit 0."""
    n = np.asarray(n, dtype=I64)
    n = np.maximum(n, 0)
    small = n < 64
    # n < 64: lo' = lo >> n | hi << (64 - n); hi' = hi >> n
    lo_s = _shr(lo, n) | np.where(n == 0, _ZERO, _shl(hi, 64 - n))
    hi_s = _shr(hi, n)
    lost_s = np.where(n == 0, False, _shl(lo, 64 - n) != 0)
    # n >= 64: lo' = hi >> (n - 64); lost = lo != 0 or low bits of hi
    m = n - 64
    lo_b = _shr(hi, m)
    lost_b = (lo != 0) | np.where(m == 0, False, np.where(m >= 64, hi != 0, _shl(hi, 64 - m) != 0))
    new_hi = np.where(small, hi_s, _ZERO)
    new_lo = np.where(small, lo_s, lo_b)
    lost = np.where(small, lost_s, lost_b)
    return new_hi, new_lo | lost.astype(U64)


def _add128(ah, al, bh, bl):
    lo = al + bl
    carry = (lo < al).astype(U64)
    return ah + bh + carry, lo


def _sub128(ah, al, bh, bl):
    lo = al - bl
    borrow = (al < bl).astype(U64)
    return ah - bh - borrow, lo


def _ge128(ah, al, bh, bl):
    return (ah > bh) | ((ah == bh) & (al >= bl))


# ---------------------------------------------------------------------------------------------
# unpacking and classification


class Unpacked:
    """Fields of patterns of one format: value = (-1)**neg * sig * 2**exp (sig 0 for zeros)."""

    __slots__ = ("neg", "sig", "exp", "nan", "inf", "zero", "sub", "efield")

    def __init__(self, fmt: Format, bits: np.ndarray):
        b = bits.astype(U64)
        mb = fmt.mantissa_bits
        self.neg = (b >> U64(fmt.width - 1)) & _ONE != 0
        efield = ((b >> U64(mb)) & U64((1 << fmt.exponent_bits) - 1)).astype(I64)
        frac = b & U64(fmt.mantissa_mask)
        normal = efield != 0
        self.efield = efield
        self.sig = np.where(normal, frac | U64(1 << mb), frac)
        self.exp = np.where(normal, efield, 1) - (fmt.bias + mb)
        mag = b & U64(fmt.magnitude_mask)
        self.nan = mag > U64(fmt.exponent_mask)
        self.inf = mag == U64(fmt.exponent_mask)
        self.zero = mag == 0
        self.sub = (~normal) & (mag != 0)


def is_nan(fmt: Format, b):
    """NaN patterns."""
    return (b & U64(fmt.magnitude_mask)) > U64(fmt.exponent_mask)


def is_inf(fmt: Format, b):
    """Infinities."""
    return (b & U64(fmt.magnitude_mask)) == U64(fmt.exponent_mask)


def is_zero(fmt: Format, b):
    """Zeros of either sign."""
    return (b & U64(fmt.magnitude_mask)) == 0


def is_subnormal(fmt: Format, b):
    """Non-zero patterns with a zero exponent field."""
    mag = b & U64(fmt.magnitude_mask)
    return (mag != 0) & (mag < U64(fmt.min_normal))


def is_neg(fmt: Format, b):
    """Sign bit set (NaNs and zeros included)."""
    return (b & U64(fmt.sign_mask)) != 0


def exponent_field(fmt: Format, b):
    """Biased exponent field as int64 (0 for zeros and subnormals, all ones for Inf/NaN)."""
    return ((b >> U64(fmt.mantissa_bits)) & U64((1 << fmt.exponent_bits) - 1)).astype(I64)


def quiet(fmt: Format, b):
    """Set the quiet bit of NaNs; other patterns unchanged."""
    return np.where(is_nan(fmt, b), b | U64(fmt.quiet_bit), b)


def flush(fmt: Format, b):
    """Subnormal patterns become zero of the same sign."""
    return np.where(is_subnormal(fmt, b), b & U64(fmt.sign_mask), b)


def default_nan(fmt: Format, shape) -> np.ndarray:
    """The format's default NaN, broadcast to ``shape``."""
    return np.full(shape, fmt.default_nan, dtype=U64)


def propagate_nan(fmt: Format, *operands) -> np.ndarray:
    """Quiet first NaN operand, else the format's default NaN (the primitives' NaN rule)."""
    shape = np.broadcast(*operands).shape
    out = default_nan(fmt, shape)
    for op in reversed(operands):
        out = np.where(is_nan(fmt, op), op | U64(fmt.quiet_bit), out)
    return out


def to_float64(fmt: Format, b) -> np.ndarray:
    """Exact float64 values of patterns (all formats here fit in binary64); for comparisons."""
    if fmt.name == "f64":
        return b.astype(U64).view(np.float64)
    # widening a signalling NaN raises numpy's "invalid" flag; the value (a NaN) is what we want
    with np.errstate(invalid="ignore"):
        if fmt.name == "f32":
            return b.astype(np.uint32).view(np.float32).astype(np.float64)
        if fmt.name == "f16":
            return b.astype(np.uint16).view(np.float16).astype(np.float64)
    u = Unpacked(fmt, b)
    val = np.ldexp(u.sig.astype(np.float64), u.exp.astype(np.int32))
    val = np.where(u.inf, np.inf, val)
    val = np.where(u.nan, np.nan, val)
    return np.where(u.neg, -val, val)


# ---------------------------------------------------------------------------------------------
# rounding


def _overflow_mag(fmt: Format, neg, rounding: str):
    if rounding == "rn":
        to_inf = np.ones(neg.shape, dtype=bool)
    elif rounding == "rz":
        to_inf = np.zeros(neg.shape, dtype=bool)
    elif rounding == "rp":
        to_inf = ~neg
    else:
        to_inf = neg
    return np.where(to_inf, U64(fmt.exponent_mask), U64(fmt.max_finite))


def round_pack(fmt: Format, neg, hi, lo, exp, rounding: str, flush_out: bool = False,
               tininess: str = "after") -> np.ndarray:
    """Round the value ``(hi * 2**64 + lo) * 2**exp`` (bit 0 may be a jammed sticky bit) to ``fmt``.

    The integer must be non-zero wherever the result is used (zeros are the caller's business:
    their sign depends on the operation). ``flush_out`` replaces subnormal results by zero of the
    same sign, judged after rounding (``tininess="after"``) or on the exact value ("before").
    Sticky-bit correctness needs at least two bits below the result's last kept bit, which holds
    because the callers pass at least p + 2 significant bits or an exact value.
    """
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    p = fmt.precision
    mb = fmt.mantissa_bits
    # Narrow to at most 62 bits (keeps headroom for the increment) with a jammed sticky bit.
    bl = _bl128(hi, lo)
    cut = np.maximum(bl - 62, 0)
    _, sig = _shr128_jam(hi, lo, cut)
    exp = exp + cut
    bl = bit_length(sig)
    msb = exp + bl - 1
    sub_lsb = fmt.emin - mb
    lsb = np.maximum(msb - (p - 1), sub_lsb)
    shift = lsb - exp
    exact_pos = shift <= 0
    s = np.clip(shift, 0, 63).astype(U64)
    q = np.where(exact_pos, _shl(sig, np.clip(-shift, 0, 63)), sig >> s)
    rem = np.where(exact_pos, _ZERO, sig - ((sig >> s) << s))
    half = np.where(exact_pos, _ZERO, _ONE << (np.maximum(s, _ONE) - _ONE))
    # a shift of 63 or more can leave bits beyond the 62-bit window: treat as sticky below half
    big = shift >= 63
    rem = np.where(big, np.where(sig != 0, _ONE, _ZERO), rem)
    half = np.where(big, U64(1) << U64(62), half)
    q = np.where(big, _ZERO, q)
    inexact = rem != 0
    if rounding == "rn":
        inc = (rem > half) | ((rem == half) & inexact & ((q & _ONE) == 1))
    elif rounding == "rz":
        inc = np.zeros(q.shape, dtype=bool)
    elif rounding == "rp":
        inc = inexact & ~neg
    else:
        inc = inexact & neg
    q = q + inc.astype(U64)
    carry = q == U64(1 << p)
    q = np.where(carry, q >> _ONE, q)
    lsb = lsb + carry
    normal = q >= U64(1 << mb)
    biased = lsb + (p - 1) + fmt.bias  # biased exponent for normal results
    overflow = normal & (biased > fmt.max_biased_exponent)
    packed = (np.clip(biased, 0, fmt.max_biased_exponent).astype(U64) << U64(mb)) | (q & U64(fmt.mantissa_mask))
    mag = np.where(normal, packed, q)
    mag = np.where(overflow, _overflow_mag(fmt, neg, rounding), mag)
    if flush_out:
        tiny = (~normal & (q != 0)) if tininess == "after" else (msb < fmt.emin)
        mag = np.where(tiny, _ZERO, mag)
    return np.where(neg, U64(fmt.sign_mask), _ZERO) | mag


# ---------------------------------------------------------------------------------------------
# operations (finite non-special paths plus IEEE special cases)


def _zero_sum_sign(neg_a, neg_b, rounding):
    """Sign of an exact zero sum of two zero-or-cancelling terms (IEEE 754 §6.3)."""
    if rounding == "rm":
        return neg_a | neg_b
    return neg_a & neg_b


def fma(fmt: Format, rounding: str, a, b, c, scale=0, flush_out: bool = False,
        tininess: str = "after") -> np.ndarray:
    """``(a*b + c) * 2**scale`` with one rounding; ``scale`` an int or int64 array.

    NaN results: quiet first NaN operand (a, b, c order), else the default NaN; invalid
    (0*inf, inf - inf) gives the default NaN. An infinite result is not scaled.
    """
    a, b, c = (np.asarray(v, dtype=U64) for v in (a, b, c))
    shape = np.broadcast(a, b, c).shape
    a, b, c = (np.broadcast_to(v, shape) for v in (a, b, c))
    A, B, C = Unpacked(fmt, a), Unpacked(fmt, b), Unpacked(fmt, c)
    scale = np.broadcast_to(np.asarray(scale, dtype=I64), shape)
    pneg = A.neg ^ B.neg
    # exact product
    phi, plo = mul_64x64(A.sig, B.sig)
    pexp = A.exp + B.exp
    pzero = A.zero | B.zero
    czero = C.zero
    # align product and addend at bit 126 of a 128-bit window
    pt = _bl128(phi, plo) - 1
    ct = bit_length(C.sig) - 1
    ptop = pexp + pt
    ctop = C.exp + ct
    top = np.maximum(ptop, ctop)
    phi_n, plo_n = _shl128(phi, plo, np.clip(126 - pt, 0, 127))
    chi_n, clo_n = _shl128(np.zeros(shape, U64), C.sig, np.clip(126 - ct, 0, 127))
    phi_a, plo_a = _shr128_jam(phi_n, plo_n, top - ptop)
    chi_a, clo_a = _shr128_jam(chi_n, clo_n, top - ctop)
    same = pneg == C.neg
    p_ge = _ge128(phi_a, plo_a, chi_a, clo_a)
    shi, slo = _add128(phi_a, plo_a, chi_a, clo_a)
    dhi, dlo = _sub128(phi_a, plo_a, chi_a, clo_a)
    ehi, elo = _sub128(chi_a, clo_a, phi_a, plo_a)
    rhi = np.where(same, shi, np.where(p_ge, dhi, ehi))
    rlo = np.where(same, slo, np.where(p_ge, dlo, elo))
    rneg = np.where(same, pneg, np.where(p_ge, pneg, C.neg))
    rexp = top - 126
    # one of the terms zero: the other alone (the window arithmetic above would also work, but
    # the product's alignment of a zero significand is meaningless)
    only_c = pzero & ~czero
    only_p = czero & ~pzero
    rhi = np.where(only_c, 0, np.where(only_p, phi, rhi)).astype(U64)
    rlo = np.where(only_c, C.sig, np.where(only_p, plo, rlo)).astype(U64)
    rexp = np.where(only_c, C.exp, np.where(only_p, pexp, rexp))
    rneg = np.where(only_c, C.neg, np.where(only_p, pneg, rneg))
    exact_zero = (rhi == 0) & (rlo == 0)
    safe_lo = np.where(exact_zero, _ONE, rlo)
    out = round_pack(fmt, rneg, rhi, safe_lo, rexp + scale, rounding, flush_out, tininess)
    # exact zero: both terms zero follows the signed-zero sum rule; cancellation gives +0 (-0 in rm)
    zsign = np.where(pzero & czero, _zero_sum_sign(pneg, C.neg, rounding), rounding == "rm")
    zero_bits = np.where(zsign, U64(fmt.sign_mask), _ZERO)
    out = np.where(exact_zero, zero_bits, out)
    # specials
    pinf = A.inf | B.inf
    invalid = (A.inf & B.zero) | (B.inf & A.zero) | (pinf & C.inf & (pneg != C.neg))
    inf_out = np.where(pinf, np.where(pneg, U64(fmt.sign_mask | fmt.exponent_mask), U64(fmt.exponent_mask)),
                       np.where(C.neg, U64(fmt.sign_mask | fmt.exponent_mask), U64(fmt.exponent_mask)))
    out = np.where(pinf | C.inf, inf_out, out)
    anynan = A.nan | B.nan | C.nan
    out = np.where(invalid & ~anynan, U64(fmt.default_nan), out)
    out = np.where(anynan, propagate_nan(fmt, a, b, c), out)
    return out


def mul(fmt: Format, rounding: str, a, b, scale=0, flush_out: bool = False, tininess: str = "after"):
    """``a * b * 2**scale`` with one rounding (special cases as IEEE; NaN rule as :func:`fma`)."""
    a, b = (np.asarray(v, dtype=U64) for v in (a, b))
    shape = np.broadcast(a, b).shape
    a, b = (np.broadcast_to(v, shape) for v in (a, b))
    A, B = Unpacked(fmt, a), Unpacked(fmt, b)
    neg = A.neg ^ B.neg
    hi, lo = mul_64x64(A.sig, B.sig)
    zero = A.zero | B.zero
    out = round_pack(fmt, neg, hi, np.where(zero, _ONE, lo), A.exp + B.exp + scale, rounding, flush_out, tininess)
    sign = np.where(neg, U64(fmt.sign_mask), _ZERO)
    out = np.where(zero, sign, out)
    out = np.where(A.inf | B.inf, sign | U64(fmt.exponent_mask), out)
    out = np.where((A.inf & B.zero) | (B.inf & A.zero), U64(fmt.default_nan), out)
    out = np.where(A.nan | B.nan, propagate_nan(fmt, a, b), out)
    return out


def add(fmt: Format, rounding: str, a, b, flush_out: bool = False, tininess: str = "after"):
    """``a + b`` correctly rounded: computed as ``fma(a, 1, b)`` (exact product, same zero signs)."""
    one = U64((fmt.bias) << fmt.mantissa_bits)
    a = np.asarray(a, dtype=U64)
    b = np.asarray(b, dtype=U64)
    out = fma(fmt, rounding, a, one, b, 0, flush_out, tininess)
    # NaN order: fma would name a, then 1.0, then b -- same as a, b.
    return out


def sub(fmt: Format, rounding: str, a, b, flush_out: bool = False, tininess: str = "after"):
    """``a - b`` correctly rounded (``b``'s sign flipped, NaN payloads kept as given)."""
    b = np.asarray(b, dtype=U64)
    nb = np.where(is_nan(fmt, b), b, b ^ U64(fmt.sign_mask))
    return add(fmt, rounding, a, nb, flush_out, tininess)


def div(fmt: Format, rounding: str, a, b, flush_out: bool = False, tininess: str = "after"):
    """``a / b`` correctly rounded, by restoring long division of the integer significands."""
    a, b = (np.asarray(v, dtype=U64) for v in (a, b))
    shape = np.broadcast(a, b).shape
    a, b = (np.broadcast_to(v, shape) for v in (a, b))
    A, B = Unpacked(fmt, a), Unpacked(fmt, b)
    neg = A.neg ^ B.neg
    # normalise both significands to exactly p bits so the quotient has p or p+1 bits
    p = fmt.precision
    asig = np.where(A.zero, _ONE, A.sig)
    bsig = np.where(B.zero, _ONE, B.sig)
    ash = p - bit_length(asig)
    bsh = p - bit_length(bsig)
    an = _shl(asig, ash)
    bn = _shl(bsig, bsh)
    aexp = A.exp - ash
    bexp = B.exp - bsh
    # q = floor(an * 2^(p+2) / bn): p+2 or p+3 quotient bits, remainder as sticky
    steps = p + 3
    r = an.copy()
    q = np.zeros(shape, U64)
    # first quotient bit at weight 2^(steps-1) relative: do restoring division bit by bit
    for _ in range(steps):
        bit = r >= bn
        r = np.where(bit, r - bn, r)
        q = (q << _ONE) | bit.astype(U64)
        r = r << _ONE
    sticky = (r != 0).astype(U64)
    qexp = aexp - bexp - (steps - 1)
    out = round_pack(fmt, neg, np.zeros(shape, U64), (q << _ONE) | sticky, qexp - 1, rounding, flush_out, tininess)
    sign = np.where(neg, U64(fmt.sign_mask), _ZERO)
    inf_bits = sign | U64(fmt.exponent_mask)
    out = np.where(A.zero & ~B.zero, sign, out)
    out = np.where(B.zero & ~A.zero, inf_bits, out)
    out = np.where(A.inf & ~B.inf, inf_bits, out)
    out = np.where(B.inf & ~A.inf & ~A.nan, sign, out)
    out = np.where((A.zero & B.zero) | (A.inf & B.inf), U64(fmt.default_nan), out)
    out = np.where(A.nan | B.nan, propagate_nan(fmt, a, b), out)
    return out


def ldexp(fmt: Format, rounding: str, x, n, flush_out: bool = False, tininess: str = "after"):
    """``x * 2**n`` rounded once (NaN quieted, infinities and zeros unchanged)."""
    x = np.asarray(x, dtype=U64)
    n = np.asarray(n, dtype=I64)
    shape = np.broadcast(x, n).shape
    x = np.broadcast_to(x, shape)
    n = np.broadcast_to(n, shape)
    X = Unpacked(fmt, x)
    # clamp n: beyond +-(range + precision) every finite non-zero x over/underflows alike
    limit = 2 * (fmt.emax + fmt.precision) + 4
    nn = np.clip(n, -limit, limit)
    out = round_pack(fmt, X.neg, np.zeros(shape, U64), np.where(X.zero, _ONE, X.sig), X.exp + nn, rounding,
                     flush_out, tininess)
    out = np.where(X.zero | X.inf, x, out)
    return np.where(X.nan, x | U64(fmt.quiet_bit), out)


def convert(src: Format, dst: Format, rounding: str, x, flush_out: bool = False, tininess: str = "after"):
    """Round patterns of ``src`` to ``dst`` (exact when widening). NaN: quiet, payload's top
    bits kept (shifted), like IEEE conversions on common hardware."""
    x = np.asarray(x, dtype=U64)
    X = Unpacked(src, x)
    zeros = np.zeros(x.shape, U64)
    out = round_pack(dst, X.neg, zeros, np.where(X.zero, _ONE, X.sig), X.exp, rounding, flush_out, tininess)
    sign = np.where(X.neg, U64(dst.sign_mask), _ZERO)
    out = np.where(X.zero, sign, out)
    out = np.where(X.inf, sign | U64(dst.exponent_mask), out)
    shift = dst.mantissa_bits - src.mantissa_bits
    payload = x & U64(src.mantissa_mask)
    payload = (payload << U64(shift)) if shift >= 0 else (payload >> U64(-shift))
    nan = sign | U64(dst.exponent_mask) | U64(dst.quiet_bit) | (payload & U64(dst.mantissa_mask))
    return np.where(X.nan, nan, out)
