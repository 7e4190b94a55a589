"""``tilecheck verify``: the main job over the whole database, vector files, programs, sequences."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.errors import ToolNotFoundError
from tilecheck.spec.database import KERNEL_KINDS, load_database

ROOT = Path(__file__).resolve().parents[2]


def _verify(*args):
    return subprocess.run([sys.executable, "-m", "tilecheck", "verify", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("verify") / "report.json"
    proc = _verify("--json", str(path))
    return proc, json.loads(path.read_text()) if path.exists() else None


def test_verify_everything_passes_and_covers_every_form(full_run):
    proc, report = full_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1].endswith(" mismatches, 0 failures") and " 0 mismatches" in lines[-1]
    db = load_database()
    names = [f.name for f in db.ptx_forms()]
    assert len(names) == len(db.forms)  # guard the guard: every form of the database is a PTX form
    items = {i["name"]: i for i in report["items"]}
    assert set(names) <= set(items)
    assert report["totals"]["kinds"]["form"] == len(names)
    assert f"{len(names)} PTX forms" in lines[-2]
    for name in names:
        assert items[name]["ok"] and items[name]["kind"] == "form"
        assert any(c["name"].startswith("differential") for c in items[name]["checks"])
        assert any(line.startswith(name + " ") for line in lines), name  # a table row per form
    programs = [i for i in report["items"] if i["kind"] == "program"]
    sequences = [i for i in report["items"] if i["kind"] == "sequence"]
    assert len(programs) == len(list((ROOT / "examples").glob("*.py"))) and len(sequences) == 3
    assert all(i["cases"] > 0 for i in programs + sequences)
    assert report["summary"] == lines[-1]
    # the ptxas every ptxas check used is named: version, path, where it came from
    from tilecheck import ptxas

    try:
        info = ptxas.ptxas_info()
    except ToolNotFoundError:
        assert report["meta"]["ptxas"] is None
    else:
        assert report["meta"]["ptxas"] == info
        assert f"assembler: ptxas {info['version']} ({info['path']}, from {info['source']})" in proc.stdout


def test_every_form_ran_its_differential_cases(full_run):
    from tilecheck.diff.backends import simulator_refusal
    from tilecheck.emit.kernel import no_kernel_reason
    from tilecheck.verify.function_checks import FUNCTION_CASES

    _, report = full_run
    db = load_database()
    skipped = []
    for item in report["items"]:
        if item["kind"] != "form":
            continue
        form = db.forms[item["name"]]
        diff = next(c for c in item["checks"] if c["name"].startswith("differential"))
        reason = no_kernel_reason(form) or simulator_refusal(form)
        if reason is not None:  # the 32-bit cvta forms; cvta.const/.param on the simulator
            assert diff["skipped"] is not None and reason in diff["skipped"], item["name"]
            skipped.append(item["name"])
            continue
        assert diff["skipped"] is None, (item["name"], diff["skipped"])
        assert diff["cases"] >= (2000 if db.in_kernel_pipeline(form) else FUNCTION_CASES), item["name"]
        if form.kind == "function":
            oracle = next(c for c in item["checks"] if c["name"] == "oracle")
            assert oracle["skipped"] is not None or oracle["cases"] >= FUNCTION_CASES, item["name"]
    assert sorted(skipped) == sorted(f.name for f in db.families["cvta"].forms
                                     if f.type == "u32" or f.semantics.get("space") in ("const", "param"))


def test_verify_family_and_table(capsys):
    code = main(["verify", "rcp", "--cases", "300"])
    out = capsys.readouterr().out
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("rcp.")]
    expected = [f.name for f in load_database().families["rcp"].forms if f.kind in KERNEL_KINDS]
    assert sorted(r.split()[0] for r in rows) == sorted(expected) and all("SLE" in r for r in rows)
    assert out.strip().splitlines()[-1].endswith("0 mismatches, 0 failures")


def test_a_check_that_ran_has_no_skip_reason_and_a_skipped_one_says_why(db):
    from tilecheck.diff.support import Support
    from tilecheck.verify.checks import Context, check_contract_reference
    from tilecheck.verify.report import Row, _checks_text

    ctx = Context(db=db, cases=50)
    ran = check_contract_reference(db.form("rcp.approx.f32"), ctx)
    skipped = check_contract_reference(db.form("rcp.rn.f32"), ctx)
    assert ran.skipped is None and ran.cases > 0
    assert skipped.skipped == "exact form" and skipped.cases == 0
    assert _checks_text(Row("x", "form", [ran, skipped])) == "Cc"
    assert Row("x", "form", [ran]).to_json()["checks"][0]["skipped"] is None
    assert Support().ok and not Support("no ptxas").ok
    with pytest.raises(ValueError):
        Support("")  # a no without its reason


def test_verify_gpu_without_a_gpu_is_exit_2(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    code = main(["verify", "--backend", "gpu", "div.rn.f32"])
    err = capsys.readouterr().err
    assert code == 2 and "CuPy" in err and "Traceback" not in err


def test_verify_unknown_target_is_exit_2(capsys):
    assert main(["verify", "div.rn.f99x"]) in (1, 2)
    assert main(["verify", "nosuchthing.f32"]) == 2
    assert "unknown instruction" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# vector files


def _vector_lines(n: int = 400) -> list[str]:
    """Correct recorded results of several forms (computed by the model)."""
    from tilecheck.diff import cases
    from tilecheck.model import api

    db = load_database()
    lines = ["# tilecheck vectors 1", "# gpu: NVIDIA H200 (example)", "# compute_capability: 90",
             "# driver: 13000", "# date: 2025-11-29T10:00:00Z", "# a comment", ""]
    for name in ("div.rn.f32", "sqrt.rz.ftz.f32", "rcp.approx.f32", "add.rn.f16x2", "div.rm.f64",
                 "rsqrt.approx.ftz.f64", "fma.rn.bf16"):
        form = db.form(name)
        ops = cases.batch(form, 5, 0, n // 7)
        res = api.reference(form, *ops)
        digits = form.operands[0].container_bits // 4
        for i in range(res.size):
            fields = " ".join(f"0x{int(v):0{digits}x}" for v in [o[i] for o in ops] + [res[i]])
            lines.append(f"{name} {fields}")
    return lines


def test_one_wrong_vector_among_many_is_the_one_mismatch(tmp_path, capsys):
    lines = _vector_lines()
    good = tmp_path / "good.vec"
    good.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["verify", "--vectors", str(good)]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == f"{len(lines) - 7} cases, 0 mismatches, 0 failures"
    assert "NVIDIA H200 (example)" in out  # where the results came from

    wrong = list(lines)
    target = next(i for i, line in enumerate(wrong) if line.startswith("div.rn.f32 0x3f") or
                  (line.startswith("div.rn.f32") and not line.endswith("7fffffff")))
    name, a, b, r = wrong[target].split()
    wrong[target] = f"{name} {a} {b} 0x{int(r, 16) ^ 0x10:08x}"
    bad = tmp_path / "bad.vec"
    bad.write_text("\n".join(wrong) + "\n", encoding="utf-8")
    assert main(["verify", "--vectors", str(bad)]) == 1
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == f"{len(lines) - 7} cases, 1 mismatches, 0 failures"
    located = [line for line in out.splitlines() if f"{bad}:{target + 1}:" in line]
    assert len(located) == 1 and "recorded" in located[0] and "model" in located[0]


def test_malformed_vector_files_are_located_errors(tmp_path, capsys):
    path = tmp_path / "broken.vec"
    path.write_text("# gpu: x\ndiv.rn.f32 0x1 0x2 0x3\ndiv.rn.f32 0x1 0xzz 0x3\nfoo.bar 1 2\n"
                    "sqrt.rn.f32 0x1 0x2 0x3\nsqrt.rn.f32 0x100000000 0x1\nst.global.f32 0x1 0x2\n", encoding="utf-8")
    assert main(["verify", "--vectors", str(path)]) == 2
    err = capsys.readouterr().err
    for line in (3, 4, 5, 6, 7):
        assert f"{path}:{line}: error:" in err, err
    assert f"{path}:2:" not in err and "Traceback" not in err
    assert main(["verify", "--vectors", str(tmp_path / "missing.vec")]) == 2


def test_vector_writer_round_trip(tmp_path, db):
    from tilecheck.diff.vectors import VectorWriter, read_vectors

    path = tmp_path / "w.vec.gz"
    with VectorWriter(str(path), {"gpu": "G", "compute_capability": "90", "driver": "1"}) as w:
        w.cases(db.form("div.rn.f32"), [np.array([0x3F800000], np.uint32), np.array([0x40400000], np.uint32)],
                np.array([0x3EAAAAAB], np.uint32))
        w.case(db.form("add.rn.f16x2"), [0x3C003C00, 0x40000000], 0x42003C00, comment="lanes")
    vf = read_vectors(str(path), db=db)
    assert vf.header["gpu"] == "G" and "date" in vf.header
    assert [(c.form, c.operands, c.result) for c in vf.cases] == [
        ("div.rn.f32", (0x3F800000, 0x40400000), 0x3EAAAAAB), ("add.rn.f16x2", (0x3C003C00, 0x40000000), 0x42003C00)]


# ---------------------------------------------------------------------------------------------
# programs and sequences


def test_an_illegal_program_fails_with_its_diagnostics(tmp_path, capsys):
    code = main(["verify", "tests/programs/illegal/tc002_ftz_f64.py"])
    out = capsys.readouterr().out
    assert code == 1 and "TC002" in out


def test_a_broken_program_file_is_a_located_usage_error_as_in_check(tmp_path, capsys):
    """verify and check agree: a program file that does not load is exit 2, located, before any table."""
    path = tmp_path / "broken.py"
    path.write_text("from tilecheck.tile import T\n\ndef f(:\n", encoding="utf-8")
    code = main(["verify", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and "broken.py:3" in err and out == ""
    assert main(["check", str(path)]) == 2


def test_program_runs_compare_emitted_and_interpreted(monkeypatch, db):
    """Break the simulator's PTX path: the run check sees the difference from the IR interpreter."""
    from tilecheck import sim
    from tilecheck.verify import programs
    from tilecheck.verify.checks import Context
    from tilecheck.verify.targets import Item

    real = sim.run_program

    def off_by_one(program, *arrays, **kw):
        out = real(program, *arrays, **kw)
        arrays[-1].reshape(-1)[0] ^= arrays[-1].dtype.type(1)
        return out

    ctx = Context(db=db, backend="cpu")
    ok = programs.verify_program(Item("program", "examples/root_ratio.py", "examples/root_ratio.py"), ctx)
    assert [c.name for c in ok][:4] == ["legality", "emission", "ptxas", "run(cpu)"]
    assert sum(c.mismatches + c.failures for c in ok) == 0
    monkeypatch.setattr(programs, "run_program", off_by_one)
    bad = programs.verify_program(Item("program", "examples/root_ratio.py", "examples/root_ratio.py"), ctx)
    run = next(c for c in bad if c.name == "run(cpu)")
    assert run.mismatches == programs.TRIALS and "Out[0]" in run.details[0]


def test_sequences_run_their_campaign(capsys):
    code = main(["verify", "amdgpu.fdiv64", "--sequence-cases", "3000"])
    out = capsys.readouterr().out
    assert code == 0 and "amdgpu.fdiv64" in out
    assert out.strip().splitlines()[-1] == "3000 cases, 0 mismatches, 0 failures"
    code = main(["verify", "amdgpu.fdiv64", "--sequence-cases", "20000", "--rcp", "contract"])
    assert code == 1  # the Markstein exception: the contract alone does not make the sequence exact


def test_the_main_job_names_every_form_spec_list_prints(full_run, capsys):
    _, report = full_run
    assert main(["spec", "list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(listed) == len(load_database().forms) + 95  # every PTX form and every AMD instruction form
    assert set(listed) <= {i["name"] for i in report["items"]}


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_ptxas_that_does_not_finish_is_a_failure_of_the_check_not_an_internal_error(db, monkeypatch):
    """On a loaded machine ptxas may not finish a module of every kernel within its time: the
    check then assembles each kernel alone, and a kernel ptxas does not finish is that check's
    failure, said so (before, the next form's check stopped the run with a KeyError)."""
    from tilecheck import ptxas
    from tilecheck.errors import TilecheckError
    from tilecheck.verify import checks

    def slow(text, arch, parse_only=False, timeout=60):
        raise TilecheckError(f"ptxas did not finish within {timeout} s (-arch={arch})")

    monkeypatch.setattr(ptxas, "assemble", slow)
    forms = [db.form("abs.f32"), db.form("abs.ftz.f32")]
    ctx = checks.Context(db=db, forms=forms, cases=10)
    for form in forms:
        result = checks.check_ptxas(form, ctx)
        assert result.failures == result.cases > 0
        assert all("did not finish" in d for d in result.details)
