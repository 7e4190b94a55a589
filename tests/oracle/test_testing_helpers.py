"""tilecheck.testing: the hard-case constructions really are hard (checked with exact rationals),
FTZ boundary cases really straddle, edge-biased inputs cover every class, and the profiles and
comparison helpers behave."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilecheck.errors import UsageError
from tilecheck.formats import CLASS_NAMES, get_format
from tilecheck.oracle.mpfr import mpfr_op
from tilecheck.oracle.rational import rational_op
from tilecheck.inputs import generators
from tilecheck.testing import construct, profiles
from tilecheck.testing import strategies as tst
from tilecheck.testing.compare import mismatch_mask, same_result
from tilecheck.inputs.edges import edge_values

pytest.importorskip("gmpy2", reason="the MPFR oracle needs gmpy2 (pip install 'tilecheck[test]')")

FORMATS = ("f16", "bf16", "f32", "f64", "tf32", "e5m2")
SAMPLE = 400  # numpy-generated cases checked exactly per format and kind


def _ulp(f, value: Fraction) -> Fraction:
    """The spacing of the format's numbers at ``|value|`` (subnormal spacing below 2**emin)."""
    v = abs(value)
    e = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** e > v:
        e -= 1
    return Fraction(2) ** (max(e, f.emin) - f.mantissa_bits)


def _distance_in_ulps(f, value: Fraction, midpoint: bool) -> Fraction:
    """Distance from ``value`` to the nearest grid point (representable number) or midpoint,
    in ulps at ``value``."""
    u = _ulp(f, value)
    r = abs(value) / u - (Fraction(1, 2) if midpoint else 0)
    fl = r.numerator // r.denominator
    return min(r - fl, fl + 1 - r)


def _sqrt_bracket(f, a: int) -> tuple[Fraction, bool]:
    """``floor(sqrt(a) * 2**K) / 2**K`` with K far below every ulp, and whether it is exact."""
    k = 2 * f.precision + 40 - f.emin + f.mantissa_bits
    scaled = f.to_fraction(a) * Fraction(4) ** k
    t = math.isqrt(scaled.numerator // scaled.denominator)
    return Fraction(t, 2**k), t * t == scaled


def _check_hard_division(f, a: int, b: int, midpoint: bool, kmax: int):
    q = f.to_fraction(a) / f.to_fraction(b)
    d = _distance_in_ulps(f, q, midpoint)
    # |k|/Y ulp from a grid point, |k|/(2Y) from a midpoint, with Y >= 2**(p-1)
    bound = Fraction(kmax, 2 ** (f.precision - 1)) / (2 if midpoint else 1)
    assert 0 < d <= bound, (f.name, hex(a), hex(b), midpoint, float(d))


def _check_hard_sqrt(f, a: int, midpoint: bool, kmax: int):
    root, exact = _sqrt_bracket(f, a)
    assert not exact
    d = _distance_in_ulps(f, root, midpoint)
    bound = Fraction(kmax, 2 ** (f.precision + (2 if midpoint else 0)))
    assert d <= bound + Fraction(1, 2**40), (f.name, hex(a), midpoint, float(d))


def _check_ftz_boundary(f, op: str, rounding: str, operands):
    values = [f.to_fraction(x) for x in operands]
    assert all(abs(v) >= Fraction(2) ** f.emin for v in values), "operands must be normal"
    exact = {"div": lambda: values[0] / values[1], "mul": lambda: values[0] * values[1],
             "fma": lambda: values[0] * values[1] + values[2]}[op]()
    assert 0 < abs(exact) < Fraction(2) ** f.emin
    sign = f.sign_mask if exact < 0 else 0
    assert rational_op(op, f, rounding, *operands) == sign | f.min_normal
    assert mpfr_op(op, f, rounding, *operands) == sign | f.min_normal
    assert mpfr_op(op, f, rounding, *operands, ftz=True, tininess="after") == sign | f.min_normal
    assert mpfr_op(op, f, rounding, *operands, ftz=True, tininess="before") == sign


# ---- Hypothesis strategies ---------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("midpoint", (False, True), ids=("grid", "midpoint"))
def test_hard_division_strategy_lands_next_to_boundaries(fmt, midpoint):
    f = get_format(fmt)

    @given(tst.hard_division(f, midpoint=midpoint))
    def check(ab):
        _check_hard_division(f, *ab, midpoint, 7)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_hard_division_strategy_reaches_subnormal_results(fmt):
    f = get_format(fmt)

    @given(tst.hard_division(f, subnormal=True), st.booleans())
    def check(ab, _):
        q = f.to_fraction(ab[0]) / f.to_fraction(ab[1])
        assert abs(q) < Fraction(2) ** f.emin

    check()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("midpoint", (False, True), ids=("grid", "midpoint"))
def test_hard_sqrt_strategy_lands_next_to_boundaries(fmt, midpoint):
    f = get_format(fmt)

    @given(tst.hard_sqrt(f, midpoint=midpoint))
    def check(a):
        _check_hard_sqrt(f, a, midpoint, 63)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("op", construct.FTZ_BOUNDARY_OPS)
@pytest.mark.parametrize("rounding", ("rn", "rp", "rm"))
def test_ftz_boundary_strategy_straddles(fmt, op, rounding):
    f = get_format(fmt)

    @settings(max_examples=max(10, settings.default.max_examples // 4))
    @given(tst.ftz_boundary(f, op, rounding))
    def check(operands):
        _check_ftz_boundary(f, op, rounding, operands)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_bits_strategy_covers_every_class(fmt):
    f = get_format(fmt)
    seen = set()

    @settings(max_examples=max(300, settings.default.max_examples))
    @given(tst.bits(f))
    def collect(b):
        assert 0 <= b < (1 << f.width)
        seen.add(int(f.classify(np.array([b], dtype=f.uint))[0]))

    collect()
    assert {CLASS_NAMES[c] for c in seen} == set(CLASS_NAMES)


def test_operands_and_roundings_strategies():
    @given(tst.operands("f16", 3), tst.roundings())
    def check(ops, rounding):
        assert len(ops) == 3 and all(0 <= x < 1 << 16 for x in ops)
        assert rounding in ("rn", "rz", "rm", "rp")

    check()


# ---- numpy generators --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_generators_hard_cases_are_exactly_hard(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(20260101)
    for midpoint in (False, True):
        a, b = generators.hard_division_pairs(f, SAMPLE, rng, midpoint=midpoint)
        assert a.dtype == f.uint and b.dtype == f.uint
        for x, y in zip(a.tolist(), b.tolist()):
            _check_hard_division(f, x, y, midpoint, 7)
        for x in generators.hard_sqrt_inputs(f, SAMPLE // 4, rng, midpoint=midpoint).tolist():
            _check_hard_sqrt(f, x, midpoint, 63)


@pytest.mark.parametrize("fmt", FORMATS)
def test_generators_ftz_boundary_cases_straddle(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(7)
    for op in construct.FTZ_BOUNDARY_OPS:
        for rounding in ("rn", "rp", "rm"):
            cases = generators.ftz_boundary_pairs(f, SAMPLE // 8, rng, op, rounding)
            assert len(cases) == (3 if op == "fma" else 2)
            for operands in zip(*(c.tolist() for c in cases)):
                _check_ftz_boundary(f, op, rounding, operands)


@pytest.mark.parametrize("fmt", FORMATS)
def test_edge_biased_covers_every_class_and_every_edge(fmt):
    f = get_format(fmt)
    x = generators.edge_biased(f, 50_000, np.random.default_rng(3))
    assert x.dtype == f.uint
    assert {CLASS_NAMES[c] for c in np.unique(f.classify(x))} == set(CLASS_NAMES)
    assert set(edge_values(f)) <= set(x.tolist())


@pytest.mark.parametrize("fmt", FORMATS)
def test_edge_values_include_the_named_classes(fmt):
    f = get_format(fmt)
    e = set(edge_values(f))
    must = {0, f.sign_mask, 1, f.mantissa_mask, f.min_normal, f.max_finite, f.inf,
            f.inf | f.sign_mask, f.default_nan, f.inf | 1, f.inf | f.quiet_bit | 1}
    assert must <= e


def test_numpy_encode_agrees_with_the_scalar_one():
    rng = np.random.default_rng(11)
    for fmt in FORMATS:
        f = get_format(fmt)
        sig = rng.integers(0, 1 << f.precision, 500, dtype=np.uint64)
        exp = rng.integers(f.emin - f.mantissa_bits, f.emax - f.mantissa_bits + 1, 500)
        neg = rng.random(500) < 0.5
        got = generators.encode(f, neg, sig, exp)
        want = [construct.encode(f, bool(n), int(s), int(e)) for n, s, e in zip(neg, sig, exp)]
        assert got.tolist() == want
    with pytest.raises(RuntimeError):
        generators.encode("f16", [False], [3], [-26])  # 3 * 2**-26 is off the subnormal grid
    with pytest.raises(ValueError):
        construct.encode("f16", False, 1, 16)  # 2**16 overflows f16


def test_constructions_reject_bad_parameters():
    with pytest.raises(ValueError):
        construct.hard_division_operands("f32", 5, 2, midpoint=False)  # even k
    with pytest.raises(ValueError):
        construct.hard_sqrt_operand("f32", 1, midpoint=False)  # -k must be 1 mod 8
    with pytest.raises(ValueError):
        construct.ftz_boundary_operands("f32", "div", rounding="rz")
    with pytest.raises(ValueError):
        construct.ftz_boundary_operands("f32", "add")
    with pytest.raises(ValueError):
        generators.ftz_boundary_pairs("f32", 4, np.random.default_rng(0), "div", "rz")


# ---- profiles and comparison helpers -----------------------------------------------------------

def test_profiles_are_selected_by_the_environment(monkeypatch):
    try:
        monkeypatch.delenv(profiles.ENV_VAR, raising=False)
        assert profiles.selected_profile() == "ci"
        profiles.register_profiles()
        assert settings.default.max_examples == settings.get_profile("ci").max_examples
        assert settings.get_profile("ci").derandomize and settings.get_profile("ci").deadline is None
        assert settings.get_profile("deep").max_examples > settings.get_profile("ci").max_examples
        monkeypatch.setenv(profiles.ENV_VAR, "deep")
        assert profiles.load_profile() == "deep"
        assert settings.default.max_examples == settings.get_profile("deep").max_examples
        monkeypatch.setenv(profiles.ENV_VAR, "nightly")
        with pytest.raises(UsageError):
            profiles.selected_profile()
        with pytest.raises(UsageError):
            profiles.load_profile("nightly")
    finally:
        monkeypatch.undo()
        profiles.register_profiles()  # back to what the session selected


def test_comparisons_treat_nans_by_class():
    assert same_result("f32", 0x7FC00000, 0xFFC00000)
    assert not same_result("f32", 0x7FC00000, 0xFFC00000, nan="bits")
    assert not same_result("f32", 0x7F800000, 0x7FC00000)
    assert not same_result("f32", 0x00000000, 0x80000000)
    got = np.array([0x7E00, 0x7C00, 0x8000, 0x3C00], dtype=np.uint16)
    want = np.array([0xFE00, 0x7E00, 0x0000, 0x3C00], dtype=np.uint16)
    assert mismatch_mask("f16", got, want).tolist() == [False, True, True, False]
    assert mismatch_mask("f16", got, want, nan="bits").tolist() == [True, True, True, False]
    with pytest.raises(ValueError):
        same_result("f16", 0, 0, nan="payload")
