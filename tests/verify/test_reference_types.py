"""A reference of the wrong type is a usage error, never a finding: what the PTX loads and
computes (``ld.global.f32``, ``cvt.f32.bf16``, parameter widths) must fit ``--against``, and
packed lanes are read as packed only where the code is packed (half2/bf162 code: unpacked with
``mov.b32 {a, b}``, loaded as ``.v2`` of 16 bits, computed on with f16x2/bf16x2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tilecheck.cli import main
from tilecheck.errors import UsageError
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "examples" / "cuda"
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
MANIFESTS = (ROOT / "examples" / "cuda" / "manifest.yaml", ROOT / "examples" / "llvm" / "manifest.yaml")
ENTRIES = [e for m in MANIFESTS for e in yaml.safe_load(m.read_text())["entries"]]


@pytest.fixture
def no_work(monkeypatch):
    """Fail if any input is generated or judged: a wrong type is refused before the run."""
    def refuse(*args, **kwargs):
        raise AssertionError("inputs were run for a reference of the wrong type")
    monkeypatch.setattr(compiled, "run_block", refuse)
    monkeypatch.setattr(compiled, "sampled_inputs", refuse)


def _refused(capsys, path, entry, against, *extra) -> str:
    code = main(["verify", str(path), "--entry", entry, "--against", against, "--cases", "2000", *extra])
    cap = capsys.readouterr()
    assert code == 2, cap.out + cap.err
    assert "Traceback" not in cap.err
    # no report on stdout; with --json -, the refusal's JSON (its error the message on stderr)
    if "--json" in extra:
        data = json.loads(cap.out)
        assert data["verdict"] == "refused" and data["error"] in cap.err
    else:
        assert cap.out == ""
    return cap.err


@pytest.mark.parametrize("path,entry,against,kernel_type,evidence", [
    # an f32 kernel is not two packed f16 lanes per element
    (CUDA / "float.ptx", "k_fdiv_rn", "div.rn.f16", "32-bit f32 elements", "ld.global.f32"),
    # an f64 kernel is not two packed f32 lanes
    (CUDA / "double.ptx", "k_ddiv_rn", "div.rn.f32", "64-bit f64 elements", "ld.global.f64"),
    # a 16-bit kernel against a 32-bit reference
    (CUDA / "half.ptx", "k_hdiv_f16", "div.rn.f32", "16-bit f16 elements", "cvt.f32.f16"),
    # bf16 code against an f16 reference (and back): the same width, another format
    (CUDA / "half.ptx", "k_hdiv_bf16", "div.rn.f16", "as bf16", "cvt.f32.bf16"),
    (CUDA / "half.ptx", "k_hdiv_f16", "div.rn.bf16", "as f16", "cvt.f32.f16"),
    # half2 code is not one f32 per element
    (CUDA / "half.ptx", "k_h2div_f16", "div.rn.f32", "as packed f16 pairs", "mov.b32 {low,high}, %r1"),
    (CUDA / "half2_func.ptx", "h2div_f16_func", "div.rn.f32", "as packed f16 pairs", "cvt.f32.f16"),
    (CUDA / "half.ptx", "k_h2div_bf16", "div.rn.f16", "as packed bf16 pairs", "cvt.f32.bf16"),
])
def test_a_reference_of_another_type_is_exit_2_naming_both(capsys, no_work, path, entry, against, kernel_type,
                                                          evidence):
    err = _refused(capsys, path, entry, against)
    ref_type = against.rsplit(".", 1)[1]
    assert f"--against {against}: the " in err and entry in err
    assert kernel_type in err and evidence in err and f"the reference is {ref_type} (" in err
    # located at the function, the evidence by its line
    assert re.search(rf"{re.escape(str(path))}:\d+:\d+: error:", err) and re.search(r"\(line \d+: ", err)


def test_the_brief_example_reads_as_a_user_would_want(capsys, no_work):
    err = _refused(capsys, CUDA / "float.ptx", "k_fdiv_rn", "div.rn.f16")
    assert re.search(r"error: --against div\.rn\.f16: the kernel k_fdiv_rn loads and stores 32-bit f32 elements "
                     r"\(line \d+: ld\.global\.f32\); the reference is f16", err), err


def test_one_input_and_json_runs_refuse_too(capsys, no_work):
    _refused(capsys, CUDA / "float.ptx", "k_fdiv_rn", "div.rn.f16", "--json", "-")
    code = main(["verify", str(CUDA / "double.ptx"), "--entry", "k_ddiv_rn", "--against", "div.rn.f32",
                 "--input", "0x3f800000,0x40000000"])
    assert code == 2 and "64-bit f64 elements" in capsys.readouterr().err


def test_by_value_funcs_say_what_they_take(tmp_path, capsys, no_work):
    path = tmp_path / "f.ptx"
    path.write_text(HEADER + """
.visible .func (.param .f32 r) fdiv(.param .f32 a, .param .f32 b)
{
  .reg .f32 %f<4>;
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  div.rn.f32 %f3, %f1, %f2;
  st.param.f32 [r], %f3;
  ret;
}
.visible .func (.param .b64 r) ddiv(.param .b64 a, .param .b64 b)
{
  .reg .f64 %fd<4>;
  ld.param.f64 %fd1, [a];
  ld.param.f64 %fd2, [b];
  div.rn.f64 %fd3, %fd1, %fd2;
  st.param.f64 [r], %fd3;
  ret;
}
""")
    err = _refused(capsys, path, "fdiv", "div.rn.f16")
    assert "the .func fdiv takes and returns 32-bit f32 elements (line" in err and "reference is f16" in err
    # 64-bit operands read as f64 are values, not pointers to 32-bit elements
    err = _refused(capsys, path, "ddiv", "div.rn.f32")
    assert "takes and returns 64-bit f64 elements" in err and "reference is f32" in err


def test_32_bit_code_that_never_splits_its_elements_is_not_packed(tmp_path, capsys, no_work):
    """``.b32`` loads computed on as f32 (no typed load to go by): no mov.b32 {a, b}, no .v2 of 16
    bits, no f16x2 instruction -- the elements are not half2 pairs."""
    path = tmp_path / "k.ptx"
    path.write_text(HEADER + """
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r3, %r1, %r2, %r3;
  mul.wide.u32 %rd4, %r3, 4;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
  ld.global.u32 %r1, [%rd5];
  ld.global.u32 %r2, [%rd6];
  mov.b32 %f1, %r1;
  mov.b32 %f2, %r2;
  div.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd7], %f3;
  ret;
}
""")
    err = _refused(capsys, path, "k", "div.rn.f16")
    assert "32-bit f32 elements" in err  # the store says it
    text = path.read_text().replace("st.global.f32 [%rd7], %f3;", "mov.b32 %r3, %f3;\n  st.global.u32 [%rd7], %r3;")
    path.write_text(text)
    err = _refused(capsys, path, "k", "div.rn.f16")
    assert "loads and stores 32-bit elements (line" in err and "computes on them as f32" in err
    assert "never as two 16-bit lanes" in err


def test_integer_emulated_bfloat16_is_bfloat16(capsys, no_work, db):
    """LLVM's bf16 on sm_75 widens by hand (``shl.b32 %r2, %r1, 16`` read as f32): bf16, not f16."""
    path = ROOT / "examples" / "llvm" / "arith_sm_75.ptx"
    err = _refused(capsys, path, "fdiv_bf16", "div.rn.f16")
    assert "as bf16 (line" in err and "shl.b32" in err


@pytest.mark.parametrize("path,entry,against", [
    (CUDA / "half.ptx", "k_h2div_f16", "div.rn.f16"),          # ld.global.u32 + mov.b32 {low,high}
    (CUDA / "half.ptx", "k_h2rcp_bf16", "rcp.rn.bf16"),        # ld.global.v2.u16
    (CUDA / "half.ptx", "k_h2sqrt_bf16", "sqrt.rn.bf16"),      # inline asm mov.b32 {hl, hu}
    (CUDA / "half2_func.ptx", "h2div_f16_func", "div.rn.f16"),  # .func by pointer
    (CUDA / "half_variants_debug.ptx", "k_div_operator_f16x2", "div.rn.f16"),  # -G: through the stack
])
def test_packed_half2_code_is_still_read_lane_by_lane(db, path, entry, against):
    p = compiled.prepare(str(path), entry, against, db=db)
    assert p.abi.lanes == 2 and p.abi.width == 32


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e['entry']}@{Path(e['file']).stem}" for e in ENTRIES])
def test_every_corpus_entry_fits_its_reference_and_no_other_format(db, entry):
    """Each committed entry is accepted against its documented reference, with the ABI it had,
    and refused (a usage error) against the same operation in every other format."""
    p = compiled.prepare(str(ROOT / entry["file"]), entry["entry"], entry["against"], db=db)
    assert p.abi.width in (p.ref.fmt.width, 2 * p.ref.fmt.width)
    m = re.fullmatch(r"(\w+)\.(rn|rz|rm|rp)\.(f16|bf16|f32|f64)", entry["against"])
    if not m:
        return  # a PTX form (div.approx.f32 ...): its format is the same
    for fmt in ("f16", "bf16", "f32", "f64"):
        if fmt == m.group(3):
            continue
        with pytest.raises(UsageError) as exc:
            compiled.prepare(str(ROOT / entry["file"]), entry["entry"], f"{m.group(1)}.rn.{fmt}", db=db)
        assert f"the reference is {fmt} (" in exc.value.message and entry["entry"] in exc.value.message
