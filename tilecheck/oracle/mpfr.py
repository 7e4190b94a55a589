"""A scalar, slow, obviously-correct oracle for IEEE 754 arithmetic, built on gmpy2/MPFR.

``mpfr_op(op, fmt, rounding, *operand_bits, ftz=False, tininess="after", nan="default")`` returns
the result bits of one operation on one set of operands, for every IEEE-like format in
``spec/formats`` (f16, bf16, f32, f64, tf32, e5m2; not e4m3, which has no infinity) and

* ``op`` in ``add sub mul fma div sqrt rcp rsqrt`` (``fma`` = a*b+c with one rounding; ``rcp`` =
  1/a correctly rounded; ``rsqrt`` = 1/sqrt(a) correctly rounded -- the exact reference that the
  approximate-form contracts are measured against);
* ``rounding`` in ``rn rz rm rp`` (nearest-even, toward zero, toward -inf, toward +inf).

How it works, and why it can be trusted
---------------------------------------
* Operands are decoded into exact integers ``sig * 2**exp`` and turned into MPFR numbers in a
  context wide enough to hold them exactly (never through a narrower one).
* Special operands (NaN, infinities, zeros) and exact-zero results are decided by the IEEE 754
  rules written out below, not left to MPFR; in particular MPFR's ``rec_sqrt(-0)`` is ``+inf``
  while IEEE 754 (and PTX ``rsqrt``) give ``-inf``.
* The single rounding is done by MPFR in a context with the format's precision ``p`` and
  exponent range, ``subnormalize=True``: MPFR exponents are those of ``0.m * 2**e``, so
  ``emin = emin_format - mantissa_bits + 1`` (the smallest subnormal is ``0.1b * 2**emin``) and
  ``emax = emax_format + 1``; f16 gives (11, -23, 16), bf16 (8, -132, 128), f32 (24, -148, 128),
  f64 (53, -1073, 1024). MPFR rounds overflow to infinity or to the largest finite number as
  IEEE 754 prescribes for each rounding direction.
* The rounded MPFR value is converted back to bits exactly; a value that is not representable
  raises ``RuntimeError`` (an oracle bug, never hidden).

NaN policy: if any operand is a NaN, the result is the *first* NaN operand (operand order a, b, c)
quieted (quiet bit set, payload and sign kept). Otherwise an invalid operation (0/0, inf/inf,
inf-inf, 0*inf, sqrt or rsqrt of a number < 0, fma whose product is 0*inf or whose infinite
product meets an opposite infinity) returns ``nan``: ``"default"`` means the format's
``nan.default`` pattern, an int gives that pattern. x/0 for finite nonzero x is an infinity
with the xor of the signs (division by zero is not invalid).

Signs of zeros: a product or quotient has the xor of the operand signs; an exact-zero sum
(``x + (-x)``, ``a*b + c`` cancelling exactly, ``(+0) + (-0)``) is ``+0`` except under ``rm``,
where it is ``-0``; the sum of two zeros of the same sign keeps that sign; ``sqrt(-0) = -0``;
``rsqrt(+-0) = +-inf``; ``rcp(+-inf) = +-0``. A nonzero exact result that rounds to zero keeps
its sign.

Flush-to-zero (``ftz=True``), as PTX ``.ftz`` documents it: subnormal *inputs* become zeros of
the same sign before anything else, and a subnormal *result* becomes a zero of the same sign.
Whether "subnormal result" is judged before or after rounding is undocumented, so it is a
parameter:

* ``tininess="after"``: the result is flushed when the value *delivered in the format* (rounded,
  subnormals included) is subnormal. An exact result just below ``2**emin`` that rounds up to the
  smallest normal is kept. (This is "the rounded result is subnormal", which is *not* IEEE 754's
  "tininess after rounding": IEEE rounds to ``p`` bits with an unbounded exponent, so exact values
  in ``[2**emin - 2**(emin-p), 2**emin - 2**(emin-p-1))`` are tiny for IEEE yet round to the
  smallest normal here and are kept.)
* ``tininess="before"``: the result is flushed when the *exact, unrounded* result is nonzero and
  below ``2**emin`` in magnitude, decided with exact integer comparisons (for div
  ``|a| < 2**emin * |b|``, for sqrt ``|a| < 2**(2*emin)``, ...). An exact result that would round
  up to the smallest normal is still flushed.

Without ``ftz`` the ``tininess`` argument has no effect on the result bits (it would only matter
for the underflow flag, which this oracle does not report).
"""

from __future__ import annotations

from functools import lru_cache

from tilecheck.errors import UsageError
from tilecheck.formats import TININESS, TININESS_DEFAULT, Format
from tilecheck.oracle.common import (
    Operand,
    check_call,
    check_format,
    check_nan_option,
    decode,
    encode_exact,
    inf_bits,
    is_subnormal,
    zero_bits,
)

__all__ = ["mpfr_op", "mpfr_context_parameters"]



def _gmpy2():
    # gmpy2 is a test/oracle dependency, not a runtime one: import lazily, fail clearly.
    try:
        import gmpy2
    except ImportError as exc:
        raise UsageError("the MPFR oracle needs gmpy2: pip install 'tilecheck[test]'") from exc
    return gmpy2


def mpfr_context_parameters(fmt) -> tuple[int, int, int]:
    """``(precision, emin, emax)`` of the MPFR context that emulates ``fmt`` with
    ``subnormalize=True`` (MPFR exponent convention ``0.m * 2**e``)."""
    f = check_format(fmt)
    return f.precision, f.emin - f.mantissa_bits + 1, f.emax + 1


@lru_cache(maxsize=None)
def _context(f: Format, rounding: str):
    # Cached: building a context costs about as much as the operation. The context's sticky
    # flags change between calls but are never read, so sharing it is safe.
    gmpy2 = _gmpy2()
    prec, emin, emax = mpfr_context_parameters(f)
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero,
            "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}[rounding]
    return gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode)


@lru_cache(maxsize=None)
def _wide_context():
    # Exact construction of operands: precision 64 >= every format's significand, and MPFR's
    # widest exponent range, so mul_2exp below never rounds, overflows or underflows.
    gmpy2 = _gmpy2()
    return gmpy2.context(precision=64, emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())


def _to_mpfr(x: Operand):
    """The exact MPFR value of a finite nonzero operand."""
    gmpy2 = _gmpy2()
    ctx = _wide_context()
    v = ctx.mul_2exp(gmpy2.mpfr(-x.sig if x.neg else x.sig, 64), x.exp)
    # Construction is exact by the argument above; check it anyway (it is cheap and it is the
    # one place where an MPFR/gmpy2 surprise would silently corrupt every result).
    m, e = v.as_mantissa_exp()
    signed = -x.sig if x.neg else x.sig
    low = min(int(e), x.exp)
    if int(m) << (int(e) - low) != signed << (x.exp - low):
        raise RuntimeError(f"inexact MPFR construction of {x}")
    return v


def _from_mpfr(f: Format, v, neg: bool) -> int:
    """Bits of an MPFR value already rounded to ``f`` (``neg`` gives the sign, which is known
    independently: a nonzero exact result keeps its sign through rounding)."""
    gmpy2 = _gmpy2()
    if gmpy2.is_infinite(v):
        return inf_bits(f, neg)
    if gmpy2.is_zero(v):
        return zero_bits(f, neg)
    m, e = v.as_mantissa_exp()
    if (m < 0) != neg:
        raise RuntimeError(f"MPFR result {v} has the wrong sign")
    return encode_exact(f, neg, abs(int(m)), int(e))


def _dyadic_lt(s1: int, e1: int, s2: int, e2: int) -> bool:
    """Exact ``s1 * 2**e1 < s2 * 2**e2`` for non-negative ints."""
    e = min(e1, e2)
    return (s1 << (e1 - e)) < (s2 << (e2 - e))


def _is_tiny_exact(f: Format, sig: int, exp: int) -> bool:
    """Exact ``0 < sig * 2**exp < 2**emin``."""
    return sig != 0 and _dyadic_lt(sig, exp, 1, f.emin)


def mpfr_op(op: str, fmt, rounding: str, *operand_bits: int, ftz: bool = False,
            tininess: str = TININESS_DEFAULT, nan="default") -> int:
    """Correctly rounded result bits of ``op`` on ``operand_bits`` in format ``fmt``.

    ``op``: add, sub, mul, fma, div, sqrt, rcp or rsqrt; ``fmt``: a format name or
    :class:`~tilecheck.formats.Format` with IEEE specials; ``rounding``: rn, rz, rm or rp;
    ``operand_bits``: ints (Python or numpy) in ``[0, 2**width)``; ``ftz``: flush subnormal inputs
    and results to signed zero; ``tininess``: ``"after"`` (flush a result that is subnormal after
    rounding) or ``"before"`` (flush a result whose exact value is below ``2**emin``); ``nan``:
    ``"default"`` or a NaN pattern for invalid operations. See the module docstring for every
    rule. Raises :class:`~tilecheck.errors.UsageError` / :class:`~tilecheck.errors.OperandError`
    on bad arguments.
    """
    f = check_format(fmt)
    bits = check_call(op, f, rounding, operand_bits)
    if tininess not in TININESS:
        raise UsageError(f"tininess must be one of {', '.join(TININESS)}, got {tininess!r}")
    invalid = check_nan_option(f, nan)
    xs = [decode(f, b) for b in bits]

    # 1. NaN operands propagate, first one wins, quieted.
    for x in xs:
        if x.kind == "nan":
            return x.bits | f.quiet_bit
    # 2. FTZ inputs: subnormals become zeros of the same sign.
    if ftz:
        xs = [Operand(x.bits & f.sign_mask, x.neg, "zero") if is_subnormal(f, x) else x for x in xs]
    if op == "sub":  # a - b is a + (-b) for non-NaN operands (IEEE 754 5.4.1)
        a, b = xs
        xs = [a, Operand(b.bits ^ f.sign_mask, not b.neg, b.kind, b.sig, b.exp)]
        op = "add"
    if op == "rcp":  # 1/a, with the exact constant 1
        xs = [Operand(0, False, "finite", 1, 0), xs[0]]
        op = "div"

    special = _special_cases(op, f, rounding, xs, invalid)
    if special is not None:
        return special
    result_neg, tiny = _sign_and_tininess(op, f, xs)
    value = _round(op, f, rounding, xs)
    out = _from_mpfr(f, value, result_neg)
    if ftz:
        if tininess == "before":
            flush = tiny
        else:
            flush = decode(f, out).kind == "finite" and is_subnormal(f, decode(f, out))
        if flush:
            return zero_bits(f, result_neg)
    return out


def _special_cases(op: str, f: Format, rounding: str, xs: list[Operand], invalid: int) -> int | None:
    """Result bits when an operand is infinite or the exact result is zero; ``None`` when the
    exact result is finite and nonzero (then MPFR rounds it)."""
    zero_sum_neg = rounding == "rm"  # sign of an exact-zero sum of opposite-signed terms
    if op == "add":
        a, b = xs
        if a.kind == "inf" or b.kind == "inf":
            if a.kind == "inf" and b.kind == "inf" and a.neg != b.neg:
                return invalid  # inf - inf
            return inf_bits(f, a.neg if a.kind == "inf" else b.neg)
        if _add_exact(a, b)[0] == 0:
            if a.kind == "zero" and b.kind == "zero" and a.neg == b.neg:
                return zero_bits(f, a.neg)
            return zero_bits(f, zero_sum_neg)
        return None
    if op == "mul":
        a, b = xs
        neg = a.neg != b.neg
        if {a.kind, b.kind} == {"inf", "zero"}:
            return invalid
        if "inf" in (a.kind, b.kind):
            return inf_bits(f, neg)
        if "zero" in (a.kind, b.kind):
            return zero_bits(f, neg)
        return None
    if op == "fma":
        a, b, c = xs
        pneg = a.neg != b.neg
        if {a.kind, b.kind} == {"inf", "zero"}:
            return invalid  # 0 * inf, whatever c is (c is not a NaN here)
        if "inf" in (a.kind, b.kind):
            if c.kind == "inf" and c.neg != pneg:
                return invalid  # inf - inf
            return inf_bits(f, pneg)
        if c.kind == "inf":
            return inf_bits(f, c.neg)
        product_zero = "zero" in (a.kind, b.kind)
        psig, pexp = a.sig * b.sig, a.exp + b.exp
        total, _ = _add_dyadic(pneg, psig, pexp, c.neg, c.sig, c.exp)
        if total == 0:
            if product_zero and c.kind == "zero" and pneg == c.neg:
                return zero_bits(f, pneg)
            return zero_bits(f, zero_sum_neg)
        return None
    if op == "div":
        a, b = xs
        neg = a.neg != b.neg
        if a.kind == b.kind and a.kind in ("inf", "zero"):
            return invalid  # inf/inf, 0/0
        if a.kind == "inf" or b.kind == "zero":
            return inf_bits(f, neg)  # inf/x, x/0 (division by zero)
        if a.kind == "zero" or b.kind == "inf":
            return zero_bits(f, neg)
        return None
    if op == "sqrt":
        (a,) = xs
        if a.kind == "zero":
            return a.bits  # sqrt(+-0) = +-0
        if a.neg:
            return invalid
        if a.kind == "inf":
            return inf_bits(f, False)
        return None
    if op == "rsqrt":
        (a,) = xs
        if a.kind == "zero":
            return inf_bits(f, a.neg)  # IEEE 754 9.2.1 rSqrt(-0) = -inf (MPFR says +inf)
        if a.neg:
            return invalid
        if a.kind == "inf":
            return zero_bits(f, False)
        return None
    raise RuntimeError(f"unhandled op {op!r}")


def _add_dyadic(n1: bool, s1: int, e1: int, n2: bool, s2: int, e2: int) -> tuple[int, int]:
    """Exact signed sum of two dyadics, as (signed significand, exponent)."""
    e = min(e1, e2)
    return (-s1 if n1 else s1) * (1 << (e1 - e)) + (-s2 if n2 else s2) * (1 << (e2 - e)), e


def _add_exact(a: Operand, b: Operand) -> tuple[int, int]:
    return _add_dyadic(a.neg, a.sig, a.exp, b.neg, b.sig, b.exp)


def _sign_and_tininess(op: str, f: Format, xs: list[Operand]) -> tuple[bool, bool]:
    """Sign of the exact (nonzero, finite) result and whether its magnitude is below 2**emin,
    decided with exact integer arithmetic."""
    if op == "add":
        s, e = _add_exact(*xs)
        return s < 0, _is_tiny_exact(f, abs(s), e)
    if op == "mul":
        a, b = xs
        return a.neg != b.neg, _is_tiny_exact(f, a.sig * b.sig, a.exp + b.exp)
    if op == "fma":
        a, b, c = xs
        s, e = _add_dyadic(a.neg != b.neg, a.sig * b.sig, a.exp + b.exp, c.neg, c.sig, c.exp)
        return s < 0, _is_tiny_exact(f, abs(s), e)
    if op == "div":
        a, b = xs  # |a/b| < 2**emin  <=>  |a| < 2**emin * |b|
        return a.neg != b.neg, _dyadic_lt(a.sig, a.exp, b.sig, b.exp + f.emin)
    if op == "sqrt":
        (a,) = xs  # sqrt(a) < 2**emin  <=>  a < 2**(2*emin)
        return False, _dyadic_lt(a.sig, a.exp, 1, 2 * f.emin)
    if op == "rsqrt":
        (a,) = xs  # 1/sqrt(a) < 2**emin  <=>  a > 2**(-2*emin)
        return False, _dyadic_lt(1, -2 * f.emin, a.sig, a.exp)
    raise RuntimeError(f"unhandled op {op!r}")


def _round(op: str, f: Format, rounding: str, xs: list[Operand]):
    """The exact result of a finite nonzero case, rounded once by MPFR to the format.

    The operation runs as a module-level gmpy2 function inside ``with ctx:`` rather than as a
    context method: gmpy2 2.2.x's ``context.div`` ignores the context's precision and exponent
    range (it returns a 53-bit quotient), while the module functions honour the active context
    in every gmpy2 release tested (2.2.0 to 2.3.2). The result's precision is checked anyway, so
    a gmpy2 that rounds in the wrong context is an error, never a wrong bit pattern.
    """
    gmpy2 = _gmpy2()
    ctx = _context(f, rounding)
    vals = [_to_mpfr(x) if x.kind == "finite" else gmpy2.mpfr(0) for x in xs]
    functions = {"add": gmpy2.add, "mul": gmpy2.mul, "fma": gmpy2.fma, "div": gmpy2.div,
                 "sqrt": gmpy2.sqrt, "rsqrt": gmpy2.rec_sqrt}
    if op not in functions:
        raise RuntimeError(f"unhandled op {op!r}")
    with ctx:
        value = functions[op](*vals)
    if value.precision != f.precision:
        raise RuntimeError(f"gmpy2 {gmpy2.version()} rounded {op} to {value.precision} bits instead of "
                           f"{f.precision}: this gmpy2 release does not honour the MPFR context")
    return value
