"""``ScaledPairChoices`` (division contracts remembered per pair of significands) against the direct
computation of every lane's allowed results.

For each binary32 division form with an ulp bound, each ulp reading and each tininess reading:
random patterns of every class, operands widened from bfloat16 (where the memo serves most lanes),
a block with one divisor and every dividend of a 2^12 grid, quotients at the edges of the normal
range, and quotients far outside it (the tails, remembered per canonical pair where their set is
constant, and the windows between, remembered per pair and exponent difference), and subnormal
operands (normalized into canonical pairs). Every lane's set of allowed
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
    # quotients far below the subnormal range and far above the overflow threshold (the tails whose
    # set is constant), and every exponent difference between (the unscaled windows)
    d = rng.integers(-253, 254, n)
    fa = np.clip(np.where(d > 0, 1 + d, 1) + rng.integers(0, 3, n), 1, 254).astype(np.uint32)
    fb = np.clip(fa.astype(np.int64) - d, 1, 254).astype(np.uint32)
    far = np.stack([sign[1] | (fa << np.uint32(23)) | (mant[1] & np.uint32(0x7F0000)),
                    sign[0] | (fb << np.uint32(23)) | (mant[0] & np.uint32(0x7F0000))])
    # subnormal dividends and divisors (normalized into the canonical pairs), against every binade
    sub = (rng.integers(1, 1 << 23, n, dtype=np.uint64).astype(np.uint32) >> rng.integers(0, 23, n).astype(np.uint32))
    sub = np.maximum(sub, 1) | sign[0]
    other = sign[1] | (rng.integers(1, 255, n).astype(np.uint32) << np.uint32(23)) | mant[1]
    subs = np.stack([np.concatenate([sub, other]), np.concatenate([other, sub])])
    a = np.concatenate([rand[0], bf[0], block[0], edge[0], far[0], subs[0]])
    b = np.concatenate([rand[1], bf[1], block[1], edge[1], far[1], subs[1]])
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


def test_a_tail_that_is_not_constant_is_never_used(monkeypatch):
    """A tail started too early (inside the subnormal range, where the set still depends on the
    exponent difference) is refused by the comparison of its near and far ends: the sets stay the
    direct ones. Without that comparison the same tail gives wrong sets (the check is needed)."""
    form = DB.forms["div.approx.f32"]
    rng = np.random.default_rng(7)
    n = 4000
    d = rng.integers(-200, -120, n)
    ea = np.ones(n, dtype=np.uint32) + rng.integers(0, 3, n).astype(np.uint32)
    eb = (ea.astype(np.int64) - d).astype(np.uint32)
    mant = rng.integers(0, 1 << 7, (2, n), dtype=np.uint64).astype(np.uint32) << np.uint32(16)
    a = (ea << np.uint32(23)) | mant[0]
    b = (eb << np.uint32(23)) | mant[1]
    want = allowed_choices(form, [a, b], ulp_reading="either", tininess="after")
    monkeypatch.setattr(ScaledPairChoices, "TAIL_LO", -140)
    got = ScaledPairChoices(form, "either", "after").choices(a, b)
    assert np.array_equal(_sets(got, n), _sets(want, n))
    monkeypatch.setattr(ScaledPairChoices, "_far_end", lambda self, near: near)  # compares the near end with itself
    wrong = ScaledPairChoices(form, "either", "after").choices(a, b)
    assert not np.array_equal(_sets(wrong, n), _sets(want, n))


@pytest.mark.parametrize("reading", READINGS)
def test_blocks_of_one_divisor_give_the_direct_sets(reading):
    """Exhaustive blocks: every bfloat16 dividend against one divisor. The first block of a divisor
    significand fills its sets in one batch (the prefill) and later blocks read them by (dividend,
    exponent difference) from its table; the sets, their order and the representatives are the
    direct computation's, for divisors whose quotients reach both tails and both windows."""
    form = DB.forms["div.approx.f32"]
    memo = ScaledPairChoices(form, reading, "after")
    a = (np.arange(0, 1 << 16, 3, dtype=np.uint32) << np.uint32(16))
    for divisor in (0x3F37, 0x4137, 0x7E37, 0x0137, 0xFB37, 0x8237, 0x2A11, 0x5A11):
        b = np.full(a.shape, divisor << 16, dtype=np.uint32)
        got = memo.choices(a, b)
        want = allowed_choices(form, [a, b], ulp_reading=reading, tininess="after")
        g, w = got.per_lane(a.shape[0]), want
        for i in range(0, a.shape[0], 7):  # the allowed values in the order lanes fork on them
            assert list(g.values[i][g.valid[i]]) == list(w.values[i][w.valid[i]]), (hex(a[i]), hex(divisor))
        assert np.array_equal(g.reference, w.reference)
        assert np.array_equal(_sets(got, a.shape[0]), _sets(want, a.shape[0]))
    assert memo._dense  # the divisors' tables were used
