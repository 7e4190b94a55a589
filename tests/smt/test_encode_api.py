"""The public Z3 API: term shapes, packed lanes, contracts, NaN policies, tininess, import hygiene."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

z3 = pytest.importorskip("z3")

from tilecheck import smt  # noqa: E402
from tilecheck.model import api  # noqa: E402
from tilecheck.smt.forms import Approx  # noqa: E402
from tilecheck.testing.construct import ftz_boundary_operands  # noqa: E402


def test_encode_exact_form_gives_an_fp_term():
    x, c = z3.FP("x", z3.Float32()), z3.FP("c", z3.Float32())
    r = smt.encode("div.rn.f32", x, c)
    assert isinstance(r, z3.FPRef) and r.sort() == z3.Float32()
    # a concrete check through substitution: 1/4
    v = z3.substitute(r, (x, z3.FPVal(1.0, z3.Float32())), (c, z3.FPVal(4.0, z3.Float32())))
    assert z3.simplify(z3.fpToReal(v)).as_fraction() == Fraction(1, 4)


def test_packed_forms_work_per_lane_element_zero_low():
    form = "add.rn.f16x2"
    a = 0x3c00_4000  # lane 0 = 2.0, lane 1 = 1.0
    b = 0x4000_3c00  # lane 0 = 1.0, lane 1 = 2.0
    lanes = smt.encode(form, z3.BitVecVal(a, 32), z3.BitVecVal(b, 32))
    assert isinstance(lanes, tuple) and len(lanes) == 2
    assert smt.evaluate(form, a, b) == 0x4200_4200 == int(api.evaluate(form, a, b))


def test_approximate_forms_return_a_constrained_result():
    enc = smt.encode("rcp.approx.f32", z3.BitVecVal(0x40000000, 32))
    assert isinstance(enc, Approx)
    s = z3.Solver()
    s.add(enc.constraint, enc.result == 0x3f000000)  # 0.5 is allowed for 1/2
    assert s.check() == z3.sat
    s = z3.Solver()
    s.add(enc.constraint, enc.result == 0x3f000010)  # 16 ulps off is not
    assert s.check() == z3.unsat


def test_nan_policies_on_bit_vectors():
    # f64 propagates the first NaN operand's payload, quieted
    snan = 0x7ff0000000000123
    assert smt.evaluate("add.rn.f64", 0x3ff0000000000000, snan) == 0x7ff8000000000123
    assert smt.evaluate("add.rn.f64", snan, 0xfff8000000000456) == 0x7ff8000000000123
    # invalid: the spec's bits
    inf = 0x7ff0000000000000
    assert smt.evaluate("add.rn.f64", inf, inf | (1 << 63)) == int(api.evaluate("add.rn.f64", inf, inf | (1 << 63)))
    # f32: unspecified, represented by the spec's bits whatever the inputs
    assert smt.evaluate("mul.rn.f32", 0x7fc00001, 0x3f800000) == int(api.evaluate("mul.rn.f32", 0x7fc00001, 0x3f800000))


def test_ftz_tininess_before_and_after_rounding():
    a, b = ftz_boundary_operands("f32", "div", rounding="rn")
    after = smt.evaluate("div.rn.ftz.f32", a, b)
    before = smt.evaluate("div.rn.ftz.f32", a, b, tininess="before")
    assert after & 0x7fffffff == 0x00800000  # survives as the smallest normal
    assert before & 0x7fffffff == 0  # flushed: the exact value is below 2^-126
    assert after == int(api.evaluate("div.rn.ftz.f32", a, b))
    assert before == int(api.evaluate("div.rn.ftz.f32", a, b, tininess="before"))


def test_saturation():
    for a, b in [(0x3f800000, 0x3f800000), (0xbf800000, 0x3f800000), (0x7fc00000, 0), (0x80000000, 0x80000000)]:
        assert smt.evaluate("add.rn.sat.f32", a, b) == int(api.evaluate("add.rn.sat.f32", a, b))


def test_array_operands_and_allowed_for_exact_forms():
    a = np.array([0x3f800000, 0x40000000], dtype=np.uint32)
    b = np.array([0x40400000, 0x40400000], dtype=np.uint32)
    got = smt.evaluate("div.rz.f32", a, b)
    assert got.dtype == np.uint32 and list(got) == list(api.evaluate("div.rz.f32", a, b))
    assert smt.allowed("div.rn.f32", 0x7fc00000, 0x7f800001, 0x3f800000)  # any NaN (unspecified)
    assert not smt.allowed("div.rn.f32", 0x3eaaaaaa, 0x3f800000, 0x40400000)


def test_usage_errors():
    from tilecheck.errors import ApproximateFormError, UsageError

    with pytest.raises(ApproximateFormError):
        smt.evaluate("rcp.approx.f32", 0x3f800000)
    with pytest.raises(UsageError):
        smt.evaluate("div.rn.f32", 1)
    with pytest.raises(UsageError):
        smt.encode("div.rn.f32", 1, 2, tininess="sometimes")


@pytest.mark.parametrize("module", ["tilecheck.smt", "tilecheck.smt.forms", "tilecheck.smt.amdgpu",
                                    "tilecheck.smt.prove"])
def test_smt_never_imports_the_model(module):
    code = (f"import sys, importlib; importlib.import_module({module!r}); "
            "bad = [m for m in sys.modules if m.startswith('tilecheck.model')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_importing_tilecheck_and_the_semantics_language_does_not_import_z3():
    code = ("import sys, tilecheck, tilecheck.smt, tilecheck.semantics, tilecheck.spec.amdgpu, "
            "tilecheck.amdgpu.campaign; assert 'z3' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
