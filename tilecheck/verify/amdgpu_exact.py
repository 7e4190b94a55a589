"""Independent references for ``v_fma``/``v_mul`` (correctly rounded) and ``v_rcp`` (its contract).

``arith(op, fmt, rm, din, dout, *bits)`` applies MODE flushing around one correctly rounded
operation: MPFR (:mod:`tilecheck.oracle.mpfr`) when gmpy2 is installed, else exact rationals
(:mod:`tilecheck.oracle.rational`) for finite operands and the IEEE 754 special-value rules
written out here for the rest; :func:`arith_source` says which ran. ``rcp_allowed`` decides the
spec's reciprocal contract with exact rationals (``Fraction``), from the contract's fields, not
through :mod:`tilecheck.amdgpu.contract`.
"""

from __future__ import annotations

from fractions import Fraction

from tilecheck.formats import Format
from tilecheck.oracle.mpfr import mpfr_op  # imports gmpy2 only when called
from tilecheck.oracle.rational import rational_op
from tilecheck.verify.amdgpu_oracle import Bits, flush, quiet, signed


def have_mpfr() -> bool:
    """Whether gmpy2 (the MPFR oracle) can be imported."""
    try:
        import gmpy2  # noqa: F401
    except ImportError:
        return False
    return True


def arith_source() -> str:
    """What :func:`arith` judges with, in words (goes into the check's details)."""
    if have_mpfr():
        return "MPFR (gmpy2) correctly rounded results"
    return ("gmpy2 absent: exact rationals (tilecheck.oracle.rational) for finite operands and the IEEE 754 "
            "special-value rules for Inf/NaN operands")


def _specials(op: str, f: Format, xs: list[int]) -> int | None:
    """IEEE 754 results of mul/fma with an Inf or NaN operand (primitive NaN rule), else None."""
    B = [Bits(f, x) for x in xs]
    if not any(b.nan or b.inf for b in B):
        return None
    for x, b in zip(xs, B):
        if b.nan:
            return quiet(f, x)
    a, b = B[0], B[1]
    prod_inf, prod_neg = a.inf or b.inf, a.neg != b.neg
    if (a.inf and b.zero) or (b.inf and a.zero):
        return f.default_nan
    if op == "fma" and prod_inf and B[2].inf and B[2].neg != prod_neg:
        return f.default_nan
    if prod_inf:
        return signed(f, f.inf, prod_neg)
    return xs[2]  # only the addend is infinite


def arith(op: str, f: Format, rm: str, din: bool, dout: bool, *xs: int) -> int:
    """``op`` (mul | fma) on MODE-flushed operands, correctly rounded, output flushed per MODE."""
    if not din:
        xs = tuple(flush(f, x) for x in xs)
    if have_mpfr():
        d = mpfr_op(op, f.name, rm, *xs)
    else:
        d = _specials(op, f, list(xs))
        if d is None:
            d = rational_op(op, f.name, rm, *xs)
    return d if dout else flush(f, d)


# ---------------------------------------------------------------------------------------------
# the reciprocal contract, exactly


def class_word(f: Format, x: int, word: str) -> bool:
    """The contract's class words (+0 -0 +inf -inf nan) on one pattern."""
    b = Bits(f, x)
    return {"+0": b.zero and not b.neg, "-0": b.zero and b.neg, "+inf": b.inf and not b.neg,
            "-inf": b.inf and b.neg, "nan": b.nan}[word]


def _ulp(f: Format, e: Fraction) -> Fraction:
    """ulp(e) = 2**(max(floor(log2|e|), emin) - mantissa_bits)."""
    m = abs(e)
    k = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** k > m:
        k -= 1
    return Fraction(2) ** (max(k, f.emin) - f.mantissa_bits)


def rcp_bound(f: Format, contract, e: Fraction) -> Fraction:
    """The contract's allowed |r - e| around the exact reciprocal ``e``."""
    bound = contract.bound
    if bound.kind == "ulp":
        return Fraction(bound.size) * _ulp(f, e)
    if bound.size != int(bound.size):
        raise ValueError(f"relative bound 2^{bound.size}: only integer exponents are decided exactly here")
    b = abs(e) * Fraction(2) ** int(bound.size)
    if bound.subnormal_ulps and abs(e) < f.to_fraction(f.min_normal):
        b = max(b, Fraction(bound.subnormal_ulps) * Fraction(2) ** (f.emin - f.mantissa_bits))
    return b


def rcp_allowed(f: Format, contract, x: int, r: int) -> bool:
    """Is ``r`` an allowed V_RCP result for ``x``: the specials after input flushing, else within
    the bound of e = 1/x with e's sign; a flushed zero when the bound reaches below the smallest
    normal; an infinity when it reaches the largest finite value."""
    if contract.flush_inputs:
        x = flush(f, x)
    for special in contract.specials:
        if class_word(f, x, special.operands[0]):
            return class_word(f, r, special.result)
    e = 1 / Bits(f, x).value
    R = Bits(f, r)
    if R.nan or R.neg != (e < 0):
        return False
    B = rcp_bound(f, contract, e)
    if R.inf:
        return abs(e) + B >= f.to_fraction(f.max_finite)
    if R.zero:
        return bool(contract.flush_outputs) and abs(e) - B < f.to_fraction(f.min_normal)
    return abs(R.value - e) <= B
