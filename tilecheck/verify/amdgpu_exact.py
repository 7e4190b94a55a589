"""Independent references for the rounded AMD forms (``v_add``/``v_sub``/``v_subrev``/``v_mul``/``v_fma``,
``v_fma_mix*``, ``v_cvt_*``, ``v_ldexp``) and ``v_rcp`` (its contract).

``arith(op, fmt, rm, din, dout, *bits)`` applies MODE flushing around one correctly rounded
operation: MPFR (:mod:`tilecheck.oracle.mpfr`) when gmpy2 is installed, else exact rationals
(:mod:`tilecheck.oracle.rational`) for finite operands and the IEEE 754 special-value rules
written out here for the rest; :func:`arith_source` says which ran. ``rcp_allowed`` decides the
spec's reciprocal contract with exact rationals (``Fraction``), from the contract's fields, not
through :mod:`tilecheck.amdgpu.contract`. ``fma_into``, ``convert`` and ``scale_exact`` compute the
exact rational value and round it once with ``Format.from_fraction`` (IEEE special cases written
out; NaN results are compared by class by the caller).
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
    """IEEE 754 results of add/sub/mul/fma with an Inf or NaN operand (primitive NaN rule), else None."""
    B = [Bits(f, x) for x in xs]
    if not any(b.nan or b.inf for b in B):
        return None
    for x, b in zip(xs, B):
        if b.nan:
            return quiet(f, x)
    a, b = B[0], B[1]
    if op in ("add", "sub"):
        b_neg = b.neg != (op == "sub")
        if a.inf and b.inf and a.neg != b_neg:
            return f.default_nan
        return xs[0] if a.inf else signed(f, f.inf, b_neg)
    prod_inf, prod_neg = a.inf or b.inf, a.neg != b.neg
    if (a.inf and b.zero) or (b.inf and a.zero):
        return f.default_nan
    if op == "fma" and prod_inf and B[2].inf and B[2].neg != prod_neg:
        return f.default_nan
    if prod_inf:
        return signed(f, f.inf, prod_neg)
    return xs[2]  # only the addend is infinite


def arith(op: str, f: Format, rm: str, din: bool, dout: bool, *xs: int) -> int:
    """``op`` (add | sub | mul | fma) on MODE-flushed operands, correctly rounded, output flushed per MODE."""
    if not din:
        xs = tuple(flush(f, x) for x in xs)
    if have_mpfr():
        d = mpfr_op(op, f.name, rm, *xs)
    else:
        d = _specials(op, f, list(xs))
        if d is None:
            d = rational_op(op, f.name, rm, *xs)
    return d if dout else flush(f, d)


def _round_exact(f: Format, rm: str, value: Fraction, zero_negative: bool, dout: bool) -> int:
    """``value`` rounded once into ``f`` (an exact zero gets the sign given), output flushed per MODE."""
    d = signed(f, 0, zero_negative) if value == 0 else f.from_fraction(value, rm)
    return d if dout else flush(f, d)


def fma_into(src: Format, dst: Format, rm: str, din: bool, dout: bool, a: int, b: int, c: int) -> int:
    """a * b + c of ``src`` operands (MODE-flushed) rounded once into ``dst`` (V_FMA_MIXLO_F16)."""
    if not din:
        a, b, c = (flush(src, v) for v in (a, b, c))
    A, B, C = Bits(src, a), Bits(src, b), Bits(src, c)
    for x in (A, B, C):
        if x.nan:
            return dst.default_nan  # a NaN (the caller compares NaNs by class)
    prod_neg = A.neg != B.neg
    if (A.inf and B.zero) or (B.inf and A.zero):
        return dst.default_nan
    if A.inf or B.inf:
        return dst.default_nan if C.inf and C.neg != prod_neg else signed(dst, dst.inf, prod_neg)
    if C.inf:
        return signed(dst, dst.inf, C.neg)
    exact = A.value * B.value + C.value
    prod_zero = A.zero or B.zero
    if prod_zero and C.zero:  # IEEE sign of an exact zero sum of two zeros
        zneg = (prod_neg and C.neg) if rm != "rm" else (prod_neg or C.neg)
    else:
        zneg = rm == "rm"
    return _round_exact(dst, rm, exact, zneg, dout)


def convert(src: Format, dst: Format, rm: str, din: bool, dout: bool, x: int) -> int:
    """``x`` converted from ``src`` to ``dst`` (input flush by ``din``, output by ``dout``)."""
    if not din:
        x = flush(src, x)
    X = Bits(src, x)
    if X.nan:
        return dst.default_nan
    if X.inf:
        return signed(dst, dst.inf, X.neg)
    return _round_exact(dst, rm, X.value, X.neg, dout)


def scale_exact(f: Format, rm: str, din: bool, dout: bool, x: int, n: int) -> int:
    """x * 2**n rounded once (V_LDEXP); zeros and infinities unchanged, NaNs quieted."""
    if not din:
        x = flush(f, x)
    X = Bits(f, x)
    if X.nan:
        return quiet(f, x)
    if X.inf or X.zero:
        return x
    # beyond this reach every finite non-zero x over- or underflows alike: keep 2**n small
    reach = 2 * (f.emax + f.precision) + 4
    return _round_exact(f, rm, X.value * Fraction(2) ** max(-reach, min(reach, n)), X.neg, dout)


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


def _log2_floor_of_root(op: str, xv: Fraction) -> int:
    """floor(log2 e) for e = sqrt(x) or 1/sqrt(x), by searching k with 4**k <= e**2 < 4**(k+1)."""
    e2 = xv if op == "sqrt" else 1 / xv
    k = (e2.numerator.bit_length() - e2.denominator.bit_length()) // 2 - 2
    while Fraction(4) ** (k + 1) <= e2:
        k += 1
    return k


def root_allowed(f: Format, contract, x: int, r: int) -> bool:
    """Is ``r`` an allowed V_SQRT (``contract.operation`` sqrt) or V_RSQ (rsq) result for ``x``:
    the specials after input flushing, else a positive finite r with |r - e| within the bound,
    decided by comparing squares (e**2 is x or 1/x, rational)."""
    if contract.flush_inputs:
        x = flush(f, x)
    for special in contract.specials:
        word = special.operands[0]
        X = Bits(f, x)
        hit = class_word(f, x, word) if word in ("+0", "-0", "+inf", "-inf", "nan") else \
            (word == "-finite" and X.neg and not X.nan and not X.inf)
        if hit:
            return class_word(f, r, special.result)
    R = Bits(f, r)
    if R.nan or R.inf or R.zero or R.neg:
        return False
    xv, rv = Bits(f, x).value, R.value
    e2 = xv if contract.operation == "sqrt" else 1 / xv
    bound = contract.bound
    if bound.kind == "ulp":
        k = max(_log2_floor_of_root(contract.operation, xv), f.emin)
        t = Fraction(bound.size) * Fraction(2) ** (k - f.mantissa_bits)
        lo, hi = rv - t, rv + t
    else:
        d = Fraction(2) ** int(bound.size)
        lo, hi = rv / (1 + d), rv / (1 - d)  # |r - e| <= d e  <=>  e in [r/(1+d), r/(1-d)]
    return (lo <= 0 or lo * lo <= e2) and e2 <= hi * hi
