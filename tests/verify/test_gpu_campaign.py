"""tools/gpu_campaign.py end to end without a GPU: its numpy dry run, and its GPU code paths on
the fake CuPy of tests/diff/fakecupy.py (neither is a device result)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

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
    summary, sweeps = _check_outputs(out, len(load_database().ptx_forms()))
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
    # arithmetic, the forms around it (the dry run runs every one) and memory of every space
    families = ("div", "rcp", "rsqrt", "min", "selp", "ld", "st")
    code = _tool().main(["--tiny", "--out", str(out), "--only", ",".join(families), "--sweeps",
                         "rcp.approx.ftz.f32,rsqrt.approx.ftz.f64", "--budget", "300",
                         "--phases", "questions,forms,sweeps"])
    assert code == 0
    db = load_database()
    summary, sweeps = _check_outputs(out, sum(len(db.families[f].forms) for f in families))
    forms = json.loads((out / "forms.json").read_text())
    # the forms around the arithmetic ran on the JIT path, judged by the ISA-text oracle
    assert forms["min.NaN.f32"]["paths"]["jit"]["mismatches"] == 0
    assert "judged by ISA text rules" in forms["min.NaN.f32"]["judged_by"]
    assert forms["selp.b32"]["cases"] >= 64 and forms["st.param.b32"]["predicated"]["cases"] > 0
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


def _fake_cupy(monkeypatch):
    spec = importlib.util.spec_from_file_location("cupy", ROOT / "tests" / "diff" / "fakecupy.py")
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return fake


def test_corpus_phase_matches_the_simulator_and_names_the_device(tmp_path, monkeypatch, capsys):
    from tilecheck.verify.compiled import verify_ptx

    tool = _tool()
    fake = _fake_cupy(monkeypatch)
    db = load_database()
    kernels = {"k_hsqrt_f16": "sqrt.rn.f16", "k_hrcp_f16": "rcp.rn.f16"}
    out = tmp_path / "corpus"
    code = tool.main(["--tiny", "--out", str(out), "--phases", "corpus", "--corpus", ",".join(kernels),
                      "--budget", "120"])
    assert code == 0
    report = json.loads((out / "corpus.json").read_text())
    assert set(report) == set(kernels)
    for name, against in kernels.items():
        assert report[name]["inputs"] == report[name]["checked"] == 1 << 16 and report[name]["complete"]
        header, rows = tool.read_corpus_vectors(str(out / "corpus" / f"{name}.vec"))
        assert header["gpu"] == "Fake GPU (numpy)" and header["driver"] == "13000" and header["date"]
        device = {tuple(r[1]) for r in rows}
        sim = verify_ptx(str(ROOT / "examples" / "cuda" / "half.ptx"), name, against, db=db, approx="reference",
                         exhaustive=True)
        assert sim.inputs_checked == 1 << 16
        assert device == {tuple(x) for x in sim.misrounded} and len(rows) == report[name]["hardware_misrounded"]
    assert all(launch[1][0] * launch[2][0] >= 1 << 16 for launch in fake.STATE.launches)

    # a device whose results differ at two inputs: exactly those are listed, with the device's bits
    fake.STATE.corrupt = {0x3C00, 0x4400}
    out2 = tmp_path / "corrupt"
    assert tool.main(["--tiny", "--out", str(out2), "--phases", "corpus", "--corpus", "k_hsqrt_f16"]) == 0
    header, rows = tool.read_corpus_vectors(str(out2 / "corpus" / "k_hsqrt_f16.vec"))
    assert [(r[0], r[1]) for r in rows] == [("k_hsqrt_f16", [0x3C00]), ("k_hsqrt_f16", [0x4400])]
    assert [r[2] for r in rows] == [0x3C01, 0x4001]  # sqrt(1) = 0x3c00, sqrt(4) = 0x4000, low bit flipped


def test_corpus_phase_on_a_binary_domain_stops_at_its_share_and_says_how_far(tmp_path, monkeypatch, capsys):
    from tilecheck.verify.compiled import verify_ptx

    tool = _tool()
    fake = _fake_cupy(monkeypatch)
    out = tmp_path / "div"
    assert tool.main(["--tiny", "--out", str(out), "--phases", "corpus", "--corpus", "k_hdiv_f16",
                      "--budget", "1"]) == 0
    entry = json.loads((out / "corpus.json").read_text())["k_hdiv_f16"]
    assert entry["inputs"] == 1 << 32 and not entry["complete"] and 0 < entry["checked"] < 1 << 32
    _, rows = tool.read_corpus_vectors(str(out / "corpus" / "k_hdiv_f16.vec"))
    sim = verify_ptx(str(ROOT / "examples" / "cuda" / "half.ptx"), "k_hdiv_f16", "div.rn.f16", db=load_database(),
                     approx="reference", exhaustive=True, limit=entry["checked"])
    assert sim.inputs_checked == entry["checked"]
    assert {tuple(r[1]) for r in rows} == {tuple(x) for x in sim.misrounded}
    assert len(rows) == entry["hardware_misrounded"] == sim.misrounded_count
    # the strict stand-in: a grid past the data of a kernel without bounds check is an illegal address
    module = fake.cuda.function.Module()
    module.load((ROOT / "examples" / "cuda" / "half.ptx").read_bytes() + b"\0")
    kernel = module.get_function("k_hsqrt_f16")
    x, y = fake.zeros(256, dtype=fake.uint16), fake.zeros(256, dtype=fake.uint16)
    with pytest.raises(fake.CUDADriverError, match="ILLEGAL_ADDRESS"):
        kernel((2,), (256,), (x, y))
    with pytest.raises(fake.CUDADriverError, match="INVALID_VALUE"):
        kernel((1,), (256,), (x,))
