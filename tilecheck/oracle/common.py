"""Pieces shared by the scalar oracles: argument checking and exact bits <-> (sign, integer
significand, exponent) conversion.

Everything here is plain integer arithmetic on Python ints, written for obviousness rather than
speed, and independent of the numpy model. Values are *dyadic*: ``(-1)**neg * sig * 2**exp`` with
``sig >= 0`` an int, which represents every finite pattern of every format exactly.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import lru_cache

from tilecheck.errors import OperandError, UsageError
from tilecheck.formats import ROUNDINGS, Format, get_format
from tilecheck.spec.registry import OPERATIONS

#: Operand count of every operation the oracles know.
ARITY = OPERATIONS


@dataclass(frozen=True)
class Operand:
    """One decoded operand: ``kind`` is ``zero``, ``finite`` (nonzero), ``inf`` or ``nan``; the
    magnitude of a zero/finite operand is ``sig * 2**exp`` exactly."""

    bits: int
    neg: bool
    kind: str
    sig: int = 0
    exp: int = 0


def check_format(fmt) -> Format:
    """The :class:`Format` for ``fmt`` (a Format, or a name looked up in the default spec root's
    formats); only IEEE-like formats (with infinities) are accepted, because the oracles' overflow
    and NaN rules are IEEE 754's."""
    f = fmt if isinstance(fmt, Format) else _format_by_name(fmt)
    if f.specials != "ieee":
        raise UsageError(f"the scalar oracles implement IEEE 754 semantics; {f.name} has no infinity "
                         f"(specials: {f.specials}) so overflow and NaN rules differ")
    return f


@lru_cache(maxsize=64)
def _format_by_name(name) -> Format:
    # get_format locates the spec folder on every call; the oracles run per scalar, so cache.
    return get_format(name)


def check_call(op: str, f: Format, rounding: str, operand_bits: tuple) -> tuple[int, ...]:
    """Validate op/rounding/operand count and return the operands as range-checked ints."""
    if op not in ARITY:
        raise UsageError(f"unknown operation {op!r}; known: {', '.join(ARITY)}")
    if rounding not in ROUNDINGS:
        raise UsageError(f"unknown rounding {rounding!r}; known: {', '.join(ROUNDINGS)}")
    if len(operand_bits) != ARITY[op]:
        raise UsageError(f"{op} takes {ARITY[op]} operand(s), got {len(operand_bits)}")
    out = []
    for i, b in enumerate(operand_bits):
        try:
            v = operator.index(b)  # accepts Python and numpy integers, rejects floats
        except TypeError:
            raise OperandError(f"operand {i} of {op}: bit patterns are integers, got {type(b).__name__}") from None
        if not 0 <= v < (1 << f.width):
            raise OperandError(f"operand {i} of {op}: {v:#x} is not a {f.width}-bit {f.name} pattern")
        out.append(v)
    return tuple(out)


def decode(f: Format, bits: int) -> Operand:
    """Exact decomposition of one pattern of an IEEE-like format."""
    neg = bool(bits & f.sign_mask)
    biased = (bits & f.exponent_mask) >> f.mantissa_bits
    frac = bits & f.mantissa_mask
    if biased == (1 << f.exponent_bits) - 1:
        return Operand(bits, neg, "nan" if frac else "inf")
    if biased == 0:
        if frac == 0:
            return Operand(bits, neg, "zero")
        return Operand(bits, neg, "finite", frac, f.emin - f.mantissa_bits)
    return Operand(bits, neg, "finite", frac | (1 << f.mantissa_bits), biased - f.bias - f.mantissa_bits)


def is_subnormal(f: Format, x: Operand) -> bool:
    """True for a nonzero finite operand below the smallest normal."""
    return x.kind == "finite" and x.sig < (1 << f.mantissa_bits) and x.exp == f.emin - f.mantissa_bits


def zero_bits(f: Format, neg: bool) -> int:
    """Bits of a signed zero."""
    return f.sign_mask if neg else 0


def inf_bits(f: Format, neg: bool) -> int:
    """Bits of a signed infinity."""
    return (f.sign_mask if neg else 0) | f.exponent_mask


def encode_exact(f: Format, neg: bool, sig: int, exp: int) -> int:
    """Bits of ``(-1)**neg * sig * 2**exp``, which must be exactly representable and finite.

    Raises ``RuntimeError`` otherwise: the callers only pass values that are already rounded to
    the format, so a failure here is a bug in the oracle, never a property of the inputs.
    """
    if sig < 0:
        raise RuntimeError("encode_exact: significand must be non-negative")
    if sig == 0:
        return zero_bits(f, neg)
    # drop trailing zeros so that the check below sees the shortest significand
    tz = (sig & -sig).bit_length() - 1
    sig >>= tz
    exp += tz
    top = exp + sig.bit_length() - 1  # unbiased exponent of the leading bit
    quantum = max(top, f.emin) - f.mantissa_bits  # exponent of the last significand bit there
    if top > f.emax or exp < quantum:
        raise RuntimeError(f"encode_exact: {'-' if neg else ''}{sig}*2^{exp} is not a finite {f.name} value")
    field = sig << (exp - quantum)  # significand on the format's grid, hidden bit included
    if top < f.emin:
        return zero_bits(f, neg) | field  # subnormal: biased exponent 0
    return zero_bits(f, neg) | ((top + f.bias) << f.mantissa_bits) | (field - (1 << f.mantissa_bits))


def check_nan_option(f: Format, nan) -> int:
    """The pattern an invalid operation returns: the format's default NaN for ``"default"``, or
    the given NaN pattern."""
    if isinstance(nan, str):
        if nan != "default":
            raise UsageError(f"nan must be 'default' or a NaN bit pattern, got {nan!r}")
        return f.default_nan
    try:
        v = operator.index(nan)
    except TypeError:
        raise UsageError(f"nan must be 'default' or a NaN bit pattern, got {nan!r}") from None
    if not 0 <= v < (1 << f.width) or decode(f, v).kind != "nan":
        raise UsageError(f"nan={v:#x} is not a NaN pattern of {f.name}")
    return v
