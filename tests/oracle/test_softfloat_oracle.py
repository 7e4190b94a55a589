"""The MPFR oracle against Berkeley SoftFloat 3 (softfloatpy) on Hypothesis inputs, and the
SoftFloat wrapper itself."""

from __future__ import annotations

import pytest
from hypothesis import given

from tilecheck.errors import UsageError
from tilecheck.formats import ROUNDINGS, get_format
from tilecheck.oracle.mpfr import mpfr_op
from tilecheck.oracle.softfloat import (SOFTFLOAT_FORMATS, SOFTFLOAT_OPS, softfloat_op, softfloat_op_flags,
                                        softfloat_supports)
from tilecheck.testing import strategies as tst
from tilecheck.testing.compare import describe_case, same_result

sf = pytest.importorskip("softfloatpy", reason="softfloatpy (Berkeley SoftFloat 3 binding) is not "
                         "installed: pip install 'tilecheck[test]'")
pytest.importorskip("gmpy2", reason="the MPFR oracle needs gmpy2 (pip install 'tilecheck[test]')")

ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}


def test_the_support_matrix_is_what_the_report_says():
    # guard the guard: a silently shrunken matrix would shrink the comparison below
    assert sorted(SOFTFLOAT_FORMATS) == ["f16", "f32", "f64"]
    assert sorted(SOFTFLOAT_OPS) == sorted(ARITY)
    assert softfloat_supports("div", "f32") and softfloat_supports("fma", get_format("f16"))
    assert not softfloat_supports("div", "bf16") and not softfloat_supports("rsqrt", "f32")


@pytest.mark.parametrize("fmt", sorted(SOFTFLOAT_FORMATS))
@pytest.mark.parametrize("op", sorted(ARITY))
def test_mpfr_agrees_with_softfloat(fmt, op):
    @given(tst.hard_cases(fmt, op))
    def check(operands):
        for rounding in ROUNDINGS:
            got = mpfr_op(op, fmt, rounding, *operands)
            want = softfloat_op(op, fmt, rounding, *operands)
            # NaNs by class: softfloatpy returns its positive default NaN for every NaN result
            assert same_result(fmt, got, want), describe_case(fmt, op, rounding, operands, got, want)

    check()


@pytest.mark.parametrize("op, fmt, rounding, operands, expected, flags", [
    ("div", "f32", "rn", (0x16A2028D, 0x5E89F6AE), 0x00000026, 0x03),
    ("rcp", "f16", "rz", (0x4200,), 0x3555, 0x01),
    ("sub", "f64", "rm", (0x3FF0000000000000, 0x3FF0000000000000), 0x8000000000000000, 0x00),
    ("div", "f32", "rn", (0x3F800000, 0x00000000), 0x7F800000, 0x08),
    ("sqrt", "f32", "rn", (0xBF800000,), 0x7FC00000, 0x10),
    # Tininess after rounding in IEEE's sense (p bits, unbounded exponent): 2**-126 - 2**-150
    # is tiny and inexact, so SoftFloat raises underflow although the delivered result is the
    # smallest *normal* number. tilecheck's FTZ "after" judges the delivered result (kept).
    ("mul", "f32", "rn", (0x3F7FFFFF, 0x00800000), 0x00800000, 0x03),
    # an exact subnormal result raises no flag in SoftFloat (MPFR would flag underflow)
    ("mul", "f32", "rn", (0x3F7FFFFE, 0x00800000), 0x007FFFFF, 0x00),
])
def test_softfloat_wrapper_known_values(op, fmt, rounding, operands, expected, flags):
    assert softfloat_op_flags(op, fmt, rounding, *operands) == (expected, flags)


def test_softfloat_wrapper_restores_global_state():
    before = (sf.get_rounding_mode(), sf.get_tininess_mode(), sf.get_exception_flags())
    sf.set_rounding_mode(sf.RoundingMode.MIN)
    sf.set_tininess_mode(sf.TininessMode.BEFORE_ROUNDING)
    sf.set_exception_flags(0x04)
    try:
        assert softfloat_op("add", "f32", "rp", 0x3F800000, 0x00000001) == 0x3F800001
        assert sf.get_rounding_mode() == sf.RoundingMode.MIN
        assert sf.get_tininess_mode() == sf.TininessMode.BEFORE_ROUNDING
        assert sf.get_exception_flags() == 0x04
    finally:
        sf.set_rounding_mode(before[0])
        sf.set_tininess_mode(before[1])
        sf.set_exception_flags(before[2])


@pytest.mark.parametrize("op, fmt, operands", [("div", "bf16", (1, 2)), ("rsqrt", "f32", (1,)),
                                               ("add", "e5m2", (1, 2)), ("add", "tf32", (1, 2))])
def test_softfloat_wrapper_rejects_what_it_lacks(op, fmt, operands):
    with pytest.raises(UsageError):
        softfloat_op(op, fmt, "rn", *operands)
