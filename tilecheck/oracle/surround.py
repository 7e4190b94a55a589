"""An independent oracle for every PTX form of kind ``function`` (cvt, setp, selp, mov, abs, neg,
min, max, copysign, testp, integer arithmetic, shifts and logic), written from the PTX ISA text as
summarised in ``shared/reference/ptx-surroundings.md``.

What it establishes: for one form and one case, the set of destination values the ISA text allows,
and whether the values a kernel produced lie in it (:func:`judge`). It shares no code with the
model (:mod:`tilecheck.model`, :mod:`tilecheck.sim`, :mod:`tilecheck.semantics` are never imported
and ``Format.from_fraction`` is never called): :mod:`tilecheck.formats` gives only constants
(widths, masks, exponent range, the canonical NaN pattern) and :mod:`tilecheck.oracle.common` the
exact decoding of a pattern into ``sign, sig, exp``.

How each family is decided
--------------------------
* Float results of cvt (float->float, int->float) are rounded by MPFR (gmpy2, ``subnormalize=True``,
  the format's precision and exponent range) when gmpy2 is importable, else by the exact integer
  rounding in this module (:func:`round_exact`, rn/rz/rm/rp with subnormals and IEEE overflow per
  direction). Round-to-integral (``.rni .rzi .rmi .rpi``) and FP->int use exact integer arithmetic.
* Comparisons, min/max, abs/neg, copysign, testp: the ISA rules, on exact keys (for IEEE encodings
  the magnitude bits order the values).
* Integers, shifts, logic, selp, mov: Python integers.

Readings where the ISA text is silent or UNCONFIRMED (``ptx-surroundings.md``)
-------------------------------------------------------------------------------
* NaN results the text leaves unspecified (f32/f16/bf16 arithmetic-like ops, every FP->FP cvt,
  min/max of two NaNs, neg, abs other than f64): any NaN of the destination format is accepted.
  Exact bits are checked where the text states them: ``abs.f64`` passes a NaN through unchanged;
  FP->int NaN -> 0, or ``1 << (N-1)`` when the source is f64 or the destination 64-bit; ``.relu``
  and ``.NaN`` -> the canonical NaN (the text's "canonical NaN", whose f16/bf16/f32 encoding the
  reference marks UNCONFIRMED: the spec database's ``Format.canonical_nan`` constant is used);
  FP ``.sat`` NaN -> +0; min/max with one NaN -> the other operand, bit for bit.
* f16/bf16/f32 overflow without ``.satfinite``: IEEE 754 per rounding direction (rn -> Inf, rz ->
  MAX, rm/rp directional) -- the spec's reading of the legacy §6.5.1 wording.
* ``.ftz`` on a cvt with an f32 destination: a result is flushed when it is subnormal after
  rounding; a result whose exact value is below the smallest normal but rounds up to it may be
  either the smallest normal or a signed zero (tininess before/after rounding is not stated).
* ``.relu``/``.sat`` applied to a -0 result: +0 and -0 are both accepted ("negative -> 0" and
  "clamp to [0, 1]" do not say whether -0 counts as negative); negative nonzero results -> +0.
* Round-to-integral keeps the sign of the operand (IEEE roundToIntegral: ``cvt.rpi.f32.f32(-0.3)``
  is -0).
* Integer ``div``/``rem``: "d = a / b" is C's division (the quotient truncated toward zero); a zero
  divisor gives any value ("unspecified, machine-specific"), and so does the most negative value
  over -1 (not stated); a signed ``rem`` of operands of different signs may be either remainder
  ("machine-dependent": the quotient truncated, or rounded toward negative infinity).
* copysign: a NaN magnitude operand ``b`` gives any NaN; a NaN sign operand ``a`` gives ``|b|``
  with either sign (NaN handling is UNCONFIRMED).
* integer abs/neg of MININT wraps (UNCONFIRMED; wrap is the expected reading).
* mad.hi: ``high(a*b) + c`` as an n-bit add, no carry from the low half; ``mad.hi.sat.s32`` clamps
  that sum to the s32 range.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

from tilecheck.formats import Format, get_format
from tilecheck.oracle.common import decode

__all__ = ["supports", "judge", "expected_text", "oracle_name", "round_exact", "destination_count",
           "ANY_NAN", "HAVE_GMPY2"]

try:  # gmpy2 is optional: without it the exact-integer rounding below is the float oracle
    import gmpy2
    HAVE_GMPY2 = True
except ImportError:  # pragma: no cover - exercised by installs without the test extra
    gmpy2 = None
    HAVE_GMPY2 = False

ANY_NAN = "any NaN"
"""Expectation of a lane whose NaN bits the ISA leaves unspecified."""
ANY_VALUE = "any value"
"""Expectation of a lane whose result the ISA leaves unspecified (integer division by zero)."""

_IRND = ("rni", "rzi", "rmi", "rpi")


# ---- exact rounding ------------------------------------------------------------------------------


def _fmt(operand) -> Format:
    """The float format of an operand (its element format for packed types): the database's own
    Format when the operand carries one, else the default spec root's."""
    return operand.format if operand.format is not None else _format(operand.element_format or operand.ptx_type)


@lru_cache(maxsize=None)
def _format(name: str) -> Format:
    return get_format(name)


def _overflow(f: Format, neg: bool, mode: str) -> int:
    # IEEE 754 7.4: rn -> inf; rz -> MAX; rm -> -inf / +MAX; rp -> +inf / -MAX.
    to_inf = mode == "rn" or (mode == "rm" and neg) or (mode == "rp" and not neg)
    return (f.sign_mask if neg else 0) | (f.exponent_mask if to_inf else f.max_finite)


def round_exact(f: Format, neg: bool, sig: int, exp: int, mode: str) -> int:
    """Bits of ``(-1)**neg * sig * 2**exp`` (``sig > 0``) rounded to ``f`` by ``mode`` (rn rz rm rp),
    subnormals and IEEE overflow included: pure integer arithmetic."""
    mb = f.mantissa_bits
    top = exp + sig.bit_length() - 1
    q = max(top, f.emin) - mb  # exponent of the last significand bit at this magnitude
    if exp >= q:
        m = sig << (exp - q)
    else:
        sh = q - exp
        m = sig >> sh
        rem = sig & ((1 << sh) - 1)
        if rem:
            if mode == "rn":
                half = 1 << (sh - 1)
                m += rem > half or (rem == half and m & 1)
            elif (mode == "rm" and neg) or (mode == "rp" and not neg):
                m += 1
        if m >> (mb + 1):  # carried into the next binade
            m >>= 1
            q += 1
    sign = f.sign_mask if neg else 0
    if m == 0:
        return sign
    if q + mb > f.emax:
        return _overflow(f, neg, mode)
    if m < (1 << mb):  # subnormal (only possible at q == emin - mb)
        return sign | m
    return sign | ((q + mb + f.bias) << mb) | (m - (1 << mb))


@lru_cache(maxsize=None)
def _mpfr_ctx(f: Format, mode: str):
    prec, emin, emax = f.precision, f.emin - f.mantissa_bits + 1, f.emax + 1
    rnd = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}[mode]
    return gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=rnd)


@lru_cache(maxsize=None)
def _wide_ctx():
    return gmpy2.context(precision=128, emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())


def round_mpfr(f: Format, neg: bool, sig: int, exp: int, mode: str) -> int:
    """Same contract as :func:`round_exact`, rounded by MPFR."""
    with _wide_ctx():  # exact: sig < 2**128
        x = gmpy2.mul_2exp(gmpy2.mpz(-sig if neg else sig), exp)
    with _mpfr_ctx(f, mode):  # module functions honour the active context (gmpy2 2.2 methods may not)
        r = gmpy2.add(x, 0)
    sign = f.sign_mask if neg else 0
    if gmpy2.is_infinite(r):
        return sign | f.exponent_mask
    if gmpy2.is_zero(r):
        return sign
    m, e = r.as_mantissa_exp()
    m, e = abs(int(m)), int(e)
    tz = (m & -m).bit_length() - 1
    m, e = m >> tz, e + tz
    mb = f.mantissa_bits
    top = e + m.bit_length() - 1
    if top > f.emax:  # MPFR's largest finite value is larger than the format's: an overflow
        return _overflow(f, neg, mode)
    q = max(top, f.emin) - mb
    if e < q:
        raise RuntimeError(f"MPFR returned {r}, not a {f.name} value: gmpy2 ignored the context")
    field = m << (e - q)
    if top < f.emin:
        return sign | field
    return sign | ((top + f.bias) << mb) | (field - (1 << mb))


_round = round_mpfr if HAVE_GMPY2 else round_exact


def _round_int(neg: bool, sig: int, exp: int, mode: str) -> int:
    """Magnitude of the integer that ``(-1)**neg * sig * 2**exp`` rounds to (rni rzi rmi rpi)."""
    if exp >= 0:
        return sig << exp
    sh = -exp
    q = sig >> sh
    rem = sig & ((1 << sh) - 1)
    if not rem or mode == "rzi":
        return q
    if mode == "rni":
        half = 1 << (sh - 1)
        return q + (rem > half or (rem == half and q & 1))
    return q + (neg if mode == "rmi" else not neg)


# ---- float operand helpers -----------------------------------------------------------------------


def _is_nan(f: Format, bits: int) -> bool:
    return (bits & f.magnitude_mask) > f.exponent_mask


def _flush(f: Format, bits: int) -> int:
    """``.ftz`` on an operand: a subnormal becomes the zero of its sign."""
    if not bits & f.exponent_mask:
        return bits & f.sign_mask
    return bits


def _key(f: Format, bits: int) -> int:
    """Exact order of non-NaN values: IEEE magnitude bits are monotone in the magnitude."""
    mag = bits & f.magnitude_mask
    return -mag if bits & f.sign_mask else mag


def _one(f: Format) -> int:
    return f.bias << f.mantissa_bits


# ---- expectations --------------------------------------------------------------------------------
# An expectation per destination: a bool (predicate), or a tuple of lanes (low lane first), each an
# int (exact bits), ANY_NAN, or a frozenset of allowed ints.


def _alts(values: set[int]):
    return next(iter(values)) if len(values) == 1 else frozenset(values)


def _lane_ok(e, g: int, f: Format | None) -> bool:
    if type(e) is int:
        return g == e
    if e is ANY_NAN:
        return _is_nan(f, g)
    if e is ANY_VALUE:
        return True
    return g in e


# ---- families --------------------------------------------------------------------------------------


def _byte_values(f: Format) -> list[tuple[Fraction, int]]:
    """Every non-negative finite value of an 8-bit float (OCP OFP8 §5.1: E4M3 has no infinity and
    one NaN magnitude, S.1111.111; E5M2 is IEEE-like), as (exact value, code), in increasing order."""
    out = []
    for code in range(f.sign_mask):
        e, m = code >> f.mantissa_bits, code & f.mantissa_mask
        if e == (1 << f.exponent_bits) - 1 and (f.specials == "ieee" or m == f.mantissa_mask):
            continue
        sig, exp = (m, 1 - f.bias - f.mantissa_bits) if e == 0 else (m | (1 << f.mantissa_bits), e - f.bias - f.mantissa_bits)
        out.append((Fraction(sig) * Fraction(2) ** exp, code))
    return out


def _cvt_byte(form):
    """A conversion to or from an 8-bit float (``.rn``, ``.satfinite`` towards them, ``.relu``): the
    nearest value by exact comparison with every value of the format, ties to the even code; beyond
    the largest finite value, infinities included, that value (PTX ISA 9.1 §9.7.9.21)."""
    s, d = _fmt(form.sources[0]), _fmt(form.destinations[0])
    relu = bool(form.semantics.get("relu"))
    nan = d.canonical_nan if relu else ANY_NAN

    def value(f: Format, x: int):
        if f.container_bits == 8:
            mag = x & f.magnitude_mask
            if f.specials != "ieee" and mag == f.magnitude_mask:
                return None
            table = dict((c, v) for v, c in _byte_values(f))
            if mag not in table:  # E5M2's infinities and NaNs
                o = decode(f, x)
                return None if o.kind == "nan" else ("inf", o.neg)
            return (table[mag], bool(x & f.sign_mask))
        o = decode(f, x)
        if o.kind == "nan":
            return None
        if o.kind == "inf":
            return ("inf", o.neg)
        return (Fraction(0) if o.kind == "zero" else Fraction(o.sig) * Fraction(2) ** o.exp, o.neg)

    def case(x: int):
        v = value(s, x)
        if v is None:
            return (nan,)
        mag, neg = v
        sign = d.sign_mask if neg else 0
        if relu and neg:
            return ({0, d.sign_mask} if mag == 0 else 0,)
        if d.container_bits != 8:  # widening: every 8-bit value is a half exactly
            if mag == "inf":
                return (sign | d.exponent_mask,)
            if mag == 0:
                return (sign,)
            num, den = mag.numerator, mag.denominator
            return (sign | round_exact(d, False, num, -(den.bit_length() - 1), "rn"),)
        values = _byte_values(d)
        if mag == "inf" or mag > values[-1][0]:
            return (sign | values[-1][1],)
        best = min(values, key=lambda vc: (abs(vc[0] - mag), vc[1] & 1))
        return (sign | best[1],)
    return case


def _cvt_float(form):
    s, d = _fmt(form.sources[0]), _fmt(form.destinations[0])
    if 8 in (s.container_bits, d.container_bits):
        return _cvt_byte(form)
    sem = form.semantics
    mode = sem.get("rounding") or "rn"  # no modifier: an exact widening or the same format
    ftz_in = bool(sem.get("ftz")) and s.name == "f32"
    ftz_out = bool(sem.get("ftz")) and d.name == "f32"
    sat, satfinite, relu = bool(sem.get("sat")), bool(sem.get("satfinite")), bool(sem.get("relu"))
    one, zero_n = _one(d), d.sign_mask
    min_normal = d.min_normal

    def post(r: int) -> set[int]:
        neg = bool(r & d.sign_mask)
        mag = r & d.magnitude_mask
        if satfinite and mag == d.exponent_mask:
            r = (r & d.sign_mask) | d.max_finite
        if (relu or sat) and neg:
            return {0, zero_n} if mag == 0 else {0}
        if sat and mag > one:
            return {one}
        return {r}

    def case(x: int):
        if _is_nan(s, x):
            return ((0 if sat else d.canonical_nan if relu else ANY_NAN),)
        if ftz_in:
            x = _flush(s, x)
        o = decode(s, x)
        if o.kind == "inf":
            cands = [(d.sign_mask if o.neg else 0) | d.exponent_mask]
        elif o.kind == "zero":
            cands = [d.sign_mask if o.neg else 0]
        elif mode in _IRND:
            n = _round_int(o.neg, o.sig, o.exp, mode)
            cands = [round_exact(d, o.neg, n, 0, "rn") if n else (d.sign_mask if o.neg else 0)]
        else:
            r = _round(d, o.neg, o.sig, o.exp, mode)
            cands = [r]
            if ftz_out:
                sign = r & d.sign_mask
                mag = r & d.magnitude_mask
                if 0 < mag < min_normal:
                    cands = [sign]
                elif mag == min_normal and (o.sig << max(o.exp - d.emin, 0)) < (1 << max(d.emin - o.exp, 0)):
                    cands.append(sign)  # exact value below 2**emin rounded up: tininess unstated
        out: set[int] = set()
        for r in cands:
            out |= post(r)
        return (_alts(out),)
    return case


def _cvt_pack(form):
    """The packed conversions: the scalar conversion of ``a`` in the upper lane, of ``b`` in the
    lower (PTX ISA 9.1 §9.7.9.21: d = {cvt(a), cvt(b)}, a in bits 31:16)."""
    convert = _cvt_float(form)

    def case(a: int, b: int):
        (high,), (low,) = convert(a), convert(b)
        return ((low, high),)
    return case


def _cvt_lanes(form):
    """A conversion of each lane of a packed source, lane k of ``a`` into lane k of ``d``."""
    convert = _cvt_byte(form)
    width = _fmt(form.sources[0]).container_bits

    def case(a: int):
        return (tuple(convert((a >> (width * k)) & ((1 << width) - 1))[0] for k in range(2)),)
    return case


def _int_range(ptx_type: str) -> tuple[int, int, int]:
    w = int(ptx_type[1:])
    if ptx_type[0] == "s":
        return w, -(1 << (w - 1)), (1 << (w - 1)) - 1
    return w, 0, (1 << w) - 1


def _signed(bits: int, w: int) -> int:
    return bits - (1 << w) if bits >> (w - 1) else bits


def _cvt_to_int(form):
    s = _fmt(form.sources[0])
    w, lo, hi = _int_range(form.destinations[0].ptx_type)
    mode = form.semantics.get("rounding")
    ftz = bool(form.semantics.get("ftz")) and s.name == "f32"
    nan = (1 << (w - 1)) if (s.name == "f64" or w == 64) else 0
    mask = (1 << w) - 1

    def case(x: int):
        if _is_nan(s, x):
            return (nan,)
        if ftz:
            x = _flush(s, x)
        o = decode(s, x)
        if o.kind == "inf":
            v = lo if o.neg else hi
        elif o.kind == "zero":
            v = 0
        else:
            n = _round_int(o.neg, o.sig, o.exp, mode)
            v = -n if o.neg else n
        return (min(max(v, lo), hi) & mask,)
    return case


def _cvt_from_int(form):
    d = _fmt(form.destinations[0])
    sw = int(form.sources[0].ptx_type[1:])
    signed = form.sources[0].ptx_type[0] == "s"
    mode, sat, one = form.semantics.get("rounding"), bool(form.semantics.get("sat")), _one(d)

    def case(x: int):
        v = _signed(x, sw) if signed else x
        if sat and v >= 1:
            return (one,)
        if v == 0 or (sat and v < 0):
            return (0,)
        return (_round(d, v < 0, abs(v), 0, mode),)  # ints are never subnormal: .ftz has no effect
    return case


def _cvt_int(form):
    sw = int(form.sources[0].ptx_type[1:])
    signed = form.sources[0].ptx_type[0] == "s"
    w, lo, hi = _int_range(form.destinations[0].ptx_type)
    sat, mask = bool(form.semantics.get("sat")), (1 << w) - 1

    def case(x: int):
        v = _signed(x, sw) if signed else x
        if sat:
            v = min(max(v, lo), hi)
        return (v & mask,)  # chop (widening already happened through the source's signedness)
    return case


_BOOL = {"and": lambda t, c: t and c, "or": lambda t, c: t or c, "xor": lambda t, c: t != c}


def _setp(form):
    a = form.sources[0]
    cmp, boolop = form.semantics.get("cmp"), form.semantics.get("boolop")
    lanes = a.lanes if a.element_format else 1
    half_scalar = a.ptx_type in ("f16", "bf16")
    if a.element_format:
        f = _fmt(a)
        ftz = bool(form.semantics.get("ftz"))
        lw = f.width
        unordered = cmp.endswith("u")
        base = cmp[:-1] if unordered else cmp

        def t_of(x: int, y: int) -> bool:
            nx, ny = _is_nan(f, x), _is_nan(f, y)
            if cmp == "num":
                return not (nx or ny)
            if cmp == "nan":
                return nx or ny
            if nx or ny:
                return unordered  # Tables 23-25: ordered false (ne too), unordered true
            if ftz:
                x, y = _flush(f, x), _flush(f, y)
            return _CMP[base](_key(f, x), _key(f, y))  # -0 == +0: both keys are 0
    else:
        w = int(a.ptx_type[1:])
        signed = a.ptx_type[0] == "s"
        op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)
        lw = w

        def t_of(x: int, y: int) -> bool:
            if signed:
                x, y = _signed(x, w), _signed(y, w)
            return _CMP[op](x, y)
    lmask = (1 << lw) - 1
    bop = _BOOL[boolop] if boolop else None

    def case(x: int, y: int, *c):
        ts = [t_of((x >> (i * lw)) & lmask, (y >> (i * lw)) & lmask) for i in range(lanes)]
        if lanes == 2:  # p from the low lane, q from the high lane (not the complement)
            p, q = ts
        else:
            p, q = ts[0], not ts[0]
        if bop:
            p, q = bop(p, bool(c[0])), bop(q, bool(c[0]))
        return (p,) if half_scalar else (p, q)
    return case


_CMP = {"eq": int.__eq__, "ne": int.__ne__, "lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__}


def _lanewise(form, fn):
    """A float op applied per lane of a (possibly packed) type: ``fn`` maps lane ints to a lane
    expectation."""
    a = form.sources[0]
    f = _fmt(a)
    lanes, lw = a.lanes, f.width
    lmask = (1 << lw) - 1

    if lanes == 1:
        return lambda *xs: (fn(f, *xs),)

    def case(*xs):
        return (tuple(fn(f, *((x >> (i * lw)) & lmask for x in xs)) for i in range(lanes)),)
    return case


def _abs_neg(form):
    is_abs, ftz = form.semantics.key == "float.abs", bool(form.semantics.get("ftz"))
    passthrough = is_abs and form.type == "f64"  # abs.f64: "input passed unchanged"

    def lane(f: Format, x: int):
        if _is_nan(f, x):
            return x if passthrough else ANY_NAN
        if ftz:
            x = _flush(f, x)
        return x & ~f.sign_mask if is_abs else x ^ f.sign_mask
    return _lanewise(form, lane)


def _min_max(form):
    is_min = form.semantics.key == "float.min"
    ftz, nan_mode = bool(form.semantics.get("ftz")), bool(form.semantics.get("nan"))
    xorsign = bool(form.semantics.get("xorsign"))

    def lane(f: Format, x: int, y: int):
        if not xorsign:
            return plain(f, x, y)
        # .xorsign.abs (PTX ISA §9.7.3, "Semantics"): the XOR of the sign bits, then the magnitudes
        # compared as the plain form compares them, then that sign on any result that is a number
        d = plain(f, x & ~f.sign_mask, y & ~f.sign_mask)
        if d == ANY_NAN or _is_nan(f, d):
            return d
        return (d & ~f.sign_mask) | ((x ^ y) & f.sign_mask)

    def plain(f: Format, x: int, y: int):
        nx, ny = _is_nan(f, x), _is_nan(f, y)
        if nx or ny:
            if nan_mode:
                return f.canonical_nan
            if nx and ny:
                return ANY_NAN
            x = y if nx else x  # one NaN: the other operand
            return _flush(f, x) if ftz else x
        if ftz:
            x, y = _flush(f, x), _flush(f, y)
        kx = (_key(f, x), not x & f.sign_mask)  # -0 sorts before +0
        ky = (_key(f, y), not y & f.sign_mask)
        return (x if kx <= ky else y) if is_min else (x if kx >= ky else y)
    return _lanewise(form, lane)


def _copysign(form):
    def lane(f: Format, a: int, b: int):
        if _is_nan(f, b):
            return ANY_NAN
        mag = b & f.magnitude_mask
        if _is_nan(f, a):
            return frozenset({mag, mag | f.sign_mask})
        return mag | (a & f.sign_mask)  # sign from a, magnitude from b
    return _lanewise(form, lane)


def _testp(form):
    f = _fmt(form.sources[0])
    test = form.semantics.get("test")

    def case(x: int):
        mag = x & f.magnitude_mask
        e = mag & f.exponent_mask
        r = {"finite": e != f.exponent_mask, "infinite": mag == f.exponent_mask,
             "number": mag <= f.exponent_mask, "notanumber": mag > f.exponent_mask,
             "normal": (e != 0 and e != f.exponent_mask) or mag == 0,  # ±0 counts as normal
             "subnormal": e == 0 and mag != 0}[test]
        return (r,)
    return case


def _int_ops(form):
    key = form.semantics.key
    op = key.split(".")[1]
    srcs, d = form.sources, form.destinations[0]
    w = int(srcs[0].ptx_type[1:]) if srcs[0].ptx_type != "pred" else 1
    signed = srcs[0].ptx_type[0] == "s"
    dw = d.container_bits
    dmask = (1 << dw) - 1
    mode, sat, relu = form.semantics.get("mode"), bool(form.semantics.get("sat")), bool(form.semantics.get("relu"))
    s32 = (-(1 << 31), (1 << 31) - 1)

    def val(x: int, width: int = w) -> int:
        return _signed(x, width) if signed else x

    def clamp(v: int) -> int:
        return min(max(v, s32[0]), s32[1]) if sat else v

    if op in ("add", "sub"):
        def case(a, b):
            v = val(a) + val(b) if op == "add" else val(a) - val(b)
            return (clamp(v) & dmask,)
    elif op == "mul":
        def case(a, b):
            p = val(a) * val(b)
            return (((p >> w) if mode == "hi" else p) & dmask,)
    elif op == "mad":
        def case(a, b, c):
            p = val(a) * val(b)
            if mode == "wide":
                return ((p + val(c, 2 * w)) & dmask,)
            t = (p >> w) if mode == "hi" else p
            if mode == "hi" and not sat:
                t &= (1 << w) - 1  # an n-bit add: no carry in from the low half
            return (clamp(t + val(c)) & dmask,)
    elif op in ("min", "max"):
        def case(a, b):
            v = (min if op == "min" else max)(val(a), val(b))
            return ((max(v, 0) if relu else v) & dmask,)
    elif op == "abs":
        def case(a):
            return (abs(val(a)) & dmask,)  # MININT wraps (UNCONFIRMED)
    elif op in ("div", "rem"):
        def case(a, b):
            x, y = val(a), val(b)
            if y == 0:  # "division by zero yields an unspecified, machine-specific value"
                return (ANY_VALUE,)
            q = abs(x) // abs(y) if (x < 0) == (y < 0) else -(abs(x) // abs(y))  # "d = a / b": C truncates
            if signed and not -(1 << (w - 1)) <= q < 1 << (w - 1):  # MININT / -1: not stated
                return (ANY_VALUE,)
            r = x - y * q
            if op == "div":
                return (q & dmask,)
            if signed and r != 0 and (x < 0) != (y < 0):  # rounding down instead: remainder r + y
                return (_alts({r & dmask, (r + y) & dmask}),)
            return (r & dmask,)
    else:  # neg
        def case(a):
            return (-val(a) & dmask,)
    return case


def _bits(form):
    op = form.semantics.key.split(".")[1]
    t = form.destinations[0].ptx_type
    if t == "pred":
        fns = {"and": lambda a, b: bool(a) and bool(b), "or": lambda a, b: bool(a) or bool(b),
               "xor": lambda a, b: bool(a) != bool(b), "not": lambda a: not a, "mov": lambda a: bool(a)}
        fn = fns[op]
        return lambda *xs: (fn(*xs),)
    w = int(t[1:])
    m = (1 << w) - 1
    signed = t[0] == "s"
    fns = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
           "not": lambda a: ~a & m, "cnot": lambda a: int(a == 0), "mov": lambda a: a,
           # amounts >= width clamp to the width (not modulo): shl/shr.u -> 0, shr.s -> sign fill
           "shl": lambda a, b: (a << b) & m if b < w else 0,
           "shr": (lambda a, b: (_signed(a, w) >> min(b, w)) & m) if signed else (lambda a, b: a >> b if b < w else 0)}
    fn = fns[op]
    return lambda *xs: ((fn(*xs),))


def _selp(form):
    return lambda a, b, c: (a if c else b,)


def _prmt(form):
    """prmt.b32 from the ISA text: the pair as eight bytes, each result byte picked by a nibble of c."""
    def case(a: int, b: int, c: int):
        source = list(a.to_bytes(4, "little") + b.to_bytes(4, "little"))
        out = bytearray()
        for i in range(4):
            nibble = (c >> (4 * i)) & 0xF
            byte = source[nibble & 7]
            out.append((0xFF if byte & 0x80 else 0) if nibble & 8 else byte)
        return (int.from_bytes(bytes(out), "little"),)
    return case


_FAMILIES = {"cvt.float": _cvt_float, "cvt.pack": _cvt_pack, "cvt.lanes": _cvt_lanes, "cvt.to_int": _cvt_to_int, "cvt.from_int": _cvt_from_int,
             "cvt.int": _cvt_int, "cmp.setp": _setp, "cmp.setp_bool": _setp, "float.abs": _abs_neg,
             "float.neg": _abs_neg, "float.min": _min_max, "float.max": _min_max,
             "float.copysign": _copysign, "float.testp": _testp, "sel.selp": _selp, "bits.prmt": _prmt}


def _builder(form):
    key = form.semantics.key
    if key in _FAMILIES:
        return _FAMILIES[key]
    if key.startswith("int."):
        return _int_ops
    if key.startswith("bits."):
        return _bits
    return None


# ---- public API ----------------------------------------------------------------------------------


def supports(form) -> str | None:
    """None when the oracle judges ``form``, else why not."""
    if getattr(form, "kind", None) != "function":
        return f"{form.name} is not of kind function"
    if form.semantics.key == "addr.cvta":
        return "cvta converts addresses: the kernel checks it, there is no value semantics to judge"
    if _builder(form) is None:
        return f"{form.name}: no oracle for semantics {form.semantics.key}"
    return None


def destination_count(form) -> int:
    """Destinations the oracle knows: 2 for every setp form except scalar .f16/.bf16 (p and q), else 1."""
    if form.family == "setp" and form.sources[0].ptx_type not in ("f16", "bf16"):
        return 2
    return 1


@lru_cache(maxsize=None)
def _compiled(form):
    reason = supports(form)
    if reason:
        raise ValueError(reason)
    case = _builder(form)(form)
    dests = []
    for i in range(destination_count(form)):
        d = form.destinations[0]
        if d.ptx_type == "pred":
            dests.append((None, 1, 1))
        elif d.element_format:
            f = _fmt(d)
            dests.append((f, d.lanes, f.width))
        else:
            dests.append((None, 1, d.container_bits))
    preds = tuple(o.ptx_type == "pred" for o in form.sources)
    return case, tuple(dests), preds


def _as_list(arr, bits: int) -> list:
    a = np.asarray(arr)
    if a.dtype == bool:
        return a.tolist()
    if a.dtype.kind == "i":  # a signed view of the pattern: back to the unsigned pattern
        a = a.astype(np.int64).view(np.uint64)
        if bits < 64:
            a = a & np.uint64((1 << bits) - 1)
    return a.ravel().tolist()


def _dest_ok(e, g, spec) -> bool:
    f, lanes, lw = spec
    if type(e) is bool:
        return g in (0, 1) and bool(g) == e
    if lanes == 1:
        return _lane_ok(e, g, f)
    lmask = (1 << lw) - 1
    if g >> (lanes * lw):
        return False
    return all(_lane_ok(el, (g >> (i * lw)) & lmask, f) for i, el in enumerate(e))


def judge(form, operands: list, results: list) -> np.ndarray:
    """True per case iff the kernel's ``results`` are what the ISA text allows for ``operands``.

    ``operands``: one array per ``form.sources`` in PTX order, uint64 bit patterns of each operand's
    own type (predicates bool or 0/1). ``results``: one array per destination the kernel produced:
    for every setp form except scalar .f16/.bf16 the destinations are ``p`` and ``q`` (``q`` =
    BoolOp(!t, c); for f16x2/bf16x2 ``p`` is the low lane's and ``q`` the high lane's result);
    ``q`` may be omitted (one array judges ``p`` only). Every other form has one destination.
    NaN lanes the ISA leaves unspecified accept any NaN of the destination format; see the module
    docstring for the readings used where the text is silent.
    """
    case, dests, preds = _compiled(form)
    if not 1 <= len(results) <= len(dests):
        raise ValueError(f"{form.name}: {len(results)} result arrays, the form has {len(dests)} destination(s)")
    if len(operands) != len(preds):
        raise ValueError(f"{form.name}: {len(operands)} operand arrays, the form has {len(preds)} sources")
    ops = [_as_list(np.asarray(o).astype(bool) if p else o, 64) for o, p in zip(operands, preds)]
    res = [_as_list(r, spec[1] * spec[2]) for r, spec in zip(results, dests)]
    n = max([len(x) for x in ops + res] + [0])
    ops = [x * n if len(x) == 1 else x for x in ops]
    res = [x * n if len(x) == 1 else x for x in res]
    if any(len(x) != n for x in ops + res):
        raise ValueError(f"{form.name}: operand and result arrays of different lengths "
                         f"{[len(x) for x in ops + res]}")
    out = np.empty(n, dtype=bool)
    for j in range(n):
        exp = case(*(x[j] for x in ops))
        out[j] = all(_dest_ok(e, r[j], spec) for e, r, spec in zip(exp, res, dests))
    return out


def _text(e, spec) -> str:
    f, lanes, lw = spec
    if type(e) is bool:
        return str(int(e))
    digits = (lw + 3) // 4

    def one(el):
        if type(el) is int:
            return f"0x{el:0{digits}x}"
        if el is ANY_NAN:
            return ANY_NAN
        return " or ".join(f"0x{v:0{digits}x}" for v in sorted(el))
    if lanes == 1:
        return one(e)
    return " ".join(f"lane{i}={one(el)}" for i, el in reversed(list(enumerate(e))))


def expected_text(form, operands_at_j: list) -> str:
    """What the oracle allows for one case, e.g. ``0x7c00``, ``any NaN``, ``p=1 q=0``."""
    case, dests, preds = _compiled(form)
    exp = case(*(bool(x) if p else int(x) for x, p in zip(operands_at_j, preds)))
    texts = [_text(e, s) for e, s in zip(exp, dests)]
    if form.family == "setp":
        return " ".join(f"{n}={t}" for n, t in zip("pq", texts))
    return texts[0]


def oracle_name(form) -> str:
    """Which independent reference judges ``form``."""
    key = form.semantics.key
    if key in ("cvt.from_int", "cvt.pack") or (key == "cvt.float" and form.semantics.get("rounding") not in _IRND):
        return "MPFR (gmpy2)" if HAVE_GMPY2 else "exact rationals"
    if key in ("cvt.float", "cvt.to_int"):
        return "exact rationals"
    if key.startswith("cmp."):
        return "ISA comparison rules"
    if key.startswith("float."):
        return "ISA text rules"
    return "Python integers"
