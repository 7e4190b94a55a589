"""Precision contracts of AMD instructions (``v_rcp_*``, ``v_rsq_*``, ``v_sqrt_*``), vectorised with numpy.

A contract result is *allowed* when, after input flushing, the operand's special case matches
(``+-0 -> +-inf``, ``+-inf -> +-0``, NaN -> any NaN), or else the result lies within the bound of
the exact result ``e`` (``1/x``, ``sqrt(x)``, ``1/sqrt(x)``):

* ``relative_log2``: ``|r - e| <= 2**relative_log2 * |e|``, and where ``|e|`` is below the smallest
  normal also ``|r - e| <= subnormal_ulp * 2**(emin - mantissa_bits)`` (one reading only);
* ``ulp``, read per the ``reading`` argument (AMD's "1 ULP" does not define ulp; the readings are
  those of :mod:`tilecheck.spec.contract`, ``either`` -- the default -- allowing what either allows):

  - ``exact``: ``|r - e| <= ulp * ulp(e)`` with ``ulp(e) = 2**(max(floor(log2|e|), emin) -
    mantissa_bits)``; with ``flush_outputs`` a zero of ``e``'s sign is allowed too when some value
    within the bound is below the smallest normal (a subnormal result flushed); an infinity of
    ``e``'s sign when the bound reaches the largest finite value;
  - ``correctly-rounded``: ``r`` at most ``floor(ulp)`` values from RN(e) in real-number order (the
    two zeros one value, the infinity one past the largest finite value: the PTX side's
    convention, tilecheck.model.contracts); with ``flush_outputs`` a zero of a sign is allowed too
    when one of those values is a zero or subnormal of that sign;

* the sign rule of ``spec/rules/contracts.yaml``, under every reading: every allowed result has
  ``e``'s sign (a subnormal bound around a tiny ``e`` never admits a value of the other sign).

The checks are exact. ``v_rcp``'s ``|r - e| <= B`` is tested as ``|r*x - 1| <= B*|x|`` where
``B*|x|`` is a power of two or an exact float, with ``r*x - 1`` rounded upward and downward by the
exact FMA of :mod:`tilecheck.model.ops` (for a representable threshold ``t``: ``y <= t`` iff
``RU(y) <= t``). The two edge rules (zero, infinity) compare with directed roundings that err
toward allowing: exact for f32 operands, within one f64 ulp for f64. :func:`choose` picks allowed
values (exact reading): the correctly rounded reciprocal, the lowest and highest allowed values
(found by probing candidates around the bound's ends), or random points inside (reciprocals only).

``v_rsq``/``v_sqrt`` (operation ``rsq``/``sqrt``): with ``e`` irrational, ``|r - e| <= t`` is tested
as ``e`` in ``[r - t, r + t]`` by squaring (sqrt: ``(r - t)^2 <= x <= (r + t)^2``; rsq:
``(r - t)^2 x <= 1 <= (r + t)^2 x``), and ``floor(log2 e)`` from ``floor(log2 x)`` exactly. For
f16/f32 ulp bounds the squares are bracketed with directed binary64 roundings, vectorised
(:func:`_root_vector`); f64, the relative bound (``r / (1 + d) <= e <= r / (1 - d)`` squared the
same way) and any lane the brackets leave open are decided per lane in exact rationals. No finite
positive operand of f16, f32 (flushed) or f64 has a subnormal, zero or infinite square root or
reciprocal square root, so those edge rules never apply there.

:func:`enumerate_allowed` lists every allowed result per lane (or a sample where there are more
than ``limit``), for all three operations and every reading.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.model import ops
from tilecheck.model.contracts import _rsqrt_rn, class_match
from tilecheck.model.ieee import flush_subnormal_bits, quiet
from tilecheck.model.xp import broadcast_all
from tilecheck.spec.amdgpu import AmdForm
from tilecheck.spec.contract import ULP_READING_DEFAULT, Contract, applied_reading
from tilecheck.spec.registry import special_result_bits

STRATEGIES = ("nearest", "low", "high", "random")
_NEAREST = ops.Mode("rn")


def _op64(f64: Format, op: str, rounding: str, *operands) -> np.ndarray:
    """One correctly rounded binary64 operation of the reference model on f64 patterns."""
    arrays = broadcast_all(np, *(np.asarray(o, dtype=np.uint64) for o in operands))
    return ops.apply(np, op, f64, list(arrays), ops.Mode(rounding), ops.NanRule.ieee(f64))


def _ldexp64(f64: Format, bits, n) -> np.ndarray:
    """``bits * 2**n`` (f64 patterns) rounded to nearest."""
    return ops.ldexp(np, f64, bits, n, _NEAREST, ops.NanRule.ieee(f64))


def _negative(fmt: Format, bits) -> np.ndarray:
    """Sign bit set (zeros and NaNs included)."""
    return (bits & np.uint64(fmt.sign_mask)) != 0


OPERATIONS = ("rcp", "rsq", "sqrt")


def _contract(form: AmdForm, variant: str, operations=("rcp",)) -> Contract:
    c = form.variant(variant).contract
    if c is None:
        raise UsageError(f"{form.name} ({variant}) has a body, not a contract")
    if c.operation not in operations:
        raise UsageError(f"{form.name}: contract operation {c.operation!r} is not supported here "
                         f"(supported: {', '.join(operations)})")
    return c


def _widen(fmt: Format, f64: Format, bits) -> np.ndarray:
    """Patterns of ``fmt`` as f64 patterns (exact)."""
    bits = np.asarray(bits, dtype=np.uint64)
    return bits if fmt.name == "f64" else ops.convert(np, fmt, f64, bits, _NEAREST, ops.NanRule.ieee(f64))


def _f64(value: float) -> np.uint64:
    return np.array([value], dtype=np.float64).view(np.uint64)[0]


def _thresholds(fmt: Format, f64: Format, c: Contract, x64: np.ndarray) -> np.ndarray:
    """``B * |x|`` as f64 patterns (exact), for finite non-zero f64-widened ``x``."""
    ax = x64 & np.uint64(f64.magnitude_mask)
    exp_x = f64.fields(ax)[1] - f64.bias  # x64 is normal (every format here widens to normal f64)
    frac_zero = (ax & np.uint64(f64.mantissa_mask)) == 0
    # floor(log2 |1/x|) = -E(x) - 1, or -E(x) when |x| is a power of two
    e_floor = -exp_x - np.where(frac_zero, 0, 1)
    if c.relative_log2 is not None:
        t = np.full(x64.shape, _f64(2.0 ** c.relative_log2), dtype=np.uint64)
        if c.bound.subnormal_ulps:
            sub = e_floor < fmt.emin
            alt = _ldexp64(f64, _op64(f64, "mul", "rn", _f64(float(c.bound.subnormal_ulps)), ax), fmt.emin - fmt.mantissa_bits)
            t = np.where(sub & (f64.to_float64(alt) > f64.to_float64(t)), alt, t)
        return t
    ulp_exp = np.maximum(e_floor, fmt.emin) - fmt.mantissa_bits
    scaled = _op64(f64, "mul", "rn", _f64(float(c.ulp)), ax)
    return _ldexp64(f64, scaled, ulp_exp)


def _within(fmt: Format, f64: Format, c: Contract, r: np.ndarray, x: np.ndarray, t=None) -> np.ndarray:
    """Finite non-zero ``x`` (after flushing), finite ``r``: is |r - 1/x| within the bound?
    ``t`` are the thresholds of ``x`` when already computed."""
    r64, x64 = _widen(fmt, f64, r), _widen(fmt, f64, x)
    minus_one = np.uint64(_f64(-1.0))
    up = _op64(f64, "fma", "rp", r64, x64, minus_one)
    down = _op64(f64, "fma", "rm", r64, x64, minus_one)
    if t is None:
        t = f64.to_float64(_thresholds(fmt, f64, c, x64))
    return (f64.to_float64(up) <= t) & (f64.to_float64(down) >= -t)


def _bound_reaches(fmt: Format, f64: Format, c: Contract, x: np.ndarray, level_bits: int, above: bool) -> np.ndarray:
    """Does the interval [e - B, e + B] reach ``level`` (a positive pattern of fmt) from below
    (``above``: |e| + B >= level) or from above (|e| - B < level)? Tested as
    ``|1 -/+ B|x|| vs level*|x|`` with directed roundings."""
    x64 = _widen(fmt, f64, x) & np.uint64(f64.magnitude_mask)
    t = _thresholds(fmt, f64, c, x64)
    level = _widen(fmt, f64, np.uint64(level_bits))
    lx_up = f64.to_float64(_op64(f64, "mul", "rp", level, x64))
    lx_dn = f64.to_float64(_op64(f64, "mul", "rm", level, x64))
    one = np.uint64(_f64(1.0))
    if above:
        s = f64.to_float64(_op64(f64, "add", "rp", one, t))
        return s >= lx_dn
    s = f64.to_float64(_op64(f64, "sub", "rm", one, t))
    return s < lx_up


def _specials(form: AmdForm, c: Contract, r: np.ndarray, x: np.ndarray):
    """The special-table verdicts: (out, regular) with ``out`` the verdict where the table
    decides and ``regular`` the lanes the bound decides (``x`` already flushed)."""
    fmt = form.fmt
    out = np.zeros(r.shape, dtype=bool)
    handled = np.zeros(r.shape, dtype=bool)
    for special in c.specials:
        hit = class_match(np, fmt, x, special.operands[0]) & ~handled
        out = np.where(hit, class_match(np, fmt, r, special.result), out)
        handled |= hit
    regular = ~handled & ~fmt.is_nan(x) & ~fmt.is_inf(x) & ~fmt.is_zero(x)
    if np.any(~handled & ~regular):
        raise UsageError(f"{form.name}: the contract's specials do not cover every zero/inf/NaN operand")
    return out, regular


def allowed(form: AmdForm, variant: str, result, x, reading: str = ULP_READING_DEFAULT) -> np.ndarray:
    """Is ``result`` an allowed output of contract form ``form`` for operand ``x``? (bool array)

    ``reading`` says how an ulp bound is read (:data:`~tilecheck.spec.contract.ULP_READINGS`):
    ``exact``, ``correctly-rounded`` or ``either`` (the default: what either allows; narrowed to
    the readings the spec lists, see :func:`~tilecheck.spec.contract.applied_reading`). Relative
    bounds (the f64 forms) have one reading and ignore it."""
    c = _contract(form, variant, OPERATIONS)
    fmt = form.fmt
    r = np.asarray(result, dtype=np.uint64)
    x = np.asarray(x, dtype=np.uint64)
    r, x = broadcast_all(np, r, x)
    if c.flush_inputs:
        x = flush_subnormal_bits(np, fmt, x)
    return _allowed_flushed(form, c, applied_reading(c, reading), r, x)


def _allowed_flushed(form: AmdForm, c: Contract, applied: str, r: np.ndarray, x: np.ndarray, rn=None) -> np.ndarray:
    """:func:`allowed` on already flushed operands of one shape, for an applied reading
    (``exact``, ``correctly-rounded``, ``either`` or ``relative``); ``rn``: RN(e) when known."""
    out, regular = _specials(form, c, r, x)
    ok = np.zeros(r.shape, dtype=bool)
    if applied != "correctly-rounded":  # exact, either, relative
        ok |= _exact_ok(form, c, r, x, regular)
    if applied in ("correctly-rounded", "either"):
        if rn is None:
            rn = _nearest_exact(form, c.operation, np.where(regular, x, _one(form.fmt)))
        ok |= _rounded_ok(form.fmt, c, r, rn)
    # the sign rule (spec/rules/contracts.yaml): a bound grants a magnitude, never the sign --
    # every allowed result has the exact result's sign (x's for rcp, + for the roots), zeros too
    want_neg = _negative(form.fmt, x) if c.operation == "rcp" else np.zeros(x.shape, dtype=bool)
    ok &= _negative(form.fmt, r) == want_neg
    return np.where(regular, ok, out)


def _one(fmt: Format) -> np.uint64:
    """The pattern of 1.0 (a harmless operand for lanes whose result is discarded)."""
    return np.uint64(fmt.from_fraction(1))


def _exact_ok(form: AmdForm, c: Contract, r: np.ndarray, x: np.ndarray, regular: np.ndarray) -> np.ndarray:
    """The ``exact`` reading (and relative bounds): ``|r - e| <= B`` from the exact value ``e``,
    plus the flush and infinity rules of the module docstring (sign rule left to the caller)."""
    fmt = form.fmt
    f64 = form.formats["f64"]  # the binary64 of the form's own database
    if c.operation != "rcp":
        return _root_allowed(fmt, f64, c, r, x, regular)
    ok = np.zeros(r.shape, dtype=bool)
    # each rule on the lanes it can decide only (the enumeration probes finite values, then zeros
    # and infinities, and the zero and infinity rules cost as much as the bound)
    finite = regular & ~fmt.is_nan(r) & ~fmt.is_inf(r) & ~fmt.is_zero(r)
    if np.any(finite):
        ok[finite] = _within(fmt, f64, c, r[finite], x[finite])
    zero = regular & fmt.is_zero(r)
    if c.flush_outputs and np.any(zero):
        ok[zero] = _bound_reaches(fmt, f64, c, x[zero], fmt.min_normal, above=False)
    inf = regular & fmt.is_inf(r)
    if np.any(inf):
        ok[inf] = _bound_reaches(fmt, f64, c, x[inf], fmt.max_finite, above=True)
    return ok


def _value_index(fmt: Format, bits: np.ndarray) -> np.ndarray:
    """Position of finite or infinite patterns in real-number order (int64): both zeros are 0, the
    infinity one past the largest finite magnitude (the convention of the PTX side's
    ``correctly-rounded`` reading, tilecheck.model.contracts)."""
    m = (bits & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    return np.where(_negative(fmt, bits), -m, m)


def _rounded_ok(fmt: Format, c: Contract, r: np.ndarray, rn: np.ndarray) -> np.ndarray:
    """The ``correctly-rounded`` reading of a k-ulp bound (the CUDA guide's): ``r`` at most
    ``floor(k)`` values from RN(e) counted in real-number order (:func:`_value_index`: an
    infinity is one step past the largest finite value, so an overflowing RN(e) allows the largest
    finite value for k >= 1). With ``flush_outputs`` a zero of a sign is allowed too when one of
    those values is a zero or a subnormal of that sign (the hardware may flush it); subnormals
    stay allowed, as in the exact reading. NaN never; the sign rule is the caller's."""
    k = int(np.floor(c.ulp))
    centre = _value_index(fmt, rn)
    ok = (np.abs(_value_index(fmt, r) - centre) <= k) & ~fmt.is_nan(r)
    if c.flush_outputs:
        top = fmt.min_normal - 1  # the largest subnormal magnitude
        pos_zero = (centre - k <= top) & (centre + k >= 0)
        neg_zero = (centre - k <= 0) & (centre + k >= -top)
        ok |= fmt.is_zero(r) & np.where(_negative(fmt, r), neg_zero, pos_zero)
    return ok


def _nearest_exact(form: AmdForm, op: str, xf: np.ndarray) -> np.ndarray:
    """RN(e), the correctly rounded (nearest-even) exact result of flushed ``xf``, never flushed
    (the correctly-rounded reading counts from it); specials by IEEE rules."""
    fmt = form.fmt
    rule = ops.NanRule.ieee(fmt)
    if op == "rsq":
        return _rsqrt_rn(np, fmt, xf, _NEAREST, rule)
    return ops.apply(np, op, fmt, [xf], _NEAREST, rule)


def nearest(form: AmdForm, x) -> np.ndarray:
    """The correctly rounded reciprocal (nearest-even) of flushed ``x``; specials per the contract."""
    fmt = form.fmt
    x = np.asarray(x, dtype=np.uint64)
    return ops.apply(np, "rcp", fmt, [x], _NEAREST, ops.NanRule.ieee(fmt))


def choose(form: AmdForm, variant: str, x, strategy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Allowed reciprocals of ``x``: per case ``strategy`` 0 nearest, 1 lowest allowed, 2 highest
    allowed (by magnitude), 3 a random allowed value. Raises if a constructed value is not allowed
    (that would be a bug here, not a finding)."""
    c = _contract(form, variant)
    fmt = form.fmt
    f64 = form.formats["f64"]  # the binary64 of the form's own database
    x = np.asarray(x, dtype=np.uint64)
    strategy = np.broadcast_to(np.asarray(strategy), x.shape)
    xf = flush_subnormal_bits(np, fmt, x) if c.flush_inputs else x
    base = nearest(form, xf)
    special = fmt.is_nan(xf) | fmt.is_inf(xf) | fmt.is_zero(xf)
    base = np.where(fmt.is_nan(xf), quiet(np, fmt, xf), base)
    out = base.copy()
    # the ends are searched where the nearest value is a normal number (elsewhere: nearest)
    regular = ~special & ~fmt.is_nan(base) & ~fmt.is_inf(base) & ~fmt.is_zero(base)
    regular &= ~fmt.is_subnormal(base) & (strategy != 0)
    if np.any(regular):
        idx = np.nonzero(regular)[0]
        xs = xf[idx]
        strat = strategy[idx]
        t = f64.to_float64(_thresholds(fmt, f64, c, _widen(fmt, f64, xs)))
        lo, hi = _ends(fmt, f64, c, xs, base[idx], t)
        rnd = _random_inside(fmt, xs, lo, hi, rng)
        out[idx] = np.select([strat == 1, strat == 2], [lo, hi], rnd)
    ok = allowed(form, variant, out, x)
    if not np.all(ok):
        bad = np.nonzero(~ok)[0][0]
        raise AssertionError(f"{form.name}: constructed reciprocal {int(out[bad]):#x} of {int(x[bad]):#x} "
                             "is outside the contract")
    return out


def _step(fmt: Format, bits: np.ndarray, k) -> np.ndarray:
    """Move finite patterns ``k`` ulps in magnitude (pattern arithmetic), keeping the sign."""
    sign = bits & np.uint64(fmt.sign_mask)
    mag = (bits & np.uint64(fmt.magnitude_mask)).astype(np.int64) + k
    mag = np.clip(mag, 1, fmt.max_finite)
    return sign | mag.astype(np.uint64)


def _ends(fmt: Format, f64: Format, c: Contract, x: np.ndarray, base: np.ndarray, t: np.ndarray):
    """Lowest and highest (by magnitude) allowed finite results for normal-range reciprocals."""
    if c.relative_log2 is not None:
        # 1 -+ 2^rel is exact in binary64, so each estimate is the end rounded once to nearest
        # (then rounded once more for narrower formats): the end itself or one step outside it
        x64 = f64.to_float64(_widen(fmt, f64, x))
        with np.errstate(over="ignore", under="ignore"):
            est_lo = ((1.0 - 2.0 ** c.relative_log2) / x64).view(np.uint64)
            est_hi = ((1.0 + 2.0 ** c.relative_log2) / x64).view(np.uint64)
        if fmt.name != "f64":
            rule = ops.NanRule.ieee(fmt)
            est_lo = ops.convert(np, f64, fmt, est_lo, _NEAREST, rule)
            est_hi = ops.convert(np, f64, fmt, est_hi, _NEAREST, rule)
        lo = np.where(_within(fmt, f64, c, est_lo, x, t), est_lo, _step(fmt, est_lo, 1))
        hi = np.where(_within(fmt, f64, c, est_hi, x, t), est_hi, _step(fmt, est_hi, -1))
        return lo, hi
    span = int(np.ceil(c.ulp)) + 2
    return (_extreme(fmt, f64, c, x, base, span, t, smallest=True),
            _extreme(fmt, f64, c, x, base, span, t, smallest=False))


def ends_are_tight(form: AmdForm, variant: str, x, lo, hi) -> bool:
    """Self-check used by the tests: ``lo``/``hi`` are allowed and one step outward is not."""
    c = _contract(form, variant)
    fmt = form.fmt
    f64 = form.formats["f64"]  # the binary64 of the form's own database
    t = f64.to_float64(_thresholds(fmt, f64, c, _widen(fmt, f64, x)))
    inside = _within(fmt, f64, c, lo, x, t) & _within(fmt, f64, c, hi, x, t)
    out_lo = _step(fmt, lo, -1)
    out_hi = _step(fmt, hi, 1)
    outside = ~(_within(fmt, f64, c, out_lo, x, t) & (out_lo != lo)) & ~(_within(fmt, f64, c, out_hi, x, t) & (out_hi != hi))
    return bool(np.all(inside & outside))


def _extreme(fmt: Format, f64: Format, c: Contract, x: np.ndarray, estimate: np.ndarray, span: int, t: np.ndarray,
             smallest: bool) -> np.ndarray:
    """The first allowed value scanning ``estimate -+ span`` steps from the outside in."""
    best = np.zeros(x.shape, dtype=np.uint64)
    found = np.zeros(x.shape, dtype=bool)
    order = range(-span, span + 1) if smallest else range(span, -span - 1, -1)
    for k in order:
        cand = _step(fmt, estimate, k)
        ok = _within(fmt, f64, c, cand, x, t) & ~found
        best = np.where(ok, cand, best)
        found |= ok
    if not np.all(found):
        bad = np.nonzero(~found)[0][0]
        raise AssertionError(f"no allowed value within {span} ulps of {int(estimate[bad]):#x} for {int(x[bad]):#x}")
    return best


def _random_inside(fmt: Format, x: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """Uniform random pattern between the two ends (by magnitude); both ends share x's sign."""
    mlo = (lo & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    mhi = (hi & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    a, b = np.minimum(mlo, mhi), np.maximum(mlo, mhi)
    pick = a + (rng.random(x.shape) * (b - a + 1)).astype(np.int64)
    pick = np.minimum(pick, b)
    return (lo & np.uint64(fmt.sign_mask)) | pick.astype(np.uint64)


# ---------------------------------------------------------------------------------------------
# rsq / sqrt, exactly


def _floor_log2(v: Fraction) -> int:
    """floor(log2 v) of a positive rational."""
    k = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** k > v:
        k -= 1
    elif Fraction(2) ** (k + 1) <= v:
        k += 1
    return k


def _root_floor_log2(op: str, xv: Fraction) -> int:
    """floor(log2 e) of e = sqrt(x) or 1/sqrt(x), exactly (x > 0)."""
    big_e = _floor_log2(xv)  # log2 x in [E, E + 1)
    if op == "sqrt":
        return big_e // 2  # log2 sqrt(x) in [E/2, (E + 1)/2)
    if big_e % 2:  # -log2(x)/2 in (-(E + 1)/2, -(E + 1)/2 + 1/2]
        return -(big_e + 1) // 2
    return -big_e // 2 if xv == Fraction(2) ** big_e else -big_e // 2 - 1


def _e_between(op: str, xv: Fraction, lo: Fraction, hi: Fraction) -> bool:
    """Is e (sqrt(x) or 1/sqrt(x), x > 0) inside [lo, hi] (hi > 0)?"""
    if op == "sqrt":
        return (lo <= 0 or lo * lo <= xv) and xv <= hi * hi
    return (lo <= 0 or lo * lo * xv <= 1) and 1 <= hi * hi * xv


def _root_within(fmt: Format, c: Contract, op: str, xv: Fraction, rv: Fraction) -> bool:
    """|rv - e| within the contract's bound (finite positive x and rv)."""
    tiny = Fraction(2) ** (fmt.emin - fmt.mantissa_bits)
    if c.relative_log2 is not None:
        if Fraction(c.relative_log2).denominator != 1:
            raise UsageError("rsq/sqrt contracts take integer log2 relative bounds")
        d = Fraction(2) ** int(c.relative_log2)
        if _e_between(op, xv, rv / (1 + d), rv / (1 - d)):
            return True
        min_normal = Fraction(2) ** fmt.emin
        below = (xv < min_normal ** 2) if op == "sqrt" else (xv * min_normal ** 2 > 1)
        if c.bound.subnormal_ulps and below:
            t = Fraction(c.bound.subnormal_ulps) * tiny
            return _e_between(op, xv, rv - t, rv + t)
        return False
    k = max(_root_floor_log2(op, xv), fmt.emin)
    t = Fraction(c.ulp) * Fraction(2) ** (k - fmt.mantissa_bits)
    return _e_between(op, xv, rv - t, rv + t)


def _root_allowed(fmt: Format, f64: Format, c: Contract, r: np.ndarray, x: np.ndarray,
                  regular: np.ndarray) -> np.ndarray:
    """Exact-reading verdicts of ``rsq``/``sqrt`` on the regular lanes (finite non-zero flushed
    x): vectorised with directed roundings where that is proven exact (:func:`_root_vector`), the
    rest (f64, relative bounds, lanes directed rounding leaves open) per lane in rationals."""
    out = np.zeros(r.shape, dtype=bool)
    # every allowed result is positive and finite (see the module docstring); negative operands
    # are special cases (-finite -> NaN) in these contracts
    mag = r & np.uint64(fmt.magnitude_mask)
    cand = regular & ~_negative(fmt, x) & ~_negative(fmt, r) & (mag != 0) & (mag < np.uint64(fmt.inf))
    r_flat, x_flat, cand_flat, o = r.reshape(-1), x.reshape(-1), cand.reshape(-1), out.reshape(-1)
    idx = np.nonzero(cand_flat)[0]
    if idx.size == 0:
        return out
    if fmt.width <= 32 and c.relative_log2 is None:
        known, within = _root_vector(fmt, f64, c, r_flat[idx], x_flat[idx])
        o[idx] = within
        idx = idx[~known]
    for i in idx:
        xv, rv = fmt.to_fraction(int(x_flat[i])), fmt.to_fraction(int(r_flat[i]))
        o[i] = _root_within(fmt, c, c.operation, xv, rv)
    return out


def _root_vector(fmt: Format, f64: Format, c: Contract, r: np.ndarray, x: np.ndarray):
    """(known, within) of the exact reading's ``|r - e| <= t`` for ``e = sqrt(x)`` or
    ``1/sqrt(x)``, ``t = ulps * ulp(e)``, on positive finite non-zero patterns of a format of at
    most 32 bits (every value, square and product below is far inside binary64's normal range).

    ``e`` lies in ``[r - t, r + t]`` iff (sqrt) ``(r - t)^2 <= x <= (r + t)^2`` or (rsq)
    ``(r - t)^2 x <= 1 <= (r + t)^2 x``, the lower test void where ``r <= t``. Each side is bracketed
    by evaluating it rounded down and rounded up with the model's exact directed-rounding binary64
    operations (:func:`tilecheck.model.ops.apply`, monotone on these non-negative values): a test
    is decided where both brackets agree -- always when every operation is exact, as for a 1-ulp
    bound of f16/f32 (``r +- t`` has 25 bits, its square 50) -- and ``known`` is False on the lanes
    left open (a 0.51-ulp ``t`` has 53 bits; rsq's product has more), which go to rationals."""
    rule = ops.NanRule.ieee(f64)
    dn, up = ops.Mode("rm"), ops.Mode("rp")

    def op(name, mode, *a):
        return ops.apply(np, name, f64, list(a), mode, rule).view(np.float64)

    xd, rd = fmt.to_float64(x), fmt.to_float64(r)
    xb, rb = xd.view(np.uint64), rd.view(np.uint64)
    # floor(log2 x) and whether x is a power of two, from x's binary64 pattern (x64 is normal)
    big_e = ((xb >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023
    pow2 = (xb & np.uint64((1 << 52) - 1)) == 0
    if c.operation == "sqrt":
        k = big_e // 2  # log2 sqrt(x) in [E/2, (E + 1)/2)
    else:  # -log2(x)/2 in (-(E + 1)/2, -E/2]
        k = np.where(big_e % 2 != 0, -(big_e + 1) // 2, np.where(pow2, -big_e // 2, -big_e // 2 - 1))
    k = np.maximum(k, fmt.emin)
    t = np.ldexp(np.float64(c.ulp), (k - fmt.mantissa_bits).astype(np.int32))  # exact: ulp is a double
    tb = t.view(np.uint64)
    lo_void = rd <= t  # exact comparison of two doubles
    s_dn, s_up = op("add", dn, rb, tb), op("add", up, rb, tb)
    d_dn, d_up = op("sub", dn, rb, tb), op("sub", up, rb, tb)
    d_dn = np.maximum(d_dn, 0.0)  # lanes with r <= t are void below; keep the squares monotone
    sq = {}
    for name, v, mode in (("s_dn", s_dn, dn), ("s_up", s_up, up), ("d_dn", d_dn, dn), ("d_up", d_up, up)):
        b = v.view(np.uint64)
        sq[name] = op("mul", mode, b, b)
    if c.operation == "sqrt":
        lo_lo, lo_hi = sq["d_dn"], sq["d_up"]  # (r - t)^2 bracketed, against x
        hi_lo, hi_hi = sq["s_dn"], sq["s_up"]
        target = xd
    else:
        lo_lo = op("mul", dn, sq["d_dn"].view(np.uint64), xb)
        lo_hi = op("mul", up, sq["d_up"].view(np.uint64), xb)
        hi_lo = op("mul", dn, sq["s_dn"].view(np.uint64), xb)
        hi_hi = op("mul", up, sq["s_up"].view(np.uint64), xb)
        target = np.ones_like(xd)
    # lower: (r - t)^2 [x] <= target; upper: target <= (r + t)^2 [x]
    lo_true, lo_false = lo_void | (lo_hi <= target), ~lo_void & (lo_lo > target)
    hi_true, hi_false = target <= hi_lo, target > hi_hi
    within = lo_true & hi_true
    known = within | lo_false | hi_false
    return known, within


# ---------------------------------------------------------------------------------------------
# every allowed value


def _nearest_any(form: AmdForm, op: str, xf: np.ndarray) -> np.ndarray:
    """An estimate of the correctly rounded result (within a few ulps; exact for rcp and sqrt)."""
    fmt = form.fmt
    rule = ops.NanRule.ieee(fmt)
    if op == "rcp":
        return ops.apply(np, "rcp", fmt, [xf], _NEAREST, rule)
    if op == "sqrt":
        return ops.apply(np, "sqrt", fmt, [xf], _NEAREST, rule)
    f64 = form.formats["f64"]
    with np.errstate(all="ignore"):
        est = (1.0 / np.sqrt(f64.to_float64(_widen(fmt, f64, xf)))).view(np.uint64)
    if fmt.name == "f64":
        return est
    return ops.convert(np, f64, fmt, est, _NEAREST, ops.NanRule.ieee(fmt))


def _offset(fmt: Format, base_mag: np.ndarray, sign: np.ndarray, k: np.ndarray):
    """Patterns ``k`` steps in magnitude from ``base_mag`` (int64), and whether each exists as a
    finite non-zero value."""
    mag = base_mag + k
    ok = (mag >= 1) & (mag <= fmt.max_finite)
    return sign | np.clip(mag, 1, fmt.max_finite).astype(np.uint64), ok


def _reach(member, fmt: Format, base_mag: np.ndarray, sign: np.ndarray, direction: int) -> np.ndarray:
    """The largest k >= 0 with every step 0..k from ``base_mag`` allowed (the allowed results
    are one interval of magnitudes), by exponential then binary search; ``member(cand, lanes)``
    is the membership test of candidates on a subset of lanes (only lanes still open are probed)."""
    n = base_mag.shape[0]
    good = np.zeros(n, dtype=np.int64)  # allowed offset known
    bad = np.full(n, -1, dtype=np.int64)  # first offset known not allowed (-1: none yet)
    step = np.ones(n, dtype=np.int64)
    for _ in range(64):
        todo = np.nonzero(bad < 0)[0]
        if todo.size == 0:
            break
        probe = good[todo] + step[todo]
        cand, exists = _offset(fmt, base_mag[todo], sign[todo], direction * probe)
        ok = exists & member(cand, todo)
        good[todo] = np.where(ok, probe, good[todo])
        bad[todo] = np.where(ok, -1, probe)
        step[todo] *= 2
    while True:
        gap = np.nonzero(bad - good > 1)[0]
        if gap.size == 0:
            return good
        mid = (good[gap] + bad[gap]) // 2
        cand, exists = _offset(fmt, base_mag[gap], sign[gap], direction * mid)
        ok = exists & member(cand, gap)
        good[gap] = np.where(ok, mid, good[gap])
        bad[gap] = np.where(ok, bad[gap], mid)


def enumerate_allowed(form: AmdForm, variant: str, x, *, limit: int = 17, rng: np.random.Generator | None = None,
                      reading: str = ULP_READING_DEFAULT):
    """Every result the contract allows, per lane of ``x`` (operand bit patterns, 1-d), under the
    ulp ``reading`` of :func:`allowed` (exactly the values it accepts with the same reading).

    Returns ``(values, valid, complete)``: ``values`` (lanes x k uint64, k <= ``limit``) the allowed
    bit patterns of each lane sorted ascending in the row's first ``valid`` entries, ``complete[i]``
    False where the contract allows more than ``limit`` values (f64's 2^29-ulp bound): that row then
    holds a sample of ``limit`` allowed values, namely the nearest (correctly rounded) one, both
    extreme ends (a zero or an infinity where the contract allows one) and random values between
    (``rng``, default ``default_rng(0)``). Zeros allowed as flushed results and the special cases'
    results are included. A NaN result is listed as one value, the format's canonical quiet NaN:
    the contracts allow any NaN there and payloads are not enumerated.
    """
    c = _contract(form, variant, OPERATIONS)
    applied = applied_reading(c, reading)
    if limit < 4:
        raise UsageError("enumerate_allowed needs limit >= 4 (nearest, both ends and one more)")
    rng = np.random.default_rng(0) if rng is None else rng
    fmt = form.fmt
    x = np.asarray(x, dtype=np.uint64).reshape(-1)
    n = x.shape[0]
    xf = flush_subnormal_bits(np, fmt, x) if c.flush_inputs else x
    values = np.zeros((n, limit), dtype=np.uint64)
    valid = np.zeros((n, limit), dtype=bool)
    complete = np.ones(n, dtype=bool)
    _, regular = _specials(form, c, xf, xf)
    # special lanes: the first matching table entry's result (a NaN class -> the canonical quiet NaN)
    open_ = ~regular
    for special in c.specials:
        hit = open_ & class_match(np, fmt, xf, special.operands[0])
        bits = special_result_bits(fmt, special.result)
        values[hit, 0] = fmt.default_nan if bits is None else bits
        valid[hit, 0] = True
        open_ &= ~hit
    idx = np.nonzero(regular)[0]
    if idx.size == 0:
        return values, valid, complete
    xs = xf[idx]
    rn = _nearest_exact(form, c.operation, xs) if applied in ("correctly-rounded", "either") else None

    def member(cand, lanes):
        return _allowed_flushed(form, c, applied, cand, xs[lanes], None if rn is None else rn[lanes])

    every = np.arange(idx.size)
    negative = _negative(fmt, xs) if c.operation == "rcp" else np.zeros(idx.size, dtype=bool)
    sign = np.where(negative, np.uint64(fmt.sign_mask), np.uint64(0))
    est = rn if rn is not None else _nearest_any(form, c.operation, xs)
    est_mag = (est & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    est_mag = np.clip(est_mag, 1, fmt.max_finite)
    # the allowed finite non-zero results form one interval of magnitudes around the nearest value
    # (which lies within half an ulp, inside every bound here, and is the centre of the
    # correctly-rounded reading's, so the union of the readings is one interval too); find an
    # allowed anchor next to the estimate (it can be a few ulps off for rsq), then the ends
    anchor = np.full(idx.size, -1, dtype=np.int64)
    for k in (0, -1, 1, -2, 2, -3, 3, -4, 4):
        lanes = np.nonzero(anchor < 0)[0]
        if lanes.size == 0:
            break
        cand, exists = _offset(fmt, est_mag[lanes], sign[lanes], np.full(lanes.size, k))
        ok = exists & member(cand, lanes)
        anchor[lanes[ok]] = est_mag[lanes[ok]] + k
    has = anchor >= 0
    base = np.where(has, anchor, est_mag)
    lo_k, hi_k = np.zeros(idx.size, np.int64), np.zeros(idx.size, np.int64)
    h = np.nonzero(has)[0]
    if h.size:
        sub = lambda cand, lanes: member(cand, h[lanes])  # noqa: E731
        lo_k[h] = _reach(sub, fmt, base[h], sign[h], -1)
        hi_k[h] = _reach(sub, fmt, base[h], sign[h], +1)
    zero = sign
    inf = sign | np.uint64(fmt.inf)
    zero_ok = member(zero, every)
    inf_ok = member(inf, every)
    lo, hi = base - lo_k, base + hi_k
    count = np.where(has, hi - lo + 1, 0)
    n_zero, n_inf = zero_ok.astype(np.int64), inf_ok.astype(np.int64)
    total = n_zero + count + n_inf
    fits = total <= limit
    # a complete row in ascending pattern order: the zero, the magnitudes lo..hi, the infinity
    # (patterns of one sign order as their magnitudes)
    j = np.arange(limit, dtype=np.int64)[None, :]
    mags = np.clip(lo[:, None] + j - n_zero[:, None], 0, fmt.inf).astype(np.uint64)
    rows = np.where(j < n_zero[:, None], zero[:, None],
                    np.where(j < (n_zero + count)[:, None], sign[:, None] | mags, inf[:, None]))
    f = idx[fits]
    values[f] = rows[fits]
    valid[f] = j < total[fits][:, None]
    # rows too wide to list (the f64 relative bounds): a sample, lane by lane
    nearest_bits = np.where(fmt.is_nan(est), zero, est)
    near_ok = member(nearest_bits, every)
    for jj in np.nonzero(~fits)[0]:
        i = idx[jj]
        complete[i] = False
        s = int(sign[jj])
        extras = ([int(zero[jj])] if zero_ok[jj] else []) + ([int(inf[jj])] if inf_ok[jj] else [])
        near = int(nearest_bits[jj]) if near_ok[jj] else s | int(base[jj])
        l, u = int(lo[jj]), int(hi[jj])
        picked = {s | l, s | u, near, *extras}
        want = min(limit, int(total[jj]))
        while len(picked) < want:
            picked.add(s | int(rng.integers(l, u + 1)))
        row = sorted(picked)
        values[i, :len(row)] = row
        valid[i, :len(row)] = True
    width = max(1, int(valid.sum(axis=1).max()))
    return values[:, :width], valid[:, :width], complete
