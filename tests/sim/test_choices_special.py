"""Special lanes (a NaN, infinite or zero operand) remembered by ``api.special_lane_key``.

The key claims that special lanes with equal keys have equal allowed results and representative
values. For every approximate form that has a key, every reading and both tininess readings:
special patterns (signed zeros and infinities, quiet and signalling NaNs of both signs and
several payloads) against operands of every class -- subnormals, the rules' thresholds (2^126
and its neighbours), the largest finite values, random patterns -- in both positions; the lanes
of each key must have one set, one representative and one unbounded flag, as the direct
computation gives them. Then the division memo, on blocks with a NaN divisor and with every
special dividend, must give the direct sets while computing each key once.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.model import api
from tilecheck.sim import choices as choices_mod
from tilecheck.sim.choices import READINGS, ScaledPairChoices, allowed_choices
from tilecheck.spec.database import load_database
from tilecheck.spec.registry import TININESS

DB = load_database()
KEYED = [f.name for f in DB.ptx_forms() if f.kind == "contract" and f.lanes == 1
         and api.special_lane_key(f, *[np.zeros(1, dtype=f.format.uint)] * len(f.sources)) is not None]


def _patterns(fmt, rng) -> tuple[np.ndarray, np.ndarray]:
    """(special patterns, other patterns) of ``fmt``."""
    w = fmt.width
    sign = 1 << (w - 1)
    top = fmt.exponent_mask
    quiet = 1 << (fmt.mantissa_bits - 1)
    nans = [top | quiet, top | 1, top | (quiet | 5), top | (fmt.magnitude_mask ^ top)]
    special = [0, top] + nans
    special = special + [s | sign for s in special]
    one = fmt.from_fraction(1)
    near = [fmt.power_bits(e) + d for e in (126, -126, 127, -127) if -fmt.emin >= abs(e) - 1
            for d in (-1, 0, 1) if fmt.power_bits(e) + d > 0] if w == 32 else []
    other = [1, 2, fmt.min_normal - 1, fmt.min_normal, one, one + 1, top - 1] + near
    other += [int(x) for x in rng.integers(1, top, 40, dtype=np.uint64)]
    other = other + [o | sign for o in other]
    return np.array(special, dtype=np.uint64), np.array(sorted(set(other)), dtype=np.uint64)


def _rows(ch, i):
    return (tuple(sorted(ch.values[i][ch.valid[i]].tolist())), bool(ch.unbounded[i]), int(ch.reference[i]))


@pytest.mark.parametrize("name", KEYED)
def test_lanes_with_one_key_have_one_set(name):
    form = DB.forms[name]
    fmt = form.format
    rng = np.random.default_rng(sum(map(ord, name)))
    special, other = _patterns(fmt, rng)
    everything = np.concatenate([special, other])
    if len(form.sources) == 1:
        ops = [everything]
    else:  # a special operand in either position, against every pattern
        a = np.concatenate([np.repeat(special, everything.size), np.tile(everything, special.size)])
        b = np.concatenate([np.tile(everything, special.size), np.repeat(special, everything.size)])
        ops = [a, b]
    ops = [o.astype(fmt.uint) for o in ops]
    keyed, key = api.special_lane_key(form, *ops)
    assert keyed.sum() >= special.size
    lanes = np.flatnonzero(keyed)
    for reading in READINGS:
        for tininess in TININESS:
            ch = allowed_choices(form, ops, ulp_reading=reading, tininess=tininess)
            seen: dict = {}
            for i in lanes:
                row = _rows(ch, i)
                k = int(key[i])
                assert seen.setdefault(k, (row, i))[0] == row, (
                    name, reading, tininess, [hex(int(o[i])) for o in ops], [hex(int(o[seen[k][1]])) for o in ops])


def _sets(ch, n):
    ch = ch.per_lane(n)
    v = np.where(ch.valid, ch.values.astype(np.uint64), np.uint64(1 << 40))
    return np.sort(v, axis=1)[:, :int(ch.valid.sum(axis=1).max())]


@pytest.mark.parametrize("reading", READINGS)
def test_the_division_memo_remembers_special_lanes(reading, monkeypatch):
    """Blocks of float16-widened operands, as an exhaustive run has them: one with a NaN divisor
    (every lane special), and ordinary divisors (their special dividends). The sets are the
    direct computation's, and a later block with the same keys computes none of its special
    lanes directly."""
    form = DB.forms["div.full.f32"]
    h = np.arange(1 << 16, dtype=np.uint16)
    a = h.view(np.float16).astype(np.float32).view(np.uint32)
    memo = ScaledPairChoices(form, reading, "after")
    calls = []
    real = choices_mod.allowed_choices
    monkeypatch.setattr(choices_mod, "allowed_choices", lambda f, ops, **kw: (calls.append(ops[0].shape[0]),
                                                                              real(f, ops, **kw))[1])
    for divisor in (0x7E01, 0x3A55, 0xFC00, 0x0000, 0x8001, 0x7A55, 0xFE37):
        b = np.full(a.shape, divisor, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
        got = memo.choices(a, b)
        monkeypatch.undo()
        want = allowed_choices(form, [a, b], ulp_reading=reading, tininess="after")
        monkeypatch.setattr(choices_mod, "allowed_choices", lambda f, ops, **kw: (calls.append(ops[0].shape[0]),
                                                                                  real(f, ops, **kw))[1])
        assert np.array_equal(_sets(got, a.size), _sets(want, a.size)), hex(divisor)
        assert np.array_equal(got.per_lane(a.size).reference, want.reference), hex(divisor)
        assert np.array_equal(got.per_lane(a.size).unbounded, want.unbounded), hex(divisor)
    # 0x3E55: 0x3A55's significand in another binade (its pairs remembered), and the same
    # classes, rules and signs: its special dividends too
    calls.clear()
    b = np.full(a.shape, 0x3E55, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    memo.choices(a, b)
    assert sum(calls) < 64, calls  # no direct computation of the 2,050 special dividends
