"""Exhaustive compiled-PTX verification in batches: resumable, and sharded on a Dask cluster.

``tilecheck verify FILE.ptx --exhaustive`` with ``--workers N``, ``--scheduler ADDRESS``, ``--out DIR``
or ``--batch N`` runs here. Batch ``k`` is the fixed input range ``[k*B, (k+1)*B)`` of the exhaustive
enumeration, run by :func:`tilecheck.verify.compiled.run_range` in blocks of ``min(B, 65536)``
aligned inside it; the batches' :class:`~tilecheck.verify.compiled.Tally` objects are merged
strictly in batch order (:func:`tilecheck.diff.distributed.ordered` on a cluster). The outcome --
``inputs_checked``, ``exhaustive``, ``misrounded_inputs``, the counterexamples, everything the
JSON holds but ``seconds`` -- is therefore the serial run's with the same block size: the
default batch gives the default block, and code without packed half2/bf162 containers (whose
lanes pair inputs within a block) gives the same outcome for every batch size.

``--out DIR`` keeps ``checkpoint.json`` (the run's identity -- the PTX's SHA-256, entry, reference,
options, batch size -- and the merged tally; rewritten atomically after merged batches, often enough
that a crash loses little and rarely enough that writing it stays under :data:`SAVE_SHARE` of the
run, and holding no times or host names, so a serial, a sharded and a resumed run write the same
bytes) and ``batches.jsonl`` (which worker ran each batch, how long it took, what it found). A run
killed at any point -- client, worker or scheduler -- continues with ``--resume`` after its last
checkpointed batch: nothing checkpointed runs again, and log lines written after the checkpoint are
cut off. A worker that dies mid-batch has its batch rerun by Dask (a batch has no side effects).

Each batch carries the PTX text, so workers need no shared file system; a worker compiles the
function once per process. The simulator runs on CPUs: on GPU machines the verifier uses their
CPU cores. Dask is imported only when a client is given (:mod:`tilecheck.diff.distributed`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass

from tilecheck import cpus
from tilecheck.diff.campaign import atomic_write, read_log, worker_name
from tilecheck.diff.distributed import ordered
from tilecheck.errors import ClusterError, UsageError
from tilecheck.sources import read_source
from tilecheck.spec.database import load_database
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.verify.compiled import (
    EXHAUSTIVE_BLOCK,
    Outcome,
    Prepared,
    Tally,
    exhaustive_total,
    finish,
    prepare,
    run_range,
)

CHECKPOINT = "checkpoint.json"
BATCHES = "batches.jsonl"
DEFAULT_BATCH = 1 << 20
"""Inputs per batch unless ``--batch`` says otherwise: 2^12 batches for a 2^32 domain, a tenth of
a second to a minute each on one core."""
SAVE_SHARE = 0.05
"""Most of a run's time spent writing its checkpoint. The checkpoint holds the misrounded inputs
(up to the report's cap, megabytes of JSON), so writing it after every batch of a fast kernel
costs more than the batch; it is written after a batch once the time since the last write is at
least twenty times what that write took, and always at the end, at a stop and before a cluster
error is raised. A crash loses at most that time: the batch log is cut back to the checkpoint on
``--resume``, and those batches run again."""
VERSION = 1


def block_of(batch: int) -> int:
    """The block size of runs with batches of ``batch`` inputs; a usage error when the batch does
    not split into whole blocks (the blocks must not depend on where batches start)."""
    if batch < 1:
        raise UsageError(f"--batch must be at least 1, got {batch}")
    block = min(batch, EXHAUSTIVE_BLOCK)
    if batch % block:
        raise UsageError(f"--batch {batch}: give at most {EXHAUSTIVE_BLOCK} inputs or a multiple of {EXHAUSTIVE_BLOCK}")
    return block


@dataclass(frozen=True)
class Job:
    """What a worker needs to run batches of one verification: small and picklable."""

    path: str
    text: str
    entry: str
    against: str
    ulp_reading: str
    approx: str
    tininess: str
    block: int
    params: str | None = None  # --params: the parameters' roles as the user states them

    @property
    def digest(self) -> str:
        """SHA-256 of the PTX text."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass
class BatchResult:
    """One batch's tally, and where and how long it ran (for ``batches.jsonl``)."""

    index: int
    tally: Tally
    worker: str
    seconds: float


_PREPARED: dict[tuple, Prepared] = {}


def _prepared(job: Job) -> Prepared:
    key = (job.digest, job.path, job.entry, job.against, job.ulp_reading, job.approx, job.tininess, job.params)
    p = _PREPARED.get(key)
    if p is None:
        p = prepare(job.path, job.entry, job.against, db=load_database(), ulp_reading=job.ulp_reading,
                    approx=job.approx, tininess=job.tininess, text=job.text, params=job.params)
        if len(_PREPARED) >= 4:  # a long-lived worker serving many runs keeps only recent ones
            _PREPARED.clear()
        _PREPARED[key] = p
    return p


def run_batch(job: Job, index: int, start: int, stop: int, threads: int = 1) -> BatchResult:
    """Batch ``index``: inputs ``start .. stop-1``, on whichever process runs it. Pure: a batch
    that runs twice (its worker died) gives the same result."""
    p = _prepared(job)
    t0 = time.perf_counter()
    tally = run_range(p, start, stop, block=job.block, threads=threads)
    return BatchResult(index, tally, worker_name(), time.perf_counter() - t0)


@dataclass
class Progress:
    """What a progress callback sees after each merged batch."""

    done: int          # inputs merged, earlier runs included
    total: int
    misrounded: int    # misrounded inputs so far
    unknown: int
    resumed_from: int  # inputs merged before this run
    elapsed: float     # seconds of this run
    finished: bool

    @property
    def rate(self) -> float:
        """Inputs per second of this run."""
        return (self.done - self.resumed_from) / self.elapsed if self.elapsed > 0 else 0.0


@dataclass
class Run:
    """The result of :func:`verify_batched`: the outcome when every batch is merged."""

    outcome: Outcome | None  # None when stopped by ``stop_after``
    tally: Tally
    batches: int             # batches of the whole run
    batches_done: int
    resumed_from: int        # inputs merged before this run
    batch: int

    @property
    def finished(self) -> bool:
        """True when every batch is merged."""
        return self.batches_done == self.batches


def _read_text(path: str) -> str:
    return read_source(path)


def _load_checkpoint(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise UsageError(f"--resume: cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--resume: {path} is not a checkpoint ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("run"), dict):
        raise UsageError(f"--resume: {path} is not a verify checkpoint of version {VERSION}")
    return data


def _prepare_out(out: str) -> None:
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {out}: exists and is not a folder")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the folder: {exc.strerror or exc}") from exc
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: the folder is not writable")


def verify_batched(path: str, entry: str, against: str, *, db, ulp_reading: str = "either", approx: str = "all",
                   tininess: str = TININESS_DEFAULT, batch: int | None = None, limit: int | None = None,
                   out: str | None = None, resume: bool = False, client=None, threads: int | None = None,
                   progress=None, stop_after: int | None = None, params: str | None = None) -> Run:
    """Verify every input of ``entry`` in ``path`` against ``against`` in batches (module doc).

    ``client``: a ``distributed.Client`` whose workers run the batches (None: this process, with
    ``threads`` blocks at a time, default 2). ``out``: the folder of the checkpoint and batch log
    (None: nothing is kept); ``resume`` continues the run recorded there, which must be this one
    (same PTX text, entry, reference and options; ``batch`` None takes the recorded one).
    ``limit``: only the first inputs (a measurement). ``stop_after``: merge that many batches,
    checkpoint and return (``outcome`` None unless that was all). ``progress(Progress)`` after
    each merged batch."""
    started = time.time()
    if resume and out is None:
        raise UsageError("--resume continues the run kept in --out DIR: give --out")
    text = _read_text(path)
    p = prepare(path, entry, against, db=db, ulp_reading=ulp_reading, approx=approx, tininess=tininess, text=text,
                params=params)
    total = exhaustive_total(p, limit)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    identity = {"file": path, "sha256": digest, "entry": entry, "against": against, "ulp_reading": ulp_reading,
                "approx": approx, "tininess": tininess, "inputs": total, "spec": db.digest}
    if params is not None:  # (absent otherwise: checkpoints written before --params stay resumable)
        identity["params"] = params
    checkpoint = os.path.join(out, CHECKPOINT) if out is not None else None
    log_path = os.path.join(out, BATCHES) if out is not None else None
    tally = Tally()
    done_batches = 0
    if resume:
        if not os.path.isfile(checkpoint):
            raise UsageError(f"--resume: {out} holds no verify checkpoint ({CHECKPOINT}); start without --resume")
        data = _load_checkpoint(checkpoint)
        recorded = data["run"]
        wrong = [f"{k}: checkpoint {recorded.get(k)!r}, now {v!r}" for k, v in identity.items() if recorded.get(k) != v]
        if "params" in recorded and "params" not in identity:
            wrong.append(f"params: checkpoint {recorded['params']!r}, now none")
        if batch is not None and recorded.get("batch") != batch:
            wrong.append(f"batch: checkpoint {recorded.get('batch')!r}, given {batch!r}")
        if wrong:
            raise UsageError(f"{checkpoint}: --resume continues the run as it was started; these differ: "
                             + "; ".join(wrong))
        batch = int(recorded["batch"])
        try:
            tally = Tally.from_json(data["tally"])
            done_batches = int(data["batches_done"])
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"--resume: {checkpoint} is damaged ({exc})") from None
    elif checkpoint is not None and os.path.exists(checkpoint):
        raise UsageError(f"{out} already holds a verify run ({CHECKPOINT}); pass --resume to continue it, "
                         "or choose another --out")
    batch = batch or DEFAULT_BATCH
    job = Job(path, text, entry, against, ulp_reading, approx, tininess, block_of(batch), params)
    batches = -(-total // batch)
    resumed_from = tally.checked

    def save(done: bool) -> None:
        atomic_write(checkpoint, {"version": VERSION, "run": {**identity, "batch": batch, "block": job.block,
                                                               "batches": batches},
                                  "batches_done": done_batches, "inputs_done": tally.checked, "done": done,
                                  "tally": tally.to_json()})

    saved = {"batches": done_batches, "at": time.perf_counter(), "cost": 0.0}

    def checkpoint_now(force: bool) -> None:
        """Save the checkpoint when ``force``, or when enough time has passed (:data:`SAVE_SHARE`)."""
        now = time.perf_counter()
        if saved["batches"] == done_batches or not (force or now - saved["at"] >= saved["cost"] / SAVE_SHARE):
            return
        save(done_batches == batches)
        saved.update(batches=done_batches, at=time.perf_counter(), cost=time.perf_counter() - now)

    log_size = 0
    if out is not None:
        _prepare_out(out)
        log_size, _ = read_log(log_path, done_batches)
        if not resume:
            save(False)
    last = batches if stop_after is None else min(batches, done_batches + stop_after)
    jobs = ((job, k, k * batch, min((k + 1) * batch, total), 1 if client is not None else
             (threads or cpus.threads())) for k in range(done_batches, last))
    if client is not None:
        results = ordered(client, run_batch, jobs, name="batch")
    else:
        results = (run_batch(*j) for j in jobs)
    t0 = time.perf_counter()
    log_fh = open(log_path, "ab") if log_path is not None else None
    try:
        if log_fh is not None:
            log_fh.truncate(log_size)
        for res in results:
            tally.merge(res.tally)
            done_batches += 1
            if log_fh is not None:
                line = {"batch": res.index, "inputs": [res.index * batch, min((res.index + 1) * batch, total)],
                        "worker": res.worker, "seconds": round(res.seconds, 4), "misrounded": res.tally.misrounded,
                        "unknown": res.tally.unknown}
                log_fh.write((json.dumps(line) + "\n").encode("utf-8"))
                log_fh.flush()
                os.fsync(log_fh.fileno())
                checkpoint_now(done_batches == batches)
            if progress:
                progress(Progress(tally.checked, total, tally.misrounded, tally.unknown, resumed_from,
                                  time.perf_counter() - t0, done_batches == batches))
        if log_fh is not None:
            checkpoint_now(True)  # a stop (--stop-after) keeps every batch it ran
    except ClusterError as exc:
        if out is None:
            # the message's resume hint does not hold for a run without a checkpoint
            raise ClusterError(f"{exc.message.split('; every batch merged')[0]}; this run kept no checkpoint: "
                               "give --out DIR to make a run resumable") from exc
        checkpoint_now(True)  # every batch merged so far (the error comes between batches)
        raise
    except OSError as exc:
        raise UsageError(f"--out {out}: {exc.strerror or exc}: {exc.filename}") from exc
    finally:
        if log_fh is not None:
            log_fh.close()
    outcome = None
    if done_batches == batches:
        outcome = finish(p, tally, exhaustive=total == p.domain, sampling={"exhaustive": total},
                         seconds=round(time.time() - started, 3))
    return Run(outcome, tally, batches, done_batches, resumed_from, batch)
