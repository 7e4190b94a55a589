"""The sign rule of ``spec/rules/contracts.yaml``: an error bound grants a magnitude, never the sign.

For every approximate PTX form (f32 and f64, ``.ftz`` or not, the upper-word forms too) and every
sign quadrant of its operands -- random patterns, tiny ones (subnormals and the lowest normals, so
that quotients fall far below the subnormal spacing) and huge ones -- under each ulp reading:

* every value ``allowed_results`` lists (the run ``lo..hi`` and the extra zeros) has the sign
  IEEE 754 gives the exact result, worked out here from the operands' sign bits alone (no part of
  the model): the sign product for div/rcp, positive for sqrt/rsqrt of a positive input;
* ``allowed`` refuses each allowed value with its sign flipped (NaNs aside), and so does the Z3
  encoding on a sample of lanes;
* the simulator's choices (``allowed_choices``) hold only such values.

A mutant of the model that reads the bound through zero (the sign rule switched off) is caught by
the same check. AMD's ``v_rcp`` contracts follow the rule too.
"""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest

import tilecheck
from tilecheck.model import api, contracts
from tilecheck.sim.choices import allowed_choices
from tilecheck.spec.contract import ULP_READINGS
from tilecheck.spec.database import load_database

DB = load_database()
FORMS = [f for f in DB.ptx_forms() if f.kind == "contract" and f.lanes == 1 and f.contract.bound.kind != "absolute"]
"""(sin and cos are left out: their bound is absolute and their sign is no function of the operand's
sign bit; both signs near their zeros are checked against MPFR in tests/model/test_sincos.py.)"""
QUADRANTS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _rng(*words) -> np.random.Generator:
    """A generator seeded from a stable digest of ``words`` (the same inputs in every process)."""
    return np.random.default_rng(zlib.crc32(" ".join(map(str, words)).encode()))


def _magnitudes(fmt, rng, n: int) -> np.ndarray:
    """Positive finite non-zero magnitudes: random, subnormal, lowest normals, near the largest."""
    mant = fmt.mantissa_bits
    top = int(fmt.max_finite)
    parts = [
        rng.integers(1, top, n, dtype=np.uint64),                       # anywhere
        rng.integers(1, 1 << min(mant, 62), n, dtype=np.uint64),        # subnormal
        rng.integers(1, 1 << min(mant + 2, 62), n, dtype=np.uint64),    # subnormal and lowest normals
        np.uint64(top) - rng.integers(0, 1 << min(mant + 1, 62), n, dtype=np.uint64),  # huge
        np.full(n, fmt.from_fraction(1), dtype=np.uint64) + rng.integers(0, 1 << min(mant, 62), n, dtype=np.uint64),
    ]
    return np.concatenate(parts)


def _operands(form, quadrant, rng, n: int = 24) -> list[np.ndarray]:
    """Operand patterns with the signs of ``quadrant`` (pairs for div: every magnitude class of a
    against every class of b, so tiny/huge quotients occur)."""
    fmt = form.format
    sign = np.uint64(fmt.sign_mask)
    mags = [_magnitudes(fmt, rng, n) for _ in form.sources]
    if len(mags) == 2:
        a, b = np.meshgrid(mags[0][::3], mags[1][::3], indexing="ij")
        mags = [a.reshape(-1), b.reshape(-1)]
    out = []
    for m, s in zip(mags, quadrant):
        out.append(m | sign if s else m)
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[fmt.width]
    return [o.astype(dtype) for o in out]


def _want_negative(form, ops: list[np.ndarray]) -> np.ndarray:
    """The IEEE sign of the exact result, from the operands' sign bits (no model code)."""
    fmt = form.format
    neg = [(o.astype(np.uint64) >> np.uint64(fmt.width - 1)) != 0 for o in ops]
    if form.contract.operation == "div":
        return neg[0] ^ neg[1]
    if form.contract.operation == "rcp":
        return neg[0]
    if form.contract.operation == "lg2":  # log2 of a positive x is negative below 1
        return ops[0].astype(np.uint64) < np.uint64(fmt.from_fraction(1))
    return np.zeros(ops[0].shape, dtype=bool)


def _sign_ruled(form, ops: list[np.ndarray]) -> np.ndarray:
    """Lanes the sign rule governs: all but those of lg2's absolute bound, x in (0.5, 2), which
    bounds a distance and crosses zero near x = 1 (spec/rules/contracts.yaml; both signs there are
    checked against MPFR in tests/model/test_log2.py)."""
    absolute = form.contract.bound.absolute
    if absolute is None:
        return np.ones(ops[0].shape, dtype=bool)
    fmt = form.format
    x = ops[0].astype(np.uint64)
    return (x <= np.uint64(fmt.from_fraction(Fraction(1, 2)))) | (x >= np.uint64(fmt.from_fraction(2)))


def _quadrants(form):
    if len(form.sources) == 2:
        return QUADRANTS
    if form.contract.operation == "rcp":
        return ((0,), (1,))
    return ((0,),)  # a root of a negative input is a special case (NaN), not a bound lane


def _readings(form):
    return ULP_READINGS if form.contract.ulp is not None else ("either",)


def _sign_violations(form, ops, reading) -> list[str]:
    """Allowed values of the wrong sign, and flipped allowed values that ``allowed`` accepts."""
    fmt = form.format
    r = api.allowed_results(form, *ops, ulp_reading=reading)
    want_neg = _want_negative(form, ops)
    sign = np.uint64(fmt.sign_mask)
    mag_mask = np.uint64(fmt.magnitude_mask)
    lo = np.asarray(r.lo).astype(np.uint64)
    hi = np.asarray(r.hi).astype(np.uint64)
    bounded = ~np.asarray(r.empty) & ~np.asarray(r.unbounded) & _sign_ruled(form, ops)
    bad = []

    def neg_of(bits):
        return (bits & sign) != 0

    def not_nan(bits):
        return (bits & mag_mask) <= np.uint64(fmt.exponent_mask)

    # the run lo..hi lies on one side of zero when both ends have the wanted sign
    for name, end in (("lo", lo), ("hi", hi)):
        wrong = bounded & not_nan(end) & (neg_of(end) != want_neg)
        bad += [f"{name}={int(end[i]):#x} for {[hex(int(o[i])) for o in ops]}" for i in np.flatnonzero(wrong)[:3]]
    extra = np.asarray(r.extra).astype(np.uint64)
    used = np.asarray(r.extra_used, dtype=bool) & ~np.asarray(r.unbounded)[..., None]
    for j in range(extra.shape[-1]):
        wrong = used[..., j] & (neg_of(extra[..., j]) != want_neg)
        bad += [f"extra={int(extra[i, j]):#x} for {[hex(int(o[i])) for o in ops]}" for i in np.flatnonzero(wrong)[:3]]
    # allowed refuses every allowed value with its sign flipped
    for end in (lo, hi):
        probe = bounded & not_nan(end)
        flipped = (end ^ sign).astype(ops[0].dtype)
        ok = np.asarray(api.allowed(form, flipped, *ops, ulp_reading=reading), dtype=bool)
        wrong = probe & ok & (neg_of(flipped.astype(np.uint64)) != want_neg)
        bad += [f"allowed({int(flipped[i]):#x}) for {[hex(int(o[i])) for o in ops]}" for i in np.flatnonzero(wrong)[:3]]
    return bad


CASES = [(f.name, q, reading) for f in FORMS for q in _quadrants(f) for reading in _readings(f)]


@pytest.mark.parametrize("name,quadrant,reading", CASES)
def test_allowed_values_have_the_ieee_sign(name, quadrant, reading):
    form = DB.forms[name]
    ops = _operands(form, quadrant, _rng(name, quadrant, reading))
    assert _sign_violations(form, ops, reading) == []


@pytest.mark.parametrize("name", [f.name for f in FORMS])
def test_choices_have_the_ieee_sign(name):
    """The simulator forks on these values: none has the wrong sign."""
    form = DB.forms[name]
    for quadrant in _quadrants(form):
        ops = _operands(form, quadrant, _rng("choices", name, quadrant), n=8)
        ch = allowed_choices(form, ops)
        fmt = form.format
        vals = ch.values.astype(np.uint64)
        nan = (vals & np.uint64(fmt.magnitude_mask)) > np.uint64(fmt.exponent_mask)
        neg = (vals >> np.uint64(fmt.width - 1)) != 0
        bound = np.asarray(api.bound_decides(form, *ops), dtype=bool)
        wrong = ch.valid & ~nan & (neg != _want_negative(form, ops)[:, None]) & (bound & _sign_ruled(form, ops))[:, None]
        assert not wrong.any(), (name, quadrant, [hex(int(o[np.argwhere(wrong)[0][0]])) for o in ops])


def test_issue_example_is_refused():
    """2^-149 / 2^112 (a bfloat16 __hdiv pair widened): -2^-148 is not an allowed quotient."""
    for reading in ULP_READINGS:
        assert not tilecheck.allowed("div.approx.f32", 0x80000002, 0x00000001, 0x77800000, ulp_reading=reading)
        assert tilecheck.allowed("div.approx.f32", 0x00000002, 0x00000001, 0x77800000, ulp_reading=reading)
        assert tilecheck.allowed("div.approx.f32", 0x00000000, 0x00000001, 0x77800000, ulp_reading=reading)
        assert not tilecheck.allowed("div.approx.f32", 0x80000000, 0x00000001, 0x77800000, ulp_reading=reading)


def test_a_mutant_reading_the_bound_through_zero_is_caught(monkeypatch):
    """With the sign rule switched off, the check above finds wrong-signed values."""
    monkeypatch.setattr(contracts, "_ieee_sign_ok", lambda xp, fn, fmt, r, ops: xp.ones(r.shape, dtype=bool))
    caught = []
    for name in ("div.approx.f32", "div.full.f32", "rcp.approx.f32", "div.approx.ftz.f32"):
        form = DB.forms[name]
        for quadrant in _quadrants(form):
            ops = _operands(form, quadrant, _rng(name, quadrant, "either"))
            caught.append(bool(_sign_violations(form, ops, "either")))
    # without .ftz a tiny quotient's bound reaches the other sign's subnormals
    assert sum(caught) >= 6, caught


@pytest.mark.parametrize("name", ["div.approx.f32", "div.full.f32", "rcp.approx.f32", "div.full.ftz.f32"])
def test_z3_follows_the_sign_rule(name):
    """The Z3 encoding refuses the flipped values the model refuses (a sample of tiny lanes)."""
    from tilecheck import smt

    form = DB.forms[name]
    for quadrant in _quadrants(form):
        fmt = form.format
        tiny = [np.array([1, 3], dtype=np.uint32), np.array([0x77800000, 0x7e000000], dtype=np.uint32)]
        if len(form.sources) == 1:
            tiny = [np.array([0x7e000000, 0x7e800000], dtype=np.uint32)]
        sign = np.uint32(fmt.sign_mask)
        ops = [t | sign if s else t for t, s in zip(tiny, quadrant)]
        r = api.allowed_results(form, *ops)
        for end in (np.asarray(r.lo), np.asarray(r.hi)):
            for i in range(end.shape[0]):
                good = int(end[i])
                assert smt.allowed(form, good, *[int(o[i]) for o in ops])
                assert not smt.allowed(form, good ^ fmt.sign_mask, *[int(o[i]) for o in ops])


def test_amd_rcp_contracts_keep_the_sign():
    """v_rcp_f32/f64: a tiny reciprocal's subnormal bound never admits the other sign."""
    from tilecheck.amdgpu import contract as amd

    checked = 0
    for form in DB.extras["amdgpu"]["forms"].values():
        for variant, body in form.variants.items():
            if body.contract is None or body.contract.operation != "rcp":
                continue  # rsq/sqrt results are positive: their sign rule is the operand's class
            checked += 1
            fmt = form.fmt
            x = _magnitudes(fmt, _rng("amd", form.name, variant), 16)
            for s in (0, 1):
                xs = x | np.uint64(fmt.sign_mask) if s else x
                r = amd.choose(form, variant, xs, np.full(xs.shape, 1), np.random.default_rng(0))
                r2 = amd.choose(form, variant, xs, np.full(xs.shape, 2), np.random.default_rng(0))
                for end in (r, r2):
                    finite = (end & np.uint64(fmt.magnitude_mask)) < np.uint64(fmt.exponent_mask)
                    flipped = end ^ np.uint64(fmt.sign_mask)
                    ok = amd.allowed(form, variant, flipped, xs)
                    assert not (ok & finite).any(), (form.name, variant, s)
    assert checked >= 2
