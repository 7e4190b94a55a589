"""A batched exhaustive run writes its checkpoint only as often as it is cheap to.

The checkpoint holds the misrounded inputs (megabytes of JSON for a kernel that misrounds
millions), so writing it after each batch of a fast kernel used to cost more than the batches
(``tools/findings.py --out`` on Triton's ``tl.floor``: 1.4 M inputs/s after the misrounded
subnormals, 9 M/s without checkpoints). Here a slow checkpoint write is simulated: the run saves
far fewer times than it has batches, still saves at the end and at a ``--stop-after`` stop, and
a resumed run reports what an uninterrupted one does.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tilecheck.commands.verify_ptx import to_json
from tilecheck.verify import compiled, sharded

ROOT = Path(__file__).resolve().parents[2]
HALF = "examples/cuda/half.ptx"  # relative, as a user types it: reports and repros name it
BATCH = 1024  # 64 batches over the 2^16 halves


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture
def slow_saves(monkeypatch):
    """Every checkpoint write takes 50 ms; the list holds the ``batches_done`` of each write."""
    writes = []
    real = sharded.atomic_write

    def slow(path, data):
        time.sleep(0.05)
        writes.append(data["batches_done"])
        real(path, data)

    monkeypatch.setattr(sharded, "atomic_write", slow)
    return writes


def _report(outcome) -> dict:
    report = to_json(outcome)
    report.pop("seconds")
    return report


def test_slow_checkpoints_are_written_seldom_and_at_the_end(db, at_root, tmp_path, slow_saves):
    out = tmp_path / "run"
    run = sharded.verify_batched(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, batch=BATCH, out=str(out))
    assert run.batches == run.batches_done == 64
    # the first write (before any batch) and the last (done) always; between them at most one per
    # twenty write-times (1 s here), far fewer than the batches
    assert slow_saves[0] == 0 and slow_saves[-1] == 64
    assert len(slow_saves) < 64 // 4
    checkpoint = json.loads((out / sharded.CHECKPOINT).read_text())
    assert checkpoint["done"] and checkpoint["batches_done"] == 64
    assert len((out / sharded.BATCHES).read_text().splitlines()) == 64
    serial = compiled.verify_ptx(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, exhaustive=True, block=BATCH)
    assert _report(run.outcome) == _report(serial)


def test_a_stop_saves_every_batch_it_ran_and_resumes_to_the_same_report(db, at_root, tmp_path, slow_saves):
    out = tmp_path / "run"
    first = sharded.verify_batched(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, batch=BATCH, out=str(out),
                                   stop_after=10)
    assert first.batches_done == 10 and first.outcome is None
    assert json.loads((out / sharded.CHECKPOINT).read_text())["batches_done"] == 10
    second = sharded.verify_batched(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, batch=BATCH, out=str(out),
                                    resume=True)
    assert second.batches_done == 64 and second.resumed_from == 10 * BATCH
    assert [json.loads(line)["batch"] for line in (out / sharded.BATCHES).read_text().splitlines()] == list(range(64))
    serial = compiled.verify_ptx(HALF, "k_hsqrt_f16", "sqrt.rn.f16", db=db, exhaustive=True, block=BATCH)
    assert _report(second.outcome) == _report(serial)
