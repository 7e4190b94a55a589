"""Every result an approximate instruction may return, per lane: the contract as a finite choice.

:func:`allowed_choices` turns a form's contract into, per lane, the sorted set of result patterns
it allows (``values``/``valid``: a 1- or 2-ulp or 2^-23-relative bound leaves a handful of floats),
plus ``unbounded`` lanes whose contract allows more than ``MAX_CHOICES`` values (nothing documented,
or a bound too wide to enumerate), and the model's representative value.

The sets come from :func:`tilecheck.model.api.allowed_results` (the contract's ranges in real-number
order, extra values such as a flushed zero, and the NaN rule) under the chosen ulp reading: the PTX
ISA does not define "ulp error"; ``exact`` measures from the exact value, ``correctly-rounded`` from
the correctly rounded result (the CUDA programming guide), ``either`` (the default) allows what
either allows. Relative-error bounds have one reading.

Where a NaN may be returned and the ISA does not pin its bits ("unspecified NaN"), the choice is
represented by the format's canonical NaN: NaN payloads are not enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecheck.formats import get_format
from tilecheck.model import api
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.spec.types import PTX_TYPES

MAX_CHOICES = 17
"""Most values enumerated per lane; a lane whose contract allows more is ``unbounded``."""

READINGS = ("either", "exact", "correctly-rounded")


@dataclass
class Choices:
    """Per-lane allowed results: ``values`` (lanes x k, sorted in real order, NaN last), ``valid``
    (which entries are allowed and distinct), ``unbounded`` lanes, ``reference`` (representative)."""

    values: np.ndarray
    valid: np.ndarray
    unbounded: np.ndarray
    reference: np.ndarray
    uniform: bool = False  # one row (arrays of length 1) that holds for every lane

    def per_lane(self, n: int) -> "Choices":
        """The same choices with one row per lane (``n`` lanes) when they are ``uniform``."""
        if not self.uniform:
            return self
        return Choices(np.repeat(self.values, n, axis=0), np.repeat(self.valid, n, axis=0),
                       np.repeat(self.unbounded, n), np.repeat(self.reference, n))


def allowed_choices(form, operands: list[np.ndarray], *, ulp_reading: str = "either",
                    tininess: str = TININESS_DEFAULT) -> Choices:
    """The allowed results of approximate ``form`` for each lane of ``operands`` (unsigned arrays)."""
    fmt = get_format(form.element_format)
    width = PTX_TYPES[form.type].bits
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    ops = [np.asarray(o).astype(dtype, copy=False) for o in operands]
    n = ops[0].shape[0]
    with np.errstate(all="ignore"):
        r = api.allowed_results(form, *ops, ulp_reading=ulp_reading, tininess=tininess)
        ref = np.asarray(api.reference(form, *ops, tininess=tininess)).astype(np.uint64)
    stride = int(r.stride)
    mag_mask = np.uint64(fmt.magnitude_mask)
    sign = np.uint64(fmt.sign_mask)

    def key(bits):
        b = np.asarray(bits).astype(np.uint64)
        m = ((b & mag_mask) // np.uint64(stride)).astype(np.int64)
        return np.where((b & sign) != 0, -m - 1, m)

    def from_key(k):
        neg = k < 0
        m = (np.where(neg, -k - 1, k).astype(np.uint64) * np.uint64(stride))
        return np.where(neg, m | sign, m)

    empty = np.asarray(r.empty, dtype=bool)
    klo, khi = key(r.lo), key(r.hi)
    count = np.where(empty, 0, khi - klo + 1)
    unbounded = np.asarray(r.unbounded, dtype=bool) | (count > MAX_CHOICES)
    count = np.where(unbounded, 0, count)
    k = int(count.max()) if n else 0
    cols, valid = [], []
    for j in range(k):
        cols.append(from_key(klo + j))
        valid.append(j < count)
    extra = np.asarray(r.extra).astype(np.uint64)
    used = np.asarray(r.extra_used, dtype=bool)
    for j in range(extra.shape[-1]):
        e = extra[..., j]
        ke = key(e)
        inside = ~empty & (ke >= klo) & (ke <= khi) & (((e & mag_mask) % np.uint64(stride)) == 0)
        dup = np.zeros(n, dtype=bool)
        for jj in range(j):
            dup |= used[..., jj] & (extra[..., jj] == e)
        cols.append(e)
        valid.append(used[..., j] & ~inside & ~dup & ~unbounded)
    nan_bits = np.asarray(r.nan_bits).astype(np.uint64)
    pinned = nan_bits[..., 0] != 0
    canonical = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    cols.append(np.where(pinned, nan_bits[..., 0], np.uint64(canonical)))
    valid.append(np.asarray(r.nan, dtype=bool) & ~unbounded)
    values = np.stack(cols, axis=1)
    valid = np.stack(valid, axis=1)
    # a lane with nothing enumerable keeps the representative value (and is reported unknown)
    none = ~valid.any(axis=1)
    if none.any():
        values = np.concatenate([values, ref[:, None]], axis=1)
        valid = np.concatenate([valid, none[:, None]], axis=1)
    return Choices(values.astype(dtype), valid, unbounded, ref.astype(dtype))


def contract_allows(form, result: np.ndarray, operands: list, *, ulp_reading: str = "either",
                    tininess: str = TININESS_DEFAULT, reference: np.ndarray | None = None) -> np.ndarray:
    """Does approximate ``form``'s contract allow ``result`` for these operands under the ulp
    reading? Bool per lane (:func:`tilecheck.model.api.allowed`)."""
    width = PTX_TYPES[form.type].bits
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    ops = [np.asarray(o).astype(dtype, copy=False) for o in operands]
    with np.errstate(all="ignore"):
        return np.asarray(api.allowed(form, np.asarray(result).astype(dtype), *ops, tininess=tininess,
                                      ulp_reading=ulp_reading), dtype=bool)
