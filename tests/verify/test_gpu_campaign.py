"""tools/gpu_campaign.py end to end without a GPU: its numpy dry run, and its GPU code paths on
the fake CuPy of tests/diff/fakecupy.py (neither is a device result)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from tilecheck.spec.database import load_database

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("gpu_campaign", ROOT / "tools" / "gpu_campaign.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_outputs(out: Path, forms_expected: int | None):
    from tilecheck.cli import main

    tool = _tool()
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(tool.FILES) and len(names) <= 8
    summary = json.loads((out / "summary.json").read_text())
    assert summary["disagreements"] == {"questions": 0, "forms": 0, "sweeps": 0}
    assert summary["errors"] == []
    forms = json.loads((out / "forms.json").read_text())
    if forms_expected is not None:
        assert len(forms) == forms_expected
    sweeps = json.loads((out / "sweeps.json").read_text())
    for name, s in sweeps.items():
        assert s["points"] > 0 and s["violations"] == 0, name
        assert sum(s["histogram"]["counts"]) == s["measured"] > 0, name
    vectors = [str(out / n) for n in tool.FILES if ".vec" in n]
    args = ["verify"] + [x for v in vectors for x in ("--vectors", v)]
    assert main(args) == 0
    return summary, sweeps


def test_dry_run_end_to_end(tmp_path, capsys):
    out = tmp_path / "dry"
    assert _tool().main(["--dry-run", "--out", str(out), "--budget", "400"]) == 0
    summary, sweeps = _check_outputs(out, len(load_database().kernel_forms()))
    assert summary["device"]["backend"] == "cpu" and summary["dry_run"]
    assert set(sweeps) == set(_tool().SWEEPS)
    # the tininess tally: the simulator follows the model's default (after rounding)
    tally = summary["tininess"]["div.rn.ftz.f32"]
    assert tally["after"] == tally["cases"] and tally["before"] < tally["cases"]
    assert sweeps["rcp.rn.f32"]["max_error"] <= 0.5 and sweeps["rcp.rn.f32"]["unit"] == "ulp"


def test_gpu_code_paths_on_a_fake_cupy(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("cupy", ROOT / "tests" / "diff" / "fakecupy.py")
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    out = tmp_path / "tiny"
    code = _tool().main(["--tiny", "--out", str(out), "--only", "div,rcp,rsqrt", "--sweeps",
                         "rcp.approx.ftz.f32,rsqrt.approx.ftz.f64", "--budget", "300"])
    assert code == 0
    summary, sweeps = _check_outputs(out, 35)
    assert summary["device"]["gpu"] == "Fake GPU (numpy)" and not summary["dry_run"]
    assert summary["questions"]["jit_vs_cubin_differences"] == 0
    assert set(sweeps) == {"rcp.approx.ftz.f32", "rsqrt.approx.ftz.f64"}
    assert fake.STATE.launches  # kernels went through the launch protocol


def test_no_gpu_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cupy", None)
    out = tmp_path / "none"
    assert _tool().main(["--out", str(out), "--budget", "10"]) == 2
    assert "CuPy" in json.loads((out / "summary.json").read_text())["error"]


def test_an_error_on_one_form_is_reported_and_the_campaign_goes_on(tmp_path, monkeypatch, capsys):
    from tilecheck.diff import backends

    real = backends.CpuBackend.run

    def refuse_one(self, form, operands, mask=None, old=None):
        if form.name == "rcp.rn.f32":
            raise RuntimeError("CUDA_ERROR_INVALID_PTX (simulated)")
        return real(self, form, operands, mask, old)

    monkeypatch.setattr(backends.CpuBackend, "run", refuse_one)
    out = tmp_path / "err"
    code = _tool().main(["--dry-run", "--out", str(out), "--only", "rcp", "--sweeps", "rcp.rn.f32,sqrt.rn.f32"])
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    wheres = [e["where"] for e in summary["errors"]]
    assert wheres == ["phase 1 rcp.rn.f32", "phase 2 rcp.rn.f32", "sweep rcp.rn.f32"]
    forms = json.loads((out / "forms.json").read_text())
    assert "INVALID_PTX" in forms["rcp.rn.f32"]["error"] and forms["rcp.rz.f32"]["paths"]
    sweeps = json.loads((out / "sweeps.json").read_text())
    assert "error" in sweeps["rcp.rn.f32"] and sweeps["sqrt.rn.f32"]["points"] > 0
