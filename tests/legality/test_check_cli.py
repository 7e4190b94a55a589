"""``tilecheck check``: exit codes 0/1/2, compiler-style output, JSON, program-file errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilecheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "root_ratio.py"
ILLEGAL = ROOT / "tests" / "programs" / "illegal"


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(["check", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_seed_example_is_legal(ptx_env, capsys):
    code, out, err = run_cli(capsys, SEED)
    assert code == 0, out + err
    assert "root_ratio: legal (4 apply call(s), target sm_90)" in out


def test_illegal_program_prints_every_diagnostic_and_exits_1(ptx_env, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli(capsys, "tests/programs/illegal/mix_all_in_one_call.py")
    assert code == 1
    lines = [line for line in out.splitlines() if "illegal[" in line]
    assert [line.split("illegal[")[1][:5] for line in lines] == ["TC204", "TC401", "TC501"]
    assert lines[0] == ("tests/programs/illegal/mix_all_in_one_call.py:15: illegal[TC204]: operand 2 "
                        "('b', denominator) axis 0 (repeat): expected extent 4, found 3")
    assert "3 legality violation(s)" in out


def test_several_files_and_targets(ptx_env, capsys):
    legal = ROOT / "tests" / "programs" / "legal" / "f32x2_sm100.py"
    code, out, _ = run_cli(capsys, SEED, legal)
    assert code == 1 and "illegal[TC003]" in out
    code, out, _ = run_cli(capsys, SEED, legal, "--target", "sm_100")
    assert code == 0 and out.count(": legal (") == 2


def test_json_output(ptx_env, capsys):
    code, out, err = run_cli(capsys, ILLEGAL / "tc204_repeat_extent.py", "--json")
    assert code == 1
    data = json.loads(out)  # one document on stdout; the text report went to stderr
    assert data["legal"] is False and data["totals"] == {"programs": 1, "illegal": 1, "violations": 1}
    (record,) = data["programs"][0]["diagnostics"]
    assert record["code"] == "TC204" and record["line"] == 13 and record["operand"] == 2
    assert record["axis"] == 0 and record["program"] == "root_ratio"
    assert "illegal[TC204]" in err


def test_json_output_for_a_legal_program(ptx_env, capsys, tmp_path):
    path = tmp_path / "report.json"
    code, out, _ = run_cli(capsys, ROOT / "examples" / "root_ratio.py", "--json", str(path))
    assert code == 0 and ": legal (" in out
    data = json.loads(path.read_text())
    assert data["legal"] is True and data["programs"][0]["legal"] is True
    assert data["programs"][0]["apply_calls"] >= 1 and data["programs"][0]["diagnostics"] == []


@pytest.mark.parametrize("source, fragment, line", [
    ("from tilecheck.tile import T\nx = (\n", "syntax error", 2),
    ("from tilecheck.tile import T\nimport no_such_module_for_tilecheck\n", "ModuleNotFoundError", 2),
    ("from tilecheck.tile import T\n\n\n@T.function\ndef f(A: T.Tensor((4,), 'float32')):\n    missing()\n",
     "NameError", 6),
    ("x = 1\n", "no @T.function program", 0),
])
def test_program_files_that_do_not_load_exit_2(ptx_env, capsys, tmp_path, monkeypatch, source, fragment, line):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text(source)
    code, out, err = run_cli(capsys, "prog.py")
    assert code == 2 and out == ""
    assert fragment in err
    assert err.startswith(f"prog.py:{line}:" if line else "prog.py: error")


def test_usage_errors_exit_2(ptx_env, capsys):
    assert run_cli(capsys, "no/such/file.py")[0] == 2
    code, _, err = run_cli(capsys, SEED, "--target", "sm_999")
    assert code == 2 and "unknown target" in err
    assert main(["check"]) == 2


def test_python_dash_m_tilecheck_check(ptx_env):
    env = dict(os.environ, TILECHECK_SPEC_DIR=str(ptx_env), PYTHONPATH=str(ROOT))
    ok = subprocess.run([sys.executable, "-m", "tilecheck", "check", "examples/root_ratio.py"], cwd=ROOT, env=env,
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "tilecheck", "check", "tests/programs/illegal/tc701_strided_overlap.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "illegal[TC701]" in bad.stdout


def test_seed_checks_clean_with_the_shipped_database(capsys):
    """End to end with the default spec root (every family loaded), as a user runs it."""
    code, out, err = run_cli(capsys, SEED)
    assert code == 0, out + err
    from tilecheck.tile.loader import load_programs

    (program,) = load_programs(SEED)
    assert program.check() == []
