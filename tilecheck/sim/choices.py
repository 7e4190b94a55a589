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

import itertools
import threading
from dataclasses import dataclass

import numpy as np

from tilecheck.formats import UINT_DTYPES
from tilecheck.model import api, njit
from tilecheck.model.xp import bit_length
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
    fmt = form.format
    width = PTX_TYPES[form.type].bits
    dtype = UINT_DTYPES[width]
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
    dtype = UINT_DTYPES[width]
    ops = [np.asarray(o).astype(dtype, copy=False) for o in operands]
    with np.errstate(all="ignore"):
        return np.asarray(api.allowed(form, np.asarray(result).astype(dtype), *ops, tininess=tininess,
                                      ulp_reading=ulp_reading), dtype=bool)


def _place(out: Choices, rows, ch: Choices) -> None:
    """Write the choices ``ch`` of lanes ``rows`` into ``out`` (at least as wide), with the NaN
    column last, as :func:`allowed_choices` lays it out."""
    w = ch.values.shape[1]
    out.values[rows, :w - 1] = ch.values[:, :w - 1]
    out.valid[rows, :w - 1] = ch.valid[:, :w - 1]
    out.values[rows, w - 1:] = 0
    out.valid[rows, w - 1:] = False
    out.values[rows, -1] = ch.values[:, -1]
    out.valid[rows, -1] = ch.valid[:, -1]
    out.reference[rows] = ch.reference
    out.unbounded[rows] = ch.unbounded


@njit.cached(nogil=True)
def _scalable_lanes(inv, plain, lo_field, hi_field, count, d, ok):
    """Narrow ``ok`` (in place) to the lanes whose canonical pair's row (``inv``) is a plain run
    whose ends stay normal when their exponent fields move by the lane's ``d``; the most values
    any of them allows."""
    most = 0
    for i in range(inv.shape[0]):
        u = inv[i]
        if ok[i] and plain[u] and lo_field[u] + d[i] >= 2 and hi_field[u] + d[i] <= 253:
            if count[u] > most:
                most = count[u]
        else:
            ok[i] = False
    return most


@njit.cached(nogil=True)
def _scaled_runs(inv, first, step, count, ref, d, ok, values, valid, reference):
    """Each ``ok`` lane's run of allowed patterns, its row's moved by the lane's exponent
    difference: ``count`` patterns from ``first + (d << 23)`` in steps of ``step`` (pattern
    arithmetic modulo 2^32), valid; every lane's ``reference`` moved alike (lanes not ok are
    overwritten by their own route's)."""
    for i in range(inv.shape[0]):
        u = inv[i]
        shift = np.uint32(np.int64(d[i]) << 23 & 0xFFFFFFFF)
        reference[i] = ref[u] + shift
        if ok[i]:
            base = first[u] + shift
            for j in range(count[u]):
                values[i, j] = base + step[u] * np.uint32(j)
                valid[i, j] = True


class ScaledChoices:
    """Allowed results of a unary binary32 ``rcp``/``sqrt``/``rsqrt`` contract, remembered per binade.

    Scaling a positive normal ``x`` by ``2**k`` (``k`` even for the roots) scales the exact result,
    its round-to-nearest value and a relative or ulp bound by ``2**-k`` (rcp), ``2**(k/2)`` (sqrt)
    or ``2**(-k/2)`` (rsqrt) exactly, as long as every value involved is normal: the allowed results
    of ``x`` are those of its *canonical* input (its significand with the exponent of 1, or of 2 to
    keep the parity for the roots) with the exponent field moved. A table over the 2^24 canonical
    inputs (about 160 MB when full; filled as inputs arrive) keeps, per canonical input, the first
    allowed value, how many follow and the representative value, so an exhaustive run computes the
    contract once per significand instead of once per input. Inputs outside the safe exponent
    range, negative or special ones, and canonical inputs whose allowed set is not one plain run of
    values, take the direct computation (:func:`allowed_choices`) -- but for the roots, negative
    normal inputs (half of an exhaustive run) take the set of -1.0 when the special-case table
    decides them by their class, and a block of them only comes back as one ``uniform`` row.
    """

    SAFE_EXPONENTS = (8, 246)  # biased exponents of inputs whose results (and neighbours) stay normal

    def __init__(self, form, ulp_reading: str, tininess: str):
        self.form = form
        self.fn = form.contract.operation
        self.ulp_reading = ulp_reading
        self.tininess = tininess
        self.nan = np.uint32(form.format.canonical_nan)
        size = 1 << 24
        self.first = np.zeros(size, dtype=np.uint32)
        self.reference = np.zeros(size, dtype=np.uint32)
        self.plain = np.zeros(size, dtype=bool)
        self.count = np.zeros(size, dtype=np.uint8)  # 0: not computed yet (written last)
        # a root's special table decides every negative normal input by its class ("-normal"),
        # unless some row names a pattern: each then allows what -1.0 allows
        words = [w for case in form.contract.specials for w in case.operands]
        self.negative = None
        if self.fn != "rcp" and "-normal" in words and not any(w.startswith("0x") for w in words):
            self.negative = allowed_choices(form, [np.array([0xBF800000], dtype=np.uint32)], ulp_reading=ulp_reading,
                                            tininess=tininess)

    @staticmethod
    def applies(form) -> bool:
        """Whether ``form``'s contract has the scaling property this table relies on."""
        c = form.contract
        return (form.kind == "contract" and c is not None and c.operation in ("rcp", "sqrt", "rsqrt")
                and form.element_format == "f32" and PTX_TYPES[form.type].bits == 32 and not c.rules
                and len(form.sources) == 1)

    def choices(self, x: np.ndarray) -> Choices:
        """The allowed results for the binary32 patterns ``x`` (uint32), like :func:`allowed_choices`
        (the arrays column-major: forking reads them a column at a time)."""
        x = x.astype(np.uint32, copy=False)
        e = x >> np.uint32(23)  # the sign bit lands above the exponent: negative inputs exceed hi_e
        lo_e, hi_e = self.SAFE_EXPONENTS
        ok = (e >= np.uint32(lo_e)) & (e <= np.uint32(hi_e))
        mant = x & np.uint32(0x7FFFFF)
        # the canonical input: exponent 127 (rcp), or 127/128 keeping the parity of e (roots; bit 23
        # of the index says 128); the result's exponent field moves by `shift` (wraps like int64)
        if self.fn == "rcp":
            index = mant
            shift = np.int32(127) - e.view(np.int32)
        else:
            index = mant | (~x & np.uint32(0x800000))
            half = (e.view(np.int32) - np.int32(127) - (index >> np.uint32(23)).view(np.int32)) >> np.int32(1)
            shift = half if self.fn == "sqrt" else -half
        step = shift.view(np.uint32) << np.uint32(23)
        count = self.count[index]
        todo = ok & (count == 0)
        if todo.any():
            self._fill(np.unique(index[todo]).astype(np.int64))
            count = self.count[index]
        ok &= self.plain[index]
        n = x.shape[0]
        parts = []  # (lanes, their Choices) not served by the table
        if self.negative is not None:
            negative = (e >= np.uint32(0x101)) & (e <= np.uint32(0x1FE))  # sign set, exponent 1..254
            if negative.all():
                r = self.negative
                return Choices(r.values, r.valid, r.unbounded, r.reference, uniform=True)
            if negative.any():
                parts.append((np.flatnonzero(negative), self.negative))
                ok &= ~negative
            rest = np.flatnonzero(~ok & ~negative)
        else:
            rest = np.flatnonzero(~ok)
        if rest.size:
            other = allowed_choices(self.form, [x[rest]], ulp_reading=self.ulp_reading, tininess=self.tininess)
            if rest.size == n:  # no lane from the table (special inputs, say): the direct sets
                return other
            parts.append((rest, other))
        cnt = np.where(ok, count, np.uint8(0))
        k = int(cnt.max()) if cnt.size else 0
        base = self.first[index] + step
        width = max([k + 1] + [ch.values.shape[1] for _, ch in parts])
        values = np.zeros((n, width), dtype=np.uint32, order="F")
        valid = np.zeros((n, width), dtype=bool, order="F")
        for j in range(k):
            np.add(base, np.uint32(j), out=values[:, j])
            np.greater(cnt, np.uint8(j), out=valid[:, j])
        values[:, -1] = self.nan  # the NaN column: never allowed here
        reference = self.reference[index] + step
        unbounded = np.zeros(n, dtype=bool)
        out = Choices(values, valid, unbounded, reference)
        for rows, ch in parts:  # (one row for all the negative lanes: numpy broadcasts it)
            _place(out, rows, ch)
        return out

    def _fill(self, index: np.ndarray) -> None:
        canonical = ((index >> 23) + 127).astype(np.uint32) << np.uint32(23) | (index & 0x7FFFFF).astype(np.uint32)
        ch = allowed_choices(self.form, [canonical], ulp_reading=self.ulp_reading, tininess=self.tininess)
        cnt = ch.valid.sum(axis=1)
        first_col = np.argmax(ch.valid, axis=1)
        # plain: the allowed values are the first `cnt` columns (one run of positive normal values)
        cols = np.arange(ch.valid.shape[1])
        run = (first_col == 0)[:, None] & (ch.valid == (cols[None, :] < cnt[:, None]))
        plain = run.all(axis=1) & ~ch.unbounded & (cnt > 0) & (cnt < 255)
        first = ch.values[np.arange(index.size), first_col].astype(np.uint32)
        finite = (first & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
        plain &= finite & (first >= np.uint32(0x00800000)) & ((first >> np.uint32(31)) == 0)
        self.first[index] = first
        self.reference[index] = ch.reference.astype(np.uint32)
        self.plain[index] = plain
        self.count[index] = np.where(plain, cnt, 255).astype(np.uint8)


class ScaledPairChoices:
    """Allowed results of a binary32 ``div`` contract with an ulp bound, remembered per pair of
    significands.

    Multiplying ``a`` by ``2**i`` and ``b`` by ``2**j`` multiplies the exact quotient, its
    round-to-nearest value and an ulp bound by ``2**(i-j)`` exactly, as long as every value
    involved is normal: the allowed results of ``(a, b)`` are those of its *canonical* pair (each
    operand's sign and significand with the exponent of 1.0) with the exponent field moved by the
    difference of the operands' exponents. So a block of inputs computes the contract once per
    distinct canonical pair (a few hundred where the operands come from 16-bit formats) instead of
    once per input; the rows are remembered across blocks (up to :data:`LIMIT`).

    A lane takes this path when the bound alone decides both it and its canonical pair
    (:func:`tilecheck.model.api.bound_decides`: no special-value row, no domain rule such as
    ``div.approx``'s huge divisors), both operands are finite and non-zero (a subnormal one is
    normalized first: :meth:`_canonical`), the canonical set is one run of
    values (:meth:`_row`), and the run moved stays clear of the lowest normal binade and of the
    largest (exponent fields 2..253): there ulps, rounding to nearest and the pattern steps all
    scale.

    Lanes that scaling does not serve (quotients near or outside the ends of the normal range) are
    remembered unscaled per (canonical pair, exponent difference ``d``): the pair and ``d`` fix
    the exact quotient, hence its set. Quotients far outside the normal range have one set per
    canonical pair whatever ``d``: below 2^-151 every reading allows the zero and the first
    subnormals of the quotient's sign (the sign rule of ``spec/rules/contracts.yaml`` keeps the
    other sign out), above 2^129 the infinity (and, correctly rounded, the largest finite values).
    Rather than trust that, :meth:`_memo_slots` computes the set at the near end of each tail
    (``d`` = :data:`TAIL_LO` or :data:`TAIL_HI`) and at its far end (the most extreme ``d`` of
    bound lanes) and uses it for the whole tail only where the two agree: the allowed set is an
    interval in real order whose ends do not decrease as the quotient grows (the bound is constant
    below 2^emin and RN is monotone), so equal sets at both ends hold in between. Every other lane
    takes the direct computation (:func:`allowed_choices`).
    """

    LIMIT = 1 << 23  # canonical pairs remembered (a whole float16 sweep has 2^22)
    TAIL_LO = -152  # d at or below: |quotient| < 2^(d+1) <= 2^-151, under half the smallest subnormal
    TAIL_HI = 130  # d at or above: |quotient| >= 2^(d-1) >= 2^129, past the overflow threshold
    EXTREME = (-251, 253)  # the most extreme d of bound lanes with normal operands (|b| <= 2^126)
    MEMO_WIDTH = 8  # most values of an unscaled set remembered (wider ones take the direct computation)
    MEMO_LIMIT = 1 << 22  # unscaled sets remembered (a whole bfloat16 sweep needs about 3 million)
    WINDOW = 120  # |d| from which a prefill computes the unscaled sets (scaling serves |d| below ~124)
    _DENSE_D = np.concatenate([np.arange(TAIL_LO, -WINDOW + 1), np.arange(WINDOW, TAIL_HI + 1)])
    _DENSE_COL = np.full(TAIL_HI - TAIL_LO + 1, -1, dtype=np.int64)  # d - TAIL_LO -> column of _DENSE_D
    _DENSE_COL[_DENSE_D - TAIL_LO] = np.arange(_DENSE_D.shape[0])

    def __init__(self, form, ulp_reading: str, tininess: str):
        self.form = form
        self.ulp_reading = ulp_reading
        self.tininess = tininess
        # divisor canonical pattern -> (dividend canonical patterns, sorted; then per dividend the
        # row of _compute_rows: first, step, count, reference, plain)
        self.rows: dict = {}
        self._rows_held = 0  # pairs the tables hold
        # special lanes' sets by api.special_lane_key: key -> (values, valid, unbounded, reference)
        self._special: dict = {}
        self._special_lock = threading.Lock()
        self._rows_lock = threading.Lock()
        self._mixed = self._empty_mixed()
        # sets not served by scaling, remembered unscaled per (canonical pair, d): key -> memo row, -1 none
        self.memo: dict = {}
        self.memo_used = 0
        # per thread (threads run blocks at once): (dividends, their distinct canonical forms, each lane's index)
        self._local = threading.local()
        # the unscaled memo's rows are appended, and cleared at LIMIT: one thread at a time looks up,
        # fills and reads them
        self._memo_lock = threading.Lock()
        self._prefilled: set = set()  # divisor patterns (canonical) whose sets were computed in one batch
        self._dense: dict = {}  # divisor pattern -> (dividend canonical patterns, memo rows by (dividend, d column))
        self.memo_values = np.zeros((0, self.MEMO_WIDTH + 1), dtype=np.uint32)
        self.memo_valid = np.zeros((0, self.MEMO_WIDTH + 1), dtype=bool)
        self.memo_reference = np.zeros(0, dtype=np.uint32)

    @staticmethod
    def applies(form) -> bool:
        """Whether ``form``'s contract has the scaling property this memo relies on."""
        c = form.contract
        return (form.kind == "contract" and c is not None and c.operation == "div" and c.ulp is not None
                and form.element_format == "f32" and PTX_TYPES[form.type].bits == 32 and len(form.sources) == 2)

    def choices(self, a: np.ndarray, b: np.ndarray) -> Choices:
        """The allowed results for the binary32 operand patterns ``a``, ``b`` (uint32), as
        :func:`allowed_choices` gives them."""
        a = a.astype(np.uint32, copy=False)
        b = b.astype(np.uint32, copy=False)
        n = a.shape[0]
        ea, ca = self._canonical(a)
        eb, cb = self._canonical(b)
        # finite operands (zeros are the special-value table's: bound_decides leaves them out)
        ok = (ea <= 254) & (eb <= 254)
        ok &= api.bound_decides(self.form, a, b)
        decided = ok.copy()
        uniq, inv = self._pairs(a, ca, cb)
        # per canonical pair: its run (first value, step, count), representative, and the exponent
        # fields of the run's ends; per lane those move by d = ea - eb
        first, step, count, ref, plain = self._rows(uniq)
        first = np.where(plain, first, 0)
        last = first + step * np.maximum(count.astype(np.int64) - 1, 0)
        lo_field = (np.minimum(first & 0x7FFFFFFF, last & 0x7FFFFFFF) >> 23).astype(np.int32)
        hi_field = (np.maximum(first & 0x7FFFFFFF, last & 0x7FFFFFFF) >> 23).astype(np.int32)
        d = (ea - eb).astype(np.int32, copy=False)
        inv = inv.astype(np.int64, copy=False)
        count = count.astype(np.uint8, copy=False)
        k = _scalable_lanes(inv, plain, lo_field, hi_field, count, d, ok)
        tail_lanes, tail = self._unscaled_choices(a, b, d, ca, cb, ~ok & decided)
        rest = np.flatnonzero(~ok & ~tail_lanes)
        other = self._direct(a[rest], b[rest]) if rest.size else None
        if rest.size == n:
            return other
        width = max(k + 1, other.values.shape[1] if other is not None else 0,
                    tail.values.shape[1] if tail is not None else 0)
        # column-major, as ScaledChoices lays them: forking reads them a column at a time
        values = np.zeros((n, width), dtype=np.uint32, order="F")
        valid = np.zeros((n, width), dtype=bool, order="F")
        values[:, -1] = self.form.nan.bits if self.form.nan.bits is not None else self.form.format.canonical_nan
        reference = np.empty(n, dtype=np.uint32)
        _scaled_runs(inv, first.astype(np.uint32), step.astype(np.int32).view(np.uint32), count,
                     ref.astype(np.uint32), d, ok, values, valid, reference)
        out = Choices(values, valid, np.zeros(n, dtype=bool), reference)
        if other is not None:
            _place(out, rest, other)
        if tail is not None:
            _place(out, np.flatnonzero(tail_lanes), tail)
        return out

    def _direct(self, a, b) -> Choices:
        """:func:`allowed_choices` of the lanes ``a``/``b`` that scaling does not serve. Their
        special lanes (a NaN, infinite or zero operand: a quarter of the inputs of a block with a
        special divisor, a few per cent of the others) take the sets remembered per
        :func:`tilecheck.model.api.special_lane_key`; the others, and every lane of a form that
        has no such key, are computed."""
        keyed = api.special_lane_key(self.form, a, b)
        if keyed is None or not keyed[0].any():
            return allowed_choices(self.form, [a, b], ulp_reading=self.ulp_reading, tininess=self.tininess)
        special, key = keyed
        lanes = np.flatnonzero(special)
        uniq, first, inv = np.unique(key[lanes], return_index=True, return_inverse=True)
        with self._special_lock:
            rows = [self._special.get(k) for k in uniq.tolist()]
            todo = [j for j, r in enumerate(rows) if r is None]
            if todo:
                at = lanes[first[todo]]
                ch = allowed_choices(self.form, [a[at], b[at]], ulp_reading=self.ulp_reading, tininess=self.tininess)
                for i, j in enumerate(todo):
                    rows[j] = (ch.values[i], ch.valid[i], bool(ch.unbounded[i]), ch.reference[i])
                    self._special[int(uniq[j])] = rows[j]
        width = max(r[0].shape[0] for r in rows)
        values = np.zeros((len(rows), width), dtype=np.uint32)
        valid = np.zeros((len(rows), width), dtype=bool)
        for j, r in enumerate(rows):  # the NaN column last, as allowed_choices lays it out
            values[j, :r[0].shape[0] - 1], valid[j, :r[1].shape[0] - 1] = r[0][:-1], r[1][:-1]
            values[j, -1], valid[j, -1] = r[0][-1], r[1][-1]
        keyed_choices = Choices(values[inv], valid[inv], np.array([r[2] for r in rows], dtype=bool)[inv],
                                np.array([r[3] for r in rows], dtype=np.uint32)[inv])
        others = np.flatnonzero(~special)
        if others.size == 0:
            return keyed_choices
        computed = allowed_choices(self.form, [a[others], b[others]], ulp_reading=self.ulp_reading,
                                   tininess=self.tininess)
        width = max(width, computed.values.shape[1])
        n = a.shape[0]
        out = Choices(np.zeros((n, width), dtype=np.uint32), np.zeros((n, width), dtype=bool),
                      np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint32))
        _place(out, lanes, keyed_choices)
        _place(out, others, computed)
        return out

    @staticmethod
    def _canonical(x):
        """(exponent field, canonical pattern) of binary32 patterns: the pattern's sign and
        significand with the exponent of 1.0, and the field its exponent would have -- below 1 for
        a subnormal, whose significand is normalized first (so x = canonical * 2^(field - 127) for
        every finite non-zero x: quotients of subnormal operands scale like any other)."""
        field = ((x >> np.uint32(23)) & np.uint32(0xFF)).view(np.int32)
        mant = x & np.uint32(0x7FFFFF)
        sub = (field == 0) & (mant != 0)
        if sub.any():
            # shift the leading bit of a subnormal significand up to bit 23 (the implicit bit)
            at = np.flatnonzero(sub)
            shift = (24 - bit_length(np, mant[at].astype(np.uint64))).astype(np.int32)
            mant = mant.copy()
            field = field.copy()
            mant[at] = (mant[at] << shift.astype(np.uint32)) & np.uint32(0x7FFFFF)
            field[at] = 1 - shift
        return field, (x & np.uint32(0x80000000)) | mant | np.uint32(127 << 23)

    def _pairs(self, a, ca, cb):
        """(distinct canonical pairs, each lane's index into them). An exhaustive block holds one
        divisor and the same dividends as the block before: the dividends' distinct significands
        are then remembered from that block, and the pairs are theirs with the one divisor's."""
        if cb.shape[0] and (cb == cb[0]).all():
            last = getattr(self._local, "dividends", None)
            if last is None or last[0].shape != a.shape or not np.array_equal(last[0], a):
                uniq_a, inv = np.unique(ca, return_inverse=True)
                self._local.dividends = last = (a.copy(), uniq_a, inv)
            return (last[1].astype(np.uint64) << np.uint64(32)) | np.uint64(cb[0]), last[2]
        pair = (ca.astype(np.uint64) << np.uint64(32)) | cb.astype(np.uint64)
        return np.unique(pair, return_inverse=True)

    def _unscaled_choices(self, a, b, d, ca, cb, candidates):
        """(lanes, Choices): the ``candidates`` (bound lanes with normal operands that scaling does
        not serve) whose set is remembered per (canonical pair, ``d``) -- ``d`` clamped to the
        tail's near end in a tail whose set is known constant -- and those lanes' choices (None when
        there are none)."""
        lanes = candidates & (d >= self.EXTREME[0]) & (d <= self.EXTREME[1])
        if not lanes.any():
            return lanes, None
        sel = np.flatnonzero(lanes)
        dd = self._clamped(d[sel])
        with self._memo_lock:
            row = None
            if cb.shape[0] and (cb == cb[0]).all():
                self._prefill(ca, cb[0])
                row = self._dense_rows(ca, cb[0], sel, dd)
            if row is None or (row < 0).any():  # lanes the table does not hold: looked up by key
                keys = self._keys(ca[sel], cb[sel], dd)
                uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
                at = sel[first]
                slots = self._memo_slots(uniq, dd[first], a[at], b[at], ca[at], cb[at])
                row = slots[inv]
            lanes[sel[row < 0]] = False
            keep = row >= 0
            if not keep.any():
                return lanes, None
            row = row[keep]
            valid = self.memo_valid[row]
            width = int(valid[:, :-1].sum(axis=1).max()) + 1  # no wider than the widest set (the NaN column last)
            values = np.concatenate([self.memo_values[row, :width - 1], self.memo_values[row, -1:]], axis=1)
            valid = np.concatenate([valid[:, :width - 1], valid[:, -1:]], axis=1)
            reference = self.memo_reference[row]
        return lanes, Choices(values, valid, np.zeros(row.shape[0], dtype=bool), reference)

    def _clamped(self, d):
        """``d`` with a tail's differences moved to its near end (the key its constant set has)."""
        return np.where(d <= self.TAIL_LO, self.TAIL_LO, np.where(d >= self.TAIL_HI, self.TAIL_HI, d))

    @staticmethod
    def _keys(ca, cb, dd):
        """Memo keys of canonical patterns and (clamped) exponent differences: sign and significand
        of each (24 bits) and ``dd``."""
        sig = lambda c: ((c >> np.uint32(8)) & np.uint32(0x800000)) | (c & np.uint32(0x7FFFFF))  # noqa: E731
        return ((sig(ca).astype(np.uint64) << np.uint64(34)) | (sig(cb).astype(np.uint64) << np.uint64(10))
                | (dd + 512).astype(np.uint64))

    def _prefill(self, ca, cb0) -> None:
        """On a divisor significand's first block (an exhaustive block holds one divisor): the sets
        of every dividend significand of the block with it, at every exponent difference scaling may
        not serve, computed in one batch. The blocks of that significand in other binades then find
        theirs remembered; computed a few hundred at a time as they first occur they cost ten times
        more (each batch pays the contract's fixed cost)."""
        key = int(cb0)
        if key in self._prefilled:
            return
        self._prefilled.add(key)
        uniq_ca = np.unique(ca)
        d = self._DENSE_D
        gca = np.repeat(uniq_ca, d.shape[0])
        gd = np.tile(d, uniq_ca.shape[0]).astype(np.int64)
        gcb = np.full(gca.shape, cb0, dtype=np.uint32)
        # representatives of each (pair, d): both operands normal, |b| at most 2^126
        ea = np.where(gd > 0, 1 + gd, 1).astype(np.uint32)
        eb = np.where(gd > 0, 1, 1 - gd).astype(np.uint32)
        keep = np.uint32(0x807FFFFF)
        xa = (gca & keep) | (ea << np.uint32(23))
        xb = (gcb & keep) | (eb << np.uint32(23))
        keys, first, inv = np.unique(self._keys(gca, gcb, gd), return_index=True, return_inverse=True)
        rows = self._memo_slots(keys, gd[first], xa[first], xb[first], gca[first], gcb[first])
        # the same rows by (dividend significand, d), for blocks with these dividends: no lookups
        self._dense[key] = (uniq_ca, rows[inv].reshape(uniq_ca.shape[0], d.shape[0]))

    def _dense_rows(self, ca, cb0, sel, dd):
        """Memo rows of lanes ``sel`` (their clamped ``d``: ``dd``) from the divisor's prefilled
        table, where the block's dividends are those it was filled for; None otherwise (-1 where
        the table has no column for a lane's ``d``)."""
        dense = self._dense.get(int(cb0))
        mine = getattr(self._local, "dividends", None)
        if dense is None or mine is None or mine[1].shape != dense[0].shape or not np.array_equal(mine[1], dense[0]):
            return None
        col = self._DENSE_COL[np.clip(dd - self.TAIL_LO, 0, self._DENSE_COL.shape[0] - 1)]
        rows = dense[1][mine[2][sel], np.maximum(col, 0)]
        return np.where(col >= 0, rows, -1)

    def _memo_slots(self, keys, dd, near_a, near_b, ca, cb) -> np.ndarray:
        """Memo rows of the unscaled ``keys`` (-1: not remembered, the lane takes the direct
        computation); ``dd`` is each key's (clamped) ``d``, ``near_a``/``near_b`` operands with that
        key (inside the windows they fix the quotient, hence the set) and ``ca``/``cb`` their
        canonical patterns. A key seen first is computed: inside the windows from those operands;
        in a tail from the sets at its near and far ends, kept only where they agree."""
        found = np.fromiter(map(self.memo.get, keys.tolist(), itertools.repeat(-2)), dtype=np.int64, count=keys.shape[0])
        todo = np.flatnonzero(found == -2)
        if todo.size == 0:
            return found
        if len(self.memo) + todo.size > self.MEMO_LIMIT:
            # start afresh: the rows found above are overwritten from here on, so recompute them
            self.memo.clear()
            self._prefilled.clear()
            self._dense.clear()
            self.memo_used = 0
            found[:] = -2
            todo = np.arange(keys.shape[0])
        at = todo
        near = dd[todo]
        tail = (near == self.TAIL_LO) | (near == self.TAIL_HI)
        keep = np.uint32(0x807FFFFF)  # the canonical patterns' sign and significand
        sa, sb = ca[at] & keep, cb[at] & keep
        a, b = near_a, near_b

        def sets_at(d, where):
            """The sets at exponent difference ``d`` of the keys ``where``: a tail's from
            representatives with that ``d``, a window's from the lane's own operands."""
            ea = np.where(d > 0, 1 + d, 1).astype(np.uint32)
            eb = np.where(d > 0, 1, 1 - d).astype(np.uint32)
            xa = np.where(tail[where], sa[where] | (ea << np.uint32(23)), a[at[where]])
            xb = np.where(tail[where], sb[where] | (eb << np.uint32(23)), b[at[where]])
            ch = allowed_choices(self.form, [xa, xb], ulp_reading=self.ulp_reading, tininess=self.tininess)
            vals, nan, ref, bounded = self._sets(ch)
            return vals, nan, ref, bounded & np.asarray(api.bound_decides(self.form, xa, xb), dtype=bool)

        vals, nan, ref, ok = sets_at(near, np.arange(todo.size))
        if tail.any():
            # a tail's set is used only where its far end has the same set
            t = np.flatnonzero(tail)
            fvals, fnan, fref, fok = sets_at(self._far_end(near[t]), t)
            width = max(vals.shape[1], fvals.shape[1])
            pad = lambda v: np.pad(v, ((0, 0), (0, width - v.shape[1])), constant_values=np.uint64(1 << 40))  # noqa: E731
            same = (np.sort(pad(vals[t]), axis=1) == np.sort(pad(fvals), axis=1)).all(axis=1)
            agree = same & (nan[t] == fnan) & (ref[t] == fref) & fok
            ok[t] &= agree
        count = (vals < np.uint64(1 << 40)).sum(axis=1)
        ok = ok & (count <= self.MEMO_WIDTH)
        rows = np.full(todo.size, -1, dtype=np.int64)
        rows[ok] = self._store(vals[ok], count[ok], nan[ok], ref[ok])
        found[todo] = rows
        self.memo.update(zip(keys[todo].tolist(), rows.tolist()))
        return found

    def _far_end(self, near: np.ndarray) -> np.ndarray:
        """The far end of the tail whose near end is ``near``: the most extreme ``d`` of bound lanes."""
        return np.where(near > 0, self.EXTREME[1], self.EXTREME[0])

    def _store(self, vals, count, nan, ref) -> np.ndarray:
        """Append remembered sets (``vals``: sorted non-NaN values, padded past ``count``); returns
        their rows."""
        n = vals.shape[0]
        need = self.memo_used + n
        if need > self.memo_values.shape[0]:
            grow = max(need - self.memo_values.shape[0], self.memo_values.shape[0], 1024)
            self.memo_values = np.concatenate([self.memo_values, np.zeros((grow, self.MEMO_WIDTH + 1), np.uint32)])
            self.memo_valid = np.concatenate([self.memo_valid, np.zeros((grow, self.MEMO_WIDTH + 1), bool)])
            self.memo_reference = np.concatenate([self.memo_reference, np.zeros(grow, np.uint32)])
        rows = np.arange(self.memo_used, need)
        w = min(vals.shape[1], self.MEMO_WIDTH)
        block = np.zeros((n, self.MEMO_WIDTH + 1), dtype=np.uint32)
        block[:, :w] = vals[:, :w].astype(np.uint32)
        block[:, -1] = self.form.nan.bits if self.form.nan.bits is not None else self.form.format.canonical_nan
        valid = np.zeros((n, self.MEMO_WIDTH + 1), dtype=bool)
        valid[:, :self.MEMO_WIDTH] = np.arange(self.MEMO_WIDTH)[None, :] < count[:, None]
        valid[:, -1] = nan
        self.memo_values[rows] = block
        self.memo_valid[rows] = valid
        self.memo_reference[rows] = ref
        self.memo_used = need
        return rows

    @staticmethod
    def _sets(ch: Choices):
        """(values, nan, reference, bounded) per row of ``ch``: the allowed non-NaN values in the
        order :func:`allowed_choices` gives them (the run, then the extra zeros; uint64, padded
        with 2^40: the order lanes fork in, kept so that a lane forks alike whether its set was
        remembered or not), whether a NaN is allowed, the representative, and whether the row is
        bounded."""
        valid = ch.valid[:, :-1]
        order = np.argsort(~valid, axis=1, kind="stable")  # valid columns first, in their order
        v = np.where(valid, ch.values[:, :-1].astype(np.uint64), np.uint64(1 << 40))
        v = np.take_along_axis(v, order, axis=1)
        width = max(int(valid.sum(axis=1).max()) if v.size else 0, 1)
        return v[:, :width], ch.valid[:, -1].copy(), ch.reference.astype(np.uint32), ~ch.unbounded

    def _rows(self, pairs: np.ndarray) -> tuple:
        """The rows of the canonical ``pairs`` (uint64, ``a << 32 | b``) as arrays aligned with
        them: (first, step, count, reference, plain), see :meth:`_compute_rows`. Where every pair
        has one divisor (an exhaustive block) the rows come from that divisor's table, its missing
        dividends computed and added; otherwise they are computed. The tables answer for
        themselves: a thread running another block may replace or drop one meanwhile."""
        ca = (pairs >> np.uint64(32)).astype(np.uint32)
        cb = (pairs & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if not (cb.shape[0] and (cb == cb[0]).all()):
            return self._mixed_rows(pairs, ca, cb)
        key = int(cb[0])
        table = self.rows.get(key)
        if table is not None:
            known = table[0]
            at = np.minimum(np.searchsorted(known, ca), known.shape[0] - 1)
            hit = known[at] == ca
            if hit.all():
                return tuple(column[at] for column in table[1:])
            missing = ca[~hit]
        else:
            missing = ca
        computed = self._compute_rows(missing, cb[:missing.shape[0]])
        if table is None:
            merged = (missing,) + computed
        else:
            merged = tuple(np.concatenate([old, new]) for old, new in zip(table, (missing,) + computed))
        order = np.argsort(merged[0], kind="stable")
        merged = tuple(column[order] for column in merged)
        with self._rows_lock:
            if self._rows_held + merged[0].shape[0] > self.LIMIT:
                self.rows, self._rows_held = {}, 0
            old = self.rows.get(key)
            self._rows_held += merged[0].shape[0] - (old[0].shape[0] if old is not None else 0)
            self.rows[key] = merged
        at = np.searchsorted(merged[0], ca)
        return tuple(column[at] for column in merged[1:])

    def _mixed_rows(self, pairs, ca, cb) -> tuple:
        """:meth:`_rows` of pairs with several divisors (sampled inputs, and the same inputs again
        at another element of a kernel): remembered per pair, up to :data:`LIMIT` pairs."""
        with self._rows_lock:
            memo = self._mixed
            found = np.fromiter(map(memo["index"].get, pairs.tolist(), itertools.repeat(-1)), dtype=np.int64,
                                count=pairs.shape[0])
            todo = np.flatnonzero(found < 0)
            if todo.size:
                if memo["used"] + todo.size > self.LIMIT:  # start afresh: every pair of this call is new
                    memo = self._mixed = self._empty_mixed()
                    found = np.full(pairs.shape[0], -1, dtype=np.int64)
                    todo = np.arange(pairs.shape[0])
                rows = self._compute_rows(ca[todo], cb[todo])
                start, stop = memo["used"], memo["used"] + todo.size
                if stop > memo["rows"][0].shape[0]:
                    grow = max(stop, 2 * memo["rows"][0].shape[0])
                    memo["rows"] = tuple(np.concatenate([old, np.zeros(grow - old.shape[0], dtype=old.dtype)])
                                         for old in memo["rows"])
                for column, new in zip(memo["rows"], rows):
                    column[start:stop] = new
                memo["used"] = stop
                found[todo] = np.arange(start, stop)
                memo["index"].update(zip(pairs[todo].tolist(), range(start, stop)))
            return tuple(column[found] for column in memo["rows"])

    @staticmethod
    def _empty_mixed() -> dict:
        """An empty per-pair memo for :meth:`_mixed_rows`: pair -> row, and the rows' columns."""
        return {"index": {}, "used": 0, "rows": (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint8),
                                                 np.zeros(0, np.uint32), np.zeros(0, bool))}

    def _compute_rows(self, ca: np.ndarray, cb: np.ndarray) -> tuple:
        """(first, step, count, reference, plain) of the canonical operands ``ca``/``cb``: where
        ``plain``, the allowed values are ``count`` consecutive patterns of one sign in real
        order from ``first`` (``step`` +1 for positive values, -1 for negative ones), with no NaN,
        no extra value and a bound; elsewhere ``count`` is 0 (the lane takes another route)."""
        n = ca.shape[0]
        ch = allowed_choices(self.form, [ca, cb], ulp_reading=self.ulp_reading, tininess=self.tininess)
        decided = np.asarray(api.bound_decides(self.form, ca, cb), dtype=bool)
        valid = ch.valid[:, :-1]
        vals = ch.values[:, :-1].astype(np.int64)
        width = valid.shape[1]
        cnt = valid.sum(axis=1)
        if width == 0:
            zero = np.zeros(n, dtype=np.int64)
            return zero, zero + 1, zero.astype(np.uint8), ch.reference.astype(np.uint32), np.zeros(n, dtype=bool)
        cols = np.arange(width)
        first = vals[:, 0]
        step = np.where(first >> 31, -1, 1)
        prefix = (valid == (cols[None, :] < cnt[:, None])).all(axis=1)  # the valid columns come first
        run = ((vals == first[:, None] + step[:, None] * cols[None, :]) | ~valid).all(axis=1)
        last = np.take_along_axis(vals, np.maximum(cnt - 1, 0)[:, None], axis=1)[:, 0]
        plain = (decided & ~ch.unbounded & ~ch.valid[:, -1] & (cnt > 0) & prefix & run
                 & ((first >> 31) == (last >> 31)))
        count = np.where(plain, cnt, 0).astype(np.uint8)
        return first, step, count, ch.reference.astype(np.uint32), plain
