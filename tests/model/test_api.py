"""The public model API: ieee_op / evaluate / allowed / reference, on hand-checked vectors.

Every expected pattern here was derived by hand (exact rational arithmetic in the comment) or comes
from a cited peer test; the broad comparisons against MPFR, SoftFloat and TestFloat live in
test_model_vs_oracles.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecheck
from tilecheck.errors import ApproximateFormError, IllegalFormError, OperandError, UnknownFormError, UsageError
from tilecheck.model import api
from tilecheck.model.api import reference

F32_MIN_NORMAL = 0x00800000


def test_ieee_op_scalar_and_array_forms():
    # 1/3 in binary16 rounded toward zero: 0x3555 (0.33325195...)
    assert tilecheck.ieee_op("div", "f16", "rz", 0x3C00, 0x4200) == 0x3555
    assert tilecheck.ieee_op("div", "f16", "rn", 0x3C00, 0x4200) == 0x3555  # 0x3555.5 rounds down
    assert tilecheck.ieee_op("div", "f16", "rp", 0x3C00, 0x4200) == 0x3556
    out = tilecheck.ieee_op("div", "f32", "rn", np.array([0x3F800000, 0x40000000], np.uint32), 0x40400000)
    assert out.dtype == np.uint32 and out.tolist() == [0x3EAAAAAB, 0x3F2AAAAB]


def test_directed_rounding_of_overflow_and_underflow():
    big, tiny = 0x7F7FFFFF, 0x00000001  # f32 max finite, min subnormal
    assert tilecheck.ieee_op("mul", "f32", "rn", big, 0x40000000) == 0x7F800000
    assert tilecheck.ieee_op("mul", "f32", "rz", big, 0x40000000) == 0x7F7FFFFF
    assert tilecheck.ieee_op("mul", "f32", "rm", big | 0x80000000, 0x40000000) == 0xFF800000
    # min subnormal / 2: exactly half the subnormal ulp -> ties to even (0); rp -> min subnormal
    assert tilecheck.ieee_op("div", "f32", "rn", tiny, 0x40000000) == 0
    assert tilecheck.ieee_op("div", "f32", "rp", tiny, 0x40000000) == 1
    assert tilecheck.ieee_op("div", "f32", "rm", tiny | 0x80000000, 0x40000000) == 0x80000001


def test_ftz_tininess_before_and_after_rounding():
    # a/b = (2^24 - 1) * 2^-149 / 2 = 2^-126 - 2^-150, exactly half a subnormal ulp below
    # the smallest normal; round-to-nearest-even goes up to 2^-126 (even significand).
    # (2^24 - 1) * 2^-149 = 1.FFFFFE * 2^-126: exponent field 1, fraction 0x7FFFFF -> 0x00FFFFFF
    a, b = 0x00FFFFFF, 0x40000000  # b = 2
    assert tilecheck.ieee_op("div", "f32", "rn", a, b) == F32_MIN_NORMAL
    assert tilecheck.ieee_op("div", "f32", "rn", a, b, ftz=True, tininess="after") == F32_MIN_NORMAL
    assert tilecheck.ieee_op("div", "f32", "rn", a, b, ftz=True, tininess="before") == 0
    # round toward zero stays below the boundary: the largest subnormal, flushed either way
    assert tilecheck.ieee_op("div", "f32", "rz", a, b) == 0x007FFFFF
    assert tilecheck.ieee_op("div", "f32", "rz", a, b, ftz=True) == 0
    # ftz flushes subnormal inputs with their sign: -subnormal * 1 -> -0
    assert tilecheck.ieee_op("mul", "f32", "rn", 0x80000005, 0x3F800000, ftz=True) == 0x80000000


def test_zluda_ftz_vectors():
    # ZLUDA ptx/src/test/spirv_run div_noftz / div_ftz
    assert tilecheck.evaluate("div.rn.f32", 0x16A2028D, 0x5E89F6AE) == 0x26
    assert tilecheck.evaluate("div.rn.ftz.f32", 0x16A2028D, 0x5E89F6AE) == 0
    assert tilecheck.evaluate("div.ftz.rn.f32", 0x16A2028D, 0x5E89F6AE) == 0  # qualifier order is free


def test_signed_zero_rules():
    assert tilecheck.ieee_op("add", "f32", "rn", 0x3F800000, 0xBF800000) == 0
    assert tilecheck.ieee_op("add", "f32", "rm", 0x3F800000, 0xBF800000) == 0x80000000
    assert tilecheck.ieee_op("add", "f64", "rn", 0x8000000000000000, 0x8000000000000000) == 0x8000000000000000
    assert tilecheck.ieee_op("sqrt", "f32", "rn", 0x80000000) == 0x80000000
    # fma(-0 * 1) + +0 = +0 in rn, -0 in rm
    assert tilecheck.ieee_op("fma", "f32", "rn", 0x80000000, 0x3F800000, 0) == 0
    assert tilecheck.ieee_op("fma", "f32", "rm", 0x80000000, 0x3F800000, 0) == 0x80000000


def test_nan_rules_of_ieee_op():
    snan = 0x7F800001
    assert tilecheck.ieee_op("add", "f32", "rn", snan, 0x3F800000) == 0x7FC00001  # quieted payload
    assert tilecheck.ieee_op("add", "f32", "rn", 0x3F800000, 0xFFC00123) == 0xFFC00123
    assert tilecheck.ieee_op("div", "f32", "rn", 0, 0) == 0x7FC00000  # invalid: default NaN
    assert tilecheck.ieee_op("div", "f32", "rn", 0, 0, nan=0x7FFFFFFF) == 0x7FFFFFFF


def test_form_nan_policies_in_allowed():
    # f32: unspecified -> any NaN where a NaN is due, never a number
    assert tilecheck.evaluate("div.rn.f32", 0, 0) == 0x7FFFFFFF
    assert tilecheck.allowed("div.rn.f32", 0xFFC00000, 0, 0)
    assert not tilecheck.allowed("div.rn.f32", 0x7F800000, 0, 0)
    # f64: a NaN operand's payload must come back quieted
    nan_in = 0x7FF0000000000123
    assert tilecheck.allowed("div.rn.f64", 0x7FF8000000000123, nan_in, 0x3FF0000000000000)
    assert not tilecheck.allowed("div.rn.f64", 0x7FF8000000000000, nan_in, 0x3FF0000000000000)
    assert tilecheck.allowed("div.rn.f64", 0xFFF8000000000000, 0, 0)  # invalid: any NaN


def test_packed_lanes_are_independent():
    # f16x2: element 0 in the low half. 1.0 + 2.0 = 3.0 ; 0.5 + 0.25 = 0.75
    a = 0x3800 << 16 | 0x3C00
    b = 0x3400 << 16 | 0x4000
    assert tilecheck.evaluate("add.rn.f16x2", a, b) == (0x3A00 << 16 | 0x4200)
    # bf16x2 fma lane-wise: 1*1+1 = 2 ; -1*1+0 = -1
    a, b, c = 0xBF80_3F80, 0x3F80_3F80, 0x0000_3F80
    assert tilecheck.evaluate("fma.rn.bf16x2", a, b, c) == 0xBF80_4000


def test_saturation():
    assert tilecheck.evaluate("add.sat.f32", 0x3F800000, 0x3F800000) == 0x3F800000  # 2 -> 1
    assert tilecheck.evaluate("add.sat.f32", 0xBF800000, 0x3E800000) == 0  # -0.75 -> +0
    assert tilecheck.evaluate("add.sat.f32", 0x7FC00000, 0) == 0  # NaN -> +0
    assert tilecheck.evaluate("mul.sat.f32", 0x3F000000, 0x3F000000) == 0x3E800000  # 0.25 kept


def test_operand_validation_errors():
    with pytest.raises(OperandError):
        tilecheck.ieee_op("div", "f16", "rn", 0x1_0000, 1)
    with pytest.raises(OperandError):
        tilecheck.ieee_op("div", "f32", "rn", -1, 1)
    with pytest.raises(OperandError):
        tilecheck.ieee_op("div", "f32", "rn", np.array([1.0], np.float32), 1)
    with pytest.raises(UsageError):
        tilecheck.ieee_op("div", "f32", "rn", 1)
    with pytest.raises(UsageError):
        tilecheck.ieee_op("div", "f32", "rx", 1, 1)
    with pytest.raises(UsageError):
        tilecheck.ieee_op("pow", "f32", "rn", 1, 1)
    with pytest.raises(UnknownFormError):
        tilecheck.ieee_op("div", "f128", "rn", 1, 1)
    with pytest.raises(UnknownFormError):
        tilecheck.evaluate("dvi.rn.f32", 1, 1)
    with pytest.raises(IllegalFormError):
        tilecheck.evaluate("div.rn.ftz.f64", 1, 1)
    with pytest.raises(UsageError):
        tilecheck.evaluate("div.rn.f32", 1)


def test_approximate_forms_point_to_allowed():
    with pytest.raises(ApproximateFormError, match="allowed"):
        tilecheck.evaluate("rcp.approx.f32", 0x40400000)


def test_rcp_approx_contract_one_ulp():
    # 1/3 = 0x3eaaaaaa.aaa...: RD = ...aaa, RU = ...aab; within 1 ulp: those two only
    assert reference("rcp.approx.f32", 0x40400000) == 0x3EAAAAAB
    verdicts = [bool(tilecheck.allowed("rcp.approx.f32", r, 0x40400000, ulp_reading="exact")) for r in
                (0x3EAAAAA9, 0x3EAAAAAA, 0x3EAAAAAB, 0x3EAAAAAC)]
    assert verdicts == [False, True, True, False]
    # the correctly rounded reading (1 value from RN = ...aab) also allows ...aac; the default both
    verdicts = [bool(tilecheck.allowed("rcp.approx.f32", r, 0x40400000)) for r in
                (0x3EAAAAA9, 0x3EAAAAAA, 0x3EAAAAAB, 0x3EAAAAAC, 0x3EAAAAAD)]
    assert verdicts == [False, True, True, True, False]
    # documented special values: -inf -> -0, -0 -> -inf, +0 -> +inf, +inf -> +0
    assert tilecheck.allowed("rcp.approx.f32", 0x80000000, 0xFF800000)
    assert not tilecheck.allowed("rcp.approx.f32", 0x00000000, 0xFF800000)
    assert tilecheck.allowed("rcp.approx.f32", 0xFF800000, 0x80000000)
    assert tilecheck.allowed("rcp.approx.f32", 0x7FC00000, 0x7FC00000)


def test_rcp_approx_ftz_accepts_flushed_results():
    # 1/x for x = 2^127 is 2^-127, subnormal: .ftz flushes it to +0; without .ftz +0 is 2^23 ulps off
    x = 0x7F000000
    assert tilecheck.allowed("rcp.approx.ftz.f32", 0, x)
    assert not tilecheck.allowed("rcp.approx.ftz.f32", 0x00400000, x)  # a subnormal is never produced
    assert tilecheck.allowed("rcp.approx.f32", 0x00400000, x)
    assert not tilecheck.allowed("rcp.approx.f32", 0, x)


def test_relative_bound_with_irrational_exponent():
    # sqrt.approx.f32: relative 2^-23. sqrt(2) = 1.41421356...; RN = 0x3fb504f3
    assert tilecheck.allowed("sqrt.approx.f32", 0x3FB504F3, 0x40000000)
    assert tilecheck.allowed("sqrt.approx.f32", 0x3FB504F4, 0x40000000)  # 0.43 ulp above: rel 2^-24.4
    assert not tilecheck.allowed("sqrt.approx.f32", 0x3FB504F6, 0x40000000)
    # rsqrt.approx.f32: relative 2^-22.9 = 1.0718 * 2^-23. 1/sqrt(4) = 0.5 exactly: 0.5 + 2^-24 is
    # relative 2^-23 (inside); 0.5 + 2^-23 is relative 2^-22 (outside).
    assert tilecheck.allowed("rsqrt.approx.f32", 0x3F000001, 0x40800000)
    assert not tilecheck.allowed("rsqrt.approx.f32", 0x3F000002, 0x40800000)
    assert reference("rsqrt.approx.f32", 0x40800000) == 0x3F000000


def test_div_approx_documented_domain_rules():
    # 2^126 < |b| < 2^128: a sign-preserving zero; NaN when a is infinite
    b = 0x7F000000  # 2^127
    assert tilecheck.allowed("div.approx.f32", 0x80000000, 0xBF800000, b)
    assert not tilecheck.allowed("div.approx.f32", 0x00000000, 0xBF800000, b)
    assert tilecheck.allowed("div.approx.f32", 0x7FFFFFFF, 0x7F800000, b)
    assert not tilecheck.allowed("div.approx.f32", 0x7F800000, 0x7F800000, b)
    # subnormal divisor without .ftz: undocumented, anything goes
    assert tilecheck.allowed("div.approx.f32", 0x12345678, 0x3F800000, 0x00000010)


@pytest.mark.parametrize("name", ["sub.f16x2", "add.rn.bf16x2", "fma.rn.f32x2", "mul.rz.ftz.f32x2", "add.rn.f32"])
def test_results_do_not_depend_on_the_operand_dtype(name):
    """Containers given as their own dtype, as uint64 or as Python ints give the same bits. Under
    numpy 1.x promotion (``uint16 << np.uint64(16)`` stays uint16) packed forms once dropped their
    high lane; tools/check_floors.py runs this at the numpy floor."""
    import random

    import tilecheck
    from tilecheck.spec.types import PTX_TYPES

    form = tilecheck.model.api._form(name)
    bits = PTX_TYPES[form.type].bits
    rng = random.Random(name)
    ops = [[rng.getrandbits(bits) for _ in range(200)] for _ in form.sources]
    native = {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    a = np.asarray(tilecheck.evaluate(name, *[np.array(o, dtype=native) for o in ops])).astype(np.uint64)
    b = np.asarray(tilecheck.evaluate(name, *[np.array(o, dtype=np.uint64) for o in ops])).astype(np.uint64)
    c = np.array([int(tilecheck.evaluate(name, *[o[i] for o in ops])) for i in range(20)], dtype=np.uint64)
    assert np.array_equal(a, b) and np.array_equal(a[:20], c)
    if form.lanes > 1:
        assert (a >> np.uint64(bits // 2)).any(), "the high lane is never nonzero: it was dropped"


def test_bound_decides_names_the_lanes_the_error_bound_alone_decides():
    """div.approx.f32: a normal pair is the bound's; an infinite dividend (special row), a divisor
    above 2^126 (domain rule) and a subnormal divisor (no bound) are not; an exact form is refused."""
    a = np.array([0x3F800000, 0x7F800000, 0x3F800000, 0x3F800000], dtype=np.uint32)
    b = np.array([0x40000000, 0x3F800000, 0x7F000000, 0x00000001], dtype=np.uint32)
    assert api.bound_decides("div.approx.f32", a, b).tolist() == [True, False, False, False]
    with pytest.raises(UsageError, match="not approximate"):
        api.bound_decides("div.rn.f32", a, b)
