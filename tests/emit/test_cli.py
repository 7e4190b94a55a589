"""``tilecheck emit``: formats, output file, --function, exit codes 0/1/2."""

from __future__ import annotations

from emit_helpers import ROOT
from tilecheck.cli import main

EXAMPLE = str(ROOT / "examples" / "root_ratio.py")


def test_emit_ptx_to_stdout(capsys):
    assert main(["emit", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("//") and "\n.target sm_90\n" in out and out.count("div.rn.f32 %") == 4


def test_emit_cuda_for_a_target(capsys):
    assert main(["emit", EXAMPLE, "--target", "sm_100", "--format", "cuda"]) == 0
    out = capsys.readouterr().out
    assert "CUDA C++ for sm_100" in out and "__global__" in out


def test_emit_to_a_file(tmp_path, capsys):
    target = tmp_path / "root_ratio.ptx"
    assert main(["emit", EXAMPLE, "--output", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert ".entry root_ratio(" in target.read_text()


def test_function_selects_one_program(capsys):
    path = str(ROOT / "tests" / "programs" / "legal" / "two_programs.py")
    assert main(["emit", path]) == 0
    both = capsys.readouterr().out
    assert ".entry first(" in both and ".entry second(" in both
    assert main(["emit", path, "--function", "second"]) == 0
    only = capsys.readouterr().out
    assert ".entry first(" not in only and ".entry second(" in only
    assert main(["emit", path, "--function", "third"]) == 2
    assert "no program named 'third'" in capsys.readouterr().err


def test_illegal_program_exits_1_with_diagnostics(capsys):
    path = str(ROOT / "tests" / "programs" / "illegal" / "tc204_repeat_extent.py")
    assert main(["emit", path]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "illegal[TC204]" in captured.err and "nothing emitted" in captured.err


def test_gated_form_on_an_old_target_exits_1(capsys):
    assert main(["emit", str(ROOT / "tests" / "programs" / "legal" / "f32x2_sm100.py"), "--target", "sm_90"]) == 1
    assert "TC003" in capsys.readouterr().err


def test_bad_file_and_target_exit_2(tmp_path, capsys):
    assert main(["emit", str(tmp_path / "missing.py")]) == 2
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    assert main(["emit", str(broken)]) == 2
    assert main(["emit", EXAMPLE, "--target", "sm_1"]) == 2
    assert main(["emit", EXAMPLE, "--format", "sass"]) == 2
    err = capsys.readouterr().err
    assert "no such program file" in err and "syntax error" in err and "unknown target" in err
