"""Campaigns lose nothing: a run stopped or killed at any point and resumed ends with the same
counts and findings as an uninterrupted run; the fuzz command around them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from diffhelpers import Faulty, done_batches

from tilecheck.diff.campaign import Campaign, Config

ROOT = Path(__file__).resolve().parents[2]


CONFIG = Config(("div.rn.f32", "sqrt.rz.f32"), seed=3, cases=20000, batch=3000, backend="faulty", shrink=3,
                max_findings=20)


def _records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        rec.pop("replay")  # names the findings file, which differs between the runs compared
        out.append(rec)
    return out


def test_stopped_and_resumed_equals_uninterrupted(db, tmp_path):
    whole = Campaign(CONFIG, Faulty(), str(tmp_path / "whole"), db=db).run()
    assert whole.cases == 40000 and whole.mismatches > 40  # findings in both forms, some unrecorded
    assert whole.states["div.rn.f32"].recorded == 20 and whole.states["div.rn.f32"].shrunk == 3

    parts = tmp_path / "parts"
    first = Campaign(CONFIG, Faulty(), str(parts), db=db).run(stop_after=2)
    assert not first.finished and first.cases == 6000
    # a killed run may have written findings after its last checkpoint: resume must drop them
    with open(parts / "findings.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"form": "div.rn.f32", "operands": ["0x1", "0x2"], "partial": tru')
    second = Campaign(CONFIG, Faulty(), str(parts), db=db).run(resume=True, stop_after=5)
    assert second.resumed_from == 6000 and not second.finished
    last = Campaign(CONFIG, Faulty(), str(parts), db=db).run(resume=True)
    assert last.finished
    assert {k: vars(v) for k, v in last.states.items()} == {k: vars(v) for k, v in whole.states.items()}
    assert _records(parts / "findings.jsonl") == _records(tmp_path / "whole" / "findings.jsonl")
    # nothing but the configuration shapes the checkpoint: byte for byte the same
    assert (parts / "checkpoint.json").read_bytes() == (tmp_path / "whole" / "checkpoint.json").read_bytes()
    log = [json.loads(line) for line in (parts / "batches.jsonl").read_text().splitlines()]
    assert [(r["form"], r["batch"]) for r in log] == [("div.rn.f32", k) for k in range(7)] + \
        [("sqrt.rz.f32", k) for k in range(7)]
    assert all(r["device"] == "faulty" and r["seconds"] >= 0 for r in log)


def test_resume_refuses_another_configuration(db, tmp_path):
    from tilecheck.errors import UsageError

    Campaign(CONFIG, Faulty(), str(tmp_path), db=db).run(stop_after=1)
    other = Config(CONFIG.forms, seed=4, cases=CONFIG.cases, batch=CONFIG.batch, backend="faulty")
    with pytest.raises(UsageError, match="different configuration.*seed"):
        Campaign(other, Faulty(), str(tmp_path), db=db).run(resume=True)
    with pytest.raises(UsageError, match="already holds a campaign"):
        Campaign(CONFIG, Faulty(), str(tmp_path), db=db).run()


def test_findings_carry_a_minimal_report_and_repro(db, tmp_path):
    result = Campaign(CONFIG, Faulty(), str(tmp_path), db=db).run()
    recs = [json.loads(line) for line in (tmp_path / "findings.jsonl").read_text().splitlines()]
    assert len(recs) == result.states["div.rn.f32"].recorded + result.states["sqrt.rz.f32"].recorded
    first = recs[0]
    assert first["form"] == "div.rn.f32" and first["backend"] == "faulty" and first["seed"] == 3
    assert first["result"] != first["expected"]
    assert first["repro"].startswith("tilecheck eval div.rn.f32 0x")
    assert "--replay" in first["replay"]
    assert {"operands", "result", "expected", "inputs", "steps"} <= set(first["shrunk"])
    assert int(first["shrunk"]["operands"][0], 16) & 0xFF == 0x5B  # still a failing case
    assert "(+normal)" in " ".join(first["inputs"]) or "(-normal)" in " ".join(first["inputs"]) or first["inputs"]
    assert sum("shrunk" in r for r in recs if r["form"] == "div.rn.f32") == 3


# ---------------------------------------------------------------------------------------------
# the CLI, in subprocesses (a real kill -9 in the middle of a campaign)


def _fuzz(*args, cwd=ROOT, **kw):
    return subprocess.run([sys.executable, "-m", "tilecheck", "fuzz", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, **kw)


FUZZ = ["div.rn.ftz.f32", "div.rp.ftz.f32", "--tininess", "before", "--cases", "24000", "--batch", "1500",
        "--backend", "cpu", "--seed", "11", "--max-findings", "150", "--shrink", "4", "--quiet"]


def test_killed_campaign_resumes_to_the_same_result(tmp_path):
    """kill -9 mid-campaign, --resume: same case count, mismatch count and findings as a run that
    was never interrupted. ``--tininess before`` makes the verdict disagree with the simulator on
    the FTZ-boundary cases, so there are real findings to lose."""
    whole = _fuzz(*FUZZ, "--out", str(tmp_path / "whole"))
    assert whole.returncode == 1, whole.stderr
    summary = whole.stdout.strip().splitlines()[-1]
    assert summary.startswith("48000 cases, ") and not summary.startswith("48000 cases, 0 mismatches")

    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "tilecheck", "fuzz", *FUZZ, "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while done_batches(out) < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the campaign finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = done_batches(out)
    assert 5 <= killed_at < 32
    resumed = _fuzz(*FUZZ, "--out", str(out), "--resume")
    assert resumed.returncode == 1, resumed.stderr
    assert "resumed after" in resumed.stdout
    assert resumed.stdout.strip().splitlines()[-1] == summary
    assert _records(out / "findings.jsonl") == _records(tmp_path / "whole" / "findings.jsonl")


def test_fuzz_usage_errors_are_located_and_exit_2(tmp_path):
    bad = _fuzz("dvi.rn.f32", "--out", str(tmp_path / "a"))
    assert bad.returncode == 2 and "unknown instruction" in bad.stderr and "Traceback" not in bad.stderr
    bad = _fuzz("div.rn.f32", "--exhaustive", "--out", str(tmp_path / "b"))
    assert bad.returncode == 2 and "at most 2**32" in bad.stderr
    bad = _fuzz("div.rn.f32", "--backend", "gpu", "--out", str(tmp_path / "c"))
    assert bad.returncode == 2 and "CuPy" in bad.stderr and "Traceback" not in bad.stderr
    findings = tmp_path / "f.jsonl"
    findings.write_text('{"form": "div.rn.f32", "operands": ["0x1", "0x2"]}\nnot json\n')
    bad = _fuzz("--replay", str(findings))
    assert bad.returncode == 2 and f"{findings}:2" in bad.stderr


def test_fuzz_cli_run_progress_and_replay(tmp_path):
    out = tmp_path / "run"
    args = ["div.rn.ftz.f32", "--tininess", "before", "--cases", "3000", "--backend", "cpu", "--out", str(out),
            "--max-findings", "3", "--shrink", "2"]
    run = _fuzz(*args)
    assert run.returncode == 1
    assert "div.rn.ftz.f32: 3000/3000 cases" in run.stderr  # plain progress lines when not a TTY
    assert "repro: tilecheck eval div.rn.ftz.f32 0x" in run.stdout
    again = _fuzz(*args)
    assert again.returncode == 2 and "already holds a campaign" in again.stderr
    # the replay takes the tininess, backend and target recorded with each finding
    hint = next(line for line in run.stdout.splitlines() if line.startswith("findings: "))
    assert "--backend cpu" in hint and "--tininess before" in hint
    replay = _fuzz("--replay", str(out / "findings.jsonl"))
    assert replay.returncode == 1 and "still disagrees" in replay.stdout and "agrees now" not in replay.stdout
    assert "backend cpu, tininess before" in replay.stdout
    fixed = _fuzz("--replay", str(out / "findings.jsonl"), "--tininess", "after")  # an explicit option overrides
    assert fixed.returncode == 0 and "agrees now" in fixed.stdout and "overridden: --tininess after" in fixed.stdout
    assert fixed.stdout.strip().splitlines()[-1] == "5 cases, 0 mismatches"
    assert "failures" not in run.stdout + fixed.stdout  # there is no such count


def test_exhaustive_sweep_is_checkpointed_and_time_sliced(tmp_path):
    out = tmp_path / "sweep"
    first = _fuzz("sqrt.rn.f32", "--exhaustive", "--batch", "262144", "--stop-after", "2", "--out", str(out), "--quiet")
    assert first.returncode == 0, first.stderr
    assert "backend reference" in first.stdout and "stopped after 2 batch(es)" in first.stdout
    assert "independent of the model's arithmetic" in first.stdout  # judged by certificate
    second = _fuzz("sqrt.rn.f32", "--exhaustive", "--batch", "262144", "--stop-after", "2", "--out", str(out),
                   "--resume", "--quiet")
    assert second.returncode == 0
    assert second.stdout.strip().splitlines()[-1] == "1048576 cases, 0 mismatches"
    data = json.loads((out / "checkpoint.json").read_text())
    assert data["states"]["sqrt.rn.f32"]["total"] == 1 << 32 and not data["done"]


# ---------------------------------------------------------------------------------------------
# settings travel with the campaign: --resume takes them from the checkpoint; nonsense is exit 2


def _cli(capsys, *argv):
    from tilecheck.cli import main

    code = main(["fuzz", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    return code, out, err


def test_resume_takes_forms_and_options_from_the_checkpoint(capsys, tmp_path):
    out = str(tmp_path / "c")
    args = ["div.rn.ftz.f32", "--tininess", "before", "--cases", "4000", "--batch", "1000", "--backend", "model",
            "--seed", "5", "--max-findings", "4", "--shrink", "1", "--quiet", "--out", out]
    code, text, _ = _cli(capsys, *args, "--stop-after", "1")
    assert code == 1 and "continue with: tilecheck fuzz --resume --out" in text
    code, text, _ = _cli(capsys, "--resume", "--out", out, "--quiet")  # no forms, no options
    assert code == 1 and "resumed after 1000 cases" in text
    assert text.strip().splitlines()[-1].startswith("4000 cases, ")
    data = json.loads((tmp_path / "c" / "checkpoint.json").read_text())
    assert data["done"] and data["config"]["tininess"] == "before" and data["config"]["seed"] == 5
    # an option given with --resume must agree with the checkpoint
    code, _, err = _cli(capsys, "--resume", "--out", out, "--tininess", "after")
    assert code == 2 and "tininess: checkpoint 'before', given 'after'" in err
    code, _, err = _cli(capsys, "div.rn.f32", "--resume", "--out", out)
    assert code == 2 and "forms: checkpoint" in err
    # --resume where there is nothing to resume is an error, not a fresh start
    code, _, err = _cli(capsys, *args[:-1], str(tmp_path / "empty"), "--resume")
    assert code == 2 and "holds no campaign checkpoint" in err and not (tmp_path / "empty").exists()


def test_bad_out_and_bad_checkpoints_are_exit_2(capsys, tmp_path):
    base = ["div.rn.f32", "--cases", "100", "--backend", "model", "--quiet", "--out"]
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = _cli(capsys, *base, str(afile))
    assert code == 2 and "exists and is not a folder" in err
    code, _, err = _cli(capsys, *base, str(afile / "sub"))
    assert code == 2 and "cannot create the folder" in err
    code, _, err = _cli(capsys, *base, "/proc/tilecheck-cannot-be-here")
    assert code == 2 and "cannot create the folder" in err
    good = tmp_path / "good"
    assert _cli(capsys, *base, str(good), "--stop-after", "1")[0] == 0
    checkpoint = good / "checkpoint.json"
    original = json.loads(checkpoint.read_text())
    wrong = {
        "binary": b"\x00\xff\xfe binary \x80",
        "truncated": checkpoint.read_bytes()[:40],
        "a list": b"[1, 2]",
        "seed a string": json.dumps({**original, "config": {**original["config"], "seed": "3"}}).encode(),
        "states a list": json.dumps({**original, "states": [1]}).encode(),
        "cases negative": json.dumps({**original, "states": {"div.rn.f32": {
            **original["states"]["div.rn.f32"], "cases": -1}}}).encode(),
        "format 1": json.dumps({**original, "format": 1}).encode(),
        "findings_bytes null": json.dumps({**original, "findings_bytes": None}).encode(),
    }
    for what, data in wrong.items():
        checkpoint.write_bytes(data)
        code, _, err = _cli(capsys, "--resume", "--out", str(good))
        assert code == 2 and "checkpoint" in err, (what, err)


@pytest.mark.parametrize("option", [["--batch", "0"], ["--shrink", "-1"], ["--max-findings", "-1"],
                                    ["--cases", "0"], ["--stop-after", "0"], ["--workers", "0"], ["--seed", "-1"]])
def test_nonsense_sizes_are_refused(capsys, tmp_path, option):
    code, _, err = _cli(capsys, "div.rn.f32", "--backend", "model", "--out", str(tmp_path / "x"), *option)
    assert code == 2 and option[0] in err and not (tmp_path / "x").exists()


def test_replay_of_malformed_findings_is_located(capsys, tmp_path):
    bad = tmp_path / "f.jsonl"
    for line in ['{"form": "div.rn.f32", "operands": "0x1"}', '{"form": 3, "operands": []}',
                 '{"form": "div.rn.f32", "operands": ["0x1", "0x2"], "settings": {"tininess": "sideways"}}',
                 '{"form": "div.rn.f32", "operands": ["0x1", "0x1ffffffff"]}',
                 '{"form": "div.rn.f32", "operands": ["0x1", "0x2"], "shrunk": []}',
                 '{"form": "div.rn.f33", "operands": ["0x1", "0x2"]}']:
        bad.write_text(line + "\n")
        code, _, err = _cli(capsys, "--replay", str(bad), "--backend", "model")
        assert code == 2 and f"{bad}:1" in err, (line, err)


def test_findings_record_every_setting_of_the_run(db, tmp_path):
    from tilecheck.diff.campaign import BackendSpec

    config = Config(("div.rn.ftz.f32",), seed=2, cases=2000, batch=1000, backend="cpu", shrink=0, max_findings=2,
                    tininess="before", target="sm_90")
    Campaign(config, BackendSpec.of(config).build(db=db), str(tmp_path), db=db).run()
    rec = json.loads((tmp_path / "findings.jsonl").read_text().splitlines()[0])
    assert rec["settings"]["tininess"] == "before" and rec["settings"]["target"] == "sm_90"
    assert rec["replay"].endswith("--backend cpu --target sm_90 --tininess before --ulp-reading either")
    assert rec["settings"]["ulp_reading"] == "either" and rec["reading"] == "none"
    assert "device" not in rec  # only the gpu backend names a device
