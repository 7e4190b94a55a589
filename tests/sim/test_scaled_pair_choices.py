"""``ScaledPairChoices`` (division contracts remembered per pair of significands) against the direct
computation of every lane's allowed results.

For each binary32 division form with an ulp bound, each ulp reading and each tininess reading:
random patterns of every class, operands widened from bfloat16 (where the memo serves most lanes),
a block with one divisor and every dividend of a 2^12 grid, and quotients at the edges of the
normal range (the memo must hand those to the direct computation). Every lane's set of allowed
values, representative value and unbounded flag must equal :func:`allowed_choices`'s.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.sim import choices as choices_mod
from tilecheck.sim.choices import READINGS, ScaledPairChoices, allowed_choices
from tilecheck.spec.database import load_database
from tilecheck.spec.registry import TININESS

DB = load_database()
FORMS = [f.name for f in DB.ptx_forms() if f.kind == "contract" and ScaledPairChoices.applies(f)]


def _operands(rng) -> tuple[np.ndarray, np.ndarray]:
    n = 3000
    rand = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64).astype(np.uint32)
    bf = (rng.integers(0, 1 << 16, (2, n), dtype=np.uint64).astype(np.uint32) << np.uint32(16))
    grid = (np.arange(0, 1 << 16, 16, dtype=np.uint32) << np.uint32(16))
    block = np.stack([grid, np.full(grid.shape, 0xC0A00000, dtype=np.uint32)])
    # exponent differences at the edges of the normal range, both signs, and huge divisors
    ea = rng.integers(1, 255, n).astype(np.uint32)
    eb = np.clip(ea.astype(np.int64) + rng.integers(-130, 131, n), 1, 254).astype(np.uint32)
    mant = rng.integers(0, 1 << 23, (2, n), dtype=np.uint64).astype(np.uint32)
    sign = rng.integers(0, 2, (2, n), dtype=np.uint64).astype(np.uint32) << np.uint32(31)
    edge = np.stack([sign[0] | (ea << np.uint32(23)) | mant[0], sign[1] | (eb << np.uint32(23)) | mant[1]])
    a = np.concatenate([rand[0], bf[0], block[0], edge[0]])
    b = np.concatenate([rand[1], bf[1], block[1], edge[1]])
    return a, b


def _sets(ch, n):
    """Per lane, the sorted allowed values (padded), for comparing two layouts of one answer."""
    ch = ch.per_lane(n)
    v = np.where(ch.valid, ch.values.astype(np.uint64), np.uint64(1 << 40))
    v = np.sort(v, axis=1)
    return v[:, :int(ch.valid.sum(axis=1).max())]


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("name", FORMS)
def test_the_memo_gives_the_direct_sets(name, reading, monkeypatch):
    form = DB.forms[name]
    rng = np.random.default_rng(sum(map(ord, name + reading)))
    a, b = _operands(rng)
    n = a.shape[0]
    for tininess in TININESS:
        want = allowed_choices(form, [a, b], ulp_reading=reading, tininess=tininess)
        direct = []
        real = choices_mod.allowed_choices
        monkeypatch.setattr(choices_mod, "allowed_choices",
                            lambda f, ops, **kw: (direct.append(ops[0].shape[0]), real(f, ops, **kw))[1])
        memo = ScaledPairChoices(form, reading, tininess)
        got = memo.choices(a, b)
        direct.clear()
        again = memo.choices(a, b)  # every canonical pair remembered: only the lanes it cannot scale
        monkeypatch.undo()
        for ch in (got, again):
            assert np.array_equal(_sets(ch, n), _sets(want, n))
            assert np.array_equal(ch.per_lane(n).reference, want.reference)
            assert np.array_equal(ch.per_lane(n).unbounded, want.unbounded)
        # the memo served most lanes: with its rows remembered, what goes to the direct
        # computation is the lanes outside its conditions (specials, rules, range edges)
        assert 0 < sum(direct) < n // 3, direct


def test_the_memo_refuses_lanes_it_cannot_scale():
    """A quotient whose allowed run would reach the lowest normal binade, a divisor above 2^126
    (a domain rule of div.approx) and a subnormal operand all go to the direct computation."""
    form = DB.forms["div.approx.f32"]
    memo = ScaledPairChoices(form, "either", "after")
    a = np.array([0x00800000, 0x3F800000, 0x00400000, 0x3FC00000], dtype=np.uint32)
    b = np.array([0x3F800001, 0x7F000000, 0x3F800000, 0x3F800000], dtype=np.uint32)
    got = memo.choices(a, b)
    want = allowed_choices(form, [a, b], ulp_reading="either", tininess="after")
    assert np.array_equal(_sets(got, 4), _sets(want, 4))
    assert np.array_equal(got.reference, want.reference)
    # the divisor above 2^126 is the signed-zero rule's: only +0 (quotient positive)
    assert set(_sets(got, 4)[1].tolist()) - {1 << 40} == {0}
