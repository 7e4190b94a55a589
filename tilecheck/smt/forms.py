"""Z3 encodings of PTX forms, one per registry key (``tilecheck/spec/registry.py``).

Exact keys (``fp.add sub mul fma div rcp sqrt``) are Z3 FP operations in the form's rounding mode;
``.ftz`` is explicit (inputs flushed with ``If(isSubnormal)``, results flushed with tininess
"after" rounding by default, "before" as a parameter, exactly as the reference model does);
``.sat`` clamps to [+0, 1] with NaN and every negative value (-0 included) giving +0.

* :func:`encode` works on FP terms (or bit-vectors, which it reinterprets): it returns the FP
  result term (a tuple of lane terms for packed forms, element 0 first). Approximate keys
  return :class:`Approx` -- a fresh result bit-vector and the contract constraint on it;
  memory keys return ``Select``/``Store`` terms over a Z3 array (memory is ``Array(addr, bits)``).
* :func:`encode_bits` works on bit-vectors and returns the result *pattern*: Z3 has one NaN, so
  the NaN policy (``unspecified``/``canonical``: the spec's bits; ``propagate``: the first NaN
  operand quieted, else the spec's bits) is applied to the patterns with ``If`` -- this is where
  NaN bits are handled outside the FP theory.
* :func:`encode_contract` is the contract of an approximate form as a Bool over the result and
  operand patterns, mirroring :func:`tilecheck.model.contracts.allowed` in exact real arithmetic
  (irrational bounds such as 2^-22.9 through an auxiliary real ``z`` with ``z**d == 2**n``, which
  is why the formula is meant to be *asserted*, not negated).
* :func:`evaluate` / :func:`allowed` evaluate concretely (simplification, or a solver call for
  contracts) and return Python ints / bools, or numpy arrays for array operands.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import z3

from tilecheck.errors import ApproximateFormError, NotEncodableError, UsageError
from tilecheck.formats import Format, UINT_DTYPES
from tilecheck.smt import fp
from tilecheck.spec.contract import ULP_READING_DEFAULT, check_ulp_reading
from tilecheck.spec.forms import Form
from tilecheck.spec.registry import ENTRIES, SPECIAL_WORDS, TININESS, TININESS_DEFAULT, special_result_bits
from tilecheck.spec.types import PTX_TYPES

_HI_MASK = 0xFFFFFFFF00000000
_fresh = itertools.count()


@dataclass(frozen=True)
class Approx:
    """Encoding of an approximate form: ``result`` is a fresh bit-vector (the container), and
    ``constraint`` says which values it may take (assert it)."""

    result: z3.BitVecRef
    constraint: z3.BoolRef


def _form(form) -> Form:
    """``form`` itself: the encodings take a :class:`Form` of the caller's database (spellings are
    resolved by :mod:`tilecheck.smt`'s public functions)."""
    if isinstance(form, Form):
        return form
    raise UsageError(f"expected a Form, got {type(form).__name__} {form!r}: resolve a spelling with db.form(...)")


def _elem(form: Form) -> tuple[Format, int, int]:
    t = PTX_TYPES[form.type]
    elem, lanes, bits = t.element, t.lanes, t.bits
    if elem is None:
        raise UsageError(f"{form.name} has no floating-point element type")
    return form.format, lanes, bits


def _lane_bits(form: Form, term, fmt: Format, lanes: int, container: int) -> list:
    """Split one operand into per-lane terms: bit-vectors of the element width, or FP terms."""
    if isinstance(term, (tuple, list)):
        if len(term) != lanes:
            raise UsageError(f"{form.name} operands have {lanes} lane(s), got {len(term)}")
        return [t if isinstance(t, z3.FPRef) else fp.bv(fmt, t) for t in term]
    if isinstance(term, z3.FPRef):
        if lanes != 1:
            raise UsageError(f"{form.name} is packed: give the container bit-vector or a tuple of lanes")
        return [term]
    if isinstance(term, (int, np.integer)):
        term = z3.BitVecVal(int(term), container)
    if not isinstance(term, z3.BitVecRef) or term.size() != container:
        raise UsageError(f"{form.name} operands are {container}-bit containers (or FP terms), got {term!r}")
    if lanes == 1:
        return [term]
    w = fmt.width
    return [z3.Extract((i + 1) * w - 1, i * w, term) for i in range(lanes)]


def _as_fp(fmt: Format, t) -> z3.FPRef:
    return t if isinstance(t, z3.FPRef) else fp.to_fp(fmt, t)


def _as_bv(fmt: Format, t) -> z3.BitVecRef:
    return z3.fpToIEEEBV(t) if isinstance(t, z3.FPRef) else t


def _sat(fmt: Format, r: z3.FPRef) -> z3.FPRef:
    one = z3.FPVal(1.0, fp.sort(fmt))
    zero = z3.fpPlusZero(fp.sort(fmt))
    return z3.If(z3.Or(z3.fpIsNaN(r), z3.fpIsNegative(r)), zero, z3.If(z3.fpGT(r, one), one, r))


def exact_lane(form: Form, fmt: Format, xs: list[z3.FPRef], tininess: str = TININESS_DEFAULT) -> z3.FPRef:
    """The FP result of one lane of an exact form (flushes, rounding, saturation)."""
    params = form.semantics.params
    op = form.semantics.function
    rounding = params.get("rounding", "rn")
    ftz = bool(params.get("ftz", False))
    if ftz:
        xs = [fp.flush_fp(x) for x in xs]
    r = fp.ieee(op, rounding, *xs)
    if ftz:
        rtz = fp.ieee(op, "rz", *xs) if tininess == "before" else None
        r = fp.flush_result(fmt, r, rtz, tininess)
    if params.get("sat"):
        r = _sat(fmt, r)
    return r


def _check_tininess(tininess: str) -> None:
    if tininess not in TININESS:
        raise UsageError(f"tininess must be 'after' or 'before', got {tininess!r}")


def encode(form, *terms, tininess: str = TININESS_DEFAULT, memory=None, ulp_reading: str = ULP_READING_DEFAULT):
    """The Z3 semantics of a PTX form applied to ``terms`` (see the module docstring).

    Exact forms: the FP result (tuple of lanes for packed forms). Approximate forms:
    :class:`Approx`. Memory forms: ``ld`` gives the loaded register values (tuple for vector
    forms) as ``Select`` terms of ``memory`` (default: a fresh array), ``st`` the updated array.
    """
    form = _form(form)
    _check_tininess(tininess)
    if len(terms) != len(form.sources):
        raise UsageError(f"{form.name} takes {len(form.sources)} source operand(s), got {len(terms)}")
    if form.kind == "memory":
        return _encode_memory(form, terms, memory)
    fmt, lanes, container = _elem(form)
    if form.kind == "contract":
        result = z3.BitVec(f"{form.name}!result{next(_fresh)}", container)
        return Approx(result, encode_contract(form, result, *terms, tininess=tininess, ulp_reading=ulp_reading))
    per_operand = [_lane_bits(form, t, fmt, lanes, container) for t in terms]
    out = []
    for lane in range(lanes):
        out.append(exact_lane(form, fmt, [_as_fp(fmt, p[lane]) for p in per_operand], tininess))
    return out[0] if lanes == 1 else tuple(out)


def _nan_bits(form: Form, fmt: Format, lane_inputs: list) -> z3.BitVecRef:
    """The NaN pattern of a lane per the form's policy (the model's ``nan_rule``)."""
    bits = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    if form.nan.policy == "propagate":
        return fp.propagate_nan(fmt, lane_inputs, default=bits)
    return fp.const(fmt, bits)


def encode_bits(form, *terms, tininess: str = TININESS_DEFAULT) -> z3.BitVecRef:
    """Result pattern (the whole container) of an exact form, NaN policy applied on bit-vectors.

    Operands should be bit-vectors (FP operands lose NaN payloads: Z3 has one NaN).
    """
    form = _form(form)
    _check_tininess(tininess)
    if form.kind != "exact":
        raise UsageError(f"{form.name} is not an exact arithmetic form; encode_bits applies to exact forms")
    if len(terms) != len(form.sources):
        raise UsageError(f"{form.name} takes {len(form.sources)} source operand(s), got {len(terms)}")
    fmt, lanes, container = _elem(form)
    per_operand = [_lane_bits(form, t, fmt, lanes, container) for t in terms]
    lane_bits = []
    for lane in range(lanes):
        xs = [p[lane] for p in per_operand]
        r = exact_lane(form, fmt, [_as_fp(fmt, x) for x in xs], tininess)
        lane_bits.append(fp.to_bits(fmt, r, _nan_bits(form, fmt, [_as_bv(fmt, x) for x in xs])))
    out = lane_bits[0]
    for b in lane_bits[1:]:
        out = z3.Concat(b, out)  # element 0 in the low half
    return out


def _encode_memory(form: Form, terms, memory):
    bits = PTX_TYPES[form.type].bits
    if memory is None:
        memory = z3.Array(f"mem_b{bits}!{next(_fresh)}", z3.BitVecSort(64), z3.BitVecSort(bits))
    addr = terms[0]
    if isinstance(addr, (int, np.integer)):
        addr = z3.BitVecVal(int(addr), 64)
    step = bits // 8
    if form.semantics.key == "mem.ld":
        registers = form.destinations[0].registers
        values = tuple(z3.Select(memory, addr + i * step) for i in range(registers))
        return values[0] if registers == 1 else values
    value = terms[1]
    values = value if isinstance(value, (tuple, list)) else (value,)
    for i, v in enumerate(values):
        if isinstance(v, (int, np.integer)):
            v = z3.BitVecVal(int(v), bits)
        memory = z3.Store(memory, addr + i * step, v)
    return memory


# ---------------------------------------------------------------------------------------------
# contracts


def _class_match(fmt: Format, b, word: str) -> z3.BoolRef:
    """A special-case class word (:data:`~tilecheck.spec.registry.SPECIAL_WORDS`) or hex bits on a pattern."""
    if word.startswith("0x"):
        return b == int(word, 16)
    cls, sign = SPECIAL_WORDS[word]
    mag = b & fmt.magnitude_mask
    nan = z3.UGT(mag, fmt.exponent_mask)
    inf = mag == fmt.exponent_mask
    zero = mag == 0
    sub = z3.And(mag != 0, z3.ULT(mag, fmt.min_normal))
    hit = {"any": z3.BoolVal(True), "nan": nan, "inf": inf, "zero": zero, "subnormal": sub,
           "normal": z3.And(z3.Not(zero), z3.Not(sub), z3.Not(inf), z3.Not(nan)),
           "finite": z3.And(z3.Not(nan), z3.Not(inf))}[cls]
    if sign is None:
        return hit
    neg = (b & fmt.sign_mask) != 0
    return z3.And(hit, neg if sign < 0 else z3.Not(neg))


def _condition(fmt: Format, b, cond) -> z3.BoolRef:
    """A rule's operand condition on a pattern (the model's ``_condition``)."""
    mag = b & fmt.magnitude_mask
    parts = [z3.ULE(mag, fmt.exponent_mask)]  # magnitudes compare only for non-NaN patterns
    if cond.classes:
        parts.append(z3.Or(*[_class_match(fmt, b, word) for word in cond.classes]))
    if cond.above_log2 is not None:
        parts.append(z3.UGT(mag, fmt.power_bits(cond.above_log2)))
    if cond.below_log2 is not None:
        parts.append(z3.ULT(mag, fmt.power_bits(cond.below_log2)))
    if cond.classes and cond.above_log2 is None and cond.below_log2 is None:
        parts = parts[1:]  # a class list alone may name NaN
    return z3.And(*parts)


def _word_bits(fmt: Format, word: str) -> int | None:
    """Bits a special-table result word pins (see :func:`tilecheck.spec.registry.special_result_bits`)."""
    return special_result_bits(fmt, word)


def _ieee_special(fn: str, fmt: Format, ops: list, canonical: int) -> z3.BitVecRef:
    """IEEE round-to-nearest result pattern of the exact function (NaN -> canonical)."""
    xs = [fp.to_fp(fmt, o) for o in ops]
    if fn == "rsqrt":
        r = z3.fpDiv(z3.RNE(), z3.FPVal(1.0, fp.sort(fmt)), z3.fpSqrt(z3.RNE(), xs[0]))
    else:
        r = fp.ieee(fn, "rn", *xs)
    return fp.to_bits(fmt, r, canonical)


def _real(fmt: Format, b) -> z3.ArithRef:
    return z3.fpToReal(fp.to_fp(fmt, b))


def _binade(fmt: Format, fn: str, ops: list) -> z3.BitVecRef:
    """floor(log2 |q|) as a 32-bit term, q the exact quotient/reciprocal (or the radicand for
    roots), read from the exponent of q rounded toward zero in a sort with a wider exponent range
    (truncation never crosses a power of two, and no finite q under/overflows there)."""
    w = fp.wide_sort(fmt, 3, 0)
    xs = [z3.fpToFP(z3.RNE(), fp.to_fp(fmt, o), w) for o in ops]
    if fn == "div":
        q = z3.fpDiv(z3.RTZ(), xs[0], xs[1])
    elif fn in ("rcp", "rsqrt"):
        q = z3.fpDiv(z3.RTZ(), z3.FPVal(1.0, w), xs[0])
    else:  # sqrt: the radicand itself (normal in the wide sort)
        q = xs[0]
    bias = (1 << (w.ebits() - 1)) - 1
    field = z3.Extract(w.ebits() + w.sbits() - 2, w.sbits() - 1, z3.fpToIEEEBV(q))
    return z3.ZeroExt(32 - w.ebits(), field) - bias


def _pow2_real(e: z3.BitVecRef, lo: int, hi: int) -> z3.ArithRef:
    """2**e as a real for a 32-bit term e known to lie in [lo, hi] (an If chain over the range
    would be large; an FP power of two in a wide sort converted to real is compact)."""
    span = max(abs(lo), abs(hi)) + 2
    ebits = max(span.bit_length() + 2, 4)
    w = z3.FPSort(ebits, 3)
    return z3.fpToReal(fp.pow2_symbolic(w, e, span - 1))


def _rel_parts(rel: float) -> tuple[int, int]:
    t = Fraction(str(rel)).limit_denominator(10_000)
    return t.numerator, t.denominator


def _bound_ok(form: Form, fn: str, fmt: Format, r, ops: list, ftz: bool) -> z3.BoolRef:
    """The model's bound verdict (``_bound_check`` / ``_within_exact``) for finite, non-special
    operands, in exact real arithmetic."""
    c = form.contract
    mag = r & fmt.magnitude_mask
    r_nan = z3.UGT(mag, fmt.exponent_mask)
    r_inf = mag == fmt.exponent_mask
    r_zero = mag == 0
    r_sub = z3.And(mag != 0, z3.ULT(mag, fmt.min_normal))
    r_neg = (r & fmt.sign_mask) != 0
    rv = _real(fmt, z3.If(z3.Or(r_nan, r_inf), z3.BitVecVal(0, fmt.width), r))
    vals = [_real(fmt, o) for o in ops]
    root = fn in ("sqrt", "rsqrt")
    if fn == "div":
        q = vals[0] / vals[1]
        x_neg = ((ops[0] ^ ops[1]) & fmt.sign_mask) != 0
    elif fn in ("rcp", "rsqrt"):
        q = 1 / vals[0]
        x_neg = (ops[0] & fmt.sign_mask) != 0 if fn == "rcp" else z3.BoolVal(False)
    else:
        q = vals[0]
        x_neg = z3.BoolVal(False)
    aq = z3.If(q < 0, -q, q)
    max_finite = fmt.to_fraction(fmt.max_finite)
    min_normal = fmt.to_fraction(fmt.min_normal)
    aux = []
    if c.ulp is not None:
        e = _binade(fmt, fn, ops)
        if root:
            e = e >> 1  # floor(floor(log2 q) / 2), arithmetic shift floors
        e_bin = z3.If(e < fmt.emin, z3.BitVecVal(fmt.emin, 32), e)
        lo = 2 * fmt.emin - fmt.precision * 2 - 8
        bound = z3.RealVal(Fraction(c.ulp).limit_denominator(1 << 20)) * _pow2_real(
            e_bin - fmt.mantissa_bits, lo, 2 * fmt.emax + 8)
        if not root:
            within = z3.If(rv - q < 0, q - rv, rv - q) <= bound
            reach_below = aq - bound < min_normal
        else:
            within = z3.And(rv >= 0, rv + bound >= 0, aq <= (rv + bound) * (rv + bound),
                            z3.Or(rv - bound <= 0, aq >= (rv - bound) * (rv - bound)))
            reach_below = aq < (min_normal + bound) * (min_normal + bound)
    else:
        n, d = _rel_parts(c.relative_log2)
        if d == 1:
            z = z3.RealVal(Fraction(2) ** n)
        else:
            z = z3.Real(f"two_pow_{n}_{d}!{next(_fresh)}")
            aux.append(z > 0)
            aux.append(_power(z, d) == z3.RealVal(Fraction(2) ** n))
        if not root:
            err = z3.If(rv - q < 0, q - rv, rv - q)
            within = err <= z * aq
            reach_below = aq - z * aq < min_normal
        else:
            within = z3.And(rv >= 0, rv * rv <= (1 + z) * (1 + z) * aq,
                            z3.Or(z >= 1, rv * rv >= (1 - z) * (1 - z) * aq))
            reach_below = z3.Or(z >= 1, aq * (1 - z) * (1 - z) < min_normal * min_normal)
    beyond = aq > max_finite if not root else z3.BoolVal(False)
    verdict = z3.If(r_nan, False, z3.If(r_inf, z3.And(beyond, r_neg == x_neg), within))
    if ftz:
        zero_ok = z3.And(r_zero, r_neg == x_neg, reach_below)
        verdict = z3.If(r_sub, False, z3.Or(verdict, zero_ok))
    return z3.And(*aux, verdict) if aux else verdict


def _value_index(fmt: Format, b) -> z3.BitVecRef:
    """Position of a non-NaN pattern among the format's values in real-number order (signed,
    two bits wider; both zeros are 0, infinity is one past the largest finite magnitude)."""
    mag = z3.ZeroExt(2, b & fmt.magnitude_mask)
    return z3.If((b & fmt.sign_mask) != 0, -mag, mag)


def _rounded_ok(form: Form, fn: str, fmt: Format, r, ops: list, ftz: bool) -> z3.BoolRef:
    """The ``correctly-rounded`` reading (the model's ``_rounded_check``): ``r`` at most k values
    from RN(x); with ``.ftz`` no subnormal, and a zero when one of those values is a zero or a
    subnormal of the zero's sign."""
    k = int(form.contract.ulp // 1)
    mag = r & fmt.magnitude_mask
    r_nan = z3.UGT(mag, fmt.exponent_mask)
    if fn == "rsqrt":
        return z3.And(z3.Not(r_nan), _rsqrt_rounded_near(fmt, r, ops[0], k))
    xs = [fp.to_fp(fmt, o) for o in ops]
    centre = _value_index(fmt, z3.fpToIEEEBV(fp.ieee(fn, "rn", *xs)))
    idx = _value_index(fmt, r)
    diff = idx - centre
    near = z3.And(diff <= k, diff >= -k)
    if ftz:
        top = fmt.min_normal - 1
        r_neg = (r & fmt.sign_mask) != 0
        pos_zero = z3.And(centre - k <= top, centre + k >= 0)
        neg_zero = z3.And(centre - k <= 0, centre + k >= -top)
        r_sub = z3.And(mag != 0, z3.ULT(mag, fmt.min_normal))
        near = z3.If(mag == 0, z3.If(r_neg, neg_zero, pos_zero), z3.And(near, z3.Not(r_sub)))
    return z3.And(z3.Not(r_nan), near)


def _rsqrt_rounded_near(fmt: Format, r, a, k: int) -> z3.BoolRef:
    """RN(1/sqrt(a)) lies within k values of ``r``, for finite a > 0 (Z3 has no rsqrt operator).

    RN is monotone, so RN(x) >= v_m (m = index(r) - k) iff x >= the midpoint below v_m, and
    RN(x) <= v_M (M = index(r) + k) iff x <= the midpoint above v_M; with x = 1/sqrt(a) > 0 each
    side is a comparison of (midpoint)^2 * a with 1. 1/sqrt(a) is never a midpoint (it is rational
    only for a = 4^n, a power of two), so ties do not arise. RN(x) is positive and finite, and
    never below 2^emin (|a| <= max finite), so ``.ftz`` does not change the answer."""
    w = fmt.width + 2
    inf_idx = z3.BitVecVal(fmt.inf, w)
    top_value = z3.RealVal(Fraction(2) ** (fmt.emax + 1))  # where rounding to nearest overflows
    av = _real(fmt, a)

    def value(i):  # for 0 <= i <= index of +inf
        return z3.If(i == inf_idx, top_value, _real(fmt, z3.Extract(fmt.width - 1, 0, i)))

    idx = _value_index(fmt, r)
    m = idx - k
    big_m = idx + k
    mid_lo = (value(m - 1) + value(m)) / 2
    mid_hi = (value(big_m) + value(big_m + 1)) / 2
    lower = z3.Or(m <= 0, mid_lo * mid_lo * av <= 1)
    upper = z3.If(big_m >= inf_idx, True, z3.And(big_m > 0, mid_hi * mid_hi * av >= 1))
    return z3.And(lower, upper)


def _ieee_sign_ok(fn: str, fmt: Format, r, ops: list) -> z3.BoolRef:
    """The sign rule (the model's ``_ieee_sign_ok``, ``spec/rules/contracts.yaml``): on bound lanes
    the result, zeros included, has the IEEE sign of the exact result -- the operands' sign product
    for div/rcp, positive for sqrt/rsqrt."""
    want = z3.BitVecVal(0, fmt.width)
    if fn in ("div", "rcp"):
        for o in ops:
            want = want ^ (o & fmt.sign_mask)
    return (r & fmt.sign_mask) == want


def _reading_ok(form: Form, fn: str, fmt: Format, r, ops: list, ftz: bool, reading: str) -> z3.BoolRef:
    """The bound under ``reading`` (relative bounds have one reading), with the sign rule."""
    if form.contract.ulp is None or reading == "exact":
        ok = _bound_ok(form, fn, fmt, r, ops, ftz)
    elif reading == "correctly-rounded":
        ok = _rounded_ok(form, fn, fmt, r, ops, ftz)
    else:
        ok = z3.Or(_bound_ok(form, fn, fmt, r, ops, ftz), _rounded_ok(form, fn, fmt, r, ops, ftz))
    return z3.And(ok, _ieee_sign_ok(fn, fmt, r, ops))


def _power(x, d: int):
    out = x
    for _ in range(d - 1):
        out = out * x
    return out


def not_encodable(form) -> None:
    """Raise :class:`NotEncodableError` for a form whose registry entry says Z3 cannot encode it."""
    reason = ENTRIES[form.semantics.key].smt
    if reason:
        raise NotEncodableError(f"{form.name} has no Z3 encoding: {reason}")


def encode_contract(form, result, *operands, tininess: str = TININESS_DEFAULT,
                    ulp_reading: str = ULP_READING_DEFAULT) -> z3.BoolRef:
    """Contract of an approximate form: is ``result`` (a container bit-vector or int) allowed for
    ``operands``? Mirrors :func:`tilecheck.model.contracts.allowed` (special cases after ``.ftz``
    flushing, per-key domain rules, then the bound under ``ulp_reading``: ``exact``,
    ``correctly-rounded`` or ``either``). Assert the returned formula (it may contain auxiliary
    variables fixed by equations)."""
    form = _form(form)
    _check_tininess(tininess)
    check_ulp_reading(ulp_reading)
    if form.kind != "contract":
        raise UsageError(f"{form.name} is not an approximate form")
    not_encodable(form)
    if len(operands) != len(form.sources):
        raise UsageError(f"{form.name} takes {len(form.sources)} source operand(s), got {len(operands)}")
    fn = form.contract.operation
    fmt, lanes, container = _elem(form)
    if lanes != 1:
        raise UsageError(f"packed approximate forms are not supported ({form.name})")
    r = fp.bv(fmt, result if not isinstance(result, (int, np.integer)) else int(result))
    raw = [_as_bv(fmt, _lane_bits(form, o, fmt, 1, container)[0]) for o in operands]
    ops = list(raw)
    hi = form.semantics.high_word
    ftz = form.contract.flush_inputs
    if hi:
        ops = [o & _HI_MASK for o in ops]
    if ftz:
        ops = [fp.flush_bits(fmt, o) for o in ops]
    canonical = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    is_nan = lambda b: z3.UGT(b & fmt.magnitude_mask, fmt.exponent_mask)  # noqa: E731
    nan_in = z3.Or(*[is_nan(a) for a in ops])
    pinned_policy = form.nan.policy == "canonical"
    # NaN bits are pinned only for NaN operands of the upper-word forms; a NaN whose payload is
    # only in the low word may also follow the upper word's rule (see the model's _classify)
    pinned = nan_in if pinned_policy else z3.BoolVal(False)
    canonical_too = (z3.And(z3.Or(*[is_nan(a) for a in raw]), z3.Not(nan_in)) if hi and pinned_policy
                     else z3.BoolVal(False))
    special = z3.Or(*[z3.Or(is_nan(a), (a & fmt.magnitude_mask) == fmt.exponent_mask, (a & fmt.magnitude_mask) == 0)
                      for a in ops])
    if fn in ("sqrt", "rsqrt"):
        special = z3.Or(special, (ops[0] & fmt.sign_mask) != 0)
    want = _ieee_special(fn, fmt, ops, canonical)
    for case in form.contract.specials:
        hit = z3.And(*[_class_match(fmt, a, word) for word, a in zip(case.operands, ops)])
        wbits = _word_bits(fmt, case.result)
        want = z3.If(hit, fp.const(fmt, wbits if wbits is not None else canonical), want)
    nan_ok = z3.And(is_nan(r), z3.Or(z3.Not(pinned), r == canonical))
    special_ok = z3.Or(z3.If(is_nan(want), nan_ok, r == want), z3.And(canonical_too, r == canonical))
    verdict = z3.If(special, special_ok, _reading_ok(form, fn, fmt, r, ops, ftz, ulp_reading))
    # domain rules (data), first match wins, ahead of the special table and the bound
    sign = ops[0] & fmt.sign_mask
    for o in ops[1:]:
        sign = sign ^ (o & fmt.sign_mask)
    for rule in reversed(form.contract.rules):
        hit = z3.And(*[_condition(fmt, ops[i], cond) for i, cond in rule.when])
        outcome = {"nan": is_nan(r), "signed-zero": r == sign, "unbounded": z3.BoolVal(True),
                   "unmodelled": z3.BoolVal(True)}[rule.result]
        verdict = z3.If(hit, outcome, verdict)
    if hi:
        verdict = z3.And(verdict, (r & 0xFFFFFFFF) == 0)
    return verdict


# ---------------------------------------------------------------------------------------------
# concrete evaluation


def _arrays(args) -> bool:
    return any(isinstance(a, np.ndarray) and a.ndim > 0 for a in args)


def evaluate(form, *operand_bits, tininess: str = TININESS_DEFAULT):
    """Result bits of an exact form computed by simplifying its Z3 encoding on constants.

    Python ints in, a Python int out; with array operands, a numpy array of the container dtype
    (one Z3 evaluation per element: slow, meant for tests). Approximate forms raise
    :class:`ApproximateFormError`; memory forms :class:`UsageError` (as the model does).
    """
    form = _form(form)
    if form.kind == "contract":
        raise ApproximateFormError(f"{form.name} is approximate: use tilecheck.smt.allowed or encode_contract")
    if form.kind != "exact":
        raise UsageError(f"{form.name} moves bits ({form.semantics.key}); there is no arithmetic result to evaluate")
    _, _, container = _elem(form)
    if _arrays(operand_bits):
        arrays = np.broadcast_arrays(*[np.asarray(a) for a in operand_bits])
        flat = [a.reshape(-1) for a in arrays]
        out = np.array([evaluate(form, *[int(f[i]) for f in flat], tininess=tininess) for i in range(flat[0].size)],
                       dtype=UINT_DTYPES[container])
        return out.reshape(arrays[0].shape)
    terms = [z3.BitVecVal(int(b), container) for b in operand_bits]
    return fp.value_of(encode_bits(form, *terms, tininess=tininess))


def allowed(form, result_bits, *operand_bits, tininess: str = TININESS_DEFAULT, ulp_reading: str = ULP_READING_DEFAULT):
    """Is ``result_bits`` acceptable? Exact forms: equal to :func:`evaluate`, NaNs judged by the NaN
    policy as the model judges them; approximate forms: the contract under ``ulp_reading``,
    decided by a solver."""
    form = _form(form)
    check_ulp_reading(ulp_reading)
    if _arrays((result_bits,) + operand_bits):
        arrays = np.broadcast_arrays(np.asarray(result_bits), *[np.asarray(a) for a in operand_bits])
        flat = [a.reshape(-1) for a in arrays]
        out = np.array([allowed(form, int(flat[0][i]), *[int(f[i]) for f in flat[1:]], tininess=tininess,
                                ulp_reading=ulp_reading) for i in range(flat[0].size)], dtype=bool)
        return out.reshape(arrays[0].shape)
    fmt, lanes, container = _elem(form)
    if form.kind == "contract":
        solver = z3.Solver()
        solver.add(encode_contract(form, int(result_bits), *[int(b) for b in operand_bits], tininess=tininess,
                                   ulp_reading=ulp_reading))
        verdict = solver.check()
        if verdict == z3.unknown:
            raise ArithmeticError(f"Z3 could not decide the contract of {form.name}: {solver.reason_unknown()}")
        return verdict == z3.sat
    if form.kind != "exact":
        raise UsageError(f"{form.name} moves bits ({form.semantics.key}); compare the memory contents instead")
    expected = evaluate(form, *operand_bits, tininess=tininess)
    w = fmt.width
    mask = (1 << w) - 1
    ok = True
    for lane in range(lanes):
        got = (int(result_bits) >> (lane * w)) & mask
        exp = (expected >> (lane * w)) & mask
        lane_ok = got == exp
        got_nan = (got & fmt.magnitude_mask) > fmt.exponent_mask
        exp_nan = (exp & fmt.magnitude_mask) > fmt.exponent_mask
        if form.nan.policy == "unspecified":
            lane_ok = lane_ok or (got_nan and exp_nan)
        elif form.nan.policy == "propagate" and exp_nan and got_nan:
            srcs = [(int(b) >> (lane * w)) & mask for b in operand_bits]
            nan_srcs = [s for s in srcs if (s & fmt.magnitude_mask) > fmt.exponent_mask]
            lane_ok = lane_ok or (not nan_srcs) or any(got == (s | fmt.quiet_bit) for s in nan_srcs)
        ok = ok and lane_ok
    return ok
