"""Every result an approximate instruction may return, per lane: the contract as a finite choice.

:func:`allowed_choices` turns a form's contract into, per lane, the sorted set of result patterns
it allows (``values``/``valid``, a few per lane: a 1- or 2-ulp or 2^-23-relative bound leaves a
handful of floats), plus ``unbounded`` lanes whose contract allows more than can be enumerated
(nothing documented, or a bound too wide), and the model's representative value.

How: starting from the model's representative value (:func:`tilecheck.model.api.reference`, the
correctly rounded value, always allowed), neighbours in real-number order are asked to the
contract (:func:`tilecheck.model.api.allowed`) one step further each round until every lane has
been refused on both sides; a lane still allowed after ``MAX_STEPS`` steps, or allowing a value
far away, is unbounded. A NaN is added where the contract allows one. Contract sets are intervals
in real-number order (the two zeros adjacent), so the scan finds all of them.

ULP readings (the PTX ISA does not define "ulp error"): ``exact`` is the contract as the model
states it (distance from the exact value, in ulps of the exact value's binade); ``rounded`` the
CUDA programming guide's (distance from the correctly rounded result, in its ulps); ``either``
(the default) allows what either allows. Relative-error bounds have no such question.

Unqualified f32 NaN results ("unspecified NaN") are represented by the form's canonical NaN: the
choice of NaN bits is not enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tilecheck.formats import get_format
from tilecheck.model import api
from tilecheck.spec.forms import TYPE_INFO

MAX_STEPS = 8
"""Largest distance (in representable steps from the representative value) enumerated per side."""

READINGS = ("either", "exact", "rounded")


@dataclass
class Choices:
    """Per-lane allowed results: ``values`` (lanes x k, sorted in real order, NaN last), ``valid``
    (which entries are allowed and distinct), ``unbounded`` lanes, ``reference`` (representative)."""

    values: np.ndarray
    valid: np.ndarray
    unbounded: np.ndarray
    reference: np.ndarray


def _ordinal(bits: np.ndarray, fmt) -> np.ndarray:
    """Total order over patterns in real-number order: -0 just below +0."""
    sign = (bits.astype(np.uint64) >> np.uint64(fmt.width - 1)).astype(bool)
    mag = (bits.astype(np.uint64) & np.uint64(fmt.magnitude_mask)).astype(np.int64)
    return np.where(sign, -mag - 1, mag)


def _from_ordinal(o: np.ndarray, fmt) -> np.ndarray:
    neg = o < 0
    mag = np.where(neg, -o - 1, o).astype(np.uint64)
    return np.where(neg, mag | np.uint64(fmt.sign_mask), mag)


def _is_nan(bits, fmt):
    return (bits.astype(np.uint64) & np.uint64(fmt.magnitude_mask)) > np.uint64(fmt.exponent_mask)


def allowed_choices(form, operands: list[np.ndarray], *, ulp_reading: str = "either",
                    tininess: str = "after") -> Choices:
    """The allowed results of approximate ``form`` for each lane of ``operands`` (unsigned arrays)."""
    fmt = get_format(form.element_format)
    if form.lanes != 1:
        raise ValueError(f"{form.name}: packed approximate forms are judged lane by lane by the caller")
    width = TYPE_INFO[form.type][3]
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    ops = [np.asarray(o).astype(dtype, copy=False) for o in operands]
    n = ops[0].shape[0]
    with np.errstate(all="ignore"):
        ref = np.asarray(api.reference(form, *ops, tininess=tininess)).astype(np.uint64)
    step, max_steps = 1, MAX_STEPS
    if form.semantics.key in ("approx.rcp_hi", "approx.rsqrt_hi"):
        step, max_steps = 1 << 32, 2 * MAX_STEPS  # the low result word is zero: neighbours differ above it
    ref_nan = _is_nan(ref, fmt)
    ordv = _ordinal(ref, fmt)
    max_ord = int(fmt.exponent_mask)  # +inf's ordinal; beyond it lie NaNs
    def ok(cand: np.ndarray, lanes: np.ndarray | None = None) -> np.ndarray:
        sub = [o if lanes is None else o[lanes] for o in ops]
        return contract_allows(form, cand.astype(dtype), sub, ulp_reading=ulp_reading, tininess=tininess,
                               reference=ref if lanes is None else ref[lanes])

    columns = [ref]
    valid_cols = [np.ones(n, dtype=bool)]
    unbounded = np.zeros(n, dtype=bool)
    for direction in (-1, 1):
        alive = ~ref_nan
        side_cols = []
        for k in range(1, max_steps + 2):
            o = ordv + direction * k * step
            in_range = (o <= max_ord) & (o >= -max_ord - 1)
            cand = _from_ordinal(np.clip(o, -max_ord - 1, max_ord), fmt)
            if not alive.any():
                break
            idx = np.flatnonzero(alive & in_range)
            good = np.zeros(n, dtype=bool)
            if idx.size:
                good[idx] = ok(cand[idx], idx)
            if k == max_steps + 1:
                unbounded |= good
                break
            side_cols.append((cand, good))
            alive = good
        for cand, good in side_cols:
            (columns.insert(0, cand) if direction < 0 else columns.append(cand))
            (valid_cols.insert(0, good) if direction < 0 else valid_cols.append(good))
    # a value far away allowed: the contract does not bound this lane
    far = _from_ordinal(np.clip(ordv + (1 << fmt.mantissa_bits), -max_ord - 1, max_ord), fmt)
    finite_ref = ~ref_nan & ((ref & np.uint64(fmt.magnitude_mask)) < np.uint64(fmt.exponent_mask))
    idx = np.flatnonzero(finite_ref)
    if idx.size:
        unbounded[idx] |= ok(far[idx], idx)
    nan_bits = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    nan_col = np.full(n, nan_bits, dtype=np.uint64)
    idx = np.flatnonzero(~ref_nan)
    nan_ok = np.zeros(n, dtype=bool)
    if idx.size:
        nan_ok[idx] = ok(nan_col[idx], idx)
    columns.append(nan_col)
    valid_cols.append(nan_ok)
    values = np.stack(columns, axis=1)
    valid = np.stack(valid_cols, axis=1)
    return Choices(values.astype(dtype), valid, unbounded, ref.astype(dtype))


def contract_allows(form, result: np.ndarray, operands: list, *, ulp_reading: str = "either",
                    tininess: str = "after", reference: np.ndarray | None = None) -> np.ndarray:
    """Does approximate ``form``'s contract allow ``result`` for these operands, under the ulp
    reading (``exact``, ``rounded``, ``either``; relative bounds have one reading)? Bool per lane."""
    fmt = get_format(form.element_format)
    width = TYPE_INFO[form.type][3]
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    ops = [np.asarray(o).astype(dtype, copy=False) for o in operands]
    c = np.asarray(result).astype(dtype)
    rounded = ulp_reading in ("either", "rounded") and form.contract is not None and form.contract.ulp is not None
    exact = ulp_reading in ("either", "exact") or not rounded
    res = np.zeros(c.shape, dtype=bool)
    with np.errstate(all="ignore"):
        if exact:
            res |= np.asarray(api.allowed(form, c, *ops, tininess=tininess), dtype=bool)
        if rounded:
            r = reference if reference is not None else np.asarray(api.reference(form, *ops, tininess=tininess))
            r = np.asarray(r).astype(dtype)
            res |= _within_rounded_ulps(fmt, c.astype(np.uint64), r.astype(np.uint64), form.contract.ulp, form,
                                        np.asarray(api.allowed(form, r, *ops, tininess=tininess)))
    return res


def _within_rounded_ulps(fmt, cand: np.ndarray, ref: np.ndarray, k: float, form, ref_ok) -> np.ndarray:
    """|cand - RN| <= k ulp(RN) for finite nonzero non-NaN RN (the CUDA guide's reading); exact."""
    ref_mag = ref & np.uint64(fmt.magnitude_mask)
    cand_mag = cand & np.uint64(fmt.magnitude_mask)
    usable = (ref_mag != 0) & (ref_mag < np.uint64(fmt.exponent_mask)) & (cand_mag < np.uint64(fmt.exponent_mask))
    usable &= np.asarray(ref_ok, dtype=bool)
    if form.semantics.params.get("ftz"):
        # a flushed format never returns a subnormal
        usable &= (cand_mag == 0) | (cand_mag >= np.uint64(1 << fmt.mantissa_bits))
    out = np.zeros(cand.shape, dtype=bool)
    idx = np.flatnonzero(usable)
    if not idx.size:
        return out
    if fmt.width <= 32:
        rv = fmt.to_float64(ref[idx].astype(fmt.uint))
        cv = fmt.to_float64(cand[idx].astype(fmt.uint))
        e = np.floor(np.log2(np.abs(rv)))
        e = np.maximum(e, fmt.emin)
        ulp = np.ldexp(1.0, (e - fmt.mantissa_bits).astype(np.int64))
        # differences of two values of a <=32-bit format are exact in float64
        out[idx] = np.abs(cv - rv) <= k * ulp
        return out
    kk = Fraction(k)
    for j in idx.tolist():
        r = fmt.to_fraction(int(ref[j]))
        c = fmt.to_fraction(int(cand[j]))
        if r is None or c is None:
            continue
        e = max(abs(r).numerator.bit_length() - abs(r).denominator.bit_length(), fmt.emin)
        if Fraction(2) ** e > abs(r):
            e -= 1
        e = max(e, fmt.emin)
        out[j] = abs(c - r) <= kk * Fraction(2) ** (e - fmt.mantissa_bits)
    return out
