"""Enumerate AMD's half-precision division sequences under AMD's documented V_RCP_F32 contract.

    python tools/xcheck_amd_hdiv.py --sequence llc --divisors 0x3c00,0x4200 [--reading exact]
    python tools/xcheck_amd_hdiv.py --sequence triton --divisors random:32:1 --json pairs.json

For each divisor b (an f16 bit pattern) it runs every one of the 65,536 f16 numerators a through
the sequence with *every* value V_RCP_F32 may return for b under the chosen reading of "1 ULP
accuracy", and counts the numerators for which some allowed value makes the final f16 differ from
the correctly rounded IEEE binary16 quotient a/b (round to nearest even).  NaN results compare as a
class (any NaN matches any NaN), zeros by sign, everything else bit for bit.

Independence.  Nothing is shared with tilecheck: no import of its model, semantics or specs, and
no floating-point arithmetic of the host (no numpy, no Python float) for any operation under test
(``float()`` appears only to print values).
Every value is an exact dyadic rational held as Python integers (sign, significand m, exponent e:
(-1)^s * m * 2^e); an f32/f16 operation computes its exact real result in integers and rounds it
once with this file's own round-to-nearest-even (``round_dyadic``).  The exact quotient a/b, which
is not dyadic, is rounded with integer division (``round_ratio``).  A second implementation of the
same sequences written with ``fractions.Fraction`` and a separately written rounding function
(``FractionModel``) re-runs a sample of pairs per divisor and every misrounded pair found
(``--crosscheck``); any disagreement aborts the run.  The allowed reciprocal sets are computed with
Fractions directly from the reading's inequality.

The sequences (gfx942, both with ``.amdhsa_float_denorm_mode_32 3`` and ``_16_64 3``: denormals
kept in inputs and outputs, round to nearest even; ``.amdhsa_fp16_overflow 0``: f16 overflow gives
infinity):

* ``llc`` -- llc-19 ``fdiv half`` (``examples/amdgpu/arith_gfx942.s``, kernel ``fdiv_f16``; v4 = b,
  v2 = a)::

      v_cvt_f32_f16_e32 v3, v4                         ; b32 = b widened (exact)
      v_rcp_f32_e32 v3, v3                             ; r   = any allowed rcp(b32)
      v_fma_mixlo_f16 v3, v2, v3, 0 op_sel_hi:[1,0,0]  ; q   = RN16(a * r + 0), a f16 widened, r f32
      v_div_fixup_f16 v2, v3, v4, v2                   ; out = fixup(q, b, a)

* ``triton`` -- Triton 3.9 ``a / b`` float16 on gfx942 (v2 = b, v3 = a)::

      v_cvt_f32_f16 v4, v2                                ; b32
      v_rcp_f32 v4, v4                                    ; r
      v_fma_mix_f32 v5, v3, v4, neg(0) op_sel_hi:[1,0,0]  ; q0 = RN32(a*r - 0)
      v_fma_mix_f32 v6, -v2, v5, v3 op_sel_hi:[1,0,1]     ; e  = RN32(-b*q0 + a)
      v_fmac_f32 v5, v6, v4                               ; q1 = RN32(e*r + q0)
      v_fma_mix_f32 v6, -v2, v5, v3 op_sel_hi:[1,0,1]     ; e2 = RN32(-b*q1 + a)
      v_mul_f32 v4, v6, v4                                ; t  = RN32(e2*r)
      v_and_b32 v4, 0xff800000, v4                        ; t' = sign and exponent field of t
      v_add_f32 v4, v4, v5                                ; q2 = RN32(t' + q1)
      v_cvt_f16_f32 v4, v4                                ; h  = RN16(q2)
      v_div_fixup_f16 out, v4, b, a

Semantics implemented (from /work/shared/reference/amd-division.md and the AMD ISA guides):
V_FMA_MIX* is one fused multiply-add of the sources (op_sel_hi=1: an f16 from the low half widened
exactly; 0: an f32) rounded once to the destination format; V_FMAC/V_MUL/V_ADD_F32 and V_CVT_F16_F32
are single IEEE operations rounded to nearest even, subnormals kept, with IEEE signed-zero rules (an
exact zero sum of opposite signs is +0; the sign of x*y+z when all are zero follows IEEE).
V_DIV_FIXUP_F16 (S0 = quotient, S1 = b, S2 = a; no input flush in MODE 3): NaN a -> NaN; NaN b ->
NaN; 0/0 and inf/inf -> NaN; b = 0 or |a| = inf -> inf with sign(a) xor sign(b); |b| = inf or a = 0
-> zero of that sign; otherwise |S0| with that sign (an infinite S0 gives the infinity, which is
the overflow value in round-to-nearest; a NaN S0 would give it too -- unreachable here).
V_RCP_F32 (documented "1ULP accuracy ... Denormals are flushed"; rcp(+-0) = +-inf, rcp(+-inf) = +-0,
NaN -> NaN): for finite nonzero b32 the result is ANY f32 r with the reading's bound (below) around
the exact x = 1/b32; b32 is never subnormal (every f16, subnormals included, widens to a normal
f32) and 1/b32 lies in [2^-16, 2^24], always a normal f32, so neither flush ever applies.

Readings of "within 1 ulp" (``--reading``; all symmetric in sign; all but ``rn`` equal {RD(x),
RU(x)} when x is not an f32, which is every divisor that is not a power of two; they differ only
when x = 2^k, i.e. b = +-2^j, where the spacing below x is half the spacing above):

* ``exact`` (default, the reading the enumeration was asked for): |r - x| <= ulp(x), ulp(x) = 2^(floor(log2|x|) - 23),
  the spacing of x's binade (above x at a power of two).  At x = 2^k: r in {x - 2u, x - u, x, x + 2u}
  with u = 2^(k-24): two f32 steps below (one ulp of the binade above = two steps of the one below).
* ``below``: ulp(x) = 2^(ceil(log2|x|) - 24), the spacing just below |x|.  At x = 2^k:
  r in {x - u, x} (x + u is not an f32).
* ``steps``: no f32 lies strictly between r and x (one step either way).  At x = 2^k:
  {x - u, x, x + 2u}.  Equivalent to |r - x| <= ulp(r) here.
* ``faithful``: r is RD(x) or RU(x) (error below one ulp).  At x = 2^k: {x}.
* ``rn``: r = RN(x) only, a correctly rounded reciprocal (a baseline).

Divisor specs (``--divisors``, comma-separated): an integer (``0x3c00``, ``15360``), ``all`` (every
pattern 0..0xffff), ``random:N:SEED`` (N distinct patterns, ``random.Random(SEED).sample(range(65536),
N)``), ``range:LO:HI`` (LO..HI inclusive).

Speed (measured on the 2-core shared development machine, ``nice -n 10``, CPython 3.11): about
0.15 s per divisor for ``llc`` and 0.9 s for ``triton`` with two allowed reciprocals (every
divisor that is not a power of two), twice that with four; ``all`` divisors would take about 3 h
(llc) / 16 h (triton) on one core.  Counts and times of the recorded runs: tools/README.md,
section "xcheck_amd_hdiv".
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from fractions import Fraction

# --------------------------------------------------------------------------------------------
# Formats and exact decoded values
# --------------------------------------------------------------------------------------------


class Fmt:
    """An IEEE binary interchange format: ``ebits`` exponent bits, ``fbits`` fraction bits."""

    def __init__(self, name: str, ebits: int, fbits: int):
        self.name, self.ebits, self.fbits = name, ebits, fbits
        self.width = 1 + ebits + fbits
        self.bias = (1 << (ebits - 1)) - 1
        self.emin = 1 - self.bias            # exponent of the smallest normal
        self.emax = self.bias                # exponent of the largest finite binade
        self.emask = (1 << ebits) - 1
        self.fmask = (1 << fbits) - 1
        self.sign = 1 << (self.width - 1)
        self.inf = self.emask << fbits       # +inf bits
        self.qnan = self.inf | (1 << (fbits - 1))

    def __repr__(self):
        return self.name


F16 = Fmt("f16", 5, 10)
F32 = Fmt("f32", 8, 23)

# A decoded value is a tuple (s, m, e): finite (-1)^s * m * 2^e with m >= 0 (m = 0: a zero of
# sign s); m = INF: an infinity of sign s; m = NAN: a NaN.  Plain tuples keep the hot loop cheap.
INF = -1
NAN = -2


def decode(bits: int, fmt: Fmt) -> tuple[int, int, int]:
    """The exact value of a bit pattern of ``fmt`` as (s, m, e)."""
    s = bits >> (fmt.width - 1)
    ef = (bits >> fmt.fbits) & fmt.emask
    f = bits & fmt.fmask
    if ef == fmt.emask:
        return (s, INF if f == 0 else NAN, 0)
    if ef == 0:
        return (s, f, fmt.emin - fmt.fbits)          # zero or subnormal
    return (s, f | (1 << fmt.fbits), ef - fmt.bias - fmt.fbits)


# Every f16 pattern decoded once: the sources a and b of each step come from this table.
DEC16 = [decode(i, F16) for i in range(1 << 16)]


def _encode(fmt: Fmt, s: int, mq: int, q: int) -> int:
    """Bits of (-1)^s * mq * 2^q, already rounded: q >= emin - fbits and mq <= 2^(fbits+1) with mq
    normalised (mq >= 2^fbits) unless q == emin - fbits (a subnormal or the smallest normal)."""
    if mq == 0:
        return s << (fmt.width - 1)
    if mq >> (fmt.fbits + 1):                         # the rounding carried into the next binade
        mq >>= 1
        q += 1
    if mq < (1 << fmt.fbits):                         # subnormal: exponent field 0
        return (s << (fmt.width - 1)) | mq
    ef = q + fmt.fbits + fmt.bias
    if ef >= fmt.emask:                               # past the largest finite: RNE overflows to inf
        return (s << (fmt.width - 1)) | fmt.inf
    return (s << (fmt.width - 1)) | (ef << fmt.fbits) | (mq - (1 << fmt.fbits))


def round_dyadic(fmt: Fmt, s: int, m: int, e: int) -> int:
    """Round (-1)^s * m * 2^e (m >= 0, exact) to nearest even in ``fmt``; returns bits.

    The quantum is 2^q with q = max(L, emin) - fbits, L = floor(log2(m * 2^e)): the spacing of the
    value's binade, never below the subnormal spacing; the exponent is unbounded above here and
    ``_encode`` turns a result past the largest finite value into infinity, which is exactly
    IEEE's overflow rule for round-to-nearest.  m = 0 gives the zero of sign s."""
    if m == 0:
        return s << (fmt.width - 1)
    L = e + m.bit_length() - 1
    q = (L if L > fmt.emin else fmt.emin) - fmt.fbits
    if q <= e:
        return _encode(fmt, s, m << (e - q), q)
    sh = q - e
    mq = m >> sh
    rem = m & ((1 << sh) - 1)
    half = 1 << (sh - 1)
    if rem > half or (rem == half and mq & 1):
        mq += 1
    return _encode(fmt, s, mq, q)


def round_ratio(fmt: Fmt, s: int, num: int, den: int, e: int) -> int:
    """Round (-1)^s * (num / den) * 2^e (num >= 0, den > 0) to nearest even in ``fmt``; bits."""
    if num == 0:
        return s << (fmt.width - 1)
    k = num.bit_length() - den.bit_length()          # floor(log2(num/den)) is k or k - 1
    if (num << -k if k < 0 else num) < (den << k if k > 0 else den):
        k -= 1
    L = k + e
    q = (L if L > fmt.emin else fmt.emin) - fmt.fbits
    sh = e - q                                        # scaled = num * 2^sh / den
    n, d = (num << sh, den) if sh >= 0 else (num, den << -sh)
    mq, rem = divmod(n, d)
    if 2 * rem > d or (2 * rem == d and mq & 1):
        mq += 1
    return _encode(fmt, s, mq, q)


def fma(fmt: Fmt, x, y, z) -> int:
    """IEEE fusedMultiplyAdd(x, y, z) of decoded values, rounded once to nearest even in ``fmt``."""
    sx, mx, ex = x
    sy, my, ey = y
    sz, mz, ez = z
    if mx == NAN or my == NAN or mz == NAN:
        return fmt.qnan
    ps = sx ^ sy
    if mx == INF or my == INF:
        if mx == 0 or my == 0:                        # inf * 0
            return fmt.qnan
        if mz == INF and sz != ps:                    # inf - inf
            return fmt.qnan
        return (ps << (fmt.width - 1)) | fmt.inf
    if mz == INF:
        return (sz << (fmt.width - 1)) | fmt.inf
    pm = mx * my
    if pm == 0:
        if mz == 0:                                   # both zero: -0 only if both are -0 (RNE)
            return (ps & sz) << (fmt.width - 1)
        return round_dyadic(fmt, sz, mz, ez)
    pe = ex + ey
    if mz == 0:
        return round_dyadic(fmt, ps, pm, pe)
    lo = pe if pe < ez else ez
    vp = pm << (pe - lo)
    vz = mz << (ez - lo)
    total = (-vp if ps else vp) + (-vz if sz else vz)
    if total == 0:                                    # exact cancellation: +0 in RNE
        return 0
    return round_dyadic(fmt, 1 if total < 0 else 0, abs(total), lo)


def convert(fmt: Fmt, v) -> int:
    """A conversion (V_CVT_*) of a decoded value to ``fmt``: one rounding to nearest even; zeros
    and infinities keep their sign, a NaN becomes the quiet NaN of ``fmt``."""
    s, m, e = v
    if m == NAN:
        return fmt.qnan
    if m == INF:
        return (s << (fmt.width - 1)) | fmt.inf
    return round_dyadic(fmt, s, m, e)


def widen_f16_to_f32(bits: int) -> int:
    """V_CVT_F32_F16 (input denormals kept, MODE 16_64 = 3): exact."""
    return convert(F32, DEC16[bits])


def div_fixup_f16(q: int, b: int, a: int) -> int:
    """V_DIV_FIXUP_F16 D = fixup(S0 = q, S1 = b, S2 = a), all f16 bits, MODE 16_64 = 3."""
    sa, ma, _ = DEC16[a]
    sb, mb, _ = DEC16[b]
    sign = (sa ^ sb) << 15
    if ma == NAN:
        return a | 0x0200                             # quieted numerator
    if mb == NAN:
        return b | 0x0200
    if (ma == 0 and mb == 0) or (ma == INF and mb == INF):
        return 0xFE00                                 # the default NaN (negative)
    if mb == 0 or ma == INF:
        return sign | F16.inf
    if mb == INF or ma == 0:
        return sign
    if DEC16[q][1] == NAN:                            # NaN quotient of ordinary inputs: overflow value
        return sign | F16.inf
    return sign | (q & 0x7FFF)


def correct_quotient(a: int, b: int) -> int:
    """The IEEE binary16 quotient a/b rounded to nearest even (f16 bits; NaN as 0x7e00)."""
    sa, ma, ea = DEC16[a]
    sb, mb, eb = DEC16[b]
    s = sa ^ sb
    if ma == NAN or mb == NAN or (ma == 0 and mb == 0) or (ma == INF and mb == INF):
        return F16.qnan
    if ma == INF or mb == 0:
        return (s << 15) | F16.inf
    if mb == INF or ma == 0:
        return s << 15
    return round_ratio(F16, s, ma, mb, ea - eb)


def is_nan(bits: int, fmt: Fmt) -> bool:
    return (bits & ~fmt.sign) > fmt.inf


def same_result(x: int, y: int) -> bool:
    """Equal f16 results: NaN as a class, zeros by sign, the rest bit for bit."""
    if is_nan(x, F16) or is_nan(y, F16):
        return is_nan(x, F16) and is_nan(y, F16)
    return x == y


# --------------------------------------------------------------------------------------------
# V_RCP_F32: the allowed set
# --------------------------------------------------------------------------------------------

READINGS = ("exact", "below", "steps", "faithful", "rn")
TWO = Fraction(2)


def f32_value(bits: int) -> Fraction:
    """Exact value of a finite f32 pattern."""
    s, m, e = decode(bits, F32)
    assert m >= 0, hex(bits)
    v = Fraction(m) * TWO ** e
    return -v if s else v


def _floor_log2(v: Fraction) -> int:
    """floor(log2 v) for v > 0."""
    k = v.numerator.bit_length() - v.denominator.bit_length()
    return k - 1 if TWO ** k > v else k


def _allowed_positive(x: Fraction, reading: str) -> list[int]:
    """f32 bit patterns r > 0 allowed for the exact positive reciprocal x under ``reading``."""
    # Candidates: a window of f32 patterns around the one with x's binade and truncated
    # significand (positive f32 values are monotone in their bits); no reading reaches further
    # than two steps from x, the window spans eight.
    L = _floor_log2(x)
    assert F32.emin <= L <= F32.emax, "1/b32 of an f16 is always a normal f32"
    trunc = (int(x / TWO ** (L - 23)) - (1 << 23)) | ((L + F32.bias) << 23)
    window = range(trunc - 4, trunc + 5)
    vals = {c: f32_value(c) for c in range(trunc - 5, trunc + 6)}
    rd = max(c for c in window if vals[c] <= x)
    ru = min(c for c in window if vals[c] >= x)
    if reading == "exact":
        bound = TWO ** (L - 23)
        ok = [c for c in window if abs(vals[c] - x) <= bound]
    elif reading == "below":
        ceil = L if TWO ** L == x else L + 1
        bound = TWO ** (ceil - 24)
        ok = [c for c in window if abs(vals[c] - x) <= bound]
    elif reading == "steps":
        # no f32 strictly between r and x: r below x with its successor at or above x, or r above
        # x with its predecessor at or below x, or r = x
        ok = [c for c in window
              if vals[c] == x or (vals[c] < x <= vals[c + 1]) or (vals[c - 1] <= x < vals[c])]
    elif reading == "faithful":
        ok = sorted({rd, ru})
    elif reading == "rn":
        dd, du = x - vals[rd], vals[ru] - x
        ok = [rd if dd < du or (dd == du and rd % 2 == 0) else ru]
    else:
        raise ValueError(f"unknown reading {reading!r}")
    assert ok and ok[0] > window[0] and ok[-1] < window[-1], "the window must contain the set"
    return ok


def rcp_allowed(b32: int, reading: str = "exact") -> list[int]:
    """Every f32 bit pattern V_RCP_F32 may return for the f32 input ``b32`` under ``reading``."""
    s, m, e = decode(b32, F32)
    sign = s << 31
    if m == NAN:
        return [F32.qnan]
    if m == INF:
        return [sign]                                 # rcp(+-inf) = +-0
    if m == 0:
        return [sign | F32.inf]                       # rcp(+-0) = +-inf
    if m < (1 << 23):                                 # f32 subnormal input: flushed, acts as +-0
        return [sign | F32.inf]
    x = 1 / (Fraction(m) * TWO ** e)
    return [sign | c for c in _allowed_positive(x, reading)]


# --------------------------------------------------------------------------------------------
# The two sequences, on integers
# --------------------------------------------------------------------------------------------

ZERO_P = (0, 0, 0)          # the inline constant 0 (an f32 +0)
ZERO_N = (1, 0, 0)          # neg(0)
ONE = (0, 1, 0)             # the multiplier that makes V_ADD_F32 an fma


def run_llc(a: int, b: int, r: int) -> int:
    """llc-19 fdiv half with the reciprocal ``r`` (f32 bits); returns the f16 result."""
    q = fma(F16, DEC16[a], decode(r, F32), ZERO_P)          # v_fma_mixlo_f16 a, r, 0
    return div_fixup_f16(q, b, a)


def run_triton(a: int, b: int, r: int) -> int:
    """Triton 3.9 a / b (float16) with the reciprocal ``r``; returns the f16 result.  Each step
    writes f32 bits (as the register holds them); the next step decodes them exactly."""
    A = DEC16[a]
    sb, mb, eb = DEC16[b]
    NB = (sb ^ 1, mb, eb)                                  # the neg modifier on the f16 source
    R = decode(r, F32)
    q0 = fma(F32, A, R, ZERO_N)
    Q0 = decode(q0, F32)
    e1 = fma(F32, NB, Q0, A)
    q1 = fma(F32, decode(e1, F32), R, Q0)
    Q1 = decode(q1, F32)
    e2 = fma(F32, NB, Q1, A)
    t = fma(F32, decode(e2, F32), R, ZERO_N)               # v_mul_f32 = x*y + (-0)
    tm = t & 0xFF800000                                    # v_and_b32: sign and exponent only
    q2 = fma(F32, decode(tm, F32), ONE, Q1)                # v_add_f32 = x*1 + y
    h = convert(F16, decode(q2, F32))                      # v_cvt_f16_f32
    return div_fixup_f16(h, b, a)


SEQUENCES = {"llc": run_llc, "triton": run_triton}


# --------------------------------------------------------------------------------------------
# A second implementation in fractions, for the cross-check
# --------------------------------------------------------------------------------------------


class FractionModel:
    """The same sequences written with Fractions and a separately written rounding, used to
    re-check sampled and misrounded pairs.  With the integer path it shares only the format
    constants, ``div_fixup_f16`` (a classification of bits) and the allowed reciprocal sets (which
    the tests check against hand-derived values)."""

    def __init__(self, fmt: Fmt):
        self.fmt = fmt
        self.tiny = TWO ** (fmt.emin - fmt.fbits)
        self.limit = TWO ** (fmt.emax + 1)

    def value(self, bits: int) -> Fraction:
        """Exact value of a finite pattern (zeros lose their sign: callers track it)."""
        f = self.fmt
        ef = (bits >> f.fbits) & f.emask
        frac = bits & f.fmask
        assert ef != f.emask, "finite patterns only"
        v = (Fraction(frac) if ef == 0 else Fraction(frac + (1 << f.fbits))) * TWO ** (max(ef, 1) - f.bias - f.fbits)
        return -v if bits >> (f.width - 1) else v

    def rn(self, x: Fraction, zero_sign: int = 0) -> int:
        """Round x to nearest even; an exact zero gets ``zero_sign``."""
        f = self.fmt
        if x == 0:
            return zero_sign << (f.width - 1)
        s = 1 if x < 0 else 0
        ax = -x if s else x
        quantum = max(TWO ** _floor_log2(ax) / TWO ** f.fbits, self.tiny)
        y = ax / quantum
        n = y.numerator // y.denominator
        rest = y - n
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
            n += 1
        v = n * quantum
        if v >= self.limit:
            return (s << (f.width - 1)) | f.inf
        if v == 0:
            return s << (f.width - 1)
        if v < TWO ** f.emin:
            return (s << (f.width - 1)) | int(v / self.tiny)
        L = _floor_log2(v)
        frac = int(v / TWO ** (L - f.fbits)) - (1 << f.fbits)
        return (s << (f.width - 1)) | ((L + f.bias) << f.fbits) | frac


FR16, FR32 = FractionModel(F16), FractionModel(F32)


def fraction_run(sequence: str, a: int, b: int, r: int) -> int:
    """``sequence`` on an ordinary pair (finite nonzero a and b) in Fractions."""
    A, B, R = FR16.value(a), FR16.value(b), FR32.value(r)
    assert A != 0 and B != 0 and R != 0
    if sequence == "llc":
        return div_fixup_f16(FR16.rn(A * R), b, a)
    q0 = FR32.value(FR32.rn(A * R))
    e1 = FR32.value(FR32.rn(-B * q0 + A))
    q1 = FR32.value(FR32.rn(e1 * R + q0))
    e2 = FR32.value(FR32.rn(-B * q1 + A))
    t = FR32.rn(e2 * R, zero_sign=(1 if (e2 < 0) != (R < 0) else 0) if e2 != 0 else 0)
    tm = t & 0xFF800000
    # a masked subnormal/zero t is a signed zero; it adds nothing to the nonzero q1
    tv = FR32.value(tm)
    q2 = FR32.rn(tv + q1)
    h = FR16.rn(FR32.value(q2))
    return div_fixup_f16(h, b, a)


def is_exact_tie(a: int, b: int) -> bool:
    """Whether the exact quotient a/b (an ordinary pair) is the midpoint of two adjacent f16
    values, where round-to-nearest-even decides (possible only for subnormal quotients: a
    normal midpoint has a 12-bit odd significand, which no 11-bit a over an 11-bit b reaches)."""
    q = abs(FR16.value(a) / FR16.value(b))
    quantum = max(TWO ** _floor_log2(q) / TWO ** F16.fbits, FR16.tiny)
    y = q / quantum
    return y.denominator == 2


def fraction_correct(a: int, b: int) -> int:
    """RN16(a/b) for an ordinary pair, in Fractions."""
    return FR16.rn(FR16.value(a) / FR16.value(b))


# --------------------------------------------------------------------------------------------
# Enumeration
# --------------------------------------------------------------------------------------------


def f16_str(bits: int) -> str:
    """A readable f16: hex and exact value."""
    s, m, e = decode(bits, F16)
    if m == NAN:
        return f"0x{bits:04x} (NaN)"
    if m == INF:
        return f"0x{bits:04x} ({'-' if s else '+'}inf)"
    v = Fraction(m) * TWO ** e
    return f"0x{bits:04x} ({'-' if s else ''}{float(v)!r})"   # float() only for display


def check_divisor(sequence: str, b: int, reading: str = "exact", numerators=range(1 << 16)):
    """The allowed reciprocals of divisor ``b`` and its misrounded numerators: a list of
    (a, want, [(r, got), ...]) with every allowed reciprocal r that misrounds a and its result."""
    run = SEQUENCES[sequence]
    rset = rcp_allowed(widen_f16_to_f32(b), reading)
    bad = []
    for a in numerators:
        want = correct_quotient(a, b)
        wrong = []
        for r in rset:
            got = run(a, b, r)
            if not same_result(got, want):
                wrong.append((r, got))
        if wrong:
            bad.append((a, want, wrong))
    return rset, bad


def parse_divisors(spec: str) -> list[int]:
    """Divisor bit patterns from a spec (see the module docstring)."""
    out: list[int] = []
    for tok in (t.strip() for t in spec.split(",")):
        if not tok:
            continue
        if tok == "all":
            out.extend(range(1 << 16))
        elif tok.startswith("random:"):
            _, n, seed = tok.split(":")
            out.extend(random.Random(int(seed)).sample(range(1 << 16), int(n)))
        elif tok.startswith("range:"):
            _, lo, hi = tok.split(":")
            out.extend(range(int(lo, 0), int(hi, 0) + 1))
        else:
            out.append(int(tok, 0))
    for b in out:
        if not 0 <= b < 1 << 16:
            raise ValueError(f"not an f16 pattern: {b:#x}")
    return out


def crosscheck(sequence: str, b: int, rset, bad, sample: int, rng: random.Random) -> int:
    """Re-run every misrounded numerator and ``sample`` random ordinary numerators of ``b`` with
    every allowed reciprocal in Fractions; raises on any disagreement.  Returns pairs checked."""
    sb, mb, _ = decode(b, F16)
    if mb in (0, INF, NAN):
        return 0                                      # specials: fixup's table, nothing to re-derive
    ordinary = [a for a in range(1 << 16) if decode(a, F16)[1] not in (0, INF, NAN)]
    picks = {a for a, _, _ in bad if decode(a, F16)[1] not in (0, INF, NAN)} | set(rng.sample(ordinary, sample))
    run = SEQUENCES[sequence]
    for a in sorted(picks):
        want_i, want_f = correct_quotient(a, b), fraction_correct(a, b)
        if want_i != want_f:
            raise AssertionError(f"correct quotient {a:#06x}/{b:#06x}: int {want_i:#06x} frac {want_f:#06x}")
        for r in rset:
            gi, gf = run(a, b, r), fraction_run(sequence, a, b, r)
            if gi != gf:
                raise AssertionError(f"{sequence} {a:#06x}/{b:#06x} r={r:#010x}: int {gi:#06x} frac {gf:#06x}")
    return len(picks)


def main(argv=None) -> int:
    """Run the enumeration; exit 0 (1 on a cross-check disagreement, which raises)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sequence", choices=sorted(SEQUENCES), required=True)
    ap.add_argument("--divisors", required=True, help="e.g. 0x3c00,0x4248 | random:64:SEED | all | range:LO:HI")
    ap.add_argument("--reading", choices=READINGS, default="exact")
    ap.add_argument("--json", help="write the misrounded pairs as a JSON list of [a, b] ints")
    ap.add_argument("--witnesses", help="write up to --max-witnesses detailed counterexamples as JSON")
    ap.add_argument("--max-witnesses", type=int, default=8, help="at most this many in all (default 8)")
    ap.add_argument("--per-divisor", type=int, default=2, help="and this many per divisor (default 2)")
    ap.add_argument("--crosscheck", type=int, default=64, metavar="N",
                    help="per divisor, re-run N random ordinary numerators and every misrounded one "
                         "in Fractions (default 64; 0: off)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the cross-check sample")
    args = ap.parse_args(argv)
    divisors = parse_divisors(args.divisors)
    rng = random.Random(args.seed)
    pairs, witnesses, total, ties, checked = [], [], 0, 0, 0
    started = time.time()
    print(f"sequence={args.sequence} reading={args.reading} divisors={len(divisors)} "
          f"numerators=65536 each")
    for i, b in enumerate(divisors):
        t0 = time.time()
        rset, bad = check_divisor(args.sequence, b, args.reading)
        if args.crosscheck:
            checked += crosscheck(args.sequence, b, rset, bad, args.crosscheck, rng)
        total += len(bad)
        ties += sum(1 for a, _, _ in bad if is_exact_tie(a, b))
        pairs.extend([a, b] for a, _, _ in bad)
        for a, want, wrong in bad[:args.per_divisor]:
            if len(witnesses) < args.max_witnesses:
                witnesses.append({"a": f"0x{a:04x}", "b": f"0x{b:04x}",
                                  "a_value": f16_str(a), "b_value": f16_str(b),
                                  "correct": f16_str(want), "exact_tie": is_exact_tie(a, b),
                                  "rcp_allowed": [f"0x{c:08x}" for c in rset],
                                  "misrounding": [{"rcp": f"0x{r:08x}", "result": f16_str(got)}
                                                  for r, got in wrong]})
        print(f"b={f16_str(b)}: {len(bad)} misrounded numerators of 65536 "
              f"(rcp allowed: {', '.join(f'0x{c:08x}' for c in rset)})", flush=True)
        done = i + 1
        el = time.time() - started
        print(f"[{done}/{len(divisors)}] b=0x{b:04x} {time.time() - t0:.1f} s, elapsed {el:.0f} s, "
              f"eta {el / done * (len(divisors) - done):.0f} s", file=sys.stderr, flush=True)
    print(f"total: {total} misrounded pairs over {len(divisors)} divisors x 65536 numerators, "
          f"{ties} of them with a/b exactly an f16 midpoint ({time.time() - started:.1f} s; "
          f"{checked} pairs re-checked in Fractions, all agree)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(pairs, fh)
    if args.witnesses:
        with open(args.witnesses, "w", encoding="utf-8") as fh:
            cmd = " ".join(sys.argv[1:] if argv is None else argv)
            json.dump({"repro": f"python tools/xcheck_amd_hdiv.py {cmd}",
                       "sequence": args.sequence, "reading": args.reading,
                       "misrounded_pairs": total, "divisors": len(divisors),
                       "witnesses": witnesses}, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
