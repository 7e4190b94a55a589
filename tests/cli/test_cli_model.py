"""CLI: eval, spec and verify on good and bad input -- exit codes and located messages."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.spec.database import clear_cache

REPO = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_eval_prints_bits_value_and_class(capsys):
    code, out, err = run(capsys, "eval", "div.rn.f32", "1", "3")
    assert code == 0, err
    assert "0x3eaaaaab" in out and "+normal" in out


def test_eval_packed_operands_take_lane_lists(capsys):
    code, out, _ = run(capsys, "eval", "add.rn.f16x2", "1,0.5", "2,0.25")
    assert code == 0
    assert "0x3a004200" in out


def test_eval_approximate_form_says_it_is_a_reference(capsys):
    code, out, _ = run(capsys, "eval", "rcp.approx.f32", "3")
    assert code == 0
    assert "representative" in out and "1 ulp" in out


@pytest.mark.parametrize("argv,code,needle", [
    (["eval", "div.rn.f32", "0x3g", "1"], 2, "not a hex bit pattern"),
    (["eval", "div.rn.f32", "0x1ffffffff", "1"], 2, "does not fit"),
    (["eval", "div.rn.f32", "1"], 2, "takes 2 operand"),
    (["eval", "dvi.rn.f32", "1", "2"], 2, "did you mean div.rn.f32"),
    (["eval", "div.rn.ftz.f64", "1", "2"], 1, ".ftz"),
    (["spec", "show", "rcp.approx.f64"], 1, "'.ftz' modifier required"),
    (["spec", "show", "add.rn.f32x2", "--target", "sm_90"], 1, "sm_100"),
    (["spec", "show", "frobnicate.f32"], 2, "unknown instruction"),
    # a modifier the ISA defines that the spec's forms do not model: unknown, as `check` says, not illegal
    (["spec", "show", "fma.rn.relu.f16"], 4, "do not model .relu"),
    (["spec", "show", "fma.rz.f16"], 1, "half-precision fma takes only .rn"),
    (["spec", "show", "div.rn.f32", "--target", "sm_99"], 2, "unknown target"),
    (["verify", "nosuchform.f32"], 2, "unknown instruction"),
    (["nosuchcommand"], 2, "invalid choice"),
])
def test_bad_input_exit_codes(capsys, argv, code, needle):
    got, out, err = run(capsys, *argv)
    assert got == code
    assert needle in out + err
    assert "Traceback" not in out + err


def test_spec_show_legal_form(capsys):
    code, out, _ = run(capsys, "spec", "show", "div.ftz.rn.f32", "--target", "sm_90")
    assert code == 0
    assert "div.rn.ftz.f32" in out and ".version:  7.8" in out


def test_spec_list_one_form_per_line(capsys):
    code, out, _ = run(capsys, "spec", "list", "--family", "div")
    assert code == 0
    assert out.split() == [line for line in out.split("\n") if line]
    assert "div.rn.ftz.f32" in out.split()


def test_verify_family_passes_and_prints_summary(capsys):
    code, out, _ = run(capsys, "verify", "div", "--cases", "200")
    assert code == 0, out
    last = out.strip().splitlines()[-1]
    assert last.endswith("0 mismatches, 0 failures")


def test_malformed_spec_is_located_exit_2(tmp_path, monkeypatch, capsys):
    root = tmp_path / "spec"  # the small fixture tree of tests/spec, with the real schemas
    shutil.copytree(REPO / "tests" / "spec" / "fixtures" / "mini", root)
    shutil.copytree(REPO / "spec" / "schema", root / "schema")
    text = (root / "ptx" / "div.yaml").read_text().replace("rnd: [rn, rz], ftz", "rnd: [rn, rz, ftz")
    (root / "ptx" / "div.yaml").write_text(text)
    monkeypatch.setenv("TILECHECK_SPEC_DIR", str(root))
    clear_cache()
    try:
        code, out, err = run(capsys, "verify")
    finally:
        clear_cache()
    assert code == 2
    assert "spec/ptx/div.yaml:" in err and "YAML" in err
    assert "Traceback" not in err


def test_module_entry_point_has_no_traceback_on_bad_input():
    proc = subprocess.run([sys.executable, "-m", "tilecheck", "eval", "div.rn.f32", "zz", "1"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "error:" in proc.stderr
