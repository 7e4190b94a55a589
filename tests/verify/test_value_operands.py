"""Operands given by value: a floating-point kernel parameter the kernel reads (Triton's float32
argument ``alpha``, examples/triton/{scale,axpy}_*.ptx) is an operand, named in parameter order
with the buffers; every thread gets its own input's value. Triton's ``x * alpha`` on float16
multiplies in float32 and rounds again: the double roundings are found by the sampled inputs'
constructed cases and agree with an exact computation here (fractions)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.formats import get_format
from tilecheck.inputs.boundaries import midpoint_pairs
from tilecheck.verify.compiled import verify_ptx

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
SCALE_CR = "cvt.rn.f16.f64(mul.rn.f64(cvt.f64.f16(a), cvt.f64.f32(b)))"
SCALE_LOWERING = "cvt.rn.f16.f32(mul.rn.f32(cvt.f32.f16(a), b))"


def _f16_nearest(value: Fraction) -> int:
    return get_format("f16").from_fraction(value)


def test_scale_by_a_float_argument_verifies_and_names_it_in_the_abi(db):
    out = verify_ptx(str(TRITON / "scale_f32.ptx"), "scale_kernel", "mul.rn.f32", db=db, cases=4000, processes=False)
    assert out.exit_code == 0 and out.misrounded_count == 0 and out.inputs_checked == 4000
    assert "by value: scale_kernel_param_2" in out.abi


def test_axpy_operands_are_in_parameter_order(db):
    path = str(TRITON / "axpy_f32.ptx")
    good = verify_ptx(path, "axpy_kernel", "fma.rn.f32(c, a, b)", db=db, cases=4000, processes=False)
    assert good.misrounded_count == 0 and good.inputs_checked == 4000
    # alpha is the third operand: as the addend it is another function
    swapped = verify_ptx(path, "axpy_kernel", "fma.rn.f32(a, b, c)", db=db, cases=4000, processes=False)
    assert swapped.verdict == "counterexample" and swapped.misrounded_count > 1000


@pytest.mark.parametrize("x,alpha", [(0x3FC9, 0x3F46C695), (0x3C47, 0x3F88F145)])
def test_float16_scale_double_rounds_where_fractions_say(capsys, x, alpha):
    exact = get_format("f16").to_fraction(x) * get_format("f32").to_fraction(alpha)
    once = _f16_nearest(exact)
    twice = _f16_nearest(get_format("f32").to_fraction(get_format("f32").from_fraction(exact)))
    assert once != twice  # the input is a double rounding (decided here with fractions)
    base = ["verify", str(TRITON / "scale_f16_v.ptx"), "--entry", "scale_kernel", "--input", f"{x:#x},{alpha:#x}"]
    assert main(base + ["--against", SCALE_CR]) == 1
    assert f"{twice:#06x}" in capsys.readouterr().out
    assert main(base + ["--against", SCALE_LOWERING]) == 0


def test_sampled_inputs_find_the_double_roundings(db):
    path = str(TRITON / "scale_f16_v.ptx")
    rows = []
    out = verify_ptx(path, "scale_kernel", SCALE_CR, db=db, cases=8000, seed=1, processes=False,
                     misrounded=rows.append)
    assert out.verdict == "counterexample" and out.sampling.get("hard", 0) == 2000
    f16, f32 = get_format("f16"), get_format("f32")
    found = [tuple(int(v) for v in r) for block in rows for r in block]
    assert len(found) == out.misrounded_count > 100
    for x, alpha in found[:50]:  # each one a double rounding, by fractions
        exact = f16.to_fraction(x) * f32.to_fraction(alpha)
        assert _f16_nearest(exact) != _f16_nearest(f32.to_fraction(f32.from_fraction(exact)))
    lowering = verify_ptx(path, "scale_kernel", SCALE_LOWERING, db=db, cases=8000, seed=1, processes=False)
    assert lowering.misrounded_count == 0 and lowering.inputs_checked == 8000


@pytest.mark.parametrize("op", ["mul", "div"])
def test_midpoint_pairs_land_next_to_a_midpoint_of_the_result(op):
    x, y = midpoint_pairs(op, "f16", "f32", "f16", 400, np.random.default_rng(4))
    f16, f32 = get_format("f16"), get_format("f32")
    near = 0
    for xb, yb in zip(x.tolist(), y.tolist()):
        a, b = f16.to_fraction(xb), f32.to_fraction(yb)
        exact = a * b if op == "mul" else a / b
        lo = f16.to_fraction(f16.from_fraction(abs(exact), "rz"))
        ulp = f16.to_fraction(f16.from_fraction(abs(exact), "rz") + 1) - lo
        # within 2^-12 of an f16 ulp of the midpoint: a float32 rounding may land on it
        near += abs(abs(exact) - lo - ulp / 2) <= ulp / 4096
    assert near > 300


def test_a_value_parameter_the_reference_does_not_take_is_a_located_error(capsys):
    assert main(["verify", str(TRITON / "scale_f32.ptx"), "--entry", "scale_kernel", "--against", "neg.f32"]) == 2
    err = capsys.readouterr().err
    assert "scale_f32.ptx:" in err and "by value (scale_kernel_param_2)" in err and "Traceback" not in err


def test_params_state_a_value_operand(capsys):
    base = ["verify", str(TRITON / "scale_f32.ptx"), "--entry", "scale_kernel", "--against", "mul.rn.f32",
            "--cases", "500"]
    assert main(base + ["--params", "in,out,in,n,-,-"]) == 0
    # stated unused, the value would be 0.0 for every verdict: refused where the kernel reads it
    assert main(base + ["--params", "in,out,-,n,-,-"]) == 2
    assert "states scale_kernel_param_2 unused, but the kernel reads it (line 35" in capsys.readouterr().err


# two elements per thread sharing one approximate reciprocal of the value operand: both elements'
# slices hold the rcp, so they run together (their choices are one choice)
SHARED_RCP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 o, .param .f32 alpha, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .f32 %f<10>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [o];
  ld.param.f32 %f9, [alpha];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  shl.b32 %r4, %r4, 1;
  add.s32 %r5, %r4, 1;
  setp.lt.s32 %p1, %r4, %r9;
  setp.lt.s32 %p2, %r5, %r9;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  rcp.approx.f32 %f8, %f9;
  @%p1 ld.global.f32 %f1, [%rd4];
  @%p2 ld.global.f32 %f2, [%rd4+4];
  mul.rn.f32 %f3, %f1, %f8;
  mul.rn.f32 %f4, %f2, %f8;
  @%p1 st.global.f32 [%rd5], %f3;
  @%p2 st.global.f32 [%rd5+4], %f4;
  ret;
}
"""


def test_elements_that_run_together_with_a_value_operand_are_refused_located(tmp_path, capsys):
    path = tmp_path / "shared_rcp.ptx"
    path.write_text(SHARED_RCP)
    assert main(["verify", str(path), "--entry", "k", "--against", "mul.rn.f32(a, rcp.approx.f32(b))",
                 "--cases", "100"]) == 2
    err = capsys.readouterr().err
    assert "shared_rcp.ptx:" in err and "run together" in err and "alpha is one value for all of them" in err


def test_a_half_argument_is_an_operand_by_value(db):
    """nvcc passes a ``__half`` argument as two aligned bytes (``.param .align 2 .b8 a[2]``):
    examples/cuda/hscale.ptx's ``__hmul(x[i], a)`` is ``mul.rn.f16`` of the buffer and the value."""
    path = str(TRITON.parents[0] / "cuda" / "hscale.ptx")
    out = verify_ptx(path, "hscale", "mul.rn.f16", db=db, cases=4000, processes=False)
    assert out.exit_code == 0 and out.misrounded_count == 0 and "by value: hscale_param_2" in out.abi
    wrong = verify_ptx(path, "hscale", "add.rn.f16(a, b)", db=db, cases=4000, processes=False)
    assert wrong.misrounded_count > 1000


def test_a_half2_argument_is_a_packed_operand_by_value(db):
    """``__half2 a`` (``.param .align 4 .b8 a[4]``, read in two 16-bit halves) where the elements are
    packed pairs too: examples/cuda/hscale.ptx's in-place ``y = __hfma2(a, x, y)`` is
    ``fma.rn.f16(a, b, c)`` lane by lane, each lane of ``a`` its own input's."""
    path = str(TRITON.parents[0] / "cuda" / "hscale.ptx")
    out = verify_ptx(path, "h2axpy", "fma.rn.f16(a, b, c)", db=db, cases=4000, processes=False)
    assert out.exit_code == 0 and out.misrounded_count == 0 and "2 lanes" in out.abi and "h2axpy_param_1" in out.abi
    wrong = verify_ptx(path, "h2axpy", "fma.rn.f16(a, c, b)", db=db, cases=4000, processes=False)
    assert wrong.misrounded_count > 1000


def test_an_operand_wider_than_the_buffers_elements_is_named_in_the_refusal(capsys):
    # f32 where the kernel's buffer holds halves: the elements are read as other elements; the
    # refusal (exit 2, located) says which width the reference gave that buffer
    path = str(TRITON / "scale_f16_v.ptx")
    assert main(["verify", path, "--entry", "scale_kernel", "--against", "cvt.rn.f16.f32(mul.rn.f32(a, b))"]) == 2
    err = capsys.readouterr().err
    assert "scale_f16_v.ptx:" in err and "32-bit elements of scale_kernel_param_0, 16-bit results" in err
