"""Kernels that work in place (``y = a * x + y``: the result buffer is read, then written): the
buffer holds an operand before the launch and the result after it (examples/cuda/saxpy.cu, nvcc's
PTX: ``saxpy`` one element per thread, ``saxpy4`` four through float4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.verify.compiled import verify_ptx

SAXPY = Path(__file__).resolve().parents[2] / "examples" / "cuda" / "saxpy.ptx"


@pytest.mark.parametrize("entry", ["saxpy", "saxpy4"])
def test_saxpy_is_one_fma_of_the_value_x_and_the_old_y(db, entry):
    out = verify_ptx(str(SAXPY), entry, "fma.rn.f32(a, b, c)", db=db, cases=4000, processes=False)
    assert out.exit_code == 0 and out.misrounded_count == 0 and out.inputs_checked == 4000
    # the old y is an operand: a reference without it, or with it in another place, fails
    other = verify_ptx(str(SAXPY), entry, "fma.rn.f32(a, c, b)", db=db, cases=4000, processes=False)
    assert other.misrounded_count > 100


def test_saxpy_rounds_once_where_the_source_rounds_twice(capsys):
    base = ["verify", str(SAXPY), "--entry", "saxpy", "--against", "add.rn.f32(mul.rn.f32(a, b), c)"]
    assert main(base + ["--cases", "4000"]) == 1
    assert "misrounded" in capsys.readouterr().out
    # a product near -2^-126 added to a value about 2^-125.3: fused, the sum keeps the product's
    # tail and lands on 0x80028c41; rounded first, the product moves the sum to 0x80028c42
    assert main(base + ["--input", "0x3f41461e,0x81800001,0x013fffff"]) == 1
    assert "0x80028c41" in capsys.readouterr().out


# stores the element, reads it back and stores again: two stores of one element, which discovery
# does not take for an elementwise layout (located, exit 2) rather than judge the read-back value
READ_BACK = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<6>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u32 %r5, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  setp.ge.s32 %p1, %r4, %r5;
  @%p1 bra DONE;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  st.global.f32 [%rd5], %f1;
  ld.global.f32 %f2, [%rd5];
  add.rn.f32 %f3, %f2, %f2;
  st.global.f32 [%rd5], %f3;
DONE:
  ret;
}
"""


def test_a_result_read_back_after_its_store_is_not_taken_for_an_operand(tmp_path, capsys):
    path = tmp_path / "read_back.ptx"
    path.write_text(READ_BACK)
    assert main(["verify", str(path), "--entry", "k", "--against", "add.rn.f32(b, b)", "--cases", "100"]) == 2
    err = capsys.readouterr().err
    assert "read_back.ptx:" in err and "Traceback" not in err


def test_triton_in_place_scale_on_float16_vectors_double_rounds_as_the_out_of_place_one(db):
    """examples/triton/scale_inplace_f16_v.ptx (x *= alpha, 128-bit vectors, alpha by value, the
    operand f16 and the value f32): the same inputs misround as for scale_f16_v.ptx, which writes
    another buffer."""
    triton = SAXPY.parents[1] / "triton"
    ref = "cvt.rn.f16.f64(mul.rn.f64(cvt.f64.f16(a), cvt.f64.f32(b)))"
    sets = []
    for stem, entry in (("scale_inplace_f16_v", "scale_inplace_kernel"), ("scale_f16_v", "scale_kernel")):
        rows = []
        out = verify_ptx(str(triton / f"{stem}.ptx"), entry, ref, db=db, cases=4000, seed=2, processes=False,
                         misrounded=rows.append)
        sets.append({tuple(int(v) for v in r) for block in rows for r in block})
        assert out.verdict == "counterexample" and out.misrounded_count == len(sets[-1])
    assert sets[0] == sets[1] and len(sets[0]) > 100
