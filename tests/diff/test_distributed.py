"""Campaigns on a Dask cluster write what a serial run writes, byte for byte, through a worker
killed mid-run and a client killed mid-run; GPU workers are pinned one per device; without the
options nothing imports Dask, and without Dask the options are a clear exit 2."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'tilecheck[dist]')")

import cloudpickle  # noqa: E402 - a dependency of distributed
import diffhelpers  # noqa: E402
from diffhelpers import Faulty, done_batches, sleepy  # noqa: E402
from support.dask_cli import DASK_OPTIONS, assert_runs_without_importing_dask, assert_usage_error_without_dask  # noqa: E402

from tilecheck.diff.campaign import BackendSpec, Campaign, Config  # noqa: E402
from tilecheck.diff.distributed import (
    DaskExecutor,
    disconnect,
    local_cluster,
    ordered,
    pinned_devices,
    session,  # noqa: E402
)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# the workers unpickle the fault-injecting backend by value: they need not import the tests
cloudpickle.register_pickle_by_value(diffhelpers)

CONFIG = Config(("div.rn.f32", "sqrt.rz.f32"), seed=3, cases=24000, batch=2000, backend="faulty", shrink=3,
                max_findings=20)


@pytest.fixture(scope="module")
def client():
    """A 2-worker local cluster on loopback for the whole module, built as for two GPUs without
    dask-cuda (one nanny per device, ``CUDA_VISIBLE_DEVICES`` set per worker): the CPU tests
    do not mind, and one cluster start is saved."""
    saved = {k: os.environ.pop(k) for k in ("CUDA_VISIBLE_DEVICES",) if k in os.environ}
    dask_cuda = sys.modules.get("dask_cuda", False)
    sys.modules["dask_cuda"] = None  # the fallback path, even where dask-cuda is installed
    try:
        cluster = local_cluster(2, gpu=True, gpu_count=2)
    finally:
        if dask_cuda is False:
            del sys.modules["dask_cuda"]
        else:
            sys.modules["dask_cuda"] = dask_cuda
        os.environ.update(saved)
    c = distributed.Client(cluster, timeout=5)  # the last test closes the scheduler: no long reconnecting
    yield c
    disconnect(c, cluster)  # short timeouts, whether the scheduler lives or not


def _files(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in ("checkpoint.json", "findings.jsonl")}


def test_ordered_yields_in_job_order(client):
    delays = [0.03 * ((7 * i) % 5) for i in range(12)]  # later jobs often finish first
    with session(scheduler=client.scheduler.address) as other:  # the hook other long runs use
        assert list(ordered(other, sleepy, [(i, d) for i, d in enumerate(delays)], window=6)) == list(range(12))
    assert other.status == "closed" and client.status == "running"


def _install_fake_cupy(path: str) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("cupy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["cupy"] = module


def _corrupt_launches(indices: set) -> None:
    sys.modules["cupy"].STATE.corrupt = set(indices)


def test_gpu_workers_are_pinned_one_per_device(client, db, tmp_path):
    assert pinned_devices(2) == ["0", "1"]
    assert pinned_devices(2, "3,5,7") == ["3", "5"]
    from tilecheck.errors import UsageError

    with pytest.raises(UsageError, match="names 1 device"):
        pinned_devices(2, "4")
    with pytest.raises(UsageError, match="one worker per GPU, and 1 GPU"):
        local_cluster(2, gpu=True, gpu_count=1)
    seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
    assert sorted(seen.values()) == ["0", "1"]
    # the gpu backend on each pinned worker (CuPy stand-in): every batch records its device
    client.run(_install_fake_cupy, str(HERE / "fakecupy.py"))
    client.run(_corrupt_launches, {5})  # every launch flips the low bit of result 5
    config = Config(("sqrt.rn.f32",), seed=1, cases=2400, batch=200, backend="gpu", shrink=0, gpu_code="jit",
                    max_findings=40)
    executor = DaskExecutor(client, BackendSpec.of(config))
    view = executor.describe(config.forms)
    assert view.name == "gpu" and view.details["gpu"] == "Fake GPU (numpy)"
    result = Campaign(config, view, str(tmp_path / "gpu"), db=db, executor=executor).run()
    # at most one per batch (a flipped NaN payload may still be allowed)
    assert result.cases == 2400 and 3 <= result.mismatches <= 12
    log = [json.loads(line) for line in (tmp_path / "gpu" / "batches.jsonl").read_text().splitlines()]
    devices = {r["device"] for r in log}
    assert devices <= {"gpu0 Fake GPU (numpy) (CUDA_VISIBLE_DEVICES=0)",
                       "gpu0 Fake GPU (numpy) (CUDA_VISIBLE_DEVICES=1)"}
    assert len(devices) == 2, devices  # both devices ran batches
    # each finding names the device that produced it: the one that ran its batch
    by_batch = {r["batch"]: r["device"] for r in log}
    findings = [json.loads(line) for line in (tmp_path / "gpu" / "findings.jsonl").read_text().splitlines()]
    assert len(findings) == result.mismatches and all(f["device"] == by_batch[f["batch"]] for f in findings)
    assert all(f["case"] == f["batch"] * 200 + 5 for f in findings)
    client.run(_corrupt_launches, set())


def test_sharded_campaign_with_a_worker_killed_equals_the_serial_run(client, db, tmp_path, monkeypatch):
    # the same relative --out in two folders: the findings' replay commands name the same path
    (tmp_path / "serial").mkdir()
    (tmp_path / "sharded").mkdir()
    monkeypatch.chdir(tmp_path / "serial")
    serial = Campaign(CONFIG, Faulty(), "run", db=db).run()
    assert serial.mismatches > 40 and serial.states["div.rn.f32"].recorded == 20

    monkeypatch.chdir(tmp_path / "sharded")
    executor = DaskExecutor(client, BackendSpec("faulty", factory=functools.partial(Faulty, delay=0.05)))
    view = executor.describe(CONFIG.forms)
    assert view.name == "faulty" and view.runs_any_input
    killed = []

    def kill_one_worker(progress):
        # after the third merged batch, with a window of batches in flight: one worker dies
        if not killed and progress.all_cases >= 3 * CONFIG.batch:
            victim = sorted(client.nthreads())[0]
            pid = client.run(os.getpid, workers=[victim])[victim]
            killed.append(victim)
            os.kill(pid, signal.SIGKILL)

    sharded = Campaign(CONFIG, view, "run", db=db, progress=kill_one_worker, executor=executor).run()
    assert killed and sharded.finished
    assert _files(tmp_path / "sharded" / "run") == _files(tmp_path / "serial" / "run")
    log = [json.loads(line) for line in (tmp_path / "sharded" / "run" / "batches.jsonl").read_text().splitlines()]
    assert [(r["form"], r["batch"]) for r in log] == [(f, k) for f in CONFIG.forms for k in range(12)]
    assert len({r["worker"] for r in log}) >= 2  # the batches were shared out
    client.wait_for_workers(2, timeout=30)  # the nanny restarted the killed worker


def _fuzz_args(out: str) -> list[str]:
    return ["div.rn.ftz.f32", "div.rp.ftz.f32", "--tininess", "before", "--cases", "12000", "--batch", "1000",
            "--backend", "cpu", "--seed", "11", "--max-findings", "150", "--shrink", "4", "--quiet", "--out", out]


def test_killed_client_resumes_to_the_serial_result(client, db, tmp_path, monkeypatch):
    """``fuzz --workers 2`` killed with SIGKILL mid-run, then ``--resume --scheduler``: the same
    checkpoint and findings, byte for byte, as the serial run (``--tininess before`` makes the
    verdict reject the simulator's FTZ-boundary results: real findings in every batch)."""
    from tilecheck.diff.backends import CpuBackend

    (tmp_path / "serial").mkdir()
    monkeypatch.chdir(tmp_path / "serial")
    config = Config(("div.rn.ftz.f32", "div.rp.ftz.f32"), seed=11, cases=12000, batch=1000, backend="cpu", shrink=4,
                    max_findings=150, tininess="before")
    Campaign(config, CpuBackend(db=db), "run", db=db).run()

    work = tmp_path / "sharded"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tilecheck", "fuzz", *_fuzz_args("run"), "--workers", "2"],
                            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while done_batches(work / "run") < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the campaign ended before it could be killed: " + proc.stderr.read().decode()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its cluster's worker processes
        except ProcessLookupError:
            pass
        proc.stderr.close()
    killed_at = done_batches(work / "run")
    assert 4 <= killed_at < 24
    address = client.scheduler.address
    resumed = subprocess.run([sys.executable, "-m", "tilecheck", "fuzz", "--resume", "--out", "run", "--scheduler",
                              address], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 1, resumed.stderr
    assert f"resumed after {killed_at * 1000} cases" in resumed.stdout
    assert "worker(s) alive" not in resumed.stderr or "2 worker(s) alive" in resumed.stderr
    assert f"Dask scheduler {address}" in resumed.stderr and "dashboard: http://127.0.0.1:" in resumed.stderr
    assert _files(work / "run") == _files(tmp_path / "serial" / "run")


def test_without_the_options_nothing_imports_dask(tmp_path):
    assert_runs_without_importing_dask(["fuzz", "div.rn.f32", "--cases", "500", "--backend", "model", "--quiet",
                                        "--out", str(tmp_path / "x")], 0)


@pytest.mark.parametrize("option", DASK_OPTIONS)
def test_the_options_without_dask_are_exit_2(capsys, monkeypatch, tmp_path, option):
    assert_usage_error_without_dask(monkeypatch, capsys, ["fuzz", "div.rn.f32", "--cases", "100", "--backend", "model",
                                                          "--out", str(tmp_path / "x"), *option])


def test_an_unreachable_scheduler_is_exit_2(capsys, tmp_path):
    import dask

    from tilecheck.cli import main

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code = main(["fuzz", "div.rn.f32", "--cases", "100", "--backend", "model", "--out", str(tmp_path / "x"),
                     "--scheduler", "tcp://127.0.0.1:9"])  # port 9 (discard): nothing listens on loopback
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach the Dask scheduler" in err and "Traceback" not in err


def test_lost_scheduler_stops_with_exit_2_and_resume_repeats_nothing(client, db, tmp_path, monkeypatch):
    """The last test of the module: it closes the shared cluster's scheduler mid-run. The campaign
    stops with a ClusterError (exit 2) naming --resume; resuming (here serially) gives the serial
    run's files byte for byte."""
    from tilecheck.errors import ClusterError

    (tmp_path / "serial").mkdir()
    (tmp_path / "sharded").mkdir()
    monkeypatch.chdir(tmp_path / "serial")
    Campaign(CONFIG, Faulty(), "run", db=db).run()
    monkeypatch.chdir(tmp_path / "sharded")
    executor = DaskExecutor(client, BackendSpec("faulty", factory=functools.partial(Faulty, delay=0.05)))
    view = executor.describe(CONFIG.forms)
    closed = []

    def close_scheduler(progress):
        if not closed and progress.all_cases >= 3 * CONFIG.batch:
            closed.append(progress.all_cases)
            client.cluster.sync(client.cluster.scheduler.close)

    with pytest.raises(ClusterError, match="continue with --resume") as info:
        Campaign(CONFIG, view, "run", db=db, progress=close_scheduler, executor=executor).run()
    assert info.value.exit_code == 2
    merged = json.loads((tmp_path / "sharded" / "run" / "checkpoint.json").read_text())
    assert not merged["done"] and sum(s["done_batches"] for s in merged["states"].values()) >= 3
    Campaign(CONFIG, Faulty(), "run", db=db).run(resume=True)
    assert _files(tmp_path / "sharded" / "run") == _files(tmp_path / "serial" / "run")
