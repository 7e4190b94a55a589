"""Contracts of approximate forms: which results are acceptable, and a representative value.

A contract (``spec/ptx/*.yaml``, ``contract:``) is exact special cases plus an error bound over a
domain. :func:`allowed` answers "is this result acceptable for these inputs?" for every lane:

* special operands (NaN, infinities, zeros after ``.ftz`` flushing, negative square-root
  arguments): the spec's special-case table, else the IEEE result of the exact function; NaNs by
  class unless the form's NaN policy is ``canonical``;
* finite operands: ``|r - x| <= bound`` where x is the exact real result and the bound is
  ``k * ulp(x)`` (ulp of x's binade in the result format, subnormal ulp below 2^emin) or
  ``2^t * |x|``. An infinity of x's sign is accepted when ``|x|`` exceeds the largest finite
  number. With ``.ftz`` a subnormal result is never acceptable and a zero of x's sign is accepted
  when the bound reaches below 2^emin.
* the sign rule (``spec/rules/contracts.yaml``): a bound grants a magnitude, never the sign; every
  allowed result of a bound lane has the IEEE sign of the exact result, zeros included, under
  both ulp readings (:func:`_ieee_sign_ok`).

The bound test runs vectorised in float64, which decides every lane whose error is not within
2^-20 of the bound; the rest are decided exactly with rationals (integer powers for irrational
bounds such as 2^-22.9). Per-key domain rules (``div.approx`` with huge or subnormal divisors, the
upper-word ``.ftz.f64`` forms) follow the PTX ISA text quoted in each spec.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import exp2, log2, ops, sincos, tanh
from tilecheck.model.ieee import float64_values, flush_subnormal_bits, round_pack, unpack
from tilecheck.model.order import from_key as _from_key
from tilecheck.model.order import order_key as _order_key
from tilecheck.model.xp import bit_length, u64
from tilecheck.spec.contract import FREE_RESULTS, ULP_READING_DEFAULT, Contract, check_ulp_reading
from tilecheck.spec.forms import Form
from tilecheck.spec.registry import SPECIAL_WORDS, TININESS_DEFAULT, special_result_bits

_HI_MASK = 0xFFFFFFFF00000000
_NUMPY_FUNCTIONS = {"sin": np.sin, "cos": np.cos, "tanh": np.tanh}
"""numpy's float64 functions for the special lanes' IEEE results of sin, cos and tanh (exact
there: +-0, +-inf and NaN), and a representative value where no model applies (sin and cos
beyond the range their model is proved for), which no check judges."""
_TRANSCENDENTAL = ("ex2", "lg2", "sin", "cos", "tanh")
"""The functions whose exact value comes from a module of their own (RN, bounds, ranges)."""
_MARGIN = 2.0 ** -20
_EVAL_ERROR = 2.0 ** -50  # bound on the relative error of the float64 evaluation of x


# ---------------------------------------------------------------------------------------------
# exact real values of the functions, as rationals (sqrt kinds as the square of the result)


def _exact_parts(fn: str, values: list[Fraction]) -> tuple[Fraction, bool]:
    """(Q, is_root): the exact result is Q (rational) or sqrt(Q) when is_root."""
    if fn == "div":
        return values[0] / values[1], False
    if fn == "rcp":
        return 1 / values[0], False
    if fn == "sqrt":
        return values[0], True
    if fn == "rsqrt":
        return 1 / values[0], True
    raise ValueError(fn)


def _floor_log2(q: Fraction) -> int:
    """floor(log2 q) for q > 0."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    return e


def _pow2_bracket(t: Fraction, bits: int = 256) -> tuple[Fraction, Fraction]:
    """Rationals lo <= 2**t <= hi with hi - lo <= 2**-bits * 2**ceil(t) (t = n/d)."""
    n, d = t.numerator, t.denominator
    if d == 1:
        v = Fraction(2) ** n
        return v, v
    # 2**(n/d) = (2**(n + bits*d))**(1/d) / 2**bits; integer d-th root brackets it
    big = 1 << (n + bits * d) if n + bits * d >= 0 else None
    if big is None:
        raise ValueError("exponent too small for the bracket")
    root = _iroot(big, d)
    lo = Fraction(root, 1 << bits)
    hi = Fraction(root + 1, 1 << bits) if root ** d != big else lo
    return lo, hi


def _iroot(x: int, d: int) -> int:
    """floor(x ** (1/d)) for integers x >= 0, d >= 1 (Newton's method on integers)."""
    if x < 2:
        return x
    guess = 1 << ((x.bit_length() + d - 1) // d)
    while True:
        nxt = ((d - 1) * guess + x // guess ** (d - 1)) // d
        if nxt >= guess:
            break
        guess = nxt
    while guess ** d > x:
        guess -= 1
    while (guess + 1) ** d <= x:
        guess += 1
    return guess


def _within_exact(fn: str, fmt: Format, r: Fraction, values: list[Fraction], ulp: float | None,
                  rel_log2: float | None) -> bool:
    """Exact decision of ``|r - x| <= bound`` for finite r and finite non-special operands."""
    q, is_root = _exact_parts(fn, values)
    if q == 0:
        return r == 0
    negative = q < 0
    mag_q = -q if negative else q
    if is_root and (r < 0):
        return False
    if rel_log2 is not None:
        t = Fraction(str(rel_log2)).limit_denominator(10_000)
        if not is_root:
            # |r - q| / |q| <= 2**t  <=>  rho**d <= 2**n with rho = |r - q| / |q|, t = n/d
            rho = abs(r - q) / mag_q
            return rho ** t.denominator <= Fraction(2) ** t.numerator
        # root: y = r / sqrt(Q) must lie in [1 - eps, 1 + eps]; y**2 = r**2 / Q is rational
        y2 = r * r / mag_q
        lo, hi = _pow2_bracket(t)
        up_ok = y2 <= (1 + lo) ** 2
        up_bad = y2 > (1 + hi) ** 2
        down_ok = y2 >= (1 - lo) ** 2 if lo < 1 else True
        down_bad = y2 < (1 - hi) ** 2 if hi < 1 else False
        if up_bad or down_bad:
            return False
        if up_ok and down_ok:
            return True
        raise ArithmeticError("relative bound undecided at 256 bits")  # never expected
    # ulp bound: k * ulp(x), ulp from x's binade, clamped to the subnormal ulp
    e = _floor_log2(mag_q)
    if is_root:
        e = e // 2
    u = Fraction(2) ** (max(e, fmt.emin) - fmt.mantissa_bits)
    bound = Fraction(ulp).limit_denominator(1 << 20) * u
    if not is_root:
        return abs(r - q) <= bound
    # |r - sqrt(Q)| <= B  <=>  sqrt(Q) <= r + B  and  sqrt(Q) >= r - B
    upper = r + bound >= 0 and mag_q <= (r + bound) ** 2
    lower = (r - bound <= 0) or mag_q >= (r - bound) ** 2
    return upper and lower


# ---------------------------------------------------------------------------------------------
# float64 evaluation of the functions (filter)


def _f64_value(xp, fn: str, vals):
    if fn == "ex2":
        return exp2.estimate(xp, vals[0])  # within 2^-50 relative (see there)
    with np.errstate(all="ignore"):
        if fn == "lg2":
            return xp.log2(vals[0])
        if fn == "div":
            return vals[0] / vals[1]
        if fn == "rcp":
            return 1.0 / vals[0]
        if fn == "sqrt":
            return xp.sqrt(vals[0])
        return 1.0 / xp.sqrt(vals[0])


def _ieee_special(xp, fn: str, fmt: Format, ops_bits, rule: ops.NanRule):
    """IEEE result bits of the exact function (used on special lanes only)."""
    mode = ops.Mode("rn")
    if fn == "ex2":
        # 2^NaN = NaN, 2^-inf = +0, 2^+inf = +inf, 2^+-0 = 1 (IEEE 754-2019 9.2 exp2)
        a = ops_bits[0].astype(xp.uint64)
        mag = a & u64(xp, fmt.magnitude_mask)
        neg = (a & u64(xp, fmt.sign_mask)) != 0
        out = xp.where(mag == 0, u64(xp, fmt.from_fraction(Fraction(1))), xp.where(neg, u64(xp, 0), u64(xp, fmt.inf)))
        return xp.where(mag > u64(xp, fmt.exponent_mask), u64(xp, rule.fixed if rule.fixed is not None else
                                                                  fmt.canonical_nan), out)
    if fn in _NUMPY_FUNCTIONS:
        # sin(+-0) = +-0, cos(+-0) = 1, tanh(+-0) = +-0, tanh(+-inf) = +-1, sin/cos(+-inf) = NaN, NaN -> NaN
        return _numpy_values(xp, fn, fmt, ops_bits[0], rule)
    if fn == "lg2":
        # log2(NaN) = NaN, log2(x < 0) = NaN, log2(+-0) = -inf, log2(+inf) = +inf (IEEE 754-2019 9.2 log2)
        a = ops_bits[0].astype(xp.uint64)
        mag = a & u64(xp, fmt.magnitude_mask)
        neg = (a & u64(xp, fmt.sign_mask)) != 0
        nan = u64(xp, rule.fixed if rule.fixed is not None else fmt.canonical_nan)
        out = xp.where(mag == 0, u64(xp, fmt.inf | fmt.sign_mask), u64(xp, fmt.inf))
        return xp.where((mag > u64(xp, fmt.exponent_mask)) | (neg & (mag != 0)), nan, out)
    if fn == "rsqrt" and not rule.propagate and rule.fixed is not None:
        # +-0 -> +-inf, +inf -> +0, NaN and x < 0 -> the fixed NaN (as 1 / sqrt(x) gives them)
        a = ops_bits[0].astype(xp.uint64)
        mag = a & u64(xp, fmt.magnitude_mask)
        neg = (a & u64(xp, fmt.sign_mask)) != 0
        special = (mag == 0) | (mag >= u64(xp, fmt.exponent_mask)) | neg
        if bool(xp.all(special)):
            out = xp.where(mag == 0, a | u64(xp, fmt.inf), u64(xp, 0))
            return xp.where((mag > u64(xp, fmt.exponent_mask)) | (neg & (mag != 0)), u64(xp, rule.fixed), out)
    if fn == "rsqrt":
        # rsqrt(x) = 1 / sqrt(x) exactly on special operands (+-0 -> +-inf, +inf -> +0, x<0 -> NaN)
        s = ops.apply(xp, "sqrt", fmt, ops_bits, mode, rule)
        one = xp.full(s.shape, fmt.from_fraction(1), dtype=xp.uint64)
        return ops.apply(xp, "div", fmt, [one, s], mode, rule)
    return ops.apply(xp, fn, fmt, ops_bits, mode, rule)


def class_match(xp, fmt: Format, bits, word: str):
    """Does each pattern belong to the class word of a special-case table (or equal its hex bits)?
    The words and their signs are :data:`~tilecheck.spec.registry.SPECIAL_WORDS`."""
    if word.startswith("0x"):
        return bits == u64(xp, int(word, 16))
    cls, sign = SPECIAL_WORDS[word]
    mag = bits & u64(xp, fmt.magnitude_mask)
    top = u64(xp, fmt.exponent_mask)
    if cls == "any":
        hit = xp.ones(bits.shape, dtype=bool)
    elif cls == "nan":
        hit = mag > top
    elif cls == "inf":
        hit = mag == top
    elif cls == "zero":
        hit = mag == 0
    elif cls == "subnormal":
        hit = (mag != 0) & (mag < u64(xp, fmt.min_normal))
    elif cls == "normal":
        hit = (mag >= u64(xp, fmt.min_normal)) & (mag < top)
    elif cls == "finite":  # zeros and subnormals included
        hit = mag < top
    else:
        raise ValueError(f"unknown class word {word!r}")
    if sign is None:
        return hit
    neg = (bits >> u64(xp, fmt.width - 1)) != 0
    return hit & (neg if sign < 0 else ~neg)


def _condition(xp, fmt: Format, bits, cond):
    """Does each operand pattern meet a rule's :class:`~tilecheck.spec.contract.OperandCondition`?"""
    mag = bits & u64(xp, fmt.magnitude_mask)
    ok = mag <= u64(xp, fmt.exponent_mask)  # magnitudes compare only for non-NaN patterns
    if cond.classes:
        hit = xp.zeros(bits.shape, dtype=bool)
        for word in cond.classes:
            hit = hit | class_match(xp, fmt, bits, word)
        ok = hit if not (cond.above_log2 is not None or cond.below_log2 is not None) else ok & hit
    if cond.above_log2 is not None:
        ok = ok & (mag > u64(xp, fmt.power_bits(cond.above_log2)))
    if cond.below_log2 is not None:
        ok = ok & (mag < u64(xp, fmt.power_bits(cond.below_log2)))
    return ok


def _word_bits(fmt: Format, word: str, canonical: int) -> int | None:
    """Bits for a result word of a special-case table (None for 'nan': judged by class)."""
    return special_result_bits(fmt, word)


# ---------------------------------------------------------------------------------------------
# the contract check


def _prepare(xp, form: Form, arrays):
    """Element format, flushed operand bits (uint64) and flags for a contract form."""
    fmt = form.format
    hi_form = form.semantics.high_word
    ftz = form.contract.flush_inputs
    operands = [a.astype(xp.uint64) for a in arrays]
    if hi_form:
        # only the upper word is read: the value is the 1.11.20 number with a zero low word
        operands = [a & u64(xp, _HI_MASK) for a in operands]
    if ftz:
        operands = [flush_subnormal_bits(xp, fmt, a) for a in operands]
    return fmt, operands, ftz, hi_form


@dataclass
class _Lanes:
    """Per-lane classification of a contract form's operands (see :func:`_classify`)."""

    fmt: Format
    fn: str
    operands: list  # uint64, after the upper-word view and .ftz flushing
    ftz: bool
    hi_form: bool
    special: object  # lanes decided by the special-value table
    want: object  # their result bits (a NaN pattern where a NaN is due)
    want_nan: object  # the due result is a NaN
    nan_pinned: object  # ... and it must be exactly the canonical bits
    canonical_too: object  # the canonical NaN is allowed in addition (upper-word forms, see below)
    fixed: object  # lanes a domain rule fixes to one non-NaN result (div.approx, huge divisor)
    fixed_bits: object
    fixed_nan: object  # lanes a domain rule fixes to "a NaN" (div.approx, infinite a, huge divisor)
    unbounded: object  # lanes the contract puts no bound on
    todo: object  # lanes judged by the error bound
    canonical: int


def _classify(xp, form: Form, arrays) -> _Lanes:
    """Which rule decides each lane: special table, a domain rule, no bound, or the error bound.

    NaN bits are pinned only where the documentation pins them: the upper-word ``.ftz.f64``
    forms map *input* NaNs to 0x7fffffff00000000. A NaN whose payload lies only in the low word
    is a NaN of the full operand but an infinity of the upper word the hardware reads; until a
    device run says which reading holds, both results are allowed (the canonical NaN, and the
    upper word's special-table result). NaNs the operation creates (e.g. rsqrt of a negative
    number) are not pinned.
    """
    fn = form.contract.operation
    fmt, operands, ftz, hi_form = _prepare(xp, form, arrays)
    contract = form.contract
    shape = operands[0].shape
    mag = lambda b: b & u64(xp, fmt.magnitude_mask)  # noqa: E731 - tiny local helper
    is_nan = lambda b: mag(b) > u64(xp, fmt.exponent_mask)  # noqa: E731
    canonical = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    special = _special_lanes(xp, fn, fmt, operands)
    nan_in = xp.zeros(shape, dtype=bool)
    for a in operands:
        nan_in = nan_in | is_nan(a)
    rule = ops.NanRule(False, canonical, fixed=canonical)
    # the IEEE result matters on special lanes only: evaluate it there (the general path is slow)
    want = xp.zeros(shape, dtype=xp.uint64)
    flat_special = special.reshape(-1)
    if bool(xp.any(flat_special)):
        idx = xp.nonzero(flat_special)[0]
        flat_want = want.reshape(-1)
        flat_want[idx] = _ieee_special(xp, fn, fmt, [o.reshape(-1)[idx] for o in operands], rule)
        want = flat_want.reshape(shape)
    for case in contract.specials:
        hit = xp.ones(shape, dtype=bool)
        for word, a in zip(case.operands, operands):
            hit = hit & class_match(xp, fmt, a, word)
        wbits = _word_bits(fmt, case.result, canonical)
        want = xp.where(hit, u64(xp, wbits if wbits is not None else canonical), want)
    pinned_policy = form.nan.policy == "canonical"
    nan_pinned = nan_in & pinned_policy
    canonical_too = xp.zeros(shape, dtype=bool)
    if hi_form and pinned_policy:
        full_nan = xp.zeros(shape, dtype=bool)
        for a in arrays:
            full_nan = full_nan | is_nan(a.astype(xp.uint64))
        canonical_too = full_nan & ~nan_in
    sign = u64(xp, 0)
    for a in operands:
        sign = sign ^ (a & u64(xp, fmt.sign_mask))  # the sign of the exact result of div/rcp
    fixed_bits = xp.broadcast_to(sign, shape)
    fixed, fixed_nan, unbounded, decided = _rule_lanes(xp, contract, fmt, operands)
    beneath = beneath_bound(xp, form, fmt, operands) & ~special & ~decided
    unbounded = unbounded | beneath
    decided = decided | beneath
    special = special & ~decided
    todo = ~special & ~decided
    return _Lanes(fmt, fn, operands, ftz, hi_form, special, want, is_nan(want), nan_pinned, canonical_too,
                  fixed, fixed_bits, fixed_nan, unbounded, todo, canonical)


def may_bound_nothing(form: Form) -> bool:
    """Whether approximate ``form`` leaves some operands' result free: a domain rule whose
    result is ``unbounded``, or a relative bound that cannot hold where the exact result is
    subnormal (:func:`beneath_bound`). Elsewhere every lane is bounded or decided exactly."""
    c = form.contract
    return any(r.result in FREE_RESULTS for r in (c.rules or ())) or \
        (c.relative_log2 is not None and not c.flush_outputs and c.operation == "ex2") or \
        (c.operation == "lg2" and c.flush_outputs) or bool(c.bound.ranges)


def beneath_bound(xp, form: Form, fmt: Format, operands):
    """Lanes a bound leaves unjudged. A relative bound where the exact result is subnormal and not
    flushed: the format's spacing (fixed there) exceeds any relative error finer than it, so no
    value may lie within the bound and the document bounds nothing (``ex2.approx.f16``: 2^-9.9
    relative below 2^-14). Only ex2 has subnormal exact results among the relative-bound forms: its
    lanes are x < emin, exactly (2^x < 2^emin). And ``lg2.approx.ftz.f32`` where its absolute bound
    reaches zero: values of both signs without the flushed subnormals between them are no single
    run of values, which :class:`~tilecheck.model.api.AllowedResults` cannot hold. And sin and
    cos (bounds by the operand's magnitude) beyond the last range, where the ISA bounds nothing,
    and under ``.ftz`` where the bound reaches a flushed zero (no single run, as lg2's)."""
    c = form.contract
    none = xp.zeros(operands[0].shape, dtype=bool)
    if c.operation in sincos.FUNCTIONS:
        x, regular = _regular_f64(xp, fmt, operands[0])
        t, bounded = sincos.bound_log2(xp, x, c.bound.ranges)
        out = regular & ~bounded
        if c.flush_outputs:
            judged = regular & bounded
            out = out | (judged & sincos.crossing(xp, c.operation, xp.where(judged, x, 1.0), t, 2.0 ** fmt.emin))
        return out
    if c.operation == "lg2" and c.flush_outputs:
        # near x = 1 the absolute bound holds values of both signs and, under .ftz, not the
        # subnormals between them: no single run of values, so those lanes are left unjudged
        mag = operands[0] & u64(xp, fmt.magnitude_mask)
        regular = (mag < u64(xp, fmt.exponent_mask)) & (mag != 0) & ((operands[0] & u64(xp, fmt.sign_mask)) == 0)
        x = _to_f64(xp, fmt, xp.where(regular, operands[0], u64(xp, fmt.from_fraction(Fraction(4)))))
        return regular & log2.crossing(xp, fmt, x, c)
    if c.relative_log2 is None or c.flush_outputs or c.operation != "ex2":
        return none
    mag = operands[0] & u64(xp, fmt.magnitude_mask)
    finite = (mag < u64(xp, fmt.exponent_mask)) & (mag != 0)
    x = _to_f64(xp, fmt, xp.where(finite, operands[0], u64(xp, 0)))
    return finite & (x < fmt.emin)


def beneath_bound_reason(form: Form, operand_bits: list[int]) -> str | None:
    """Why :func:`beneath_bound` leaves one input unjudged (None where it does not)."""
    arrays = [np.array([v], dtype=np.uint64) for v in operand_bits]
    fmt, flushed, _, _ = _prepare(np, form, arrays)
    if not bool(np.asarray(beneath_bound(np, form, fmt, flushed))[0]):
        return None
    c = form.contract
    if c.operation in sincos.FUNCTIONS:
        x, _ = _regular_f64(np, fmt, flushed[0])
        _, bounded = sincos.bound_log2(np, x, c.bound.ranges)
        if not bool(bounded[0]):
            return (f"{form.name} is bounded on |a| <= {c.bound.ranges[-1][0]}pi only: beyond, the ISA "
                    "provides \"no defined error guarantees\": not judged")
        return (f"{form.name}'s absolute bound reaches zero here: under .ftz its allowed values are both zeros "
                "and the normal values within the bound, without the subnormals between, which is no single run "
                "of values: not judged")
    if c.operation == "lg2":
        return (f"{form.name}'s absolute bound (2^{c.bound.absolute[0]:g}) reaches zero here: its allowed "
                "values have both signs and, under .ftz, not the subnormals between them, which is no single run "
                "of values: not judged")
    return (f"the exact result is below {form.format.name}'s smallest normal number, where the format's "
            f"spacing exceeds {form.name}'s relative bound (2^{c.relative_log2:g}): no result "
            "can meet it, so the bound says nothing there")


def _regular_f64(xp, fmt: Format, bits):
    """(x, regular): float64 values of finite non-zero patterns (1.0 elsewhere) and that mask."""
    mag = bits & u64(xp, fmt.magnitude_mask)
    regular = (mag < u64(xp, fmt.exponent_mask)) & (mag != 0)
    return _to_f64(xp, fmt, xp.where(regular, bits, u64(xp, fmt.from_fraction(Fraction(1))))), regular


def _special_lanes(xp, fn: str, fmt: Format, operands):
    """Lanes the special-value table decides: a NaN, infinite or zero operand (after flushing),
    and a negative root operand."""
    special = xp.zeros(operands[0].shape, dtype=bool)
    for a in operands:
        mag = a & u64(xp, fmt.magnitude_mask)
        special = special | (mag >= u64(xp, fmt.exponent_mask)) | (mag == 0)
    if fn in ("sqrt", "rsqrt", "lg2"):
        special = special | ((operands[0] >> u64(xp, fmt.width - 1)) != 0)
    return special


def _rule_lanes(xp, contract, fmt: Format, operands):
    """(fixed, fixed_nan, unbounded, decided): the lanes each kind of domain rule decides (data:
    the first rule whose conditions all hold decides the lane)."""
    shape = operands[0].shape
    fixed = xp.zeros(shape, dtype=bool)
    fixed_nan = xp.zeros(shape, dtype=bool)
    unbounded = xp.zeros(shape, dtype=bool)
    decided = xp.zeros(shape, dtype=bool)
    # an operand with one value in every lane (the divisor of an exhaustive block) is tested once:
    # a rule it fails cannot hit, and the other operands' conditions are then not computed
    uniform = [o[:1] if o.shape[0] and bool((o == o[0]).all()) else None for o in operands] if operands[0].ndim == 1 \
        else [None] * len(operands)
    for rule in contract.rules:
        first = [(i, c) for i, c in rule.when if uniform[i] is not None]
        if any(not bool(_condition(xp, fmt, uniform[i], c)[0]) for i, c in first):
            continue
        hit = ~decided
        for index, cond in rule.when:
            if uniform[index] is None:
                hit = hit & _condition(xp, fmt, operands[index], cond)
        if rule.result == "nan":
            fixed_nan = fixed_nan | hit
        elif rule.result == "signed-zero":
            fixed = fixed | hit
        else:  # unbounded
            unbounded = unbounded | hit
        decided = decided | hit
    return fixed, fixed_nan, unbounded, decided


def unbounded_lanes(xp, form: Form, arrays):
    """Per lane: does ``form``'s contract bound nothing there (a domain rule ``unbounded`` or
    ``unmodelled``, or :func:`beneath_bound`)? What :func:`results` reports as ``unbounded``,
    without working out the other lanes' ranges. ``arrays``: the operand bits."""
    return _classify(xp, form, arrays).unbounded


def bound_decides(xp, form: Form, arrays):
    """Per lane: does the error bound alone decide what ``form`` allows (no special-value row, no
    domain rule, no missing bound)? ``arrays``: the operand bits. (What :func:`_classify` calls
    ``todo``, without working out the other lanes' results.)"""
    fmt, operands, _, _ = _prepare(xp, form, arrays)  # (its operands are uint64 copies)
    _, _, _, decided = _rule_lanes(xp, form.contract, fmt, operands)
    return ~_special_lanes(xp, form.contract.operation, fmt, operands) & ~decided & \
        ~beneath_bound(xp, form, fmt, operands)


def special_lane_key(xp, form: Form, arrays):
    """(special, key) per lane, or None where the form has no such key (upper-word forms, too
    many table words). ``special``: the lanes the special-value table decides (a NaN, infinite or
    zero operand after flushing, a negative root operand); ``key`` (uint64): everything
    :func:`results` and :func:`reference_value` read of a special lane's operands -- each
    operand's class (NaN, infinity, zero, subnormal, normal) and sign after flushing, which class
    words of the special-value table and which conditions of the domain rules it meets.

    Special lanes with equal keys have equal allowed results and representative values: on them
    the IEEE result depends on the operands' classes and signs only (a NaN operand gives the
    fixed canonical NaN, a finite operand beside a zero or an infinity only its sign), the table
    rows and the rules only on the words and conditions the key holds, and the error bound is
    not consulted. (tests/sim/test_choices_special.py compares keyed and direct sets.)"""
    if form.semantics.high_word:
        return None
    contract = form.contract
    fmt, operands, _, _ = _prepare(xp, form, arrays)
    special = _special_lanes(xp, contract.operation, fmt, operands)
    key = xp.zeros(operands[0].shape, dtype=xp.uint64)
    shift = 0
    for index, bits in enumerate(operands):
        mag = bits & u64(xp, fmt.magnitude_mask)
        top = u64(xp, fmt.exponent_mask)
        cls = xp.where(mag > top, 0, xp.where(mag == top, 1, xp.where(mag == 0, 2, xp.where(
            mag < u64(xp, fmt.min_normal), 3, 4)))).astype(xp.uint64)
        features = [cls | ((bits >> u64(xp, fmt.width - 1)) << u64(xp, 3))]
        widths = [4]
        for case in contract.specials:
            features.append(class_match(xp, fmt, bits, case.operands[index]).astype(xp.uint64))
            widths.append(1)
        for rule in contract.rules:
            for at, cond in rule.when:
                if at == index:
                    features.append(_condition(xp, fmt, bits, cond).astype(xp.uint64))
                    widths.append(1)
        for feature, width in zip(features, widths):
            if shift + width > 64:
                return None
            key = key | (feature << u64(xp, shift))
            shift += width
    return special, key


def effective_reading(contract: Contract, requested: str) -> str:
    """The ulp reading a check applies: ``either`` narrowed to the one reading a contract's source
    admits (``ex2.approx.f32``: "2 ulp from the correctly rounded result"), else as requested."""
    readings = tuple(contract.readings) if contract.ulp is not None else ()
    if requested == "either" and len(readings) == 1:
        return readings[0]
    return requested


def allowed(xp, form: Form, result, arrays, tininess: str = TININESS_DEFAULT, ulp_reading: str = ULP_READING_DEFAULT):
    """Contract verdict per lane (see the module docstring); ``result``/``arrays`` uint64.

    ``ulp_reading`` selects how an ulp bound is read (``either``, ``exact``,
    ``correctly-rounded``; :mod:`tilecheck.spec.contract`); relative bounds have one reading.
    ``tininess`` does not narrow a contract: a result near 2^emin may be flushed either way.
    """
    check_ulp_reading(ulp_reading)
    ulp_reading = effective_reading(form.contract, ulp_reading)
    lanes = _classify(xp, form, arrays)
    fmt = lanes.fmt
    result = result.astype(xp.uint64)
    r_nan = (result & u64(xp, fmt.magnitude_mask)) > u64(xp, fmt.exponent_mask)
    canonical = u64(xp, lanes.canonical)
    nan_ok = r_nan & xp.where(lanes.nan_pinned, result == canonical, True)
    special_ok = xp.where(lanes.want_nan, nan_ok, result == lanes.want)
    special_ok = special_ok | (lanes.canonical_too & (result == canonical))
    ok = xp.where(lanes.special, special_ok, False)
    ok = xp.where(lanes.fixed, result == lanes.fixed_bits, ok)
    ok = xp.where(lanes.fixed_nan, r_nan, ok)
    ok = ok | lanes.unbounded
    if lanes.hi_form:
        # the low word of the result is always zero
        ok = ok & ((result & u64(xp, 0xFFFFFFFF)) == 0)
    todo = lanes.todo
    if not bool(xp.any(todo)):
        return ok
    sel = xp.nonzero(todo.reshape(-1))[0]
    r_bits = result.reshape(-1)[sel]
    op_bits = [a.reshape(-1)[sel] for a in lanes.operands]
    verdict = _bound_verdict(xp, lanes, form, r_bits, op_bits, ulp_reading)
    flat_ok = ok.reshape(-1).copy()
    flat_ok[sel] = verdict
    return flat_ok.reshape(ok.shape)


def _bound_verdict(xp, lanes: _Lanes, form: Form, r_bits, op_bits, reading: str, rn=None):
    """The bound on finite, non-special lanes (1-D arrays) under ``reading`` (``rn``: RN(x) when
    already computed)."""
    fn, fmt, ftz = lanes.fn, lanes.fmt, lanes.ftz
    if form.contract.ulp is None or reading == "exact":
        verdict = _bound_check(xp, fn, fmt, form, r_bits, op_bits, ftz)
    elif reading == "correctly-rounded":
        verdict = _rounded_check(xp, lanes, form, r_bits, op_bits, rn)
    else:
        verdict = _bound_check(xp, fn, fmt, form, r_bits, op_bits, ftz) | _rounded_check(xp, lanes, form, r_bits,
                                                                                          op_bits, rn)
    if lanes.hi_form:
        verdict = verdict & ((r_bits & u64(xp, 0xFFFFFFFF)) == 0)
    return verdict & _ieee_sign_ok(xp, fn, fmt, r_bits, op_bits)


def _ieee_sign_ok(xp, fn: str, fmt: Format, r_bits, op_bits):
    """The sign rule of ``spec/rules/contracts.yaml``: a bound grants a magnitude, never the sign.
    On bound lanes (finite, non-zero operands; a root's operand positive) the allowed results have
    the sign IEEE 754 gives the exact result -- the operands' sign product for ``div``/``rcp``,
    positive for ``sqrt``/``rsqrt`` and ``ex2`` -- zeros included, so no allowed set crosses zero."""
    sign = u64(xp, fmt.sign_mask)
    if fn in ("lg2", "tanh") or fn in sincos.FUNCTIONS:
        # its bound decides the sign: an absolute bound crosses zero (lg2 near x = 1, sin and cos
        # near their zeros, the half tanh near 0), a relative one keeps the exact result's sign by
        # itself (spec/ptx/lg2.yaml, tanh.yaml)
        return xp.ones(r_bits.shape, dtype=bool)
    if fn in ("div", "rcp"):
        want = xp.zeros(r_bits.shape, dtype=xp.uint64)
        for b in op_bits:
            want = want ^ (b & sign)
    else:
        want = u64(xp, 0)
    return (r_bits & sign) == want


def _value_index(xp, fmt: Format, bits):
    """Position of finite or infinite patterns among the format's values in real-number order
    (int64; both zeros are 0, the infinity is one past the largest finite magnitude)."""
    m = (bits & u64(xp, fmt.magnitude_mask)).astype(xp.int64)
    return xp.where((bits >> u64(xp, fmt.width - 1)) != 0, -m, m)


def _nearest_unflushed(xp, lanes: _Lanes, op_bits):
    """RN(x) of the exact function on (already flushed) finite operands, without output flushing."""
    fmt = lanes.fmt
    rule = ops.NanRule(False, lanes.canonical, fixed=lanes.canonical)
    mode = ops.Mode("rn")
    if lanes.fn == "ex2":
        return exp2.rounded(xp, fmt, _to_f64(xp, fmt, op_bits[0]))
    if lanes.fn == "lg2":
        return log2.rounded(xp, fmt, _to_f64(xp, fmt, op_bits[0]))
    if lanes.fn in sincos.FUNCTIONS:
        return sincos.rounded(xp, lanes.fn, fmt, _to_f64(xp, fmt, op_bits[0]))
    if lanes.fn == "tanh":
        return tanh.rounded(xp, fmt, _to_f64(xp, fmt, op_bits[0]))
    with np.errstate(all="ignore"):
        if lanes.fn == "rsqrt":
            return _rsqrt_rn(xp, fmt, op_bits[0], mode, rule)
        return ops.apply(xp, lanes.fn, fmt, list(op_bits), mode, rule)


def _rounded_check(xp, lanes: _Lanes, form: Form, r_bits, op_bits, rn=None):
    """The ``correctly-rounded`` reading of a k-ulp bound: ``r`` at most k values from RN(x).

    With ``.ftz`` a subnormal is never written; a zero is allowed when one of the k values
    around RN(x) is a zero or a subnormal of that zero's sign (which the hardware flushes).
    """
    fmt = lanes.fmt
    k = int(math.floor(form.contract.ulp))
    centre = _value_index(xp, fmt, _nearest_unflushed(xp, lanes, op_bits) if rn is None else rn)
    r_mag = r_bits & u64(xp, fmt.magnitude_mask)
    r_nan = r_mag > u64(xp, fmt.exponent_mask)
    idx = _value_index(xp, fmt, r_bits)
    near = xp.abs(idx - centre) <= k
    if lanes.ftz:
        top = fmt.min_normal - 1  # largest subnormal magnitude
        r_zero = r_mag == 0
        r_neg = (r_bits >> u64(xp, fmt.width - 1)) != 0
        pos_zero = (centre - k <= top) & (centre + k >= 0)
        neg_zero = (centre - k <= 0) & (centre + k >= -top)
        zero_ok = xp.where(r_neg, neg_zero, pos_zero)
        r_sub = (r_mag != 0) & (r_mag < u64(xp, fmt.min_normal))
        near = xp.where(r_zero, zero_ok, near & ~r_sub)
    return near & ~r_nan


def _bound_check(xp, fn: str, fmt: Format, form: Form, r_bits, op_bits, ftz: bool):
    """The ``exact`` reading: bound verdict for finite, non-special lanes (1-D arrays)."""
    contract = form.contract
    if fn == "ex2":
        # 2^x is transcendental: decided against its binary64 enclosure, exactly where that is too close
        if not exp2.supports(fmt):
            raise NotImplementedError(f"{form.name}: ex2 is modelled for formats of <= 24 bits")
        x = _to_f64(xp, fmt, op_bits[0])
        if contract.ulp is None:
            return exp2.within_relative(xp, fmt, x, r_bits, contract.relative_log2, ftz)
        return exp2.within(xp, fmt, x, r_bits, contract.ulp, ftz)
    if fn == "lg2":
        # log2(x) is transcendental: decided against a proved enclosure, exactly where that is too close
        if not log2.supports(fmt):
            raise NotImplementedError(f"{form.name}: lg2 is modelled for binary32")
        return log2.within(xp, fmt, _to_f64(xp, fmt, op_bits[0]), r_bits, contract, ftz)
    if fn in sincos.FUNCTIONS:
        # sin and cos are transcendental: decided against a proved enclosure, exactly where too close
        if not sincos.supports(fmt):
            raise NotImplementedError(f"{form.name}: {fn} is modelled for binary32")
        x = _to_f64(xp, fmt, op_bits[0])
        t, _ = sincos.bound_log2(xp, x, contract.bound.ranges)  # every lane judged here is bounded
        return sincos.within(xp, fn, fmt, x, r_bits, t, ftz)
    if fn == "tanh":
        # transcendental too: the same two layers, a relative bound for f32, absolute for the halves
        if not tanh.supports(fmt):
            raise NotImplementedError(f"{form.name}: tanh is modelled for formats of <= 24 bits")
        return tanh.within(xp, fmt, _to_f64(xp, fmt, op_bits[0]), r_bits, contract)
    ulp, rel = contract.ulp, contract.relative_log2
    r_mag = r_bits & u64(xp, fmt.magnitude_mask)
    r_nan = r_mag > u64(xp, fmt.exponent_mask)
    r_inf = r_mag == u64(xp, fmt.exponent_mask)
    r_sub = (r_mag != 0) & (r_mag < u64(xp, fmt.min_normal))
    vals = [_to_f64(xp, fmt, b) for b in op_bits]
    x = _f64_value(xp, fn, vals)
    ax = xp.abs(x)
    r = _to_f64(xp, fmt, xp.where(r_nan | r_inf, u64(xp, 0), r_bits))
    max_finite = float(fmt.to_fraction(fmt.max_finite))
    with np.errstate(all="ignore"):
        if ulp is not None:
            m, e = xp.frexp(ax)
            e_bin = xp.maximum(e.astype(xp.int64) - 1, fmt.emin)
            bound = ulp * xp.ldexp(xp.ones_like(ax), (e_bin - fmt.mantissa_bits).astype(xp.int32))
            near_pow2 = (xp.abs(m - 0.5) < 2.0 ** -40) | (xp.abs(m - 1.0) < 2.0 ** -40)
        else:
            bound = (2.0 ** rel) * ax
            near_pow2 = xp.zeros(ax.shape, dtype=bool)
        err = xp.abs(r - x)
        # float64 x carries up to ~2 roundings of error (rsqrt: sqrt then divide); decide only
        # lanes whose error is clear of the bound by more than that, the rest exactly. For f32
        # contracts the slack is negligible; for 1-ulp f64 bounds every lane is decided exactly.
        slack = ax * _EVAL_ERROR + err * 2.0 ** -52
        decided_ok = err + slack <= bound * (1 - _MARGIN)
        decided_bad = err - slack >= bound * (1 + _MARGIN)
    undecided = ~decided_ok & ~decided_bad | near_pow2
    verdict = decided_ok & ~undecided
    if ulp is not None and fn in ("div", "rcp", "sqrt") and fmt.width <= 32 and bool(xp.any(undecided)):
        # the lanes left undecided are mostly probes at the edge of the allowed range that lie on
        # the bound (an exact result: a quotient of short significands) or within a hair of it (a
        # result far below the subnormal ulp the bound is made of): decide those rigorously here
        idx = xp.nonzero(undecided)[0]
        known, within = _exactly_within(xp, fn, fmt, [v[idx] for v in vals], x[idx], r[idx], bound[idx], m[idx])
        verdict[idx] = xp.where(known, within, verdict[idx])
        undecided[idx] = ~known
    # the sign rule (:func:`_ieee_sign_ok`) is applied by the caller, for every reading
    # overflow: x beyond the largest finite number accepts the infinity of its sign
    beyond = ax > max_finite
    x_neg = xp.signbit(x)
    r_neg = (r_bits >> u64(xp, fmt.width - 1)) != 0
    verdict = xp.where(r_inf, beyond & (r_neg == x_neg), verdict)
    undecided = undecided & ~r_inf
    verdict = verdict & ~r_nan
    undecided = undecided & ~r_nan
    if ftz:
        # flushed results: subnormals never; a zero of x's sign when the bound reaches below 2^emin
        min_normal = 2.0 ** fmt.emin
        with np.errstate(all="ignore"):
            reach = ax - bound
        r_zero = r_mag == 0
        zero_ok = r_zero & (r_neg == x_neg) & (reach < min_normal * (1 - _MARGIN))
        zero_undecided = r_zero & (r_neg == x_neg) & (xp.abs(reach - min_normal) <= min_normal * _MARGIN)
        verdict = xp.where(r_sub, False, verdict | zero_ok)
        undecided = (undecided & ~r_sub & ~zero_ok) | zero_undecided
    if bool(xp.any(undecided)):
        verdict = _exact_fallback(xp, fn, fmt, form, r_bits, op_bits, ftz, verdict, undecided)
    return verdict


def _exactly_within(xp, fn: str, fmt: Format, vals, x, r, bound, m):
    """(known, within): the exact reading's ``|r - x| <= bound`` decided rigorously in float64 on
    the lanes a safety margin left undecided (``known``; the rest go to rationals). ``bound`` and
    ``m`` (the frexp significand of ``|x|``) are :func:`_bound_check`'s, from x's float64 binade.

    The float64 ``x`` is one correctly rounded operation on exact operands, so the exact result
    lies within ``eta = 2^-52 |x|`` of it -- and ``eta = 0`` where x is exact: its Dekker product
    with the divisor (rcp: the operand; sqrt: itself) equals the dividend (rcp: 1; sqrt: the
    operand) with no error. The bound B is exact where the exact result's binade is certain (x
    exact, x clear of a power of two by more than eta, or x below 2^emin, where the ulp clamps
    to the subnormal one as in :func:`_within_exact`). TwoSum gives ``r - x = d + t`` exactly
    (``d`` rounded), so the exact difference is ``d + s`` with ``|s - t| <= eta``:
    ``|d| + |t| + eta < B`` is within, ``|d| - |t| - eta > B`` is not (both with room for the
    roundings of these sums), and ``|d| = B`` is decided by the side ``t`` lies on when it
    outweighs eta (or both are 0). Operands of formats up to 32 bits: |x| lies between 2^-300
    and 2^300, so no split or sum overflows and no product's error term underflows."""
    room = 1.0 + 2.0 ** -50
    with np.errstate(all="ignore"):
        if fn == "div":
            y, want = vals[1], vals[0]
        elif fn == "rcp":
            y, want = vals[0], xp.ones_like(x)
        else:  # sqrt
            y, want = x, vals[0]
        p = x * y
        finite = xp.isfinite(x) & (x != 0)
        exact = (p == want) & (ops._two_product_error(xp, x, y, p) == 0) & finite
        ax = xp.abs(x)
        eta = xp.where(exact, 0.0, ax * 2.0 ** -52)
        below = ax * room < 2.0 ** fmt.emin
        certain = finite & (exact | ((m - 0.5 > 2.0 ** -50) & (1.0 - m > 2.0 ** -50)) | below)
        d = r - x
        bb = d - r
        t = (r - (d - bb)) + (-x - bb)
        ad, at = xp.abs(d), xp.abs(t)
        spread = (at + eta) * room  # at least |s|
        inside = (ad < bound) & (spread * room <= bound - ad)
        outside = (ad > bound) & (spread * room < ad - bound)
        on = ad == bound
        toward = (t != 0) & (xp.signbit(t) != xp.signbit(d)) & (at > eta * room)  # s shrinks |d|
        away = (t != 0) & (xp.signbit(t) == xp.signbit(d)) & (at > eta * room)
        on_in = on & (toward | ((t == 0) & (eta == 0)))
        on_out = on & away
    return certain & (inside | outside | on_in | on_out), inside | on_in


def _to_f64(xp, fmt: Format, bits):
    """Exact float64 values of finite patterns (formats up to binary64)."""
    return float64_values(xp, fmt, bits)


def _exact_fallback(xp, fn, fmt, form, r_bits, op_bits, ftz, verdict, undecided):
    contract = form.contract
    out = verdict.copy()
    host = lambda a: a.get() if hasattr(a, "get") else np.asarray(a)  # noqa: E731 - CuPy -> numpy
    # select on the array's own device: only the undecided lanes travel to the host and back
    idx_dev = xp.nonzero(undecided)[0]
    r_h = host(r_bits[idx_dev])
    ops_h = [host(b[idx_dev]) for b in op_bits]
    goods = np.zeros(r_h.shape[0], dtype=bool)
    for i in range(r_h.shape[0]):
        goods[i] = _exact_lane(fn, fmt, contract, ftz, int(r_h[i]), [int(b[i]) for b in ops_h])
    out[idx_dev] = xp.asarray(goods)
    return out


def _exact_lane(fn, fmt, contract, ftz: bool, rb: int, operand_bits: list[int]) -> bool:
    """Exact verdict of one lane (result bits ``rb``, finite non-special operands)."""
    values = [fmt.to_fraction(b) for b in operand_bits]
    r = fmt.to_fraction(rb)
    if r is None:
        return False
    good = _within_exact(fn, fmt, r, values, contract.ulp, contract.relative_log2)
    if ftz:
        mag = rb & fmt.magnitude_mask
        if 0 < mag < fmt.min_normal:
            good = False
        elif mag == 0:
            q, is_root = _exact_parts(fn, values)
            x_neg = q < 0
            if bool(rb & fmt.sign_mask) == x_neg and not good:
                good = _zero_reachable(fn, fmt, q, is_root, contract)
    return good


def _zero_reachable(fn, fmt, q, is_root, contract) -> bool:
    """Under .ftz: is some value below 2^emin (a subnormal the hardware would flush) acceptable?

    Either the exact result itself is below 2^emin, or the largest subnormal of its sign is
    within the bound.
    """
    tiny = Fraction(2) ** fmt.emin
    mag = abs(q)
    if (mag < tiny * tiny) if is_root else (mag < tiny):
        return True
    largest_sub = tiny - Fraction(2) ** (fmt.emin - fmt.mantissa_bits)
    if is_root:
        return _within_exact("sqrt", fmt, largest_sub, [mag], contract.ulp, contract.relative_log2)
    cand = largest_sub if q > 0 else -largest_sub
    return _within_exact("div", fmt, cand, [q, Fraction(1)], contract.ulp, contract.relative_log2)


# ---------------------------------------------------------------------------------------------
# every allowed result


def _window(form: Form, fmt: Format, stride: int, reading: str) -> int:
    """Half-width, in values (of ``stride``), of a window around the centre (:func:`_centre`, within
    two values of RN(x)) that holds every value the bound allows: k ulps span at most 2k values
    (the spacing halves below a power of two); a relative bound 2^t |x| spans fewer than
    2^(t + 1 + mantissa_bits) values per side, twice that below a power of two; plus the centre's
    distance from RN(x) and one more. :func:`_bound_ranges` checks that the window's edges are
    rejected, so a window too small is an error, never a wrong range."""
    c = form.contract
    if c.ulp is not None:
        return 2 * int(math.ceil(c.ulp)) + 4
    return int(math.ceil(2.0 ** (c.relative_log2 + 2 + fmt.mantissa_bits) / stride)) + 4


def _centre(xp, lanes: _Lanes, op_bits):
    """A value within two values of RN(x), unflushed, from float64 arithmetic (one rounding, or
    two for rsqrt, then the conversion to the format: within two values for every format up to
    binary64, subnormal results included); RN(x) itself is needed only by the correctly rounded
    reading, which computes it exactly."""
    fmt = lanes.fmt
    vals = [_to_f64(xp, fmt, b) for b in op_bits]
    x = _f64_value(xp, lanes.fn, vals)
    if fmt.name == "f64":
        return x.view(xp.uint64)
    if fmt.name == "f32":
        with np.errstate(all="ignore"):
            return x.astype(xp.float32).view(xp.uint32).astype(xp.uint64)
    return _nearest_unflushed(xp, lanes, op_bits)


def results(xp, form: Form, arrays, ulp_reading: str = ULP_READING_DEFAULT) -> dict:
    """Every result the contract allows, per lane, as ranges (see ``tilecheck.model.api.AllowedResults``).

    Returns a dict of arrays (shape of the operands): ``lo``, ``hi`` (uint64 patterns, total
    order), ``empty``, ``extra`` / ``extra_used`` (shape + (2,)), ``nan``, ``nan_bits`` (shape +
    (1,), 0 = any NaN), ``unbounded``, and ``stride``. The bound lanes are found by probing
    :func:`allowed`'s own verdict on a window of values around RN(x), and the ends are checked
    to lie inside the window, so the ranges are exactly the values ``allowed`` accepts.
    """
    check_ulp_reading(ulp_reading)
    ulp_reading = effective_reading(form.contract, ulp_reading)
    out_shape = arrays[0].shape
    lanes = _classify(xp, form, [a.reshape(-1) for a in arrays])  # 1-D throughout, reshaped at the end
    fmt = lanes.fmt
    shape = lanes.operands[0].shape
    stride = 1 << 32 if lanes.hi_form else 1
    lo = xp.zeros(shape, dtype=xp.uint64)
    hi = xp.zeros(shape, dtype=xp.uint64)
    empty = xp.ones(shape, dtype=bool)
    extra = xp.zeros(shape + (2,), dtype=xp.uint64)
    extra_used = xp.zeros(shape + (2,), dtype=bool)
    canonical = u64(xp, lanes.canonical)
    # special-table lanes
    value = lanes.special & ~lanes.want_nan
    lo = xp.where(value, lanes.want, lo)
    hi = xp.where(value, lanes.want, hi)
    empty = empty & ~value
    nan = (lanes.special & lanes.want_nan) | lanes.canonical_too | lanes.fixed_nan | lanes.unbounded
    any_nan = (lanes.special & lanes.want_nan & ~lanes.nan_pinned) | lanes.fixed_nan | lanes.unbounded
    nan_bits = xp.where(nan & ~any_nan, canonical, u64(xp, 0)).reshape(shape + (1,))
    # domain rules
    lo = xp.where(lanes.fixed, lanes.fixed_bits, lo)
    hi = xp.where(lanes.fixed, lanes.fixed_bits, hi)
    empty = empty & ~lanes.fixed
    inf = u64(xp, fmt.inf)
    lo = xp.where(lanes.unbounded, inf | u64(xp, fmt.sign_mask), lo)
    hi = xp.where(lanes.unbounded, inf, hi)
    empty = empty & ~lanes.unbounded
    todo = lanes.todo
    if bool(xp.any(todo)):
        sel = xp.nonzero(todo.reshape(-1))[0]
        op_bits = [a.reshape(-1)[sel] for a in lanes.operands]
        parts = _bound_ranges(xp, lanes, form, op_bits, stride, ulp_reading)
        lo[sel], hi[sel], empty[sel], extra[sel], extra_used[sel] = parts
    out = {"lo": lo, "hi": hi, "empty": empty, "extra": extra, "extra_used": extra_used, "nan": nan,
           "nan_bits": nan_bits, "unbounded": lanes.unbounded}
    out = {k: v.reshape(out_shape + v.shape[1:]) for k, v in out.items()}
    out["stride"] = stride
    return out


def _estimated_ends(xp, lanes: _Lanes, form: Form, op_bits, stride: int, reading: str, rn):
    """(ok, k_lo, k_hi): the allowed range of each lane from its float64 ends, confirmed exactly.

    The bound allows an interval of reals around x (the exact reading: |r - x| <= B; the correctly
    rounded reading: k values either side of RN(x); either: their union, which is one interval as
    both hold RN(x)), so the allowed values form one run in real order. Its ends are estimated from
    x -/+ B in float64 and then confirmed by :func:`_bound_verdict` itself: the ends are allowed and
    the values just outside them are not (a zero just outside is the caller's: zeros are probed on
    their own; past an infinity there is nothing to refuse). Lanes where that fails, or that allow
    no value but zeros, are left ``ok = False`` for :func:`_window_ends`. Only binary32 and binary64
    results, whole-pattern values (``stride`` 1) and bounds of at least half an ulp."""
    n = op_bits[0].shape[0]
    no = xp.zeros(n, dtype=bool), xp.zeros(n, dtype=xp.int64), xp.zeros(n, dtype=xp.int64)
    fmt, c = lanes.fmt, form.contract
    if stride != 1 or fmt.name not in ("f32", "f64") or (c.ulp is not None and c.ulp < 0.5):
        return no
    x = _f64_value(xp, lanes.fn, [_to_f64(xp, fmt, b) for b in op_bits])
    with np.errstate(all="ignore"):
        ax = xp.abs(x)
        if c.ulp is not None:
            _, e = xp.frexp(ax)
            e_bin = xp.maximum(e.astype(xp.int64) - 1, fmt.emin)
            bound = c.ulp * xp.ldexp(xp.ones_like(ax), (e_bin - fmt.mantissa_bits).astype(xp.int32))
        else:
            bound = (2.0 ** c.relative_log2) * ax
        lo_v, hi_v = x - bound, x + bound
        if fmt.name == "f32":
            lo_r = lo_v.astype(xp.float32)
            hi_r = hi_v.astype(xp.float32)
            k_lo = _order_key(xp, fmt, lo_r.view(xp.uint32).astype(xp.uint64), 1)
            k_hi = _order_key(xp, fmt, hi_r.view(xp.uint32).astype(xp.uint64), 1)
            k_lo = k_lo + (lo_r.astype(xp.float64) < lo_v)
            k_hi = k_hi - (hi_r.astype(xp.float64) > hi_v)
        else:
            k_lo = _order_key(xp, fmt, lo_v.view(xp.uint64), 1)
            k_hi = _order_key(xp, fmt, hi_v.view(xp.uint64), 1)
    k_lo, k_hi = k_lo.astype(xp.int64), k_hi.astype(xp.int64)
    if c.ulp is not None and reading != "exact":
        centre = _order_key(xp, fmt, rn, 1)
        k = int(math.floor(c.ulp))
        # k values either side of RN(x) in value order: keys skip -0, so count across zero with care
        r_lo, r_hi = centre - k, centre + k
        if reading == "correctly-rounded":
            k_lo, k_hi = r_lo, r_hi
        else:
            k_lo, k_hi = xp.minimum(k_lo, r_lo), xp.maximum(k_hi, r_hi)
    top = int(fmt.inf)
    neg = xp.signbit(x)
    if c.ulp is None or reading != "correctly-rounded":
        # past the largest finite value the exact reading allows the infinity of x's sign
        beyond = xp.isfinite(x) & (ax > float(fmt.to_fraction(fmt.max_finite)))
        k_hi = xp.where(beyond & ~neg, top, k_hi)
        k_lo = xp.where(beyond & neg, -top - 1, k_lo)
    k_lo = xp.clip(k_lo, -top - 1, top)
    k_hi = xp.clip(k_hi, -top - 1, top)
    # the sign rule keeps the run on x's side of zero: its non-zero part starts at the smallest
    # value there (a subnormal, or the smallest normal under .ftz); zeros are probed on their own
    # by the caller, so a zero just outside the run is not probed here
    smallest = fmt.min_normal if lanes.ftz else 1
    k_lo = xp.where(neg, k_lo, xp.maximum(k_lo, smallest))
    k_hi = xp.where(neg, xp.minimum(k_hi, -smallest - 1), k_hi)
    ok = (k_lo <= k_hi) & xp.isfinite(x)
    k_lo = xp.where(ok, k_lo, 1)
    k_hi = xp.where(ok, k_hi, 1)
    # nothing lies past an infinity: a run that ends there has no outside value to refuse
    probes = ((k_lo - 1, False, k_lo == -top - 1), (k_lo, True, None), (k_hi, True, None), (k_hi + 1, False, k_hi == top))
    for key, want, at_end in probes:
        key = xp.clip(key, -top - 1, top)
        verdict = _bound_verdict(xp, lanes, form, _from_key(xp, fmt, key, 1), op_bits, reading, rn)
        if want:
            ok = ok & verdict
        else:  # refused just outside, unless that is a zero (the caller probes zeros) or nothing
            ok = ok & (~verdict | (key == 0) | (key == -1) | at_end)
    return ok, k_lo, k_hi


def _window_ends(xp, lanes: _Lanes, form: Form, op_bits, stride: int, reading: str, rn):
    """(has, k_lo, k_hi): the first and last allowed non-zero value (order keys) per lane, found by
    probing every value of a window around the centre (see :func:`_window`)."""
    fmt = lanes.fmt
    n = op_bits[0].shape[0]
    centre = _centre(xp, lanes, op_bits)
    if lanes.hi_form:
        centre = centre & u64(xp, _HI_MASK)
    w = _window(form, fmt, stride, reading)
    top = int(fmt.inf // stride)  # key of +inf; -inf is -top - 1
    c_key = _order_key(xp, fmt, centre, stride)
    offsets = range(-w - 1, w + 2)
    rows = []
    keys = []
    for d in offsets:
        key = xp.clip(c_key + d, -top - 1, top)
        keys.append(key)
        rows.append(_bound_verdict(xp, lanes, form, _from_key(xp, fmt, key, stride), op_bits, reading, rn))
    keys = xp.stack(keys)
    ok = xp.stack(rows)
    zero_row = (keys == 0) | (keys == -1)
    clipped_lo = keys[0] == -top - 1
    clipped_hi = keys[-1] == top
    # under .ftz the value next to an allowed zero at the window's edge is a subnormal (never allowed)
    edge_zero_ok = zero_row & lanes.ftz
    if bool(xp.any((ok[0] & ~clipped_lo & ~edge_zero_ok[0]) | (ok[-1] & ~clipped_hi & ~edge_zero_ok[-1]))):
        raise AssertionError(f"{form.name}: an allowed value lies outside the search window around RN(x)")
    nonzero = ok & ~zero_row
    has = xp.any(nonzero, axis=0)
    rows_idx = xp.arange(ok.shape[0])[:, None]
    first = xp.min(xp.where(nonzero, rows_idx, ok.shape[0]), axis=0)
    last = xp.max(xp.where(nonzero, rows_idx, -1), axis=0)
    inside = (rows_idx >= first[None, :]) & (rows_idx <= last[None, :])
    if bool(xp.any(inside & ~ok & has[None, :])):
        raise AssertionError(f"{form.name}: the allowed values around RN(x) are not contiguous")
    cols = xp.arange(n)
    k_lo = keys[xp.minimum(first, ok.shape[0] - 1), cols]
    k_hi = keys[xp.maximum(last, 0), cols]
    return has, k_lo, k_hi


def _bound_ranges(xp, lanes: _Lanes, form: Form, op_bits, stride: int, reading: str):
    """(lo, hi, empty, extra, extra_used) of the bound lanes (1-D operand arrays)."""
    fmt = lanes.fmt
    n = op_bits[0].shape[0]
    # RN(x) once for every probe of the correctly rounded reading
    rn = _nearest_unflushed(xp, lanes, op_bits) if form.contract.ulp is not None and reading != "exact" else None
    if lanes.fn in ("lg2", "tanh") or lanes.fn in sincos.FUNCTIONS:
        # an absolute bound crosses zero: one run of values across both zeros, no zero probes (a
        # relative one never reaches zero: its run lies on one side)
        x = _to_f64(xp, fmt, op_bits[0])
        if lanes.fn == "lg2":
            k_lo, k_hi, ok = log2.ranges(xp, fmt, x, form.contract, lanes.ftz)
        elif lanes.fn == "tanh":
            k_lo, k_hi, ok = tanh.ranges(xp, fmt, x, form.contract)
        else:
            t, _ = sincos.bound_log2(xp, x, form.contract.bound.ranges)
            k_lo, k_hi, ok = sincos.ranges(xp, lanes.fn, fmt, x, t, lanes.ftz)
        if not bool(xp.all(ok)):
            raise AssertionError(f"{form.name}: the allowed results are not one confirmed run of values")
        extra = xp.zeros((n, 2), dtype=xp.uint64)
        return (_from_key(xp, fmt, k_lo, stride), _from_key(xp, fmt, k_hi, stride), xp.zeros(n, dtype=bool), extra,
                xp.zeros((n, 2), dtype=bool))
    has, k_lo, k_hi = _estimated_ends(xp, lanes, form, op_bits, stride, reading, rn)
    redo = ~has
    if bool(xp.any(redo)):
        sel = xp.nonzero(redo)[0]
        parts = _window_ends(xp, lanes, form, [b[sel] for b in op_bits], stride, reading,
                             None if rn is None else rn[sel])
        has[sel], k_lo[sel], k_hi[sel] = parts
    # zeros: probed on their own (under .ftz a zero stands for every flushed subnormal, which may
    # lie far from the window)
    zeros = []
    for key in (-1, 0):
        zbits = _from_key(xp, fmt, xp.full(n, key, dtype=xp.int64), stride)
        zeros.append(_bound_verdict(xp, lanes, form, zbits, op_bits, reading, rn))
    neg_ok, pos_ok = zeros
    # lanes whose only allowed values are zeros: the range is those zeros
    only_zero = ~has & (neg_ok | pos_ok)
    k_lo = xp.where(only_zero, xp.where(neg_ok, -1, 0), k_lo)
    k_hi = xp.where(only_zero, xp.where(pos_ok, 0, -1), k_hi)
    empty = ~has & ~only_zero
    lo = _from_key(xp, fmt, k_lo, stride)
    hi = _from_key(xp, fmt, k_hi, stride)
    extra = xp.zeros((n, 2), dtype=xp.uint64)
    extra_used = xp.zeros((n, 2), dtype=bool)
    for slot, (key, zok) in enumerate(((-1, neg_ok), (0, pos_ok))):
        outside = has & zok & ((k_lo > key) | (k_hi < key))
        extra[:, slot] = xp.where(outside, _from_key(xp, fmt, xp.full(n, key, dtype=xp.int64), stride), 0)
        extra_used[:, slot] = outside
    return lo, hi, empty, extra, extra_used


# ---------------------------------------------------------------------------------------------
# representative values


def reference_value(xp, form: Form, arrays, tininess: str = TININESS_DEFAULT):
    """Round-to-nearest value of the exact function under the form's flushing (uint64 bits).

    The upper-word f64 forms compute on the 1.11.20 input and clear the low result word.
    """
    fn = form.contract.operation
    fmt, operands, ftz, hi_form = _prepare(xp, form, arrays)
    canonical = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    rule = ops.NanRule(False, canonical, fixed=canonical)
    mode = ops.Mode("rn", ftz, tininess)
    with np.errstate(all="ignore"):
        if fn in _TRANSCENDENTAL:
            out = _transcendental_reference(xp, form, arrays, fmt, ftz)
        elif fn == "rsqrt":
            out = _rsqrt_rn(xp, fmt, operands[0], mode, rule)
        else:
            out = ops.apply(xp, fn, fmt, operands, mode, rule)
    if form.contract.rules:
        # lanes a domain rule fixes take its result (a rule that bounds nothing keeps RN)
        lanes = _classify(xp, form, arrays)
        out = xp.where(lanes.fixed, lanes.fixed_bits, out)
        out = xp.where(lanes.fixed_nan, u64(xp, canonical), out)
    if hi_form:
        is_nan = (out & u64(xp, fmt.magnitude_mask)) > u64(xp, fmt.exponent_mask)
        # truncating the low word keeps the value within the provisional relative bound
        out = xp.where(is_nan, u64(xp, canonical), out & u64(xp, _HI_MASK))
        if ftz:
            out = flush_subnormal_bits(xp, fmt, out)
    return out


def _transcendental_reference(xp, form: Form, arrays, fmt: Format, ftz: bool):
    """RN(2^x), RN(log2 x), RN(sin x), RN(cos x) or RN(tanh x) on the lanes the bound judges
    (finite non-zero x; positive for log2), bounded or not, flushed to zero under ``.ftz`` where
    subnormal; the special table's result elsewhere (a NaN as the form's canonical NaN). sin and
    cos beyond the range their model is proved for take numpy's value (a representative no check
    judges)."""
    fn = form.contract.operation
    lanes = _classify(xp, form, arrays)
    out = lanes.want.copy()
    todo = (lanes.todo | lanes.unbounded).reshape(-1)
    if bool(xp.any(todo)):
        sel = xp.nonzero(todo)[0]
        bits = lanes.operands[0].reshape(-1)[sel]
        x = _to_f64(xp, fmt, bits)
        if fn in sincos.FUNCTIONS:
            modelled = xp.abs(x) <= sincos.LIMIT
            numpy_rn = _numpy_values(xp, fn, fmt, bits, ops.NanRule(False, lanes.canonical,
                                                                          fixed=lanes.canonical))
            rn = xp.where(modelled, sincos.rounded(xp, fn, fmt, xp.where(modelled, x, 1.0)), numpy_rn)
        else:
            rn = {"ex2": exp2, "lg2": log2, "tanh": tanh}[fn].rounded(xp, fmt, x)
        if ftz:
            rn = flush_subnormal_bits(xp, fmt, rn)
        flat = out.reshape(-1)
        flat[sel] = rn
        out = flat.reshape(out.shape)
    return out


def _numpy_values(xp, fn: str, fmt: Format, a, rule: ops.NanRule):
    """numpy's float64 ``fn`` of operands ``a`` (bits), rounded to ``fmt`` (binary32, binary16 or
    bfloat16), a NaN as the rule's: the IEEE result on special operands, a representative value
    elsewhere (the contracts of these functions judge nothing there)."""
    host = lambda v: v.get() if hasattr(v, "get") else np.asarray(v)  # noqa: E731 - CuPy -> numpy
    bits = host(a).astype(np.uint64)
    with np.errstate(all="ignore"):
        y = _NUMPY_FUNCTIONS[fn](fmt.to_float64(bits.astype(fmt.uint)))
        if fmt.name == "f32":
            out = y.astype(np.float32).view(np.uint32).astype(np.uint64)
        elif fmt.name == "f16":
            out = y.astype(np.float16).view(np.uint16).astype(np.uint64)
        else:  # bfloat16: the binary32 value's upper half, rounded to nearest even (no NaN reaches here)
            w = y.astype(np.float32).view(np.uint32).astype(np.uint64)
            out = (w + 0x7FFF + ((w >> 16) & 1)) >> 16
    nan = np.isnan(y)
    out = np.where(nan, np.uint64(rule.fixed if rule.fixed is not None else fmt.canonical_nan), out)
    return xp.asarray(out)


def _rsqrt_rn(xp, fmt: Format, a, mode: ops.Mode, rule: ops.NanRule):
    """Correctly rounded 1/sqrt(a) (round to nearest), specials by IEEE rules."""
    mag = a & u64(xp, fmt.magnitude_mask)
    finite_pos = (mag != 0) & (mag < u64(xp, fmt.exponent_mask)) & ((a >> u64(xp, fmt.width - 1)) == 0)
    if mode.flush_in:
        finite_pos = finite_pos & (mag >= u64(xp, fmt.min_normal))
    out = xp.zeros(a.shape, dtype=xp.uint64)
    flat_other = ~finite_pos.reshape(-1)
    if bool(xp.any(flat_other)):  # specials (and flushed subnormals) by IEEE rules, on those lanes only
        idx = xp.nonzero(flat_other)[0]
        flat = out.reshape(-1)
        flat[idx] = _ieee_special(xp, "rsqrt", fmt, [a.reshape(-1)[idx].astype(xp.uint64)], rule)
        out = flat.reshape(a.shape)
    if fmt.precision <= 24:
        pos = finite_pos.reshape(-1)
        if not bool(xp.any(pos)):  # every lane special (negative inputs, say): nothing more to compute
            return out
        if bool(xp.all(pos)):
            return xp.where(finite_pos, _rsqrt_small(xp, fmt, a, mode), out)
        flat = out.reshape(-1)
        flat[pos] = _rsqrt_small(xp, fmt, a.reshape(-1)[pos], mode)  # lane by lane: on those lanes only
        return flat.reshape(out.shape)
    host = lambda v: v.get() if hasattr(v, "get") else np.asarray(v)  # noqa: E731
    idx = np.nonzero(host(finite_pos).reshape(-1))[0]
    if idx.size == 0:
        return out
    flat_a = host(a).reshape(-1)
    results = np.empty(idx.size, dtype=np.uint64)
    for n, i in enumerate(idx):
        results[n] = _rsqrt_exact_bits(fmt, int(flat_a[i]), mode)
    flat = out.reshape(-1)
    flat[xp.asarray(idx)] = xp.asarray(results)
    return flat.reshape(out.shape)


def _rsqrt_small(xp, fmt: Format, a, mode: ops.Mode):
    """1/sqrt of patterns of a format with at most 24 significand bits, rounded per ``mode``.

    Only positive finite non-zero lanes are meaningful (the caller selects them). Writing the
    value as ``M * 2**E`` with ``E`` even (``M < 2**25``), ``y = floor(2**K / sqrt(M))`` with
    ``K = 26 + ceil(bits(M) / 2)`` has 27 bits (or is 2**27), more than rounding needs. A float64 estimate
    of ``y`` is within 2**-25 of the real quotient, so its floor is off by at most one; the exact
    test ``y*y*M <= 2**(2K) < (y+1)**2 * M`` corrects it and gives the sticky bit.
    """
    u = unpack(xp, fmt, a)
    odd = (u.exp & 1) != 0
    m = xp.where(odd, u.sig << u64(xp, 1), u.sig)
    m = xp.where(m == 0, u64(xp, 1), m)  # lanes the caller discards: keep the arithmetic defined
    e = xp.where(odd, u.exp - 1, u.exp)
    k = 26 + (bit_length(xp, m) + 1) // 2
    with np.errstate(all="ignore"):
        est = xp.ldexp(1.0 / xp.sqrt(m.astype(xp.float64)), k.astype(xp.int32))
    y = xp.floor(est).astype(xp.uint64)
    y = y - (_cmp_square_times(xp, y, m, 2 * k) > 0).astype(xp.uint64)
    y = y + (_cmp_square_times(xp, y + u64(xp, 1), m, 2 * k) <= 0).astype(xp.uint64)
    sticky = _cmp_square_times(xp, y, m, 2 * k) != 0
    zero = xp.zeros(y.shape, dtype=xp.uint64)
    return round_pack(xp, fmt, zero, y, -k - e // 2, sticky, mode.rounding, mode.flush_out, mode.tininess)


def _cmp_square_times(xp, y, m, t):
    """Sign (-1, 0, 1 as int64) of ``y*y*m - 2**t`` for ``y <= 2**27 + 1``, ``m < 2**25``,
    ``54 <= t <= 78``: the product (up to 79 bits) is held in two 32-bit limbs of uint64."""
    mask = u64(xp, 0xFFFFFFFF)
    y2 = y * y
    low = (y2 & mask) * m
    hi = (y2 >> u64(xp, 32)) * m + (low >> u64(xp, 32))
    lo = low & mask
    target = u64(xp, 1) << (t - 32).astype(xp.uint64)
    greater = (hi > target) | ((hi == target) & (lo != 0))
    less = hi < target
    return greater.astype(xp.int64) - less.astype(xp.int64)


def _rsqrt_exact_bits(fmt: Format, bits: int, mode: ops.Mode) -> int:
    """1/sqrt of one positive finite pattern, rounded per ``mode`` with Python integers."""
    value = fmt.to_fraction(bits)
    # 1/sqrt(n/d) = sqrt(d/n); compute floor(sqrt(d/n) * 2**k) with k giving p+3 bits
    e = _floor_log2(1 / value) // 2
    k = fmt.precision + 2 - e
    num = value.denominator << (2 * k) if k >= 0 else value.denominator
    den = value.numerator if k >= 0 else value.numerator << (-2 * k)
    y = math.isqrt(num // den)
    exact = y * y * den == num
    sticky = not exact
    # round y * 2**-k with the sticky bit through the same rounding as the model
    arr = np.array([y], dtype=np.uint64)
    out = round_pack(np, fmt, np.array([0], dtype=np.uint64), arr, np.array([-k], dtype=np.int64),
                     np.array([sticky]), mode.rounding, mode.flush_out, mode.tininess)
    return int(out[0])
