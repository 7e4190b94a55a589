"""CLI defects found by trying tilecheck as a new user (issue 10): each test names its class.

Every test asserts the exit code and the message, through ``tilecheck.cli.main`` (or a
subprocess where a signal or a fresh interpreter is needed).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tilecheck.cli import main

REPO = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in err
    return code, out, err


# ---- item 1: prove reads special spellings and overflowing literals as eval does -----------------

@pytest.mark.parametrize("query,code", [
    ("div.rn.f32(1.0, inf) == 0.0", 0),
    ("div.rn.f32(1.0, -inf) == -0.0", 0),
    ("is_nan(div.rn.f32(x, nan))", 0),
    ("is_inf(div.rn.f32(1.0, 0.0)) and div.rn.f32(1.0, 0.0) == Infinity", 0),
    ("div.rn.f32(x, NaN) == nan", 0),
])
def test_prove_special_names_are_values_not_variables(capsys, query, code):
    got, out, err = run(capsys, "prove", query, "--timeout", "30")
    assert got == code, out + err
    for name in ("inf =", "nan =", "NaN =", "Infinity ="):
        assert name not in out  # never a free variable in a counterexample


def test_prove_nan_means_the_default_nan_eval_gives(capsys):
    # eval reads nan as the format's default NaN (f32: 0x7fc00000); so must prove
    code, out, err = run(capsys, "eval", "div.rn.f32", "nan", "1")
    assert code == 0 and "a  = 0x7fc00000" in out
    assert run(capsys, "prove", "same(nan, from_bits(0x7fc00000, f32))", "--timeout", "30")[0] == 0
    assert run(capsys, "prove", "same(-nan, from_bits(0xffc00000, f32))", "--timeout", "30")[0] == 0


@pytest.mark.parametrize("literal,needle", [
    ("1e39", "overflows f32 (eval reads it as +inf)"),
    ("1e400", "overflows f32 (eval reads it as +inf)"),
    ("1e99999999999", "overflows f32"),
    ("1e-50", "underflows f32 (eval reads it as 0.0)"),
    ("0.1", "not exactly representable in f32 (eval rounds it to 0x3dcccccd"),
])
def test_prove_literals_outside_the_format_are_located_usage_errors(capsys, literal, needle):
    code, out, err = run(capsys, "prove", f"div.rn.f32(x, {literal}) == x")
    assert code == 2
    assert "column 15" in err and needle in err


def test_prove_sigint_exits_130(tmp_path):
    """Z3 catches SIGINT and answers 'unknown'; prove must still stop with 130, not report unknown."""
    proc = subprocess.Popen([sys.executable, "-m", "tilecheck", "prove", "amdgpu.fdiv64", "amdgpu.fdiv32",
                             "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO)
    first = proc.stdout.readline() + proc.stdout.readline()  # the name line and the query line: solving now
    assert "query:" in first
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "unknown" not in out and "interrupted" in err


# ---- item 5: decimal operands cost work bounded by the format's range ---------------------------

@pytest.mark.parametrize("text,bits,note", [
    ("1e99999999999", "0x7f800000", "overflows f32"),
    ("1e1000000", "0x7f800000", "overflows f32"),
    ("-1e1000000", "0xff800000", "overflows f32"),
    ("1e-99999999999", "0x00000000", "underflows f32"),
    ("-1e-1000000", "0x80000000", "underflows f32"),
    ("0.000" + "0" * 3000 + "1", "0x00000000", "underflows f32"),
])
def test_eval_huge_exponents_are_decided_from_the_exponent(capsys, text, bits, note):
    started = time.perf_counter()
    code, out, err = run(capsys, "eval", "mul.rn.f32", text, "1")
    assert time.perf_counter() - started < 2.0
    assert code == 0 and f"a  = {bits}" in out
    assert note in err and err.startswith("note: operand 1 (a)")


def test_operand_parser_bounds_every_format():
    from tilecheck.formats import all_formats

    for fmt in all_formats().values():
        started = time.perf_counter()
        notes: list = []
        big = fmt.parse_operand("9" * 50 + "e" + "9" * 15, "x", notes)
        tiny = fmt.parse_operand("1e-" + "9" * 15, "x", notes)
        assert time.perf_counter() - started < 0.5, fmt.name
        assert fmt.to_fraction(big) is None or big & fmt.magnitude_mask == fmt.max_finite  # inf or NaN (fn formats)
        assert tiny == 0 and len(notes) == 2


# ---- item 8: unknown tokens are unknown forms (2, nearest spellings); forbidden combinations illegal (1)

@pytest.mark.parametrize("argv,code,needle", [
    (["eval", "div.rq.f32", "1", "2"], 2, "no PTX form uses .rq; did you mean div.r"),
    (["eval", "div.rn.f33", "1", "2"], 2, "no PTX form uses .f33; did you mean div.rn.f32"),
    (["eval", "div.nr.f32", "1", "2"], 2, "did you mean div.rn.f32"),
    (["spec", "show", "div.rq.f32"], 2, "did you mean"),
    (["verify", "div.rn.f33"], 2, "did you mean div.rn.f32"),
    (["eval", "div.rn.f16", "1", "2"], 1, "no half-precision division"),
    (["eval", "div.sat.rn.f32", "1", "2"], 1, "div has no .sat"),
    (["spec", "show", "rcp.approx.f64"], 1, ".ftz"),
    (["verify", "dvi"], 2, "did you mean div?"),
    (["verify", "amdgpu.fdiv46"], 2, "did you mean amdgpu.fdiv64"),
    (["verify", "ptxx"], 2, "did you mean ptx?"),
    (["prove", "ptx.div-by-4.f23"], 2, "did you mean ptx.div-by-4.f32"),
    (["prove", "amdgpu.fdiv46"], 2, "did you mean amdgpu.fdiv64"),
])
def test_unknown_versus_illegal_and_nearest_names(capsys, argv, code, needle):
    got, out, err = run(capsys, *argv)
    assert got == code, out + err
    assert needle in out + err


def test_verify_and_check_agree_on_a_broken_program(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("from tilecheck.tile import T\n\n@T.function\ndef f(a:\n", encoding="utf-8")
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n", encoding="utf-8")
    for path in (broken, empty):
        codes = [run(capsys, cmd, str(path))[0] for cmd in ("check", "verify", "emit")]
        assert codes == [2, 2, 2], (path, codes)


def test_verify_an_empty_vectors_file_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "empty.vec"
    path.write_text("# nothing here\n", encoding="utf-8")
    code, out, err = run(capsys, "verify", "--vectors", str(path))
    assert code == 2 and "empty.vec" in err and "no case lines" in err and out == ""
    code, out, err = run(capsys, "verify", str(path))  # a vector file given as a target
    assert code == 2 and "--vectors" in err


# ---- item 9: packed lanes, negative literals without --, conversion notes ----------------------

@pytest.mark.parametrize("a,b,d", [
    ("0x3c00,0x3800", "2,0.25", "0x3a004200"),
    ("1,0x3800", "0x4000,0.25", "0x3a004200"),
    ("0x38003c00", "0x34004000", "0x3a004200"),
])
def test_eval_packed_lanes_are_hex_or_decimal_each(capsys, a, b, d):
    code, out, err = run(capsys, "eval", "add.rn.f16x2", a, b)
    assert code == 0, err
    assert f"d  = {d}" in out


@pytest.mark.parametrize("argv,needle", [
    (["eval", "div.rn.f32", "-inf", "-1e5"], "d  = 0x7f800000"),
    (["eval", "div.rn.f32", "-1e5", "-INF"], "d  = 0x00000000"),
    (["eval", "add.rn.f16x2", "-1,-0.5", "-2,-0.25"], "d  = 0xba00c200"),
    (["eval", "div.rn.f32", "-1/3", "1"], "a  = 0xbeaaaaab"),
    (["eval", "div.rn.f32", "-nan", "1"], "a  = 0xffc00000"),
])
def test_eval_negative_operands_need_no_double_dash(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert needle in out


@pytest.mark.parametrize("text,note", [
    ("1e39", "overflows f32: it becomes +inf"),
    ("1e-50", "underflows f32: it becomes 0.0"),
    ("0.1", "not exactly representable in f32: rounded to nearest"),
])
def test_eval_says_when_a_decimal_does_not_convert_exactly(capsys, text, note):
    code, out, err = run(capsys, "eval", "div.rn.f32", text, "1")
    assert code == 0 and note in err
    code, out, err = run(capsys, "eval", "div.rn.f32", "0.5", "1")
    assert code == 0 and err == ""


# ---- item 6: environment errors up front; item 11: nonsense options, long echoes, grammar --------

def test_verify_json_to_a_missing_folder_fails_before_the_run(tmp_path, capsys):
    code, out, err = run(capsys, "verify", "div.rn.f32", "--json", str(tmp_path / "no" / "such" / "r.json"))
    assert code == 2 and "does not exist" in err and out == ""
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, out, err = run(capsys, "verify", "div.rn.f32", "--json", str(blocker / "r.json"))
    assert code == 2 and out == ""
    code, out, err = run(capsys, "verify", "div.rn.f32", "--json", str(tmp_path))
    assert code == 2 and "folder" in err and out == ""


@pytest.mark.parametrize("argv,needle", [
    (["verify", "div.rn.f32", "--cases", "0"], "--cases: must be at least 1"),
    (["verify", "div.rn.f32", "--cases", "-5"], "--cases: must be at least 1"),
    (["verify", "div.rn.f32", "--seed", "-1"], "--seed: must be 0 or more"),
    (["verify", "amdgpu.fdiv64", "--sequence-cases", "0"], "--sequence-cases: must be at least 1"),
    (["prove", "ptx.div-by-4.f32", "--timeout", "0"], "--timeout: must be positive"),
    (["prove", "ptx.div-by-4.f32", "--timeout", "nan"], "--timeout: 'nan' is not a finite number"),
    (["prove", "ptx.div-by-4.f32", "--timeout", "-1"], "--timeout: must be positive"),
    (["prove", "x == x", "--var", "x=f32", "--var", "x=f16"], "--var gives x two formats"),
])
def test_numeric_options_reject_nonsense(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and needle in err and out == ""


def test_a_long_bad_operand_is_not_echoed_in_full(capsys):
    code, out, err = run(capsys, "eval", "div.rn.f32", "z" * 5000, "1")
    assert code == 2 and "(5,000 characters)" in err and len(err) < 400
    code, out, err = run(capsys, "eval", "div.rn.f32", "1" * 5000, "1")
    assert code == 2 and "more than 4000 digits" in err and len(err) < 400
    code, out, err = run(capsys, "eval", "div." + "x" * 5000 + ".f32", "1", "1")
    assert code == 2 and len(err) < 400


def test_verify_summary_grammar(capsys):
    code, out, err = run(capsys, "verify", "div.rn.f32", "--cases", "10")
    assert code == 0 and "\n1 item, 0 failed" in out and "1 items" not in out


def test_prove_list_cites_only_files_in_the_repository(capsys):
    code, out, _ = run(capsys, "prove", "--list")
    assert code == 0
    assert "DESIGN.md" not in out
    for cited in {w.strip("(),:;") for w in out.split() if w.endswith((".yaml", ".md", ".py"))}:
        assert (REPO / cited).is_file(), cited


# ---- item 15: --version, --json FILE|- with numbers as numbers --------------------------------

def test_version(capsys):
    from tilecheck import __version__

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"tilecheck {__version__}"


def test_eval_json_to_stdout_and_file(tmp_path, capsys):
    code, out, err = run(capsys, "eval", "add.rn.f16x2", "1,0.5", "2,0.25", "--json", "-")
    assert code == 0
    data = json.loads(out)  # stdout holds only the JSON document; the human text went to stderr
    assert data["result"]["bits"] == 0x3a004200 and data["result"]["lanes"][1]["value"] == "0.75"
    assert "add.rn.f16x2" in err
    path = tmp_path / "e.json"
    code, out, err = run(capsys, "eval", "div.rn.f32", "1", "3", "--json", str(path))
    assert code == 0 and "0x3eaaaaab" in out
    data = json.loads(path.read_text())
    assert data["result"]["hex"] == "0x3eaaaaab" and data["operands"][0]["class"] == "+normal"


def test_prove_json(capsys):
    code, out, _ = run(capsys, "prove", "ptx.div-by-4.f32", "div.rn.f32(1.0, inf) == 1.0", "--json", "-")
    assert code == 1
    data = json.loads(out)
    assert data["totals"] == {"proved": 1, "counterexample": 1, "unknown": 0}
    assert [q["status"] for q in data["queries"]] == ["proved", "counterexample"]


def test_verify_json_totals_are_numbers(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "verify", "div.rn.f32", "--cases", "10", "--json", "-")
    assert code == 0
    assert not list(tmp_path.iterdir()), "'--json -' means stdout: no file is written"
    data = json.loads(out)
    assert data["totals"]["items"] == 1 and isinstance(data["totals"]["cases"], int)
    assert "1 item, 0 failed" in err


@pytest.mark.parametrize("query,code,needle", [
    ("div.rn.f16(x, y) == x", 1, "no half-precision division"),
    ("div.rq.f32(x, y) == x", 2, "did you mean"),
    ("amdgpu.fdiv46(x, y) == x", 2, "did you mean amdgpu.fdiv64"),
])
def test_prove_forms_inside_queries_are_judged_like_eval(capsys, query, code, needle):
    got, out, err = run(capsys, "prove", query)
    assert got == code and needle in err and "column 1" in err


# ---- item 7: AMD instructions in spec list/show and in verify's counts ---------------------------

def test_spec_list_amdgpu_prints_instruction_forms(capsys):
    from tilecheck.spec.amdgpu import amdgpu_forms
    from tilecheck.spec.database import load_database

    names = list(amdgpu_forms(load_database()))
    code, out, _ = run(capsys, "spec", "list", "--isa", "amdgpu")
    assert code == 0 and out.split() == names and "v_div_scale_f64" in names
    code, out, _ = run(capsys, "spec", "list")
    lines = out.split()
    assert lines[-len(names):] == names and not {"families", "forms", "failed"} & set(lines)
    code, out, _ = run(capsys, "spec", "list", "--family", "v_rcp")
    assert code == 0 and out.split() == ["v_rcp_f64", "v_rcp_f32", "v_rcp_f16"]
    code, out, _ = run(capsys, "spec", "list", "--isa", "ptx")
    assert code == 0 and "v_rcp_f64" not in out.split()


def test_spec_show_an_amd_instruction(capsys):
    code, out, _ = run(capsys, "spec", "show", "v_div_scale_f64")
    assert code == 0 and "AMD GPU instruction" in out and "variant observed" in out and "rdna3 765" in out
    code, out, _ = run(capsys, "spec", "show", "v_div_scale_f64", "--json", "-")
    assert code == 0 and json.loads(out)["opcodes"]["rdna3"] == 765
    code, out, err = run(capsys, "spec", "show", "v_div_scale_f46")
    assert code == 2 and "did you mean v_div_scale_f64" in err


def test_amd_instruction_counts_are_instructions_not_keys(capsys):
    from tilecheck.spec.amdgpu import amdgpu_forms
    from tilecheck.spec.database import load_database

    n = len(amdgpu_forms(load_database()))
    assert n > 3
    code, out, _ = run(capsys, "spec", "check")
    assert code == 0 and f"{n} AMD instructions" in out
    code, out, _ = run(capsys, "verify", "div.rn.f32", "--cases", "10")
    assert code == 0 and f"{n} AMD instructions" in out


# ---- item 10: custom spec folders are named by their real path; unknown fields at their line -----

@pytest.fixture
def spec_copy(tmp_path, monkeypatch):
    """A custom spec folder outside the repository: the small fixture trees of the spec and AMD
    tests with the real schemas (the real instruction files are never edited)."""
    import shutil

    from tilecheck.spec.database import clear_cache
    from tilecheck.specio.files import builtin_spec_root

    root = tmp_path / "myspec"
    shutil.copytree(REPO / "tests" / "spec" / "fixtures" / "mini", root)
    shutil.copytree(REPO / "tests" / "amdgpu" / "fixtures" / "mini", root, dirs_exist_ok=True)
    shutil.copytree(builtin_spec_root() / "schema", root / "schema")
    monkeypatch.setenv("TILECHECK_SPEC_DIR", str(root))
    clear_cache()
    yield root
    clear_cache()


def _insert_after(path: Path, anchor: str, line: str) -> tuple[int, int]:
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1
    text = text.replace(anchor, anchor + line)
    path.write_text(text, encoding="utf-8")
    offset = text.index(line) + len(line) - len(line.lstrip())
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_custom_spec_errors_name_the_real_file_and_the_field(spec_copy, capsys):
    from tilecheck.spec.database import clear_cache

    assert run(capsys, "spec", "check")[0] == 0  # the pristine copy is a valid spec
    clear_cache()
    path = spec_copy / "ptx" / "div.yaml"
    line, col = _insert_after(path, '    spelling: "div.full.{ftz}.f32"\n', "    bogus_field: 1\n")
    for argv in (["eval", "div.rn.f32", "1", "2"], ["spec", "check"], ["spec", "check", str(spec_copy)]):
        code, out, err = run(capsys, *argv)
        assert code == 2
        assert err.startswith(f"{path}:{line}:{col}: error: forms/0/bogus_field: unknown field"), err
        assert not err.startswith("spec/")


def test_custom_spec_unknown_fields_at_top_level_and_in_amd_files(spec_copy, capsys):
    path = spec_copy / "amdgpu" / "v_rcp.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "colour: red\n", encoding="utf-8")
    line = text.count("\n") + 1
    code, out, err = run(capsys, "spec", "check")
    assert code == 2 and f"{path}:{line}:1: error: colour: unknown field" in err


def test_builtin_spec_errors_keep_the_spec_prefix():
    from tilecheck.specio.files import builtin_spec_root, display_path

    root = builtin_spec_root()
    assert display_path(root / "ptx" / "div.yaml", root) == "spec/ptx/div.yaml"


# ---- item 11: nonsense accepted silently ---------------------------------------------------------

@pytest.mark.parametrize("argv,needle", [
    (["spec", "list", "--family", "dvi"], "unknown family 'dvi'; did you mean div?"),
    (["spec", "list", "--isa", "amd"], "invalid choice"),
    (["emit", "examples/root_ratio.py", "--output", "/nonexistent-folder/x.ptx"], "does not exist"),
    (["check", "--json", "examples/root_ratio.py", "examples/root_ratio.py"], "names a program file"),
    (["verify", "examples"], "'examples' is a directory; a target is a form"),
])
def test_nonsense_options_are_usage_errors(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and needle in err and out == ""


# ---- item 12: the Python API raises tilecheck errors that say what is wrong ----------------------

def test_api_shape_mismatch_names_operands_and_shapes():
    import numpy as np

    import tilecheck
    from tilecheck.errors import ShapeMismatchError, UsageError

    a, b = np.zeros(3, np.uint32), np.zeros(4, np.uint32)
    for call in (lambda: tilecheck.ieee_op("add", "f32", "rn", a, b),
                 lambda: tilecheck.evaluate("add.rn.f32", a, b),
                 lambda: tilecheck.allowed("add.rn.f32", np.zeros(5, np.uint32), a, a)):
        with pytest.raises(ShapeMismatchError) as info:
            call()
        assert isinstance(info.value, UsageError) and isinstance(info.value, ValueError)
        assert "(3,)" in str(info.value) and ("(4,)" in str(info.value) or "(5,)" in str(info.value))
        assert "operand" in str(info.value)


@pytest.mark.parametrize("call", [
    lambda t: __import__("tilecheck").ieee_op("add", "f32", "rn", 1, 2, tininess=t),
    lambda t: __import__("tilecheck").evaluate("add.rn.ftz.f32", 1, 2, tininess=t),
    lambda t: __import__("tilecheck").allowed("rcp.approx.f32", 1, 2, tininess=t),
    lambda t: __import__("tilecheck.model.api", fromlist=["reference"]).reference("rcp.approx.f32", 1, tininess=t),
])
def test_api_invalid_tininess_lists_the_valid_values(call):
    from tilecheck.errors import UsageError

    with pytest.raises(UsageError, match="'after', 'before'"):
        call("sometimes")


def test_program_run_errors_are_about_the_program():
    import numpy as np

    from tilecheck.errors import UsageError
    from tilecheck.tile.loader import load_programs

    (program,) = load_programs(REPO / "examples" / "root_ratio.py")
    with pytest.raises(UsageError, match=r"unknown keyword argument\(s\) A; pass the arrays positionally") as info:
        program.run(A=np.zeros((4, 1), np.float32))
    assert "run_program" not in str(info.value)
    with pytest.raises(UsageError, match="int32 array is neither its values nor its bits"):
        program.run(np.ones((4, 1), np.int32), np.zeros((4, 1), np.float32))
    with pytest.raises(UsageError, match="got float64 values"):
        program.run(np.ones((4, 1), np.float64), np.zeros((4, 1), np.float32))
    with pytest.raises(UsageError, match="'after', 'before'"):
        program.run(np.ones((4, 1), np.float32), np.zeros((4, 1), np.float32), tininess="x")


# ---- item 15: JSON from check and spec show --------------------------------------------------------

def test_spec_show_json_for_legal_and_illegal_forms(capsys):
    code, out, err = run(capsys, "spec", "show", "div.rn.f32", "--json", "-")
    data = json.loads(out)
    assert code == 0 and data["legal"] is True and isinstance(data["gate"]["sm"], int)
    assert "div.rn.f32" in err
    code, out, err = run(capsys, "spec", "show", "rcp.approx.f64", "--json", "-")
    data = json.loads(out)
    assert code == 1 and data["legal"] is False and ".ftz" in data["reason"]


# ---- siblings: numbers beyond binary64 in tile constants; nonsense in numeric environment variables

def test_tile_constants_beyond_binary64_round_like_eval():
    from tilecheck.tile import T

    assert T.float32(10 ** 400).bits() == 0x7f800000  # float(10**400) would raise OverflowError
    assert T.float32(-(10 ** 400)).bits() == 0xff800000
    assert T.float16(3).bits() == 0x4200 and T.float32(0).bits() == 0


@pytest.mark.parametrize("value", ["abc", "0", "-2"])
def test_threads_variable_rejects_nonsense(monkeypatch, value):
    from tilecheck import cpus
    from tilecheck.errors import UsageError

    monkeypatch.setenv("TILECHECK_THREADS", value)
    with pytest.raises(UsageError, match="TILECHECK_THREADS must be a positive integer"):
        cpus.threads()


# ---- a file that is not text: located at its first byte that is not UTF-8, exit 2 -------------------

@pytest.mark.parametrize("suffix,argv", [
    (".ptx", ["verify", "{f}", "--entry", "k", "--against", "div.rn.f32"]),
    (".ptx", ["verify", "{f}", "--entry", "k", "--against", "div.rn.f32", "--exhaustive", "--out", "{d}"]),
    (".ptx", ["check", "{f}"]),
    (".s", ["verify", "{f}", "--entry", "k", "--against", "div.rn.f32"]),
])
def test_a_binary_or_latin_1_file_is_a_located_usage_error(tmp_path, capsys, suffix, argv):
    path = tmp_path / f"k{suffix}"
    path.write_bytes(b".version 8.0\n.target sm_90\n// caf\xe9\n")
    code, out, err = run(capsys, *[a.format(f=path, d=tmp_path / "runs") for a in argv])
    assert code == 2, out + err
    assert f"{path}:3:7: error: {path} is not UTF-8 text (byte 0xe9 at offset 33)" in err
