"""``--ulp-reading`` on the command line: ``verify`` and ``fuzz`` judge recorded results under the
reading asked for, name it in their output and JSON, and a replay carries it.

A recorded ``rcp.approx.f32(3) = 0x3eaaaaac`` (allowed by the correctly rounded reading, not by the
exact one) and ``div.full.f32(1, 3) = 0x3eaaaaad`` are the issue's examples.
"""

from __future__ import annotations

import json

from tilecheck.cli import main

LINES = ["# tilecheck vectors 1", "# source: test of the ulp readings",
         "rcp.approx.f32 0x40400000 0x3eaaaaac", "div.full.f32 0x3f800000 0x40400000 0x3eaaaaad"]


def _vectors(tmp_path):
    path = tmp_path / "readings.vec"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_verify_vectors_under_each_reading(tmp_path, capsys):
    vec = _vectors(tmp_path)
    report = tmp_path / "report.json"
    assert main(["verify", "--vectors", str(vec), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "ulp bounds read as either" in out
    assert json.loads(report.read_text())["meta"]["ulp_reading"] == "either"
    assert main(["verify", "--vectors", str(vec), "--ulp-reading", "correctly-rounded"]) == 0
    assert main(["verify", "--vectors", str(vec), "--ulp-reading", "exact"]) == 1
    out = capsys.readouterr().out
    assert "ulp bounds read as exact" in out and "2 mismatches" in out


def test_fuzz_records_the_reading_and_replay_carries_it(tmp_path, capsys):
    vec = _vectors(tmp_path)
    out_dir = tmp_path / "campaign"
    argv = ["fuzz", "rcp.approx.f32", "div.full.f32", "--backend", "vectors", "--vectors", str(vec),
            "--out", str(out_dir), "--quiet"]
    assert main(argv + ["--ulp-reading", "exact"]) == 1
    out = capsys.readouterr().out
    assert "ulp reading exact" in out and "--ulp-reading exact" in out
    findings = [json.loads(line) for line in (out_dir / "findings.jsonl").read_text().splitlines()]
    assert len(findings) == 2
    assert all(f["settings"]["ulp_reading"] == "exact" and f["reading"] == "exact" for f in findings)
    path = str(out_dir / "findings.jsonl")
    assert main(["fuzz", "--replay", path]) == 1  # the recorded reading: still rejected
    assert "2 mismatches" in capsys.readouterr().out
    assert main(["fuzz", "--replay", path, "--ulp-reading", "either"]) == 0
    assert "agrees now" in capsys.readouterr().out
    assert main(argv[:-1] + ["--out", str(tmp_path / "again"), "--quiet"]) == 0  # default: either


def test_bad_reading_is_a_usage_error(capsys):
    assert main(["verify", "rcp.approx.f32", "--ulp-reading", "nearest"]) == 2
    assert "ulp-reading" in capsys.readouterr().err
