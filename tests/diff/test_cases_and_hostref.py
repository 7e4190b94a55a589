"""Case generation (deterministic, constructed hard cases, exhaustive chunks) and the independent
host reference against the model."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.diff import backends, cases, hostref
from tilecheck.formats import get_format
from tilecheck.inputs import boundaries, exhaustive
from tilecheck.model import api
from tilecheck.spec.registry import OPERATIONS


def test_batches_are_a_pure_function_of_seed_form_and_index(db):
    form = db.form("div.rn.f32")
    a = cases.batch(form, 7, 3, 5000)
    b = cases.batch(form, 7, 3, 5000)
    c = cases.batch(form, 7, 4, 5000)
    other = cases.batch(db.form("div.rz.f32"), 7, 3, 5000)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    assert not np.array_equal(a[0], other[0])  # each form has its own stream


def test_every_form_gets_containers_of_its_layout(db):
    forms = db.kernel_forms()
    assert forms  # guard the guard: an empty database would pass everything below
    for form in forms:
        ops = cases.batch(form, 0, 0, 64)
        layout = cases.source_layout(form)
        assert len(ops) == len(layout), form.name
        for o, (_, dtype, per_case) in zip(ops, layout):
            assert o.dtype == dtype and o.size == 64 * per_case, form.name


def test_batches_hit_the_edge_classes_and_the_ftz_boundary(db):
    form = db.form("div.rn.ftz.f32")
    a, b = cases.batch(form, 0, 0, 20000)
    f = get_format("f32")
    classes = set(f.classify(a).tolist()) | set(f.classify(b).tolist())
    assert len(classes) == 10  # every class, signalling NaNs included
    # quotients that are exact ties just below 2^-126 (FTZ before/after rounding differ)
    before = api.evaluate(form, a, b, tininess="before")
    after = api.evaluate(form, a, b, tininess="after")
    assert int((before != after).sum()) > 100


def test_hard_divisions_are_next_to_rounding_boundaries(db):
    # a hard pair's RN and RZ quotients differ only where the quotient is not exact, and the
    # exact quotient is within a tiny fraction of an ulp of a boundary: the f64 quotient sits
    # closer to a representable f32 (or midpoint) than random pairs ever do
    form = db.form("div.rn.f32")
    a, b = cases.batch(form, 1, 0, 20000)
    with np.errstate(all="ignore"):  # NaN/inf cases
        q = a.view(np.float32).astype(np.float64) / b.view(np.float32).astype(np.float64)
        c = q.astype(np.float32).astype(np.float64)
        _, e = np.frexp(c)
        ulp = np.ldexp(1.0, np.maximum(e - 1, -126) - 23)
        frac = np.abs(q - c) / ulp
    finite = np.isfinite(frac) & (c != 0)
    near = (frac[finite] < 2.0 ** -18) | (np.abs(frac[finite] - 0.5) < 2.0 ** -18)
    assert near.mean() > 0.2


def test_tie_sums_land_on_midpoints():
    rng = np.random.default_rng(5)
    a, b = boundaries.tie_sums("f32", 4000, rng)
    exact = a.view(np.float32).astype(np.float64) + b.view(np.float32).astype(np.float64)
    nearest = exact.astype(np.float32).astype(np.float64)
    _, e = np.frexp(nearest)
    half_ulp = np.ldexp(1.0, e - 1 - 24)
    dist = np.abs(exact - nearest) / half_ulp
    assert (dist == 1.0).mean() > 0.3  # exact ties
    # the others are 2**-d half-ulps past a tie: between a quarter ulp and the tie itself
    assert ((dist >= 0.5) & (dist <= 1.0)).all()
    assert ((dist > 0.999) & (dist < 1.0)).mean() > 0.1


def test_rcp_ftz_boundary_rounds_up_to_the_smallest_normal_under_rp():
    rng = np.random.default_rng(2)
    b = boundaries.rcp_ftz_boundary("f32", 2000, rng)
    pos = b[b < 0x80000000]
    rp = api.ieee_op("rcp", "f32", "rp", pos)
    exact_below = 1.0 / pos.view(np.float32).astype(np.float64) < 2.0 ** -126
    assert exact_below.all()
    assert (rp == 0x00800000).sum() > 100  # rounded up to 2^-126: flush before vs after differ here


def test_exhaustive_domains_and_chunks(db):
    assert exhaustive.domain_size(db.form("sqrt.rn.f32")) == 1 << 32
    assert exhaustive.domain_size(db.form("add.rn.f16")) == 1 << 32
    assert exhaustive.domain_size(db.form("rcp.approx.ftz.f64")) == 1 << 32
    assert exhaustive.domain_size(db.form("div.rn.f32")) is None
    assert exhaustive.domain_size(db.form("fma.rn.f16")) is None
    assert exhaustive.domain_size(db.form("ld.global.f32")) is None
    (a,) = exhaustive.chunk(db.form("sqrt.rn.f32"), (1 << 32) - 3, 1 << 32)
    assert a.dtype == np.uint32 and a.tolist() == [0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFF]
    x, y = exhaustive.chunk(db.form("add.rn.f16"), 0x12345, 0x12347)
    assert x.tolist() == [1, 1] and y.tolist() == [0x2345, 0x2346] and x.dtype == np.uint16
    (h,) = exhaustive.chunk(db.form("rsqrt.approx.ftz.f64"), 0x3FF00000, 0x3FF00001)
    assert h.tolist() == [0x3FF0000000000000]
    with pytest.raises(ValueError):
        exhaustive.chunk(db.form("sqrt.rn.f32"), 0, (1 << 32) + 1)


def test_host_reference_matches_the_model_on_generated_cases(db):
    covered = [f for f in db.kernel_forms() if hostref.support(f).ok]
    assert len(covered) >= 30
    for form in covered:
        ops = cases.batch(form, 3, 0, 20000)
        got = hostref.evaluate(form, *ops)
        ok = api.allowed(form, got, *ops)
        assert ok.all(), (form.name, [hex(int(o[np.argmin(ok)])) for o in ops])


@pytest.mark.parametrize("name", ["sqrt.rn.f32", "sqrt.rz.f32", "sqrt.rm.f32", "sqrt.rp.f32", "rcp.rn.f32",
                                  "rcp.rz.ftz.f32"])
def test_exhaustive_slices_host_vs_model(db, name):
    """2^20 consecutive inputs at four places of the domain (subnormals, the normal/subnormal
    boundary, the middle, negative numbers and NaNs): the sweep's two sides agree."""
    form = db.form(name)
    host = backends.HostBackend()
    for start in (0, 0x007F0000, 0x3F800000, 0xFF700000):
        (ops,) = exhaustive.chunk(form, start, start + (1 << 18))
        found = host.judge(form, [ops])
        assert found.count == 0, (name, hex(start), [hex(int(v)) for v in found.operands[0][:4]])


def test_a_wrong_host_reference_would_be_caught(db):
    """Guard: the comparison can fail -- an RN result stands in for RZ on a slice."""
    rz, rn = db.form("sqrt.rz.f32"), db.form("sqrt.rn.f32")
    (ops,) = exhaustive.chunk(rz, 0x3F800000, 0x3F800000 + (1 << 16))
    wrong = hostref.evaluate(rn, ops)
    assert (~api.allowed(rz, wrong, ops)).sum() > 1000


def test_host_reference_refuses_what_it_does_not_cover(db):
    assert not hostref.support(db.form("div.rz.f64")).ok
    with pytest.raises(TypeError):  # a truth test would read a reason backwards
        bool(hostref.support(db.form("div.rz.f64")))
    assert not hostref.support(db.form("rcp.approx.f32")).ok
    assert not backends.HostBackend().support(db.form("fma.rn.f32")).ok


def test_every_declared_construction_has_a_numpy_and_a_hypothesis_implementation():
    from tilecheck.inputs import forms, mix
    from tilecheck.testing import strategies

    assert set(mix.CONSTRUCTIONS) == set(forms.CONSTRUCTIONS) == set(strategies.CONSTRUCTIONS)
    assert set(mix.HARD_CASES) <= set(OPERATIONS)


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_mixed_operands_follow_the_declared_proportions(op):
    from tilecheck.inputs import forms, mix

    arity, n = OPERATIONS[op], 4000
    cols, drawn = forms.mixed_operands(op, get_format("f32"), "rz", n, np.random.default_rng(5), arity)
    assert len(cols) == arity and all(c.size == n for c in cols)
    assert sum(drawn.values()) == n and drawn["uniform"] == int(n * mix.MIX.uniform)
    # an operation without a construction gives the hard share to the edge-biased part
    assert drawn["hard"] == (int(n * mix.MIX.hard) if op in mix.HARD_CASES else 0)
    # the hard part is exactly what hard_cases builds from the same stream position
    if op in mix.HARD_CASES:
        rng = np.random.default_rng(5)
        hard = forms.hard_cases(op, get_format("f32"), "rz", drawn["hard"], rng, arity)
        lo = drawn["edge"]
        assert all(np.array_equal(c[lo:lo + drawn["hard"]], h) for c, h in zip(cols, hard))
