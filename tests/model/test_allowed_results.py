"""``allowed_results``: the ranges it returns are exactly what ``allowed`` accepts.

For every approximate form of the database and each ulp reading, on random, hard and edge
operands: every pattern of the range, every extra pattern, the neighbours just outside the range
(the next value below ``lo`` and above ``hi``, two steps out, the zeros, the infinities, NaNs) are
judged by ``allowed`` with the same reading, and ``AllowedResults.contains`` must agree with it.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tilecheck.diff.cases import operands_for
from tilecheck.errors import UsageError
from tilecheck.formats import get_format
from tilecheck.model import api
from tilecheck.spec.contract import ULP_READINGS
from tilecheck.spec.database import load_database


def _seed(*key) -> int:
    """A seed that is the same in every process (``hash`` of a str is randomised per process, so a
    failure seeded from it would not reproduce)."""
    return zlib.crc32(repr(key).encode())


DB = load_database()
CONTRACT = [f for f in DB.ptx_forms() if f.kind == "contract" and f.lanes == 1]
PACKED_CONTRACT = [f for f in DB.ptx_forms() if f.kind == "contract" and f.lanes != 1]


def _edges(fmt, arity: int) -> list[np.ndarray]:
    """Operands around the special values and the edges of the contracts' domains."""
    vals = [0, fmt.sign_mask, 1, fmt.min_normal - 1, fmt.min_normal, fmt.min_normal + 1, fmt.max_finite,
            fmt.inf, fmt.inf | fmt.sign_mask, fmt.canonical_nan, fmt.from_fraction(1), fmt.from_fraction(3),
            fmt.from_fraction(2) | fmt.sign_mask, fmt.max_finite - 1]
    if fmt.name == "f32":
        vals += [0x7E800000, 0x7E800001, 0x7F7FFFFF, 0x00000010, 0x3F800001, 0x7F000000]
    if fmt.name == "f64":
        vals += [0x7FF0000000000001, 0xFFF0000000000001, 0x3FF0000000000001, 0x000FFFFFFFFFFFFF,
                 0x7FEFFFFF00000000, 0x0010000080000000]
    vals = np.array(vals, dtype=np.uint64)
    if arity == 1:
        return [vals]
    a, b = np.meshgrid(vals, vals[::3])
    return [a.reshape(-1), b.reshape(-1)]


def _key(fmt, bits, stride):
    m = (bits & np.uint64(fmt.magnitude_mask)) // np.uint64(stride)
    return np.where((bits >> np.uint64(fmt.width - 1)) != 0, -m.astype(np.int64) - 1, m.astype(np.int64))


def _from_key(fmt, key, stride):
    neg = key < 0
    m = np.where(neg, -key - 1, key).astype(np.uint64) * np.uint64(stride)
    return np.where(neg, m | np.uint64(fmt.sign_mask), m)


def _check(form, ops, reading):
    fmt = get_format(form.element_format)
    res = api.allowed_results(form, *ops, ulp_reading=reading)
    assert res.reading == api.reading_used(form, reading)
    stride = res.stride
    lo_k = _key(fmt, res.lo.astype(np.uint64), stride)
    hi_k = _key(fmt, res.hi.astype(np.uint64), stride)
    top = int(fmt.inf // stride)
    bounded = ~res.empty & ~res.unbounded
    assert np.all(lo_k[bounded] <= hi_k[bounded])
    span = np.where(bounded, hi_k - lo_k, 0)
    wide = span >= 64
    # a relative or ulp bound allows a handful of values; an absolute one (lg2.approx.f32 on (0.5,
    # 2), sin and cos) every value within 2^t of the exact result: hundreds of values near 1, and
    # near a zero of the function a run across zero of ~2^30 patterns; a coarse relative bound
    # (tanh.approx.f32's 2^-11) some 2^(t + mantissa bits) values either side
    absolute = form.contract.bound.absolute is not None or form.contract.bound.kind == "absolute"
    coarse = form.contract.relative_log2 is not None and form.contract.relative_log2 + fmt.mantissa_bits >= 6
    assert not wide.any() or absolute or coarse, "ranges hold a handful of values"
    cands = []
    for d in range(min(int(span.max(initial=0)), 63) + 1):  # every value of a narrow range, both ends of a wide one
        cands.append(_from_key(fmt, np.clip(np.minimum(lo_k + d, hi_k), -top - 1, top), stride))
        cands.append(_from_key(fmt, np.clip(np.maximum(hi_k - d, lo_k), -top - 1, top), stride))
    rng = np.random.default_rng(_seed(form.name, reading, "inside"))
    for _ in range(8):  # and values inside a wide run, zeros and subnormals among them near x = 1
        inside = lo_k + (rng.random(lo_k.shape) * (span + 1)).astype(np.int64)
        cands.append(_from_key(fmt, np.clip(np.minimum(inside, hi_k), -top - 1, top), stride))
    for d in (1, 2):  # just outside
        cands.append(_from_key(fmt, np.clip(lo_k - d, -top - 1, top), stride))
        cands.append(_from_key(fmt, np.clip(hi_k + d, -top - 1, top), stride))
    for slot in range(res.extra.shape[-1]):
        cands.append(np.where(res.extra_used[:, slot], res.extra[:, slot], res.lo).astype(np.uint64))
    n = ops[0].shape[0]
    for v in (0, fmt.sign_mask, fmt.inf, fmt.inf | fmt.sign_mask, fmt.max_finite, fmt.canonical_nan,
              fmt.inf | 1, 1, fmt.min_normal):
        cands.append(np.full(n, v, dtype=np.uint64))
    cands.append(api.reference(form, *ops).astype(np.uint64))
    in_range_checked = 0
    for cand in cands:
        cand = cand.astype(np.uint64)
        want = np.asarray(api.allowed(form, cand, *ops, ulp_reading=reading))
        got = res.contains(cand)
        bad = np.nonzero(want != got)[0]
        assert bad.size == 0, (form.name, reading, [hex(int(o[bad[0]])) for o in ops], hex(int(cand[bad[0]])),
                               "allowed", bool(want[bad[0]]), "contains", bool(got[bad[0]]),
                               hex(int(res.lo[bad[0]])), hex(int(res.hi[bad[0]])))
        in_range_checked += int(got.sum())
    assert in_range_checked > 0


@pytest.mark.parametrize("reading", ULP_READINGS)
@pytest.mark.parametrize("form", CONTRACT, ids=lambda f: f.name)
def test_ranges_are_exactly_the_allowed_values(form, reading):
    rng = np.random.default_rng(_seed(form.name, reading))
    fmt = get_format(form.element_format)
    ops = [np.asarray(o, dtype=np.uint64) for o in operands_for(form, 120, rng)]
    edges = _edges(fmt, len(form.sources))
    ops = [np.concatenate([o, e]) for o, e in zip(ops, edges)]
    _check(form, ops, reading)


@pytest.mark.parametrize("form", PACKED_CONTRACT, ids=lambda f: f.name)
def test_a_packed_contract_is_its_element_contract_on_each_half(form):
    """ex2.approx.f16x2: a container is allowed exactly when each half is allowed by the element form,
    and the representative value is the element form's in each half."""
    element = DB.form(form.name[:-len(form.type)] + form.element_format)
    rng = np.random.default_rng(_seed(form.name, "packed"))
    x = [np.asarray(o, dtype=np.uint64) for o in operands_for(element, 200, rng)][0]
    lo, hi = x[:100], x[100:]
    ref_lo, ref_hi = (np.asarray(api.reference(element, h), dtype=np.uint64) for h in (lo, hi))
    packed = lo | (hi << np.uint64(16))
    assert np.array_equal(np.asarray(api.reference(form, packed), dtype=np.uint64), ref_lo | (ref_hi << np.uint64(16)))
    for d_lo, d_hi in ((0, 0), (1, 0), (0, 1), (2, 3)):  # neighbours of the representative in each half
        r_lo, r_hi = (ref_lo + np.uint64(d_lo)) & np.uint64(0xFFFF), (ref_hi + np.uint64(d_hi)) & np.uint64(0xFFFF)
        want = np.asarray(api.allowed(element, r_lo, lo)) & np.asarray(api.allowed(element, r_hi, hi))
        got = np.asarray(api.allowed(form, r_lo | (r_hi << np.uint64(16)), packed))
        assert np.array_equal(got, want), (d_lo, d_hi)


def test_the_issue_examples_under_each_reading():
    """rcp.approx.f32(3) = 0x3eaaaaac and div.full.f32(1, 3) = 0x3eaaaaad: rejected by the exact
    reading, accepted by the correctly rounded one and by the default; MAX for an overflowing
    reciprocal likewise."""
    cases = [("rcp.approx.f32", 0x3EAAAAAC, (0x40400000,)), ("div.full.f32", 0x3EAAAAAD, (0x3F800000, 0x40400000)),
             ("rcp.approx.f32", 0x7F7FFFFF, (0x00000001,)), ("div.approx.f32", 0x7F7FFFFF, (0x7F000000, 0x00800000))]
    for name, result, ops in cases:
        assert not api.allowed(name, result, *ops, ulp_reading="exact"), name
        assert api.allowed(name, result, *ops, ulp_reading="correctly-rounded"), name
        assert api.allowed(name, result, *ops), name
        assert api.allowed_results(name, *ops).contains(result)
        assert not api.allowed_results(name, *ops, ulp_reading="exact").contains(result)
    assert api.reading_used("rcp.approx.f32") == "either"
    assert api.reading_used("sqrt.approx.f32", "exact") == "relative"
    assert api.reading_used("div.rn.f32") == "none"


def test_exact_forms_and_nan_policies():
    r = api.allowed_results("div.rn.f32", np.array([0x3F800000, 0, 0x7FC00001], dtype=np.uint32),
                            np.array([0x40400000, 0, 0x3F800000], dtype=np.uint32))
    assert int(r.lo[0]) == int(r.hi[0]) == 0x3EAAAAAB and r.reading == "none"
    assert r.empty[1] and r.nan[1] and not r.nan_bits[1].any()  # unspecified NaN: any
    r = api.allowed_results("div.rn.f64", 0x7FF0000000000123, 0x7FF4000000000000)
    assert r.nan and sorted(int(b) for b in r.nan_bits) == [0x7FF8000000000123, 0x7FFC000000000000]
    assert r.contains(0x7FF8000000000123) and not r.contains(0x7FF8000000000000)
    with pytest.raises(UsageError):
        api.allowed_results("add.rn.f16x2", 0, 0)
    with pytest.raises(UsageError):
        api.allowed_results("rcp.approx.f32", 0, ulp_reading="nearest")


def test_upper_word_nan_low_word_payload():
    """rcp/rsqrt.approx.ftz.f64 of a NaN whose payload is only in the low word: the canonical NaN
    (full-operand reading) and the upper word's infinity rule are both allowed; other NaN bits are
    not pinned where the ISA does not pin them."""
    x = 0x7FF0000000000001
    for name, upper in (("rcp.approx.ftz.f64", 0), ("rsqrt.approx.ftz.f64", 0)):
        assert api.allowed(name, 0x7FFFFFFF00000000, x)
        assert api.allowed(name, upper, x)
        assert not api.allowed(name, 0x7FF8000000000000, x)
        assert not api.allowed(name, 0x3FF0000000000000, x)
        r = api.allowed_results(name, x)
        assert r.contains(0x7FFFFFFF00000000) and r.contains(upper) and not r.contains(0x7FF8000000000000)
    # rcp of -inf in the upper word: -0, or the canonical NaN
    assert api.allowed("rcp.approx.ftz.f64", 0x8000000000000000, 0xFFF0000000000001)
    assert api.allowed("rcp.approx.ftz.f64", 0x7FFFFFFF00000000, 0xFFF0000000000001)
    # a NaN in the upper word: only the canonical NaN (the ISA pins it)
    assert not api.allowed("rcp.approx.ftz.f64", 0x7FF8000000000000, 0x7FF8000000000000)
    # a NaN the operation creates (rsqrt of -1) is not pinned: any NaN with a zero low word
    assert api.allowed("rsqrt.approx.ftz.f64", 0x7FF8000000000000, 0xBFF0000000000000)
    assert not api.allowed("rsqrt.approx.ftz.f64", 0x7FF8000000000001, 0xBFF0000000000000)


@pytest.mark.parametrize("reading", ULP_READINGS)
@pytest.mark.parametrize("form", [f for f in CONTRACT if f.element_format in ("f32", "f64")
                                  and f.contract.operation not in ("lg2", "sin", "cos", "tanh")
                                  and not any(r.result == "unmodelled" for r in f.contract.rules)],
                         ids=lambda f: f.name)
def test_estimated_ends_agree_with_the_window_scan(form, reading):
    # (the runs of lg2, sin, cos and tanh come from tilecheck.model.log2/sincos/tanh.ranges,
    # confirmed there and checked against MPFR in tests/model/test_log2.py, test_sincos.py and
    # test_tanh.py; their runs near a zero of the function, or 2^13 wide, are too long to scan)
    """The range ends found from float64 estimates (then confirmed) are those a scan of every value
    around RN(x) finds, and for binary32 the estimate settles most lanes (the scan is the slow path)."""
    from tilecheck.model import contracts

    rng = np.random.default_rng(_seed(form.name, reading, 2))
    ops = [np.asarray(o, dtype=np.uint64) for o in operands_for(form, 400, rng)]
    lanes = contracts._classify(np, form, ops)
    sel = np.nonzero(lanes.todo)[0]
    op_bits = [o[sel] for o in lanes.operands]
    rn = (contracts._nearest_unflushed(np, lanes, op_bits)
          if form.contract.ulp is not None and api.reading_used(form, reading) != "exact" else None)
    if lanes.hi_form:  # upper-word results (values 2^32 patterns apart) always take the scan
        ok, _, _ = contracts._estimated_ends(np, lanes, form, op_bits, 1 << 32, reading, rn)
        assert not ok.any()
        return
    ok, lo, hi = contracts._estimated_ends(np, lanes, form, op_bits, 1, reading, rn)
    has, w_lo, w_hi = contracts._window_ends(np, lanes, form, op_bits, 1, reading, rn)
    assert np.all(has[ok]) and np.array_equal(lo[ok], w_lo[ok]) and np.array_equal(hi[ok], w_hi[ok])
    if form.element_format == "f32":  # float64 estimates are too coarse to settle f64 ulp bounds
        # (lanes that allow zeros only, ex2 of large negative inputs under .ftz, are the scan's by design)
        settled = ok[has].mean()
        assert settled > 0.5, f"{form.name}: the estimate settles only {settled:.0%} of lanes"
