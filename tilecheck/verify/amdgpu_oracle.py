"""Scalar re-implementations of the AMD division instructions, independent of the model.

Written from the reference note ``reference/amd-division.md`` (§1.1-1.3, §1.5) and the readings the
``spec/amdgpu`` notes state for what the manual leaves undefined; they share no code with the
semantics bodies or :mod:`tilecheck.model` (values are exact :class:`fractions.Fraction`\\ s rounded by
``Format.from_fraction``, as in :mod:`tilecheck.oracle.rational`). The constants (T, K, thresholds)
are the note's numbers, not read from the spec, so a wrong constant in a YAML file is found.

Every function takes bit patterns (``int``) and returns ``{"D": bits}`` (and ``"VCC": bool`` for
``div_scale``); ``rm`` is the MODE rounding (rn rz rm rp), ``din``/``dout`` the MODE input/output
denormal bits (True: kept).
"""

from __future__ import annotations

from fractions import Fraction

from tilecheck.formats import Format, get_format

# reference/amd-division.md §1.1 and §1.5 (rocJITsu): T, K, B, documented and hardware tiny thresholds
SCALE = {"f64": dict(T=768, K=128, B=1023, tiny_doc=53, tiny_hw=53),
         "f32": dict(T=96, K=64, B=127, tiny_doc=23, tiny_hw=24)}
# §1.2: the manual's fixed FMAS factor; §1.3: the fixup's underflow threshold E(S2) - E(S1) < -X
FMAS_DOC = {"f64": 64, "f32": 32}
FIXUP_UNDER = {"f64": 1075, "f32": 150}


class Bits:
    """Field access on one pattern of one format (the manuals' E(x) is ``exp``)."""

    def __init__(self, fmt: Format, bits: int):
        self.f, self.bits = fmt, int(bits)
        self.neg = bool(self.bits & fmt.sign_mask)
        self.exp = (self.bits & fmt.exponent_mask) >> fmt.mantissa_bits
        self.frac = self.bits & fmt.mantissa_mask
        top = (1 << fmt.exponent_bits) - 1
        self.nan = self.exp == top and self.frac != 0
        self.inf = self.exp == top and self.frac == 0
        self.zero = self.exp == 0 and self.frac == 0
        self.sub = self.exp == 0 and self.frac != 0
        self.value = None if (self.nan or self.inf) else fmt.to_fraction(self.bits)


def flush(f: Format, x: int) -> int:
    """A subnormal becomes the zero of its sign."""
    b = Bits(f, x)
    return (x & f.sign_mask) if b.sub else x


def quiet(f: Format, x: int) -> int:
    """A NaN with its quiet bit set; anything else unchanged."""
    return x | f.quiet_bit if Bits(f, x).nan else x


def signed(f: Format, magnitude: int, negative: bool) -> int:
    """``magnitude``'s bits with the sign bit set iff ``negative``."""
    return (magnitude & f.magnitude_mask) | (f.sign_mask if negative else 0)


def scale(f: Format, x: int, n: int, rm: str) -> int:
    """x * 2**n rounded once in ``rm``: NaNs quieted, zeros and infinities unchanged."""
    b = Bits(f, x)
    if b.nan:
        return quiet(f, x)
    if b.inf or b.zero:
        return x
    return f.from_fraction(b.value * Fraction(2) ** n, rm)


def _zero_sum_sign(prod_neg: bool, prod_zero: bool, c: Bits, rm: str) -> bool:
    # IEEE 754 §6.3: an exact zero sum is +0 (-0 under rm) unless both addends are zeros of one sign
    if prod_zero and c.zero and prod_neg == c.neg:
        return prod_neg
    return rm == "rm"


def fma(f: Format, rm: str, a: int, b: int, c: int, n: int = 0, nan_order: bool = False) -> int:
    """(a*b + c) * 2**n rounded once. ``nan_order`` False: the primitive rule (first NaN operand
    quieted, else the default NaN); True: the observed V_DIV_FMAS order (a, b, invalid -> -NaN, c)."""
    A, B, C = Bits(f, a), Bits(f, b), Bits(f, c)
    prod_inf = A.inf or B.inf
    prod_neg = A.neg != B.neg
    invalid = (A.inf and B.zero) or (B.inf and A.zero) or (prod_inf and C.inf and prod_neg != C.neg)
    if nan_order:
        for x, X in ((a, A), (b, B)):
            if X.nan:
                return quiet(f, x)
        if invalid:
            return f.default_nan | f.sign_mask
        if C.nan:
            return quiet(f, c)
    else:
        for x, X in ((a, A), (b, B), (c, C)):
            if X.nan:
                return quiet(f, x)
        if invalid:
            return f.default_nan
    if prod_inf:
        return signed(f, f.inf, prod_neg)
    if C.inf:
        return c
    exact = (A.value * B.value + C.value) * Fraction(2) ** n
    if exact == 0:
        return f.sign_mask if _zero_sum_sign(prod_neg, A.zero or B.zero, C, rm) else 0
    return f.from_fraction(exact, rm)


def _rn_quotient(f: Format, n: Bits, d: Bits) -> Bits | None:
    """RN(n / d) for finite non-zero operands, else None (a zero, Inf or NaN is never DENORM)."""
    if n.value is None or d.value is None or n.zero or d.zero:
        return None
    return Bits(f, f.from_fraction(n.value / d.value, "rn"))


def div_scale(f: Format, variant: str, rm: str, din: bool, dout: bool, s0: int, s1: int, s2: int) -> dict:
    """V_DIV_SCALE: the manual's pseudo-code (documented) or rocJITsu's rules (observed)."""
    c = SCALE[f.name]
    if not din:  # both readings flush inputs before the rules (note §1.5 item 8, the spec's documented notes)
        s0, s1, s2 = flush(f, s0), flush(f, s1), flush(f, s2)
    S0, S1, S2 = Bits(f, s0), Bits(f, s1), Bits(f, s2)
    K = c["K"]
    if variant == "documented":
        vcc, d = False, s0
        eq01 = S0.value is not None and S1.value is not None and S0.value == S1.value  # IEEE ==
        eq02 = S0.value is not None and S2.value is not None and S0.value == S2.value
        # 1/S1 is computed in binary64 for both forms (the F32 text says so); S2/S1 in the form's type
        r = _recip64(f, S1)
        q = _rn_quotient(f, S2, S1)
        r_den = r is not None and r.sub
        q_den = q is not None and q.sub
        if S2.zero or S1.zero:
            d = f.default_nan
        elif S2.exp - S1.exp >= c["T"]:
            vcc = True
            d = scale(f, s0, K, rm) if eq01 else d
        elif S1.sub:
            d = scale(f, s0, K, rm)
        elif r_den and q_den:
            vcc = True
            d = scale(f, s0, K, rm) if eq01 else d
        elif r_den:
            d = scale(f, s0, -K, rm)
        elif q_den:
            vcc = True
            d = scale(f, s0, K, rm) if eq02 else d
        elif S2.exp <= c["tiny_doc"]:
            d = scale(f, s0, K, rm)
        return {"D": d if dout else flush(f, d), "VCC": vcc}
    dE = S2.exp - S1.exp
    is_den = s0 == s1  # bits, not IEEE equality (rocJITsu)
    adj, vcc = 0, False
    if dE >= c["T"]:
        adj, vcc = (K if is_den else 0), True
    elif S1.exp == 0:
        adj = K
    elif S1.exp >= 2 * c["B"] - 1:
        vcc = dE <= -c["T"]
        adj = 0 if (vcc and not is_den) else -K
    elif dE <= -c["T"]:
        adj, vcc = (0 if is_den else K), True
    elif S2.exp <= c["tiny_hw"]:
        adj = K
    if S1.zero or S2.zero:
        d = f.default_nan | f.sign_mask
    elif S0.nan or S0.inf:
        d = quiet(f, s0)
    else:
        d = scale(f, s0, adj, rm)
        d = d if dout else flush(f, d)
    return {"D": d, "VCC": vcc}


def _recip64(f: Format, s1: Bits) -> Bits | None:
    """RN(1 / S1) in binary64 (S1 widened exactly), or None where it cannot be DENORM."""
    f64 = f if f.name == "f64" else get_format("f64")
    if s1.value is None or s1.zero:
        return None
    return Bits(f64, f64.from_fraction(1 / s1.value, "rn"))


def div_fmas(f: Format, variant: str, rm: str, din: bool, dout: bool, s0: int, s1: int, s2: int,
             vcc: bool) -> dict:
    """V_DIV_FMAS: ``fma`` then the manual's 2^64 [2^32] (documented), or one rounding of
    (S0*S1 + S2) * 2^(E(S2) > B ? +K : -K) (observed). Inputs are never flushed (§1.2)."""
    c = SCALE[f.name]
    if variant == "documented":
        d = fma(f, rm, s0, s1, s2)
        if vcc:
            d = scale(f, d, FMAS_DOC[f.name], rm)  # a second rounding, as the manual's product is written
        return {"D": d if dout else flush(f, d)}
    n = 0
    if vcc:
        n = c["K"] if Bits(f, s2).exp > c["B"] else -c["K"]
    d = fma(f, rm, s0, s1, s2, n, nan_order=True)
    return {"D": d if dout else flush(f, d)}


def div_fixup(f: Format, variant: str, rm: str, din: bool, dout: bool, s0: int, s1: int, s2: int) -> dict:
    """V_DIV_FIXUP: the manual's pseudo-code with UNDERFLOW = +-0 and OVERFLOW = +-Inf
    (documented), or rocJITsu's rounding-mode dependent UNDERFLOW and the overflow value for an
    Inf/NaN quotient (observed, F32/F64). F16 has no range branches; its observed reading is the
    documented one."""
    if not din:  # S1/S2 flushed per MODE; the quotient S0 passes through (§1.5 item 8)
        s1, s2 = flush(f, s1), flush(f, s2)
    S0, S1, S2 = Bits(f, s0), Bits(f, s1), Bits(f, s2)
    sign = S1.neg != S2.neg
    ranged = f.name in FIXUP_UNDER
    neg_nan = f.default_nan | f.sign_mask
    if S2.nan:
        return {"D": quiet(f, s2)}
    if S1.nan:
        return {"D": quiet(f, s1)}
    if (S1.zero and S2.zero) or (S1.inf and S2.inf):
        return {"D": neg_nan}
    if S1.zero or S2.inf:
        return {"D": signed(f, f.inf, sign)}
    if S1.inf or S2.zero:
        return {"D": signed(f, 0, sign)}
    if ranged and S2.exp - S1.exp < -FIXUP_UNDER[f.name]:
        if variant == "documented":
            return {"D": signed(f, 0, sign)}
        # far below the smallest subnormal: only rounding away from zero gives a non-zero result
        tiny = Fraction(2) ** (f.emin - f.mantissa_bits - 4)
        d = f.from_fraction(-tiny if sign else tiny, rm)
        return {"D": d if dout else flush(f, d)}
    if ranged and S1.exp == (1 << f.exponent_bits) - 1:
        return {"D": signed(f, f.inf, sign)}  # dead branch: S1 Inf/NaN was handled above
    if ranged and variant == "observed" and (S0.nan or S0.inf):
        return {"D": f.from_fraction(2 * f.to_fraction(f.max_finite) * (-1 if sign else 1), rm)}
    return {"D": signed(f, s0, sign)}
