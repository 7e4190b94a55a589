"""Source lines in reports: each instruction keeps the last ``.loc FILE LINE COL`` before it, spelled
with the module's ``.file`` names (Triton writes them after the functions), and a counterexample
or an unknown input names the ``.py``/``.cu`` line of each approximate instruction beside its PTX
line, in the text report and the JSON (``source``; ``inlined_from`` for nvcc's inlined headers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.sim.frontend import Instr, parse_module

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton" / "div_f16.ptx"
CUDA = ROOT / "examples" / "cuda" / "half_variants.ptx"


def _instr(fn, opcode: str) -> Instr:
    return next(i for i in fn.body if isinstance(i, Instr) and i.opcode == opcode)


def test_triton_instructions_keep_their_python_lines():
    fn = parse_module(TRITON.read_text(), str(TRITON)).function("div_kernel")
    # the PTX's own comments say where each .loc points: `.loc 1 27 30 // kernels.py:27:30`
    div = _instr(fn, "div.full.f32")
    assert (div.source, div.inlined_at, div.loc) == ("examples/triton/kernels.py:27:30", None, ((1, 27, 30), None))
    # and that line of the kernel source is the division
    assert "a / b" in (ROOT / "examples" / "triton" / "kernels.py").read_text().splitlines()[26]
    line = TRITON.read_text().splitlines()[div.line - 1]
    assert "div.full.f32" in line
    assert _instr(fn, "cvt.rn.f16.f32").source == "examples/triton/kernels.py:27:5"
    # every instruction after the first .loc has one
    assert all(i.source for i in fn.body if isinstance(i, Instr))


def test_nvcc_inlined_header_lines_name_the_user_line():
    fn = parse_module(CUDA.read_text(), str(CUDA)).function("k_div_operator_f16")
    rcp = _instr(fn, "rcp.approx.ftz.f32")
    assert rcp.source.endswith("cuda_fp16.hpp:2725:1") and rcp.inlined_at == "half_variants.cu:22:3"
    # half_variants.cu line 22 is the division (line 21 computes the index)
    assert "/" in (ROOT / "examples" / "cuda" / "half_variants.cu").read_text().splitlines()[21]


def test_inlined_callees_keep_their_lines():
    text = """.version 9.0
.target sm_90
.address_size 64
.func (.param .b32 r) g(.param .b32 a)
{
 .reg .b32 %r<3>;
 .loc 1 5 7
 ld.param.b32 %r1, [a];
 .loc 1 6 3
 sqrt.approx.f32 %r2, %r1;
 st.param.b32 [r], %r2;
 ret;
}
.visible .func (.param .b32 r) f(.param .b32 a)
{
 .reg .b32 %r<3>;
 .loc 1 10 1
 ld.param.b32 %r1, [a];
 { .param .b32 p; .param .b32 q; st.param.b32 [p], %r1; call.uni (q), g, (p); ld.param.b32 %r2, [q]; }
 st.param.b32 [r], %r2;
 ret;
}
.file 1 "k.cu"
"""
    fn = parse_module(text, "k.ptx").function("f")
    assert _instr(fn, "sqrt.approx.f32").source == "k.cu:6:3"


def test_without_line_info_there_is_no_source():
    fn = parse_module((ROOT / "examples" / "cuda" / "float.ptx").read_text(), "float.ptx").function("k_fdividef")
    assert all(i.source is None for i in fn.body if isinstance(i, Instr))


@pytest.mark.parametrize("bad", [".loc 1 x 3", ".loc one"])
def test_a_malformed_loc_is_located(bad):
    text = (".version 9.0\n.target sm_90\n.address_size 64\n.visible .func (.param .b32 r) f(.param .b32 a)\n{\n"
            f" .reg .b32 %r1;\n {bad}\n ld.param.b32 %r1, [a];\n st.param.b32 [r], %r1;\n ret;\n}}\n")
    with pytest.raises(UnsupportedPtxError, match="malformed directive") as err:
        parse_module(text, "k.ptx")
    assert "k.ptx:7:2" in str(err.value) and err.value.exit_code == 2


def test_a_triton_counterexample_names_the_python_line(capsys):
    args = ["verify", str(TRITON), "--entry", "div_kernel", "--against", "div.rn.f16", "--cases", "2000"]
    assert main(args + ["--json", "-"]) == 1
    cex = json.loads(capsys.readouterr().out)["counterexamples"][0]
    choice, = cex["approximate_choices"]
    assert choice["source"] == "examples/triton/kernels.py:27:30" and "inlined_from" not in choice
    assert any("[examples/triton/kernels.py:27:30]" in w for r in cex["register_path"] for w in r["written"])
    assert main(args) == 1
    text = capsys.readouterr().out
    assert f"line {choice['line']} (examples/triton/kernels.py:27:30): div.full.f32" in text


def test_a_cuda_counterexample_names_the_cu_line(capsys):
    args = ["verify", str(CUDA), "--entry", "k_div_operator_f16", "--against", "div.rz.f16", "--cases", "300"]
    assert main(args + ["--json", "-"]) == 1
    choice = json.loads(capsys.readouterr().out)["counterexamples"][0]["approximate_choices"][0]
    assert choice["source"] == "half_variants.cu:22:3" and choice["inlined_from"].endswith("cuda_fp16.hpp:2725:1")
    assert main(args) == 1
    assert "(half_variants.cu:22:3, inlined from cuda_fp16.hpp:2725:1): rcp.approx.ftz.f32" in capsys.readouterr().out


def test_reports_without_line_info_say_nothing_more(capsys):
    path = ROOT / "examples" / "cuda" / "float.ptx"
    assert main(["verify", str(path), "--entry", "k_fdividef", "--against", "div.rn.f32", "--cases", "300",
                 "--json", "-"]) == 1
    choice = json.loads(capsys.readouterr().out)["counterexamples"][0]["approximate_choices"][0]
    assert choice["source"] is None


def test_a_malformed_file_directive_is_located():
    text = (".version 9.0\n.target sm_90\n.address_size 64\n.file one \"k.cu\"\n"
            ".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %r1;\n ld.param.b32 %r1, [a];\n"
            " st.param.b32 [r], %r1;\n ret;\n}\n")
    with pytest.raises(UnsupportedPtxError, match="malformed directive") as err:
        parse_module(text, "k.ptx")
    assert "k.ptx:4:1" in str(err.value) and err.value.exit_code == 2


def test_a_file_with_a_directory_reads_as_a_path():
    text = (".version 9.0\n.target sm_90\n.address_size 64\n"
            ".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %r1;\n .loc 3 4 5\n ld.param.b32 %r1, [a];\n"
            " st.param.b32 [r], %r1;\n ret;\n}\n.file 3 \"/src\" \"k.py\"\n")
    assert _instr(parse_module(text, "k.ptx").function("f"), "ld.param.b32").source == "/src/k.py:4:5"
