"""Scalar MPFR (gmpy2) references for the semantics and AMD tests.

Independent of the reference model, whose arithmetic the numpy backend runs: gmpy2 emulates each
format exactly with ``subnormalize=True``.
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2
from gmpy2 import mpfr

from tilecheck.formats import Format

# precision, emin, emax in MPFR's convention (significand in [0.5, 1))
CONTEXTS = {"f16": (11, -23, 16), "bf16": (8, -132, 128), "f32": (24, -148, 128), "f64": (53, -1073, 1024)}
ROUND = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}


def is_nan_bits(fmt: Format, bits: int) -> bool:
    """True for NaN patterns."""
    return (bits & fmt.magnitude_mask) > fmt.exponent_mask


def to_mpfr(fmt: Format, bits: int):
    """Exact mpfr value of a pattern (200-bit precision is exact for every format here)."""
    if is_nan_bits(fmt, bits):
        return mpfr("nan")
    value = fmt.to_fraction(bits)
    negative = bool(bits & fmt.sign_mask)
    if value is None:
        return mpfr("-inf") if negative else mpfr("inf")
    if value == 0:
        return mpfr("-0.0") if negative else mpfr("0.0")
    with gmpy2.context(gmpy2.get_context(), precision=200):
        return mpfr(value)


def from_mpfr(fmt: Format, x) -> int | None:
    """Pattern of an mpfr value already rounded to the format; None for NaN."""
    if gmpy2.is_nan(x):
        return None
    if gmpy2.is_infinite(x):
        return fmt.inf | (fmt.sign_mask if x < 0 else 0)
    if x == 0:
        return fmt.sign_mask if gmpy2.is_signed(x) else 0
    num, den = x.as_integer_ratio()
    return fmt.from_fraction(Fraction(int(num), int(den)), "rn")


def ieee(fmt: Format, op: str, rounding: str, *bits: int) -> int | None:
    """Correctly rounded ``op`` (add sub mul div fma) of patterns; None when the result is NaN."""
    p, emin, emax = CONTEXTS[fmt.name]
    ctx = gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=ROUND[rounding])
    xs = [to_mpfr(fmt, b) for b in bits]
    with gmpy2.context(ctx):
        if op == "fma":
            r = gmpy2.fma(*xs)
        elif op == "mul":
            r = xs[0] * xs[1]
        elif op == "add":
            r = xs[0] + xs[1]
        elif op == "sub":
            r = xs[0] - xs[1]
        elif op == "div":
            r = xs[0] / xs[1]
        else:
            raise ValueError(op)
    return from_mpfr(fmt, r)
