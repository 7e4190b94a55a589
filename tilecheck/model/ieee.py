"""The exact core of the reference model: unpacking bit patterns and rounding exact values.

Every correctly rounded operation reduces to: unpack the operands into (sign, integer
significand, exponent), compute the exact result -- or an integer significand with enough extra
bits plus a *sticky* flag meaning "the exact value is a little above this" -- and hand it to
:func:`round_pack`, which rounds to any format in any of the four IEEE modes, handles subnormal
results, overflow, and flush-to-zero with tininess judged before or after rounding.

Everything is vectorised over uint64/int64 arrays of one array namespace ``xp`` (numpy or CuPy).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecheck.formats import Format
from tilecheck.model.xp import bit_length, u64
from tilecheck.spec.registry import ROUNDINGS, TININESS, TININESS_DEFAULT


@dataclass
class Unpacked:
    """Operand fields as uint64/int64 arrays.

    ``sig`` includes the hidden bit for normal numbers and is 0 for zeros; value = sig * 2**exp.
    ``bits`` are the (possibly flushed) patterns widened to uint64.
    """

    bits: object
    sign: object
    sig: object
    exp: object
    nan: object
    inf: object
    zero: object


def float64_values(xp, fmt: Format, bits):
    """Exact float64 values of the patterns ``bits`` of ``fmt`` (formats up to binary64; NaN
    payloads are not kept). binary32, binary16 and bfloat16 are views in either namespace; other
    formats convert on the host."""
    if fmt.name == "f64":
        return bits.astype(xp.uint64).view(xp.float64)
    if fmt.name == "f32":
        return bits.astype(xp.uint32).view(xp.float32).astype(xp.float64)
    if fmt.name == "f16":
        return bits.astype(xp.uint16).view(xp.float16).astype(xp.float64)
    if fmt.name == "bf16":  # the upper half of a binary32 pattern
        return (bits.astype(xp.uint32) << xp.uint32(16)).view(xp.float32).astype(xp.float64)
    host = bits.get() if hasattr(bits, "get") else bits
    return xp.asarray(fmt.to_float64(host.astype(fmt.uint)))


def flush_subnormal_bits(xp, fmt: Format, bits):
    """Replace subnormal patterns by zero of the same sign (the ``.ftz`` input rule)."""
    b = bits.astype(xp.uint64)
    mag = b & u64(xp, fmt.magnitude_mask)
    sub = (mag != 0) & (mag < u64(xp, fmt.min_normal))
    return xp.where(sub, b & u64(xp, fmt.sign_mask), b)


def unpack(xp, fmt: Format, bits, ftz: bool = False) -> Unpacked:
    """Split patterns of ``fmt`` into sign, significand and exponent (subnormals not normalised)."""
    b = bits.astype(xp.uint64)
    if ftz:
        b = flush_subnormal_bits(xp, fmt, b)
    mbits = fmt.mantissa_bits
    sign = (b >> u64(xp, fmt.width - 1)) & u64(xp, 1)
    expf = (b >> u64(xp, mbits)) & u64(xp, (1 << fmt.exponent_bits) - 1)
    frac = b & u64(xp, fmt.mantissa_mask)
    normal = expf != 0
    sig = xp.where(normal, frac | u64(xp, 1 << mbits), frac)
    exp = xp.where(normal, expf, u64(xp, 1)).astype(xp.int64) - (fmt.bias + mbits)
    mag = b & u64(xp, fmt.magnitude_mask)
    if fmt.specials == "ieee":
        nan = mag > u64(xp, fmt.exponent_mask)
        inf = mag == u64(xp, fmt.exponent_mask)
    else:
        nan = mag == u64(xp, fmt.magnitude_mask)
        inf = xp.zeros(b.shape, dtype=bool)
    return Unpacked(b, sign, sig, exp, nan, inf, mag == 0)


def normalize(xp, sig, exp, width: int):
    """Shift non-zero significands left so their top bit is bit ``width - 1``; adjust exponents."""
    bl = bit_length(xp, sig)
    shift = xp.where(sig == 0, 0, width - bl)
    return sig << shift.astype(xp.uint64), exp - shift


def round_pack(xp, fmt: Format, sign, sig, exp, sticky, rounding: str, ftz: bool = False,
               tininess: str = TININESS_DEFAULT):
    """Round the exact value ``(sig + sticky*eps) * 2**exp`` to ``fmt`` and return its bits (uint64).

    ``sig`` must be non-zero and below 2**62 (callers narrow wider values with
    :func:`~tilecheck.model.xp.shift_right_jam`); ``sticky`` (bool array) says the exact value is
    strictly above ``sig * 2**exp`` by less than one unit of ``sig``'s last bit. ``sign`` is 0/1.

    Subnormal results are rounded on the subnormal grid; overflow gives infinity or the largest
    finite number as the rounding direction demands. With ``ftz`` a subnormal result becomes a zero
    of the same sign: ``tininess="after"`` judges the rounded result (a value that rounds up to the
    smallest normal survives), ``"before"`` judges the exact value (it is flushed).
    """
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    if tininess not in TININESS:
        raise ValueError(f"tininess must be 'after' or 'before', got {tininess!r}")
    p = fmt.precision
    mbits = fmt.mantissa_bits
    bl = bit_length(xp, sig)
    msb_exp = exp + bl - 1
    sub_lsb = fmt.emin - mbits
    lsb = xp.maximum(msb_exp - (p - 1), sub_lsb)
    shift = lsb - exp
    exact_pos = shift <= 0
    s = xp.clip(shift, 0, 63).astype(xp.uint64)
    left = xp.clip(-shift, 0, 63).astype(xp.uint64)
    q_trunc = sig >> s
    rem = sig - (q_trunc << s)
    half = xp.where(exact_pos, u64(xp, 0), u64(xp, 1) << (xp.maximum(s, u64(xp, 1)) - u64(xp, 1)))
    above_half = ~exact_pos & ((rem > half) | ((rem == half) & sticky))
    at_half = ~exact_pos & (rem == half) & ~sticky
    inexact = xp.where(exact_pos, sticky, (rem != 0) | sticky)
    q = xp.where(exact_pos, sig << left, q_trunc)
    negative = sign == 1
    if rounding == "rn":
        inc = above_half | (at_half & ((q & u64(xp, 1)) == 1))
    elif rounding == "rz":
        inc = xp.zeros(q.shape, dtype=bool)
    elif rounding == "rp":
        inc = inexact & ~negative
    else:  # rm
        inc = inexact & negative
    q = q + inc.astype(xp.uint64)
    carry = q == u64(xp, 1 << p)
    q = xp.where(carry, q >> u64(xp, 1), q)
    lsb = lsb + carry.astype(xp.int64)
    normal = q >= u64(xp, 1 << mbits)
    top = fmt.max_biased_exponent + 1
    biased = xp.clip(lsb + (p - 1) + fmt.bias, 0, top)
    packed = (biased.astype(xp.uint64) << u64(xp, mbits)) | (q & u64(xp, fmt.mantissa_mask))
    mag = xp.where(normal, packed, q)
    overflow = normal & ((biased >= top) | (packed > u64(xp, fmt.max_finite)))
    if xp.any(overflow):
        if rounding == "rn":
            to_inf = xp.ones(q.shape, dtype=bool)
        elif rounding == "rz":
            to_inf = xp.zeros(q.shape, dtype=bool)
        elif rounding == "rp":
            to_inf = ~negative
        else:
            to_inf = negative
        big = fmt.inf if fmt.specials == "ieee" else fmt.magnitude_mask  # fn formats: NaN
        mag = xp.where(overflow, xp.where(to_inf, u64(xp, big), u64(xp, fmt.max_finite)), mag)
    if ftz:
        if tininess == "after":
            tiny = ~normal & (q != 0)
        else:
            tiny = msb_exp < fmt.emin
        mag = xp.where(tiny, u64(xp, 0), mag)
    return (sign << u64(xp, fmt.width - 1)) | mag


def quiet(xp, fmt: Format, bits):
    """Set the quiet bit of NaN patterns (signalling NaNs become quiet, payload kept)."""
    return bits | u64(xp, fmt.quiet_bit)
