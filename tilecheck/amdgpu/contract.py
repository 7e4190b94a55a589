"""Precision contracts of AMD instructions (``v_rcp_*``, ``v_rsq_*``, ``v_sqrt_*``), vectorised with numpy.

A contract result is *allowed* when, after input flushing, the operand's special case matches
(``+-0 -> +-inf``, ``+-inf -> +-0``, NaN -> any NaN), or else the result lies within the bound of
the exact reciprocal ``e = 1/x``:

* ``relative_log2``: ``|r - e| <= 2**relative_log2 * |e|``, and where ``|e|`` is below the smallest
  normal also ``|r - e| <= subnormal_ulp * 2**(emin - mantissa_bits)``;
* ``ulp``: ``|r - e| <= ulp * ulp(e)`` with ``ulp(e) = 2**(max(floor(log2|e|), emin) - mantissa_bits)``;
* ``flush_outputs``: a zero of ``e``'s sign is allowed too when some value within the bound is
  below the smallest normal (a subnormal result flushed);
* an infinity of ``e``'s sign is allowed when the bound reaches the largest finite value;
* the sign rule of ``spec/rules/contracts.yaml``: every allowed result has ``e``'s sign (a
  subnormal bound around a tiny ``e`` never admits a value of the other sign).

The checks are exact: ``|r - e| <= B`` is tested as ``|r*x - 1| <= B*|x|`` where ``B*|x|`` is a
power of two or an exact float, with ``r*x - 1`` rounded upward and downward by the exact FMA of
:mod:`tilecheck.model.ops` (for a representable threshold ``t``: ``y <= t`` iff
``RU(y) <= t``). The two edge rules (zero, infinity) compare with directed roundings that err
toward allowing: exact for f32 operands, within one f64 ulp for f64. :func:`choose` picks allowed values: the correctly rounded reciprocal, the lowest
and highest allowed values (found by probing candidates around the bound's ends), or random points
inside (reciprocals only).

``v_rsq``/``v_sqrt`` (operation ``rsq``/``sqrt``) are decided per lane in exact rationals: with
``e`` irrational, ``|r - e| <= t`` is tested as ``e`` in ``[r - t, r + t]`` by squaring (sqrt:
``(r - t)^2 <= x <= (r + t)^2``; rsq: ``(r - t)^2 x <= 1 <= (r + t)^2 x``), the relative bound as
``r / (1 + d) <= e <= r / (1 - d)`` squared the same way, and ``floor(log2 e)`` from
``floor(log2 x)`` exactly. No finite positive operand of f16, f32 (flushed) or f64 has a subnormal,
zero or infinite square root or reciprocal square root, so those edge rules never apply there.

:func:`enumerate_allowed` lists every allowed result per lane (or a sample where there are more
than ``limit``), for all three operations.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.model import ops
from tilecheck.model.contracts import class_match
from tilecheck.model.ieee import flush_subnormal_bits, quiet
from tilecheck.model.xp import broadcast_all
from tilecheck.spec.amdgpu import AmdForm
from tilecheck.spec.contract import Contract
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


def allowed(form: AmdForm, variant: str, result, x) -> np.ndarray:
    """Is ``result`` an allowed output of contract form ``form`` for operand ``x``? (bool array)"""
    c = _contract(form, variant, OPERATIONS)
    fmt = form.fmt
    f64 = form.formats["f64"]  # the binary64 of the form's own database
    r = np.asarray(result, dtype=np.uint64)
    x = np.asarray(x, dtype=np.uint64)
    r, x = broadcast_all(np, r, x)
    if c.flush_inputs:
        x = flush_subnormal_bits(np, fmt, x)
    out, regular = _specials(form, c, r, x)
    if c.operation != "rcp":
        return np.where(regular, _root_allowed(fmt, c, r, x, regular), out)
    neg = _negative(fmt, x)
    r_neg = _negative(fmt, r)
    finite = ~fmt.is_nan(r) & ~fmt.is_inf(r)
    # the sign rule (spec/rules/contracts.yaml): a bound grants a magnitude, never the sign
    ok = finite & (r_neg == neg) & np.where(fmt.is_zero(r), False, _within(fmt, f64, c, np.where(finite, r, 0), x))
    if c.flush_outputs:
        zero_ok = _bound_reaches(fmt, f64, c, x, fmt.min_normal, above=False)
        ok |= fmt.is_zero(r) & (r_neg == neg) & zero_ok
    inf_ok = _bound_reaches(fmt, f64, c, x, fmt.max_finite, above=True)
    ok |= fmt.is_inf(r) & (r_neg == neg) & inf_ok
    return np.where(regular, ok, out)


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


def _root_allowed(fmt: Format, c: Contract, r: np.ndarray, x: np.ndarray, regular: np.ndarray) -> np.ndarray:
    """Verdicts of ``rsq``/``sqrt`` on the regular lanes (finite non-zero flushed x), per lane."""
    out = np.zeros(r.shape, dtype=bool)
    r_flat, x_flat, reg_flat, o = r.reshape(-1), x.reshape(-1), regular.reshape(-1), out.reshape(-1)
    for i in np.nonzero(reg_flat)[0]:
        xi, ri = int(x_flat[i]), int(r_flat[i])
        if xi & fmt.sign_mask:
            continue  # negative operands are special cases (-finite -> NaN) in these contracts
        xv, rv = fmt.to_fraction(xi), fmt.to_fraction(ri)
        # every allowed result is positive and finite (see the module docstring)
        if rv is None or ri & fmt.sign_mask or rv == 0 or (ri & fmt.magnitude_mask) >= fmt.inf:
            continue
        o[i] = _root_within(fmt, c, c.operation, xv, rv)
    return out


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


def _reach(form, variant, fmt, x, base_mag, sign, direction: int) -> np.ndarray:
    """The largest k >= 0 with every step 0..k from ``base_mag`` allowed (the allowed results
    are one interval of magnitudes), by exponential then binary search."""
    n = base_mag.shape[0]
    good = np.zeros(n, dtype=np.int64)  # allowed offset known
    bad = np.full(n, -1, dtype=np.int64)  # first offset known not allowed (-1: none yet)
    step = np.ones(n, dtype=np.int64)
    for _ in range(64):
        todo = bad < 0
        if not np.any(todo):
            break
        probe = good + step
        cand, exists = _offset(fmt, base_mag, sign, direction * probe)
        ok = exists & allowed(form, variant, cand, x)
        good = np.where(todo & ok, probe, good)
        bad = np.where(todo & ~ok, probe, bad)
        step = step * 2
    while True:
        gap = bad - good > 1
        if not np.any(gap):
            return good
        mid = (good + bad) // 2
        cand, exists = _offset(fmt, base_mag, sign, direction * mid)
        ok = exists & allowed(form, variant, cand, x)
        good = np.where(gap & ok, mid, good)
        bad = np.where(gap & ~ok, mid, bad)


def enumerate_allowed(form: AmdForm, variant: str, x, *, limit: int = 17, rng: np.random.Generator | None = None):
    """Every result the contract allows, per lane of ``x`` (operand bit patterns, 1-d).

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
    # special lanes: the table's result (a NaN class -> the canonical quiet NaN)
    for i in np.nonzero(~regular)[0]:
        for special in c.specials:
            if bool(class_match(np, fmt, xf[i:i + 1], special.operands[0])[0]):
                bits = special_result_bits(fmt, special.result)
                values[i, 0] = fmt.default_nan if bits is None else bits
                valid[i, 0] = True
                break
    idx = np.nonzero(regular)[0]
    if idx.size == 0:
        return values, valid, complete
    xs, xr = xf[idx], x[idx]
    negative = _negative(fmt, xs) if c.operation == "rcp" else np.zeros(idx.size, dtype=bool)
    sign = np.where(negative, np.uint64(fmt.sign_mask), np.uint64(0))
    est = _nearest_any(form, c.operation, xs)
    est_mag = (est & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    est_mag = np.clip(est_mag, 1, fmt.max_finite)
    # the allowed finite non-zero results form one interval of magnitudes around the nearest value
    # (which lies within half an ulp, inside every bound here); find an allowed anchor next to the
    # estimate (it can be a few ulps off for rsq), then the interval's ends
    anchor = np.full(idx.size, -1, dtype=np.int64)
    for k in (0, -1, 1, -2, 2, -3, 3, -4, 4):
        cand, exists = _offset(fmt, est_mag, sign, np.full(idx.size, k))
        ok = (anchor < 0) & exists & allowed(form, variant, cand, xr)
        anchor = np.where(ok, est_mag + k, anchor)
    has = anchor >= 0
    base = np.where(has, anchor, est_mag)
    lo_k = np.where(has, _reach(form, variant, fmt, xr, base, sign, -1), 0)
    hi_k = np.where(has, _reach(form, variant, fmt, xr, base, sign, +1), 0)
    zero = sign
    inf = sign | np.uint64(fmt.inf)
    zero_ok = allowed(form, variant, zero, xr)
    inf_ok = allowed(form, variant, inf, xr)
    nearest_bits = np.where(fmt.is_nan(est), zero, est)
    for j, i in enumerate(idx):
        extras = [int(zero[j])] if zero_ok[j] else []
        extras += [int(inf[j])] if inf_ok[j] else []
        s = int(sign[j])
        if has[j]:
            lo, hi = int(base[j] - lo_k[j]), int(base[j] + hi_k[j])
            count = hi - lo + 1
        else:
            count = 0
        if count + len(extras) <= limit:
            row = extras + ([s | m for m in range(lo, hi + 1)] if has[j] else [])
        else:
            complete[i] = False
            near = int(nearest_bits[j]) if bool(allowed(form, variant, nearest_bits[j:j + 1], xr[j:j + 1])[0]) \
                else s | int(base[j])
            picked = {s | lo, s | hi, near, *extras}
            want = min(limit, count + len(extras))
            while len(picked) < want:
                picked.add(s | int(rng.integers(lo, hi + 1)))
            row = list(picked)
        row = sorted(row)
        values[i, :len(row)] = row
        valid[i, :len(row)] = True
    width = max(1, int(valid.sum(axis=1).max()))
    return values[:, :width], valid[:, :width], complete
