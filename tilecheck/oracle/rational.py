"""A second scalar reference, free of MPFR: exact rationals rounded by ``Format.from_fraction``.

``rational_op(op, fmt, rounding, *operand_bits)`` covers the same ops as
:func:`tilecheck.oracle.mpfr.mpfr_op` for *finite* operands and without flush-to-zero. It exists to
cross-check the MPFR oracle on formats that SoftFloat and TestFloat do not cover (bf16, tf32,
e5m2), so it shares no arithmetic with it:

* add, sub, mul, fma, div, rcp: the exact result is a :class:`fractions.Fraction`;
* sqrt, rsqrt: the exact result ``x`` is irrational in general, so it is replaced by
  ``x' = (floor(x * 2**K) + h) / 2**K`` with ``h = 1/2`` when ``x`` is not a multiple of
  ``2**-K`` and ``h = 0`` otherwise, computed with ``math.isqrt``. With ``2**-K`` finer than
  half the smallest subnormal, no rounding boundary (representable number or midpoint) lies
  strictly between ``floor(x * 2**K) / 2**K`` and the next multiple of ``2**-K``, so ``x`` and
  ``x'`` round alike in every direction.

Exact-zero results follow IEEE 754 (xor of signs for products and quotients; ``+0`` for exact
cancellation except ``-0`` under ``rm``; two zeros of one sign keep it; ``sqrt(-0) = -0``,
``rsqrt(+-0) = +-inf``). Division by zero gives a signed infinity; ``0/0`` and ``sqrt``/``rsqrt``
of a negative number give the format's default NaN. Infinite or NaN operands raise
:class:`~tilecheck.errors.UsageError`: their rules are the MPFR oracle's and SoftFloat's to check.
"""

from __future__ import annotations

import math
from fractions import Fraction

from tilecheck.errors import UsageError
from tilecheck.oracle.common import check_call, check_format, decode

__all__ = ["rational_op"]


def rational_op(op: str, fmt, rounding: str, *operand_bits: int) -> int:
    """Correctly rounded result bits of ``op`` on finite operands, from exact rationals.

    Same ``op``/``fmt``/``rounding`` vocabulary as :func:`tilecheck.oracle.mpfr.mpfr_op`; no FTZ.
    """
    f = check_format(fmt)
    bits = check_call(op, f, rounding, operand_bits)
    values = []
    negs = []
    for i, b in enumerate(bits):
        x = decode(f, b)
        if x.kind in ("inf", "nan"):
            raise UsageError(f"rational_op handles finite operands only; operand {i} is {x.kind}")
        values.append(f.to_fraction(b))
        negs.append(x.neg)
    rm = rounding == "rm"

    if op in ("add", "sub"):
        a, b = values
        bneg = negs[1] if op == "add" else not negs[1]
        exact = a + b if op == "add" else a - b
        if exact == 0:
            same = a == 0 and b == 0 and negs[0] == bneg
            return f.from_fraction(exact, rounding, negative_zero=negs[0] if same else rm)
        return f.from_fraction(exact, rounding)
    if op == "mul":
        a, b = values
        return f.from_fraction(a * b, rounding, negative_zero=negs[0] != negs[1])
    if op == "fma":
        a, b, c = values
        pneg = negs[0] != negs[1]
        exact = a * b + c
        if exact == 0:
            same = a * b == 0 and c == 0 and pneg == negs[2]
            return f.from_fraction(exact, rounding, negative_zero=pneg if same else rm)
        return f.from_fraction(exact, rounding)
    if op in ("div", "rcp"):
        if op == "rcp":
            a, b, aneg, bneg = Fraction(1), values[0], False, negs[0]
        else:
            (a, b), (aneg, bneg) = values, negs
        neg = aneg != bneg
        if b == 0:
            if a == 0:
                return f.default_nan
            return (f.sign_mask if neg else 0) | f.inf
        return f.from_fraction(a / b, rounding, negative_zero=neg)
    if op in ("sqrt", "rsqrt"):
        (a,), (aneg,) = values, negs
        if a == 0:
            return bits[0] if op == "sqrt" else (f.sign_mask if aneg else 0) | f.inf
        if a < 0:
            return f.default_nan
        return f.from_fraction(_sqrt_sticky(f, a, reciprocal=op == "rsqrt"), rounding)
    raise UsageError(f"unhandled op {op!r}")


def _sqrt_sticky(f, a: Fraction, reciprocal: bool) -> Fraction:
    """``sqrt(a)`` or ``1/sqrt(a)`` replaced by a rational that rounds identically (see the
    module docstring)."""
    k = f.mantissa_bits + 4 - f.emin  # 2**-k is below half the smallest subnormal, 2**(emin-m-1)
    if reciprocal:
        y = Fraction(4**k) / a  # x * 2**k = sqrt(4**k / a)
    else:
        y = a * 4**k  # x * 2**k = sqrt(a * 4**k)
    t = math.isqrt(y.numerator // y.denominator)  # floor(sqrt(y)) == isqrt(floor(y))
    exact = Fraction(t * t) == y
    return (Fraction(t) + (0 if exact else Fraction(1, 2))) / 2**k
