"""Resumable differential campaigns: random fuzzing and exhaustive sweeps that lose nothing.

A campaign runs forms one after the other, each in batches of a fixed size. Batch ``k`` of a form
is a pure function of the configuration: random campaigns use
:func:`tilecheck.diff.cases.batch` (``default_rng([seed, form, k])``), exhaustive sweeps the points
``[k*B, (k+1)*B)`` of the form's domain, and a vectors backend its recorded cases in file order.
After every batch the campaign

1. appends each new finding to ``findings.jsonl`` (flushed and fsynced per finding), shrinking
   the first ``shrink`` findings of each form to minimal reports;
2. rewrites ``checkpoint.json`` atomically (temporary file, fsync, rename): configuration,
   position (form, next batch), counts per form, and the size of ``findings.jsonl`` it covers.

``resume=True`` reads the checkpoint, checks that the configuration is the same, truncates
``findings.jsonl`` to the size the checkpoint covers (dropping findings a killed run wrote after
it) and continues with the next batch. A run killed at any point and resumed therefore ends with
the same counts and the same ``findings.jsonl`` as an uninterrupted run.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from tilecheck.diff import cases as _cases
from tilecheck.diff.findings import FindingsWriter, finding
from tilecheck.diff.shrink import shrink as _shrink
from tilecheck.diff.verdict import disagreements
from tilecheck.errors import UsageError
from tilecheck.spec.database import load_database

__all__ = ["Config", "FormState", "Progress", "Campaign", "CHECKPOINT", "FINDINGS", "FORMAT"]

CHECKPOINT = "checkpoint.json"
FINDINGS = "findings.jsonl"
FORMAT = 1


@dataclass(frozen=True)
class Config:
    """What a campaign does; a resumed run must have the same configuration.

    ``cases`` per form (ignored with ``exhaustive``), ``batch`` cases per batch, ``backend`` the
    resolved backend name, ``shrink`` findings per form to shrink, ``max_findings`` findings per
    form to record (mismatches beyond it are still counted), ``tininess`` the model's ``.ftz``
    convention for the verdict.
    """

    forms: tuple[str, ...]
    seed: int = 0
    cases: int = 100_000
    exhaustive: bool = False
    batch: int = 65_536
    backend: str = "cpu"
    shrink: int = 20
    max_findings: int = 1000
    tininess: str = "after"

    def to_json(self) -> dict:
        """The configuration as JSON-ready data."""
        data = asdict(self)
        data["forms"] = list(self.forms)
        return data


@dataclass
class FormState:
    """Progress of one form: cases and batches done, mismatches, findings recorded and shrunk."""

    total: int
    batches: int
    done_batches: int = 0
    cases: int = 0
    mismatches: int = 0
    recorded: int = 0
    shrunk: int = 0
    seconds: float = 0.0


@dataclass
class Progress:
    """What a progress callback sees after each batch."""

    form: str
    form_index: int
    forms: int
    cases: int
    total: int
    mismatches: int
    all_cases: int
    all_total: int
    all_mismatches: int
    rate: float
    elapsed: float
    finished: bool = False


@dataclass
class Result:
    """The outcome of :meth:`Campaign.run`: per-form states, totals, output paths."""

    config: Config
    states: dict[str, FormState]
    out_dir: str
    resumed_from: int = 0
    seconds: float = 0.0
    backend_info: dict = field(default_factory=dict)
    finished: bool = True

    @property
    def cases(self) -> int:
        """Cases judged, all forms."""
        return sum(s.cases for s in self.states.values())

    @property
    def mismatches(self) -> int:
        """Mismatches found, all forms."""
        return sum(s.mismatches for s in self.states.values())

    @property
    def findings_path(self) -> str:
        """The JSONL file of findings."""
        return os.path.join(self.out_dir, FINDINGS)


def _atomic_write(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:  # platforms without directory fds: the rename is still atomic
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Campaign:
    """One campaign: ``config`` over ``backend``, output in ``out_dir`` (see the module docstring)."""

    def __init__(self, config: Config, backend, out_dir: str, db=None,
                 progress: Callable[[Progress], None] | None = None):
        if config.batch < 1:
            raise UsageError("the batch size must be at least 1")
        if not config.exhaustive and config.cases < 1:
            raise UsageError("--cases must be at least 1")
        self.config = config
        self.backend = backend
        self.out_dir = out_dir
        self.db = db or load_database()
        self.progress = progress
        self.forms = [self.db.form(name) for name in config.forms]
        for form in self.forms:
            reason = backend.supports(form)
            if reason:
                raise UsageError(f"backend {backend.name}: {reason}")
            if config.exhaustive and _cases.exhaustive_size(form) is None:
                raise UsageError(f"{form.name}: --exhaustive needs a domain of at most 2**32 inputs "
                                 "(unary f32, unary or binary f16/bf16, the upper-word f64 forms)")

    @property
    def checkpoint_path(self) -> str:
        """``OUT/checkpoint.json``."""
        return os.path.join(self.out_dir, CHECKPOINT)

    @property
    def findings_path(self) -> str:
        """``OUT/findings.jsonl``."""
        return os.path.join(self.out_dir, FINDINGS)

    def _recorded(self, form):
        """The backend's recorded cases of ``form`` (vectors backend), else None."""
        recorded = getattr(self.backend, "recorded", None)
        return recorded(form) if recorded is not None else None

    def _fresh_states(self) -> dict[str, FormState]:
        states = {}
        for form in self.forms:
            recorded = self._recorded(form)
            if recorded is not None:
                total = int(recorded[1].size)  # a vector file replays exactly what it recorded
            else:
                total = _cases.exhaustive_size(form) if self.config.exhaustive else self.config.cases
            states[form.name] = FormState(total, math.ceil(total / self.config.batch))
        return states

    def _load(self) -> tuple[dict, dict[str, FormState]]:
        path = self.checkpoint_path
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"{path}: cannot read the checkpoint: {exc}") from exc
        if data.get("format") != FORMAT or "config" not in data:
            raise UsageError(f"{path}: not a tilecheck campaign checkpoint (format {FORMAT})")
        mine = self.config.to_json()
        theirs = data["config"]
        diff = [k for k in mine if theirs.get(k) != mine[k]]
        if diff:
            shown = ", ".join(f"{k}: checkpoint {theirs.get(k)!r}, now {mine[k]!r}" for k in diff)
            raise UsageError(f"{path}: --resume with a different configuration ({shown})")
        states = {name: FormState(**s) for name, s in data["states"].items()}
        return data, states

    def _save(self, states: dict[str, FormState], findings_bytes: int, findings: int, elapsed: float,
              done: bool) -> None:
        _atomic_write(self.checkpoint_path, {
            "format": FORMAT, "config": self.config.to_json(), "backend": self.backend.info(),
            "states": {k: asdict(v) for k, v in states.items()}, "findings_bytes": findings_bytes,
            "findings": findings, "elapsed": round(elapsed, 3), "done": done})

    def run(self, resume: bool = False, stop_after: int | None = None) -> Result:
        """Run (or continue) the campaign; returns the totals. ``stop_after`` ends this run after
        that many batches, checkpointed (a time-sliced campaign continues with ``resume``)."""
        os.makedirs(self.out_dir, exist_ok=True)
        started = time.perf_counter()
        previous = 0.0
        if resume and os.path.exists(self.checkpoint_path):
            data, states = self._load()
            covered = int(data["findings_bytes"])
            have = os.path.getsize(self.findings_path) if os.path.exists(self.findings_path) else -1
            if have < covered:
                raise UsageError(f"{self.findings_path} is shorter ({max(have, 0)} bytes) than the checkpoint "
                                 f"covers ({covered} bytes): findings were lost; start a new campaign")
            writer = FindingsWriter(self.findings_path, truncate_to=covered)
            count = int(data["findings"])
            previous = float(data.get("elapsed", 0.0))
        else:
            if os.path.exists(self.checkpoint_path) and not resume:
                raise UsageError(f"{self.out_dir} already holds a campaign ({CHECKPOINT}); pass --resume to "
                                 "continue it, or choose another --out")
            states = self._fresh_states()
            writer = FindingsWriter(self.findings_path)
            count = 0
            self._save(states, writer.offset, count, 0.0, False)
        resumed_from = sum(s.cases for s in states.values())
        all_total = sum(s.total for s in states.values())
        ran = 0
        try:
            for index, form in enumerate(self.forms):
                state = states[form.name]
                while state.done_batches < state.batches:
                    if stop_after is not None and ran >= stop_after:
                        return Result(self.config, states, self.out_dir, resumed_from,
                                      previous + time.perf_counter() - started, self.backend.info(), finished=False)
                    ran += 1
                    t0 = time.perf_counter()
                    k = state.done_batches
                    count = self._batch(form, k, state, writer, count)
                    state.done_batches += 1
                    state.seconds += time.perf_counter() - t0
                    elapsed = previous + time.perf_counter() - started
                    self._save(states, writer.offset, count, elapsed, False)
                    self._report(index, form, states, all_total, started, resumed_from, False)
            elapsed = previous + time.perf_counter() - started
            self._save(states, writer.offset, count, elapsed, True)
            if self.forms:
                self._report(len(self.forms) - 1, self.forms[-1], states, all_total, started, resumed_from, True)
        finally:
            writer.close()
        return Result(self.config, states, self.out_dir, resumed_from, previous + time.perf_counter() - started,
                      self.backend.info())

    def _operands(self, form, k: int, state: FormState):
        size = min(self.config.batch, state.total - k * self.config.batch)
        if self.config.exhaustive:
            return _cases.exhaustive_batch(form, k, self.config.batch)
        return _cases.batch(form, self.config.seed, k, size)

    def _batch(self, form, k: int, state: FormState, writer: FindingsWriter, count: int) -> int:
        cfg = self.config
        recorded = self._recorded(form)
        if recorded is not None:
            # recorded vectors: judge each line's own result, in file order
            start, stop = k * cfg.batch, min(state.total, (k + 1) * cfg.batch)
            found = disagreements(form, recorded[1][start:stop], [o[start:stop] for o in recorded[0]], cfg.tininess)
        else:
            found = self.backend.judge(form, self._operands(form, k, state), cfg.tininess)
        state.cases += found.cases
        state.mismatches += found.count
        for j in range(found.count):
            if state.recorded >= cfg.max_findings:
                break
            ops = [int(o[j]) for o in found.operands]
            result = int(found.results[j])
            shrunk = None
            if state.shrunk < cfg.shrink and self.backend.runs_any_input:
                shrunk = _shrink(form, self.backend, ops, result, tininess=cfg.tininess)
                state.shrunk += 1
            case = k * cfg.batch + int(found.index[j])
            run = found.labels[j] if found.labels else ""
            extra = f" --vectors {self.backend.file.path}" if recorded is not None else ""
            writer.write(finding(form, ops, result, case=case, batch=k, seed=cfg.seed, backend=self.backend.name,
                                 run=run, shrunk=shrunk, findings_path=self.findings_path, tininess=cfg.tininess,
                                 backend_args=extra))
            state.recorded += 1
            count += 1
        return count

    def _report(self, index, form, states, all_total, started, resumed_from, finished) -> None:
        if self.progress is None:
            return
        state = states[form.name]
        elapsed = time.perf_counter() - started
        done = sum(s.cases for s in states.values())
        rate = (done - resumed_from) / elapsed if elapsed > 0 else 0.0
        self.progress(Progress(form.name, index, len(self.forms), state.cases, state.total, state.mismatches,
                               done, all_total, sum(s.mismatches for s in states.values()), rate, elapsed,
                               finished))
