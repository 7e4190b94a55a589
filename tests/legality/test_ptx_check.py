"""``tilecheck check FILE.ptx``: every instruction judged for the module's target and version,
located, coded, with the spec's reason; agreement with ptxas 13.0 measured on the committed corpora
at every target (ptxas present); ``verify FILE.ptx`` refuses a module ptxas would not assemble."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from tilecheck import ptxas
from tilecheck.cli import main
from tilecheck.commands.check_ptx import check_ptx_text
from tilecheck.errors import ToolNotFoundError
from tilecheck.legality.ptx_module import CODES
from tilecheck.spec.database import load_database

ROOT = Path(__file__).resolve().parents[2]
DB = load_database()
CORPUS = sorted((ROOT / "examples" / "cuda").glob("*.ptx")) + sorted((ROOT / "examples" / "triton").glob("*.ptx")) \
    + sorted((ROOT / "examples" / "llvm").glob("*.ptx"))
EMITTED = sorted((ROOT / "emit").rglob("*.ptx"))  # tilecheck's own kernels and programs (the goldens)
TARGETS = ("sm_75", "sm_80", "sm_89", "sm_90", "sm_120")

HEADER = ".version {version}\n.target {target}\n.address_size 64\n\n"
BODY = """.visible .entry k(.param .u64 p)
{{
    .reg .pred %p<3>;
    .reg .b16 %h<5>;
    .reg .b32 %r<5>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.global.b16 %h1, [%rd1];
    ld.global.f32 %f1, [%rd1];
{line}
    st.global.b16 [%rd1], %h2;
    ret;
}}
"""

# one illegal line each: (what, target, version, line, code)
ILLEGAL = [
    ("wrong target", "sm_75", "7.0", "fma.rn.bf16 %h2, %h1, %h1, %h1;", "PX003"),
    ("PTX version too old", "sm_90", "7.8", "cvt.rn.satfinite.f16.f32 %h2, %f1;", "PX004"),
    ("undefined spelling", "sm_90", "8.0", "div.rq.f32 %f2, %f1, %f1;", "PX001"),
    ("rounding modifier where none is allowed", "sm_90", "8.0", "cvt.rn.f32.f16 %f2, %h1;", "PX002"),
    ("a type the operation lacks", "sm_90", "8.0", "rcp.rn.f16 %h2, %h1;", "PX002"),
    # an opcode the spec does not define, with its known gates (OPCODE_GATES)
    ("ldmatrix before sm_75", "sm_70", "7.0", "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r1];",
     "PX003"),
    ("ldmatrix before PTX ISA 6.5", "sm_75", "6.4", "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r1];", "PX004"),
]


def _module(target: str, version: str, line: str) -> str:
    return HEADER.format(version=version, target=target) + BODY.format(line="    " + line)


def _have_ptxas() -> bool:
    try:
        ptxas.find_ptxas()
        return True
    except ToolNotFoundError:
        return False


def test_codes_are_documented():
    assert all(re.fullmatch(r"PX\d{3}", c) for c in CODES) and len({n for n, _ in CODES.values()}) == len(CODES)


@pytest.mark.parametrize("what,target,version,line,code", ILLEGAL, ids=[i[0] for i in ILLEGAL])
def test_one_illegal_line_is_found_and_located(tmp_path, capsys, what, target, version, line, code):
    path = tmp_path / "k.ptx"
    path.write_text(_module(target, version, line))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert re.search(rf"k\.ptx:15:5: error\[{code}\] ", out), out
    assert "1 error(s)" in out
    if _have_ptxas():  # ptxas refuses the same module
        arch = "compute_" + target[3:]
        assert not ptxas.assemble(path.read_text(), arch, parse_only=True).ok, what


def test_a_clean_module_is_clean_and_says_what_was_not_judged(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_90", "8.0", "cvt.rn.f16.f32 %h2, %f1;\n    bra.uni $L1;\n$L1:"))
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 error(s); not covered: bra (1), ret (1)" in out
    assert "note[PX101] not-covered: bra" in out


def test_findings_carry_reason_section_ptxas_message_and_nearest_spellings(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_90", "8.0", "cvt.rn.f32.f16 %f2, %h1;"))
    assert main(["check", str(path), "--json", "-"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)["files"][0]["findings"][:1]
    assert finding["code"] == "PX002" and finding["line"] == 15 and finding["col"] == 5
    assert "rounding" in finding["message"] and "§9.7.9.21" in finding["section"]
    assert finding["ptxas"] == "Illegal rounding modifier for instruction 'cvt'"
    assert "cvt.f32.f16" in finding["nearest"]


def test_stricter_than_ptxas_with_the_reason(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_90", "8.0", "fma.rz.bf16 %h2, %h1, %h1, %h1;"))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error[PX005] ptxas-accepts: fma.rz.bf16: not in the ISA" in out and "miscompiles" in out
    if _have_ptxas():
        assert ptxas.assemble(path.read_text(), "sm_90").ok  # ptxas takes it: the spec is stricter


def test_module_version_older_than_the_target_accepts(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_90", "7.0", "cvt.rn.f16.f32 %h2, %f1;"))
    assert main(["check", str(path)]) == 1
    assert "error[PX006] module-version: .version 7.0 is older than sm_90 accepts" in capsys.readouterr().out


INLINED_LOC = """.version {version}
.target sm_75
.address_size 64
.visible .func (.param .b32 r) f(.param .b32 a)
{{
  .reg .f32 %f<3>;
  ld.param.f32 %f1, [a];
  // .loc 1 3 4, function_name $L__info_string0, inlined_at 1 9 2 (a comment: not judged)
  .loc 1 50 21, function_name $L__info_string0, inlined_at 1 233 30
  add.rn.f32 %f2, %f1, %f1;
  .loc 1 50 22, function_name $L__info_string0, inlined_at 1 233 30
  st.param.f32 [r], %f2;
  ret;
}}
"""


def test_inlined_line_information_needs_ptx_7():
    """``.loc ... function_name ..., inlined_at ...`` (Triton's inlined library code) before PTX ISA
    7.0: one PX007 at its first line, as ptxas refuses it; from 7.0 on, nothing."""
    old = check_ptx_text(INLINED_LOC.format(version="6.5"), "k.ptx", DB)
    found = [(f.code, f.location.line, f.location.column) for f in old.findings if f.severity == "error"]
    assert found == [("PX007", 9, 3)]
    assert not [f for f in check_ptx_text(INLINED_LOC.format(version="7.0"), "k.ptx", DB).findings
                if f.severity == "error"]


def test_target_and_version_overrides_and_stdin(tmp_path, capsys, monkeypatch):
    text = _module("sm_90", "8.0", "fma.rn.bf16 %h2, %h1, %h1, %h1;")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["check", "-"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["check", "-", "--target", "sm_75"]) == 1
    assert "<stdin>:15:5: error[PX003]" in capsys.readouterr().out
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_90", "8.1", "cvt.rn.satfinite.f16.f32 %h2, %f1;"))
    assert main(["check", str(path)]) == 0
    assert main(["check", str(path), "--version", "7.8"]) == 1


def test_bad_input_is_a_located_usage_error(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.ptx")]) == 2
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n{\n")
    assert main(["check", str(bad)]) == 2
    assert "bad.ptx" in capsys.readouterr().err
    assert main(["check", str(bad), "examples/root_ratio.py"]) == 2
    assert main(["check", str(bad), "--version", "eight"]) == 2


# corpus modules that hold a spelling ptxas accepts but the ISA does not define (PX005, what check is
# stricter than ptxas about): Triton's float8e4nv to bfloat16 widens through cvt.bf16.f16, with no
# rounding modifier (the README's 8-bit float rows; verify runs it under every reading)
UNDEFINED_IN_CORPUS = {"convert_e4m3_bf16.ptx": {"cvt.bf16.f16"}}


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_the_corpus_is_clean_for_its_own_target(path):
    report = check_ptx_text(path.read_text(), str(path), DB)
    expected = UNDEFINED_IN_CORPUS.get(path.name, set())
    errors = [e for e in report.errors if not (e.code == "PX005" and e.spelling in expected)]
    assert not errors, [str(e) for e in errors]
    assert {e.spelling for e in report.errors} == expected
    assert report.judged > 0.5 * report.instructions  # what is not judged is said (PX101, PX102)


def _retarget(text: str, target: str) -> str:
    text = re.sub(r"^(\.target\s+)sm_\w+", rf"\g<1>{target}", text, flags=re.M)
    # ptxas 13.0 reads PTX ISA 9.0 at most (Triton writes 9.4): the instructions are older
    return re.sub(r"^\.version 9\.[1-9]\b", ".version 9.0", text, flags=re.M)




def _agree(text: str, where: str, target: str) -> None:
    """check and ptxas (parse-only) give the same verdict on ``text``, or check is stricter with the
    ISA's reason (PX005)."""
    report = check_ptx_text(text, where, DB)
    accepted = ptxas.assemble(text, "compute_" + target[3:], parse_only=True)
    if bool(report.errors) == (not accepted.ok):
        return
    assert report.errors and accepted.ok, (where, target, "check passes what ptxas refuses", accepted.output[:500])
    # stricter: only with the ISA reason
    assert all(e.code == "PX005" for e in report.errors), (where, target, [str(e) for e in report.errors])


def test_agreement_with_ptxas_on_the_corpus_at_every_target():
    if not _have_ptxas():
        pytest.skip("ptxas not available")
    compared = 0
    for path in CORPUS:
        for target in TARGETS:
            text = _retarget(path.read_text(), target)
            _agree(text, path.name, target)
            # the same module at the oldest .version its target takes: instructions of newer
            # PTX ISA versions must be refused by both (PX004)
            floor = DB.targets[target].min_ptx
            _agree(re.sub(r"^\.version \d+\.\d+", f".version {floor[0]}.{floor[1]}", text, flags=re.M),
                   path.name + f" at .version {floor[0]}.{floor[1]}", target)
            compared += 2
    assert compared == 2 * len(CORPUS) * len(TARGETS) > 500


def test_agreement_with_ptxas_on_the_emitted_kernels():
    if not _have_ptxas():
        pytest.skip("ptxas not available")
    assert len(EMITTED) > 100
    for path in EMITTED:
        text = path.read_text()
        target = re.search(r"^\.target\s+(sm_\w+)", text, flags=re.M).group(1)
        report = check_ptx_text(text, path.name, DB)
        assert not report.errors, (path.name, [str(e) for e in report.errors])
        _agree(text, path.name, DB.targets[target].base if target in DB.targets else target)


def test_verify_refuses_a_module_ptxas_would_not_assemble(tmp_path, capsys):
    text = (ROOT / "examples" / "cuda" / "half.ptx").read_text()
    path = tmp_path / "half75.ptx"
    path.write_text(re.sub(r"^\.target sm_90", ".target sm_75", text, flags=re.M))
    assert main(["verify", str(path), "--entry", "k_hdiv_bf16", "--against", "div.rn.bf16", "--cases", "8"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"half75\.ptx:\d+:\d+: error: \d+ instruction\(s\) that ptxas would not assemble", err)
    assert "error[PX003] target-gate: cvt.f32.bf16 requires sm_80 or newer (target sm_75)" in err


def test_packed_conversions_are_judged(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_75", "7.0", "cvt.rn.f16x2.f32 %r1, %f1, %f1;"))
    assert main(["check", str(path)]) == 1
    assert "error[PX003] target-gate: cvt.rn.f16x2.f32 requires sm_80 or newer (target sm_75)" in \
        capsys.readouterr().out
    path.write_text(_module("sm_80", "7.0", "cvt.rn.satfinite.f16x2.f32 %r1, %f1, %f1;"))
    assert main(["check", str(path)]) == 1
    assert "error[PX004] version-gate: cvt.rn.satfinite.f16x2.f32 requires PTX ISA 8.1" in capsys.readouterr().out


def test_inline_asm_in_cuda_is_judged_for_the_target(tmp_path, capsys):
    assert main(["check", str(ROOT / "examples" / "cuda" / "inline_asm.cu"), "--target", "sm_80"]) == 0
    out = capsys.readouterr().out
    assert "inline_asm.cu: target sm_80:" in out and "0 error(s)" in out
    cu = tmp_path / "k.cu"
    cu.write_text('__device__ unsigned short f(unsigned short a) {\n  unsigned short d;\n'
                  '  asm("fma.rn.bf16 %0, %1, %1, %1;"\n      : "=h"(d) : "h"(a));\n  return d;\n}\n')
    assert main(["check", str(cu), "--target", "sm_75"]) == 1
    assert f"{cu}:3:8: error[PX003] target-gate: fma.rn.bf16 requires sm_80" in capsys.readouterr().out
    assert main(["check", str(cu), "--target", "sm_90"]) == 0


FP8 = """.version {version}
.target {target}
.address_size 64
.visible .entry k()
{{
  .reg .b16 %h<2>;
  .reg .f32 %f<3>;
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f2, 0f3F800000;
  cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;
  ret;
}}
"""


@pytest.mark.parametrize("target,version,refused", [
    ("sm_89", "8.1", False), ("sm_89", "8.0", True),   # sm_89 needs PTX ISA 8.1
    ("sm_90", "7.8", False), ("sm_90", "7.7", True),   # from sm_90, 7.8 suffices (target.later)
    ("sm_86", "8.6", True),                            # below sm_89: no 8-bit floats
])
def test_the_8_bit_float_conversions_have_two_gates(target, version, refused):
    """ptxas 13.0 takes cvt to E4M3/E5M2 from sm_89 with .version 8.1, or from sm_90 with 7.8
    (tests/spec/test_ptxas_agreement.py checks the gates against ptxas itself)."""
    report = check_ptx_text(FP8.format(target=target, version=version), "k.ptx", DB)
    errors = [f for f in report.findings if f.severity == "error" and "e4m3x2" in f.spelling]
    assert bool(errors) is refused, [str(f) for f in report.findings]


@pytest.mark.parametrize("line,code", [
    # Triton 3.9's float8e4nv to bfloat16 on sm_100a: PTX ISA 9.2 ("Feature 'cvt.bf16x2.e4m3x2'
    # requires PTX ISA .version 9.2 or later", ptxas 13.4), past the spec's 9.0
    ("cvt.rn.bf16x2.e4m3x2 %r1, %h1;", "PX002"),
    ("div.rq.f32 %f2, %f1, %f1;", "PX001"),
])
def test_a_module_newer_than_the_spec_is_not_judged_where_the_spec_knows_no_form(tmp_path, capsys, line, code):
    newest = DB.newest_ptx
    assert newest == (9, 0)
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_100a", "9.0", line))
    assert main(["check", str(path)]) == 1
    assert f"error[{code}]" in capsys.readouterr().out
    path.write_text(_module("sm_100a", "9.4", line))
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    spelling = line.split()[0]
    assert f"k.ptx:15:5: note[PX105] newer-isa: {spelling}: no form of PTX ISA 9.0, the newest the spec records" in out
    assert "the module's .version 9.4 is newer and may define it: not judged" in out and "0 error(s)" in out


def test_verify_says_why_it_meets_a_form_of_a_newer_isa(tmp_path, capsys):
    # not refused as illegal: the note says what the spec does not know, the run stops where it
    # meets the instruction (the simulator has no semantics for it)
    path = tmp_path / "k.ptx"
    path.write_text(_module("sm_100a", "9.4", "cvt.rn.bf16x2.e4m3x2 %r1, %h1;"))
    assert main(["verify", str(path), "--entry", "k", "--against", "cvt.rn.f16x2.e4m3x2", "--cases", "8"]) == 2
    err = capsys.readouterr().err
    assert "note[PX105] newer-isa: cvt.rn.bf16x2.e4m3x2" in err and "ptxas would not assemble" not in err
    assert "k.ptx:15:5: error: unsupported instruction 'cvt.rn.bf16x2.e4m3x2'" in err
