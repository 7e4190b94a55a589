"""Exact scalar constructions of hard floating-point cases (Python ints, no numpy, no Hypothesis).

The Hypothesis strategies in :mod:`tilecheck.testing.strategies` draw the free parameters and
call these functions; :mod:`tilecheck.inputs.generators` implements the same mathematics
vectorised. Every function returns bit patterns of exactly representable operands and raises
``ValueError`` for parameters outside its documented domain.

Notation: ``p`` precision (hidden bit included), ``m = p - 1`` fraction bits, ``emin``/``emax``
the unbiased exponents of the smallest normal / largest finite number, so the subnormal quantum is
``2**(emin - m)``. A *grid point* is a representable number, a *midpoint* the exact middle of two
neighbours; directed roundings are hard next to grid points, round-to-nearest next to midpoints.

Hard divisions (Kahan; Tang; Parks; Matula & McFearin). Pick an odd p-bit divisor significand
``Y``, a small odd ``k`` and ``n = p'`` (grid) or ``n = p' + 1`` (midpoint) where ``p'`` is the
number of significant bits the result has (``p`` for normal results, fewer for subnormal ones).
With ``Q = -k * Y**-1 mod 2**n`` the integer ``X = (Q*Y + k) / 2**n`` is exact and

    X / Y = Q / 2**n + k / (Y * 2**n),

so once exponents are placed with ``ea - eb = qe + p'`` the quotient is ``Q * 2**qe`` (grid) or
``Q * 2**(qe-1)`` with ``Q`` odd (midpoint) plus ``k / Y`` resp. ``k / (2Y)`` ulps: at most
``|k| * 2**(1-p)`` ulp from the boundary, never on it.

Hard square roots. For an odd ``S`` with ``S*S = A * 2**j - k`` (``A`` a p-bit integer, ``k`` small),
``sqrt(A * 2**j) = sqrt(S*S + k) ~ S + k/(2S)``. ``S = Q`` (p bits, ``j = p``) puts the root
``|k|/(2S) <= |k| * 2**-p`` ulp from a grid point; ``S = 2Q+1`` (p+1 bits, ``j = p + 2``) puts it
``|k|/(4S) <= |k| * 2**-(p+2)`` ulp from a midpoint. Odd squares are 1 mod 8, so ``k = -1 mod 8``
and ``S`` is a square root of ``-k`` modulo ``2**j`` (Hensel lifting).

FTZ boundary cases: exact results in ``[2**emin - 2**(emin-p), 2**emin)``, i.e. below the smallest
normal (tiny *before* rounding) but rounding to it under rn (and under rp/rm on the matching
side), with normal operands so that input flushing does not interfere. For division with two
p-bit operands the only such quotients are the exact ties ``(2**p - 1) * 2**(emin-p)`` (a p-bit
divisor cannot bring a quotient of p-bit numbers closer than ``2**-p`` relative to a power of two
unless it is one), so ``div`` uses those for rn and ``(Y-1)/Y * 2**emin`` (strictly inside the last
subnormal quantum) for rp/rm; ``mul`` uses ``X*Y`` just below ``2**(2p-1)``; ``fma`` uses
``c = +-2**emin`` plus a product of magnitude at most ``2**(emin-p)`` of the opposite sign.
Addition never produces such a case (a sum below ``2**emin`` of numbers on the subnormal grid is
exact), and neither do sqrt or rcp under rn.
"""

from __future__ import annotations

from math import isqrt

from tilecheck.formats import Format, get_format
from tilecheck.oracle.common import encode_exact

__all__ = ["encode", "hard_division_operands", "hard_sqrt_operand", "sqrt_mod_pow2",
           "ftz_boundary_operands", "FTZ_BOUNDARY_OPS"]

#: Ops for which :func:`ftz_boundary_operands` constructs cases.
FTZ_BOUNDARY_OPS = ("div", "mul", "fma")


def encode(fmt, neg: bool, sig: int, exp: int) -> int:
    """Bits of the exactly representable ``(-1)**neg * sig * 2**exp`` (``ValueError`` if not)."""
    f = get_format(fmt)
    try:
        return encode_exact(f, neg, sig, exp)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def _odd_significand(p: int, y: int) -> int:
    """``y`` folded onto the odd p-bit integers ``2**(p-1) + 1 ... 2**p - 1``."""
    span = 1 << (p - 2)  # how many odd p-bit integers there are
    return (1 << (p - 1)) + 2 * (y % span) + 1


def _place(f: Format, x: int, y: int, d: int, pick: int) -> tuple[int, int]:
    """Exponents ``(ea, eb)`` with ``ea - eb = d`` that make ``x * 2**ea`` and ``y * 2**eb``
    representable, the ``pick``-th (mod the count) of the valid choices."""
    lo_q = f.emin - f.mantissa_bits  # smallest quantum: every integer significand is on it
    low = lo_q + max(0, -d)
    high = f.emax + 1 - max(y.bit_length(), x.bit_length() + d)
    if high < low:
        raise ValueError(f"no exponents place {x}/{y} with ea - eb = {d} in {f.name}")
    eb = low + pick % (high - low + 1)
    return eb + d, eb


def hard_division_operands(fmt, y: int, k: int, *, midpoint: bool, result_bits: int | None = None,
                           quantum_exp: int | None = None, pick: int = 0, neg_a: bool = False,
                           neg_b: bool = False) -> tuple[int, int]:
    """Bits ``(a, b)`` whose exact quotient lies ``|k|/Y`` ulp from a grid point (``midpoint``
    false) or ``|k|/(2Y)`` ulp from a midpoint (``midpoint`` true), never on it.

    ``y``: any int, folded onto the odd p-bit divisor significands and then moved up (by 2) to
    the first one whose ``Q`` has its top bit set; ``k``: odd, ``0 < |k| < 2**(p-2)``;
    ``result_bits``: significant bits ``p'`` of the result (default p: a normal result; fewer
    gives a subnormal result, ``quantum_exp`` is then forced to ``emin - m``); ``quantum_exp``:
    exponent ``qe`` of the result's last bit (default: the one giving a result in ``[1, 2)``);
    ``pick`` chooses among the exponent placements; ``neg_a``/``neg_b`` the signs.
    """
    f = get_format(fmt)
    p = f.precision
    if k % 2 == 0 or not 0 < abs(k) < (1 << max(p - 2, 1)):
        raise ValueError(f"k must be odd with 0 < |k| < 2**(p-2), got {k}")
    pp = p if result_bits is None else result_bits
    if not 1 <= pp <= p:
        raise ValueError(f"result_bits must be in [1, {p}], got {pp}")
    if pp < p:
        qe = f.emin - f.mantissa_bits  # a subnormal result: its last bit is the subnormal quantum
    else:
        qe = -f.mantissa_bits if quantum_exp is None else quantum_exp
        if not f.emin - f.mantissa_bits <= qe <= f.emax - f.mantissa_bits:
            raise ValueError(f"quantum_exp {qe} does not give a normal {f.name} result")
    n = pp + 1 if midpoint else pp
    mod = 1 << n
    found = None
    # Very narrow formats (e5m2 has two odd divisor significands) may have no divisor for one
    # sign of k; the other sign keeps the |k| distance bound.
    for kk in (k, -k):
        yy = _odd_significand(p, y)
        for _ in range(1 << min(p - 2, 12)):
            q = (-kk * pow(yy, -1, mod)) % mod
            if q >= mod >> 1:  # top bit set: Q has exactly n bits, the quotient sits in its binade
                found = kk
                break
            yy = _odd_significand(p, (yy - (1 << (p - 1)) - 1) // 2 + 1)
        if found is not None:
            break
    if found is None:
        raise ValueError(f"no divisor significand gives a {n}-bit Q for k={k} in {f.name}")
    k = found
    num = q * yy + k
    if num % mod:
        raise RuntimeError("hard_division_operands: Q*Y + k is not divisible by 2**n")
    x = num >> n
    ea, eb = _place(f, x, yy, qe + pp, pick)
    return encode_exact(f, neg_a, x, ea), encode_exact(f, neg_b, yy, eb)


def sqrt_mod_pow2(c: int, j: int) -> int:
    """An odd ``r`` with ``r*r = c (mod 2**j)``, for ``c = 1 (mod 8)`` (Hensel lifting)."""
    if c % 8 != 1:
        raise ValueError(f"odd squares are 1 mod 8; {c} is {c % 8} mod 8")
    r = 1
    for i in range(3, j):  # invariant: r*r = c mod 2**i
        if (r * r - c) % (1 << (i + 1)):
            r += 1 << (i - 1)
    return r % (1 << j)


def hard_sqrt_operand(fmt, k: int, *, midpoint: bool, root: int = 0, pick: int = 0) -> int:
    """Bits of a positive ``a`` whose square root lies ``|k|/(2S)`` ulp from a grid point
    (``midpoint`` false, ``<= |k| * 2**-p``) or ``|k|/(4S)`` ulp from a midpoint (``<= |k| *
    2**-(p+2)``), never on it.

    ``k``: ``k = -1 (mod 8)``, ``0 < |k| < 2**(p-2)``; ``root`` picks one of the (one or two)
    admissible square roots of ``-k`` modulo ``2**j``; ``pick`` chooses the exponent.
    """
    f = get_format(fmt)
    p = f.precision
    if (-k) % 8 != 1 or not 0 < abs(k) < (1 << max(p - 2, 1)):
        raise ValueError(f"k must be -1 mod 8 with 0 < |k| < 2**(p-2), got {k}")
    s = p + 1 if midpoint else p  # bits of S
    j = 2 * s - p
    mod = 1 << j
    r = sqrt_mod_pow2((-k) % mod, j)
    roots = sorted({r, (-r) % mod, (r + (mod >> 1)) % mod, ((mod >> 1) - r) % mod})
    cands = [x for x in roots if (1 << (s - 1)) <= x < (1 << s)]
    if not cands:
        raise RuntimeError(f"hard_sqrt_operand: no {s}-bit square root of {-k} mod 2**{j}")
    big_s = cands[root % len(cands)]
    num = big_s * big_s + k
    if num % mod or not 0 < (num >> j) < (1 << p):
        raise RuntimeError("hard_sqrt_operand: S*S + k is not a p-bit multiple of 2**j")
    a = num >> j
    # sqrt(a * 2**ea) = sqrt(S*S + k) * 2**((ea - j) / 2): ea must have the parity of j
    low = f.emin - f.mantissa_bits
    high = f.emax + 1 - a.bit_length()
    low += (low - j) % 2
    high -= (high - j) % 2
    ea = low + 2 * (pick % ((high - low) // 2 + 1))
    return encode_exact(f, False, a, ea)


def ftz_boundary_operands(fmt, op: str, *, rounding: str = "rn", x: int = 0, pick: int = 0,
                          shift: int = 0, neg: bool = False) -> tuple[int, ...]:
    """Operands of ``op`` (div, mul or fma) whose exact result is below ``2**emin`` in magnitude
    and rounds to the smallest normal under ``rounding``: rn (either sign, chosen by ``neg``), rp
    (positive results) or rm (negative results). All operands are normal.

    ``x`` selects the significand(s), ``pick`` the exponent placement, ``shift`` (fma only; folded
    onto the admissible range) how many binades below ``2**(emin-p)`` the product lies. rz never rounds up in magnitude, so it has no
    such cases (``ValueError``).
    """
    f = get_format(fmt)
    p, m, emin = f.precision, f.mantissa_bits, f.emin
    if rounding not in ("rn", "rp", "rm"):
        raise ValueError(f"no result rounds up to the smallest normal under {rounding!r}")
    if rounding != "rn":
        neg = rounding == "rm"
    if op == "div":
        if rounding == "rn" or x % 2 == 0:
            # the exact tie (2**p - 1) * 2**(emin - p): rounds to even = the smallest normal
            lo, hi = emin - p + 1, f.emax + emin - p
            ea = lo + pick % (hi - lo + 1)
            return (encode_exact(f, neg, (1 << p) - 1, ea), encode_exact(f, False, 1, ea - emin + p))
        # directed: (Y-1)/Y * 2**emin is inside the last subnormal quantum, rounds away to 2**emin
        y = (1 << (p - 1)) + 2 + (x // 2) % ((1 << (p - 1)) - 2)
        ea, eb = _place(f, y - 1, y, emin, pick)
        return encode_exact(f, neg, y - 1, ea), encode_exact(f, False, y, eb)
    if op == "mul":
        low_target = (1 << (2 * p - 1)) - (1 << (p - 1))  # X*Y in [low_target, 2**(2p-1))
        start = _isqrt_ceil(low_target)
        span = (1 << p) - start
        for t in range(span):
            xa = start + (x + t) % span
            yb = -(-low_target // xa)
            if xa * yb < (1 << (2 * p - 1)) and yb < (1 << p):
                break
        else:
            raise RuntimeError(f"ftz_boundary_operands: no mul significands in {f.name}")
        # ea + eb = emin - 2p + 1, both operands normal: ea in [emin - m, -p]
        lo, hi = emin - m, -p
        ea = lo + pick % (hi - lo + 1)
        return encode_exact(f, neg, xa, ea), encode_exact(f, False, yb, emin - 2 * p + 1 - ea)
    if op == "fma":
        half = 1 << (p - 1)
        xa = half + x % half
        yb = half + (x // half) % half
        lo, hi = emin - m, f.emax - m
        # exponent sum of a product <= 2**(emin - p); the deepest one keeps both operands normal
        top = emin - p - (xa * yb).bit_length()
        total = top - shift % (top - 2 * lo + 1)
        ea = max(lo, total - hi) + pick % (min(hi, total - lo) - max(lo, total - hi) + 1)
        return (encode_exact(f, not neg, xa, ea), encode_exact(f, False, yb, total - ea),
                encode_exact(f, neg, 1, emin))
    raise ValueError(f"no FTZ boundary construction for {op!r}; known: {', '.join(FTZ_BOUNDARY_OPS)}")


def _isqrt_ceil(n: int) -> int:
    r = isqrt(n)
    return r if r * r == n else r + 1
