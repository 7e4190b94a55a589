"""``api.results_within(inner, outer)``: every result one form allows, another allows too; and
``api.results_disjoint(inner, outer)``: none does.

Checked against their definitions, one pattern at a time: each allowed result of ``inner`` (its run,
walked pattern by pattern, its extra values, its NaN) put to ``outer.contains``. ``results_within``
must say True exactly where the walk finds every result inside and neither form bounds nothing,
``results_disjoint`` exactly where it finds none inside (NaNs of both count as shared)."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.model import api

PAIRS = [("lg2.approx.ftz.f32", "lg2.approx.f32"), ("lg2.approx.f32", "lg2.approx.ftz.f32"),
         ("sqrt.approx.ftz.f32", "sqrt.approx.f32"), ("sqrt.approx.f32", "sqrt.approx.ftz.f32"),
         ("ex2.approx.f32", "ex2.approx.ftz.f32"), ("ex2.approx.ftz.f32", "ex2.approx.f32"),
         ("rcp.approx.ftz.f32", "rcp.approx.f32"), ("rsqrt.approx.f32", "rsqrt.approx.ftz.f32"),
         ("lg2.approx.f32", "lg2.approx.f32")]


def _inputs(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pats = [rng.integers(0, 1 << 32, 400, dtype=np.uint64),
            np.arange(0x3F800000 - 40, 0x3F800000 + 40, dtype=np.uint64),   # lg2 near 1
            np.arange(0, 40, dtype=np.uint64), np.arange(0x7FFFC0, 0x800040, dtype=np.uint64),  # subnormals
            np.array([0xC2FC0000, 0xC2FD0000, 0xC3000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x80000000],
                     dtype=np.uint64)]
    return np.unique(np.concatenate(pats)).astype(np.uint32)


def _patterns(one_in, limit: int):
    """Every result ``one_in`` (one lane) allows but a NaN, as patterns (None: too many to walk)."""
    if bool(one_in.unbounded[0]):
        return None
    pats = []
    if not bool(one_in.empty[0]):
        k_lo, k_hi = int(one_in._key(np, one_in.lo)[0]), int(one_in._key(np, one_in.hi)[0])
        if k_hi - k_lo > limit:
            return None
        for k in range(k_lo, k_hi + 1):
            m = (-k - 1 if k < 0 else k) * one_in.stride
            pats.append(m | one_in.sign_bit if k < 0 else m)
    return pats + [int(e) for e, u in zip(one_in.extra[0], one_in.extra_used[0]) if u]


def _walk(inner, outer, lane: int, limit: int = 1 << 12):
    """Every result ``inner`` allows at ``lane`` is one ``outer`` allows (None: too many to walk)."""
    one_in, one_out = inner.take(np.array([lane])), outer.take(np.array([lane]))
    pats = _patterns(one_in, limit)
    if pats is None:
        return None
    if bool(one_in.nan[0]):
        pinned = int(one_in.nan_bits[0, 0])
        pats.append(pinned if pinned else 0x7FFFFFFF)
    return all(bool(one_out.contains(np.array([p], dtype=np.uint64))[0]) for p in pats)


def _walk_none(inner, outer, lane: int, limit: int = 1 << 12):
    """No result ``inner`` allows at ``lane`` is one ``outer`` allows (None: too many to walk)."""
    one_in, one_out = inner.take(np.array([lane])), outer.take(np.array([lane]))
    pats = _patterns(one_in, limit)
    if pats is None:
        return None
    if bool(one_in.nan[0]) and bool(one_out.nan[0]):
        return False
    return not any(bool(one_out.contains(np.array([p], dtype=np.uint64))[0]) for p in pats)


@pytest.mark.parametrize("inner_name,outer_name", PAIRS + [("sin.approx.f32", "cos.approx.f32"),
                                                            ("sin.approx.ftz.f32", "tanh.approx.f32"),
                                                            ("ex2.approx.f32", "lg2.approx.f32")])
def test_results_disjoint_is_its_definition(inner_name, outer_name):
    xs = _inputs(11)
    inner = api.allowed_results(inner_name, xs)
    outer = api.allowed_results(outer_name, xs)
    said = np.asarray(api.results_disjoint(inner, outer), dtype=bool)
    wrong, walked, apart = [], 0, 0
    for lane in range(xs.size):
        truth = _walk_none(inner, outer, lane)
        if truth is None:
            if said[lane] and bool(inner.unbounded[lane]):
                wrong.append(f"{int(xs[lane]):#010x}: True where {inner_name} bounds nothing")
            continue
        walked += 1
        apart += bool(truth)
        if said[lane] != truth and not (truth and bool(outer.unbounded[lane])):
            wrong.append(f"{int(xs[lane]):#010x}: {bool(said[lane])}, the walk says {truth}")
    assert not wrong, wrong[:5]
    assert walked > 100  # (sin and cos bound nothing beyond 100pi, and near a zero allow ~2^30 values)
    if inner_name.split(".")[0] != outer_name.split(".")[0]:
        assert apart > 0  # two functions: most of their sets lie apart


@pytest.mark.parametrize("inner_name,outer_name", PAIRS)
def test_results_within_is_its_definition(inner_name, outer_name):
    xs = _inputs(7)
    inner = api.allowed_results(inner_name, xs)
    outer = api.allowed_results(outer_name, xs)
    said = np.asarray(api.results_within(inner, outer), dtype=bool)
    wrong, walked = [], 0
    for lane in range(xs.size):
        truth = _walk(inner, outer, lane)
        if truth is None:
            if said[lane] and bool(inner.unbounded[lane]):
                wrong.append(f"{int(xs[lane]):#010x}: True where {inner_name} bounds nothing")
            continue
        walked += 1
        if said[lane] and not truth:
            wrong.append(f"{int(xs[lane]):#010x}: True, yet a result of {inner_name} is outside {outer_name}")
        elif truth and not said[lane] and not bool(outer.unbounded[lane]):
            wrong.append(f"{int(xs[lane]):#010x}: False, yet every result of {inner_name} is inside {outer_name}")
    assert not wrong, wrong[:5]
    assert walked > xs.size // 2


def test_a_form_is_within_itself_where_it_bounds_something():
    xs = _inputs(3)
    r = api.allowed_results("lg2.approx.f32", xs)
    assert np.array_equal(np.asarray(api.results_within(r, r), dtype=bool), ~np.asarray(r.unbounded, dtype=bool))


def test_different_result_formats_are_refused():
    from tilecheck.errors import UsageError
    a = api.allowed_results("sqrt.approx.f32", np.array([0x3F800000], dtype=np.uint32))
    b = api.allowed_results("rcp.approx.ftz.f64", np.array([0x3FF0000000000000], dtype=np.uint64))
    with pytest.raises(UsageError):
        api.results_within(a, b)
