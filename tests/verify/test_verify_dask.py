"""Exhaustive compiled-PTX verification in batches: on a 2-worker Dask cluster, and killed and
resumed, it reports exactly what the serial run reports (the JSON, all but ``seconds``); without
the options nothing imports Dask, and without Dask the options are a clear exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'tilecheck[dist]')")

from support.dask_cli import DASK_OPTIONS, assert_runs_without_importing_dask, assert_usage_error_without_dask  # noqa: E402
from tilecheck.commands.verify_ptx import to_json  # noqa: E402
from tilecheck.diff.distributed import disconnect, local_cluster  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402
from tilecheck.verify import compiled, sharded  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HALF = "examples/cuda/half.ptx"  # relative, as a user types it: reports and repros name it


@pytest.fixture(scope="module")
def client():
    """A 2-worker local cluster (with its dashboard) for the module."""
    cluster = local_cluster(2)
    c = distributed.Client(cluster, timeout=10)
    yield c
    disconnect(c, cluster)


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _json(outcome) -> str:
    data = to_json(outcome)
    data.pop("seconds")  # the only field that differs between runs
    return json.dumps(data, indent=2)


@pytest.fixture(scope="module")
def serial_hsqrt(db):
    """The serial run of ``hsqrt`` (2^16 inputs, 15 misrounded ones), default block."""
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        return compiled.verify_ptx(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, exhaustive=True)
    finally:
        os.chdir(old)


def _log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / sharded.BATCHES).read_text().splitlines()]


def test_sharded_runs_equal_the_serial_run(client, db, serial_hsqrt, at_root, tmp_path):
    assert serial_hsqrt.verdict == "counterexample" and serial_hsqrt.misrounded_count > 3
    killed = []

    def kill_one_worker(progress):
        # after the second merged batch, with more in flight: one worker dies, its batches rerun
        if not killed and progress.done >= 2 * 4096:
            victim = sorted(client.nthreads())[0]
            killed.append(victim)
            os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)

    run = sharded.verify_batched(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, batch=4096, client=client,
                                 out=str(tmp_path / "dask"), progress=kill_one_worker)
    assert killed and run.finished and _json(run.outcome) == _json(serial_hsqrt)
    log = _log(tmp_path / "dask")
    assert [r["batch"] for r in log] == list(range(16)) and len({r["worker"] for r in log}) >= 2
    # the checkpoint holds no times or hosts: a serial batched run writes the same bytes
    sharded.verify_batched(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, batch=4096, out=str(tmp_path / "here"))
    assert ((tmp_path / "here" / sharded.CHECKPOINT).read_bytes()
            == (tmp_path / "dask" / sharded.CHECKPOINT).read_bytes())
    # packed half2 code pairs inputs within a block: the same block gives the same report
    h2 = compiled.verify_ptx(HALF, "k_h2sqrt_f16", "sqrt.rn.f16", db=db, exhaustive=True, block=8192)
    run = sharded.verify_batched(HALF, "k_h2sqrt_f16", "sqrt.rn.f16", db=db, batch=8192, client=client)
    assert h2.abi.endswith("2 lanes per 32-bit element") and _json(run.outcome) == _json(h2)


def _batches_done(out: Path) -> int:
    try:
        return json.loads((out / sharded.CHECKPOINT).read_text())["batches_done"]
    except (OSError, json.JSONDecodeError, KeyError):
        return 0


def test_killed_client_resumes_to_the_serial_result(client, serial_hsqrt, tmp_path):
    """``verify --scheduler`` killed with SIGKILL mid-run, then ``--resume``: the serial run's JSON,
    and every batch merged exactly once."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "tilecheck", "verify", HALF, "--entry", "k_hsqrt_f16", "--against",
               "sqrt.rn.f16", "--exhaustive", "--batch", "512", "--out", str(out), "--scheduler",
               client.scheduler.address, "--json", str(tmp_path / "report.json")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _batches_done(out) < 8 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed: " + proc.stderr.read().decode()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    killed_at = _batches_done(out)
    assert 8 <= killed_at < 128
    assert not (tmp_path / "report.json").exists()
    resumed = subprocess.run(command + ["--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 1, resumed.stderr  # the counterexamples
    assert f"resumed after {killed_at * 512} inputs" in resumed.stderr
    assert "dashboard: http://127.0.0.1:" in resumed.stderr and " worker(s) alive" in resumed.stderr
    assert "65536/65536 inputs (100.0%)" in resumed.stderr and "15 misrounded so far" in resumed.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    report.pop("seconds")
    assert json.dumps(report, indent=2) == _json(serial_hsqrt)
    assert [r["batch"] for r in _log(out)] == list(range(128))  # nothing repeated, nothing lost


def test_a_lost_cluster_without_out_says_the_run_kept_nothing(db, monkeypatch, at_root):
    from tilecheck.errors import ClusterError

    def lost(client, fn, jobs, **kw):
        raise ClusterError("batch 3: the Dask cluster failed (OSError: gone); every batch merged before it is "
                           "checkpointed: continue with --resume")
        yield  # a generator, as ordered is

    monkeypatch.setattr(sharded, "ordered", lost)
    with pytest.raises(ClusterError) as info:
        sharded.verify_batched(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, batch=4096, client=object())
    assert info.value.exit_code == 2 and "--resume" not in info.value.message
    assert info.value.message == ("batch 3: the Dask cluster failed (OSError: gone); this run kept no checkpoint: "
                                  "give --out DIR to make a run resumable")


def test_without_the_options_nothing_imports_dask(tmp_path):
    assert_runs_without_importing_dask(["verify", HALF, "--entry", "k_hsqrt_f16", "--against", "sqrt.rn.f16",
                                        "--exhaustive", "--batch", "16384", "--out", str(tmp_path / "x")], 1)
    assert sharded.CHECKPOINT in os.listdir(tmp_path / "x")


@pytest.mark.parametrize("option", DASK_OPTIONS)
def test_the_options_without_dask_are_exit_2(capsys, monkeypatch, at_root, option):
    assert_usage_error_without_dask(monkeypatch, capsys, ["verify", HALF, "--entry", "k_hsqrt_f16", "--against",
                                                          "sqrt.rn.f16", "--exhaustive", *option])


def test_batched_options_are_checked(capsys, at_root, tmp_path):
    from tilecheck.cli import main

    base = ["verify", HALF, "--entry", "k_hsqrt_f16", "--against", "sqrt.rn.f16"]
    cases = [(base + ["--workers", "2"], "add --exhaustive"),
             (["verify", "div.rn.f32", "--workers", "2"], "apply to verify FILE.ptx"),
             (base + ["--exhaustive", "--batch", "70000"], "a multiple of 65536"),
             (base + ["--exhaustive", "--resume"], "give --out"),
             (base + ["--exhaustive", "--resume", "--out", str(tmp_path)], "holds no verify checkpoint")]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    # a resumed run must be the run that was started
    assert main(base + ["--exhaustive", "--batch", "4096", "--stop-after", "2", "--out", str(tmp_path / "r")]) == 1
    assert "stopped after 2 of 16 batch(es)" in capsys.readouterr().out
    assert main(base + ["--exhaustive", "--out", str(tmp_path / "r"), "--resume", "--approx", "reference"]) == 2
    assert "approx: checkpoint 'all', now 'reference'" in capsys.readouterr().err
    # ... and under the spec it was started with: one changed byte in any spec file refuses it
    import shutil
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    sqrt = spec / "ptx" / "sqrt.yaml"
    sqrt.write_text(sqrt.read_text() + "# a comment\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TILECHECK_SPEC_DIR", str(spec))
        assert main(base + ["--exhaustive", "--out", str(tmp_path / "r"), "--resume"]) == 2
    assert "spec: checkpoint '" in capsys.readouterr().err
    assert main(base + ["--exhaustive", "--out", str(tmp_path / "r")]) == 2
    assert "pass --resume" in capsys.readouterr().err
