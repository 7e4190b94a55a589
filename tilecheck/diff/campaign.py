"""Resumable differential campaigns: random fuzzing and exhaustive sweeps that lose nothing.

A campaign runs forms one after the other, each in batches of a fixed size. Batch ``k`` of a form
is a pure function of the configuration (:func:`run_batch`): random campaigns use
:func:`tilecheck.diff.cases.batch` (``default_rng([seed, form, k])``), exhaustive sweeps the points
``[k*B, (k+1)*B)`` of the form's domain, and a vectors backend its recorded cases in file order.
Batches are therefore the unit of work: an executor may compute them anywhere and in any order
(:class:`SerialExecutor` here, one after the other; :class:`tilecheck.diff.distributed.DaskExecutor`
on a Dask cluster), and the campaign merges them strictly in batch order. After every merged
batch the campaign

1. appends each new finding to ``findings.jsonl`` (flushed per finding, fsynced per batch), shrinking
   the first ``shrink`` findings of each form to minimal reports;
2. appends a line to ``batches.jsonl``: where the batch ran (device, worker) and how long it took;
3. rewrites ``checkpoint.json`` atomically (temporary file, fsync, rename): configuration,
   position (form, next batch), counts per form, and the size of ``findings.jsonl`` it covers.

``checkpoint.json`` and ``findings.jsonl`` hold only what the configuration determines (no times,
no worker names), so a serial run, a sharded run and a killed-and-resumed run of one configuration
write them byte for byte the same. Times and placements live in ``batches.jsonl``.

``resume=True`` reads the checkpoint, checks that the configuration is the same, truncates
``findings.jsonl`` to the size the checkpoint covers (dropping findings a killed run wrote after
it), ``batches.jsonl`` to the batches it covers, and continues with the next batch.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Callable, Iterable, Iterator

from tilecheck.diff import backends
from tilecheck.diff import cases as _cases
from tilecheck.diff.findings import FindingsWriter, finding
from tilecheck.diff.shrink import Shrunk
from tilecheck.diff.shrink import shrink as _shrink
from tilecheck.diff.support import Support
from tilecheck.diff.vectors import read_vectors
from tilecheck.diff.verdict import disagreements
from tilecheck.errors import UsageError
from tilecheck.spec.contract import ULP_READING_DEFAULT, ULP_READINGS
from tilecheck.spec.database import load_database
from tilecheck.spec.registry import TININESS, TININESS_DEFAULT

__all__ = ["Config", "FormState", "Progress", "Result", "Campaign", "BackendSpec", "BackendView", "BatchOutcome",
           "SerialExecutor", "run_batch", "shrink_case", "describe_backend", "read_checkpoint", "CHECKPOINT",
           "FINDINGS", "BATCHES", "FORMAT"]

CHECKPOINT = "checkpoint.json"
FINDINGS = "findings.jsonl"
BATCHES = "batches.jsonl"
FORMAT = 2
"""Checkpoint format: 2 records every backend setting (target, GPU code path, vector file)."""



@dataclass(frozen=True)
class Config:
    """What a campaign does; a resumed run must have the same configuration.

    ``cases`` per form (ignored with ``exhaustive``), ``batch`` cases per batch, ``backend`` the
    resolved backend name, ``shrink`` findings per form to shrink, ``max_findings`` findings per
    form to record (mismatches beyond it are still counted), ``tininess`` the model's ``.ftz``
    convention for the verdict, ``ulp_reading`` its reading of approximate forms' ulp bounds
    (:mod:`tilecheck.spec.contract`), ``target`` the PTX target of emitted kernels (None: the default),
    ``gpu_code`` the GPU code paths (``jit``, ``cubin``, ``both``; None: the default), ``vectors``
    the recorded-vector file of the vectors backend.
    """

    forms: tuple[str, ...]
    seed: int = 0
    cases: int = 100_000
    exhaustive: bool = False
    batch: int = 65_536
    backend: str = "cpu"
    shrink: int = 20
    max_findings: int = 1000
    tininess: str = TININESS_DEFAULT
    target: str | None = None
    gpu_code: str | None = None
    vectors: str | None = None
    ulp_reading: str = ULP_READING_DEFAULT

    def to_json(self) -> dict:
        """The configuration as JSON-ready data."""
        data = asdict(self)
        data["forms"] = list(self.forms)
        return data

    @classmethod
    def from_json(cls, data, where: str = "configuration") -> "Config":
        """The configuration ``data`` (from a checkpoint) describes, every field type-checked;
        a wrong one is a :class:`~tilecheck.errors.UsageError` naming ``where``."""
        if not isinstance(data, dict):
            raise UsageError(f"{where}: the configuration is not a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"{where}: unknown configuration field(s) {', '.join(unknown)}")
        if "forms" not in data:
            raise UsageError(f"{where}: the configuration names no forms")
        forms = data["forms"]
        if not isinstance(forms, list) or not forms or not all(isinstance(f, str) for f in forms):
            raise UsageError(f"{where}: 'forms' must be a non-empty list of form names")
        ints = {"seed": 0, "cases": 1, "batch": 1, "shrink": 0, "max_findings": 0}
        for name, low in ints.items():
            value = data.get(name, getattr(cls, name))
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UsageError(f"{where}: {name!r} must be an integer of at least {low}, got {value!r}")
        if not isinstance(data.get("exhaustive", False), bool):
            raise UsageError(f"{where}: 'exhaustive' must be true or false")
        if data.get("tininess", TININESS_DEFAULT) not in TININESS:
            raise UsageError(f"{where}: 'tininess' must be 'after' or 'before'")
        if data.get("ulp_reading", ULP_READING_DEFAULT) not in ULP_READINGS:
            raise UsageError(f"{where}: 'ulp_reading' must be one of {', '.join(ULP_READINGS)}")
        if not isinstance(data.get("backend", "cpu"), str):
            raise UsageError(f"{where}: 'backend' must be a backend name")
        for name in ("target", "gpu_code", "vectors"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise UsageError(f"{where}: {name!r} must be a string or null")
        return cls(**{**data, "forms": tuple(forms)})

    def backend_options(self) -> list[str]:
        """The ``tilecheck fuzz`` options that select this configuration's backend exactly."""
        out = ["--backend", self.backend]
        for option, value in (("--target", self.target), ("--gpu-code", self.gpu_code),
                              ("--vectors", self.vectors)):
            if value is not None:
                out += [option, value]
        return out

    def options(self) -> list[str]:
        """Every ``tilecheck fuzz`` option of this configuration (backend, verdict, sizes)."""
        out = self.backend_options()
        out += ["--exhaustive"] if self.exhaustive else ["--cases", str(self.cases)]
        out += ["--seed", str(self.seed), "--batch", str(self.batch), "--shrink", str(self.shrink),
                "--max-findings", str(self.max_findings), "--tininess", self.tininess,
                "--ulp-reading", self.ulp_reading]
        return out


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


@dataclass
class Progress:
    """What a progress callback sees after each merged batch (``workers``: Dask workers alive,
    None for a serial run)."""

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
    workers: int | None = None


@dataclass
class Result:
    """The outcome of :meth:`Campaign.run`: per-form states, totals, output paths.

    ``seconds``: wall time of this run; ``compute`` per form: seconds its batches took where they
    ran (all runs of the campaign, from ``batches.jsonl``; on several workers, more than the wall
    time)."""

    config: Config
    states: dict[str, FormState]
    out_dir: str
    resumed_from: int = 0
    seconds: float = 0.0
    backend_info: dict = field(default_factory=dict)
    finished: bool = True
    compute: dict[str, float] = field(default_factory=dict)

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


# ---------------------------------------------------------------------------------------------
# batches: pure functions of (backend, configuration, form, index)


@dataclass(frozen=True)
class BackendSpec:
    """How to build a backend in any process: the arguments of
    :func:`tilecheck.diff.backends.select`, or a picklable ``factory`` returning a backend (tests'
    fault-injecting backends). Executors send the spec, never a backend, to where batches run."""

    name: str
    target: str | None = None
    gpu_code: str | None = None
    vectors: str | None = None
    factory: Callable | None = None
    certify: bool = False
    """Judge certified forms by certificate (exhaustive sweeps; see :mod:`tilecheck.diff.backends`)."""

    @classmethod
    def of(cls, config: Config) -> "BackendSpec":
        """The spec of a configuration's backend (exhaustive sweeps are judged by certificate)."""
        return cls(config.backend, config.target, config.gpu_code, config.vectors, certify=bool(config.exhaustive))

    def build(self, *, db):
        """A new backend as this spec says."""
        if self.factory is not None:
            return self.factory()
        vectors = None
        if self.vectors is not None:
            vectors = read_vectors(self.vectors, db=db)
        modes = {None: None, "both": ("jit", "cubin"), "jit": ("jit",), "cubin": ("cubin",)}.get(self.gpu_code)
        return backends.select(self.name, db=db, target=self.target, vectors=vectors, gpu_modes=modes,
                               certify=self.certify)


_BACKENDS: dict = {}
"""Backends built in this process, by spec (a worker builds each once: kernels stay cached)."""


def worker_database():
    """The spec database of this process, for the functions a campaign runs in other processes
    (each such process is an entry point: it loads the database once, from its spec root)."""
    return load_database()


def backend_for(spec: BackendSpec):
    """This process's backend for ``spec`` (built on first use)."""
    if spec not in _BACKENDS:
        _BACKENDS[spec] = spec.build(db=worker_database())
    return _BACKENDS[spec]


@dataclass(frozen=True)
class BackendView:
    """What a campaign needs to know of a backend that runs elsewhere: name, details, which forms
    it cannot run and why, the recorded case counts of a vectors backend, whether it can shrink."""

    name: str
    details: dict
    reasons: dict
    totals: dict
    runs_any_input: bool = True

    def info(self) -> dict:
        """Name and details, as :meth:`tilecheck.diff.backends.Backend.info`."""
        return {"backend": self.name, **self.details}

    def support(self, form) -> Support:
        """Whether the backend can run ``form`` (the reason when it cannot)."""
        return Support(self.reasons.get(form.name))

    def recorded_total(self, form) -> int | None:
        """Recorded cases of ``form`` (vectors backend), else None."""
        return self.totals.get(form.name)


def _recorded(backend, form):
    recorded = getattr(backend, "recorded", None)
    return recorded(form) if recorded is not None else None


def _recorded_total(backend, form) -> int | None:
    if isinstance(backend, BackendView):
        return backend.recorded_total(form)
    recorded = _recorded(backend, form)
    return int(recorded[1].size) if recorded is not None else None


def describe_backend(spec: BackendSpec, form_names: Iterable[str]) -> BackendView:
    """Build ``spec``'s backend here and describe it (run on a worker by a distributed campaign,
    so that the client needs no GPU)."""
    db = worker_database()
    backend = backend_for(spec)
    reasons, totals = {}, {}
    for name in form_names:
        form = db.form(name)
        support = backend.support(form)
        if not support.ok:
            reasons[name] = support.reason
        total = _recorded_total(backend, form)
        if total is not None:
            totals[name] = total
    return BackendView(backend.name, dict(backend.details), reasons, totals, bool(backend.runs_any_input))


def form_total(config: Config, backend, form) -> int:
    """Cases of ``form`` in the campaign: recorded cases, the exhaustive domain, or ``cases``."""
    recorded = _recorded_total(backend, form)
    if recorded is not None:
        return recorded  # a vector file replays exactly what it recorded
    return _cases.exhaustive_size(form) if config.exhaustive else config.cases


@dataclass(frozen=True)
class BatchOutcome:
    """What one batch gave: cases judged, mismatches, the first ``max_findings`` rejected cases
    ``(operands, result, index in the batch, run label)``, where it ran and how long it took."""

    form: str
    index: int
    cases: int
    mismatches: int
    found: tuple
    device: str
    worker: str
    seconds: float


def device_label(backend) -> str:
    """Which device a backend runs on: ``gpuN NAME`` (with its PCI bus id and the worker's
    ``CUDA_VISIBLE_DEVICES`` when known) for the gpu backend, else the backend name."""
    if backend.name != "gpu":
        return backend.name
    device = getattr(backend, "device", None)
    index = getattr(device, "id", 0)
    label = f"gpu{index} {backend.details.get('gpu', '')}".strip()
    where = []
    pci = getattr(device, "pci_bus_id", None)  # CuPy asks the driver; tells identical boards apart
    if isinstance(pci, str) and pci:
        where.append(f"PCI {pci}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        where.append(f"CUDA_VISIBLE_DEVICES={visible}")
    return f"{label} ({', '.join(where)})" if where else label


def worker_name() -> str:
    """The Dask worker running this batch, else ``host:pid``. Dask is consulted only when a Dask
    worker already imported it (a serial campaign imports no Dask)."""
    dist = sys.modules.get("distributed")
    if dist is not None:
        try:
            return str(dist.get_worker().address)
        except ValueError:  # not inside a worker task
            pass
    return f"{socket.gethostname()}:{os.getpid()}"


def compute_batch(backend, db, config: Config, form_name: str, index: int) -> BatchOutcome:
    """Batch ``index`` of ``form_name`` judged on ``backend`` (a pure function of the arguments
    but for ``worker`` and ``seconds``)."""
    t0 = time.perf_counter()
    form = db.form(form_name)
    total = form_total(config, backend, form)
    start, stop = index * config.batch, min(total, (index + 1) * config.batch)
    if start >= stop:
        raise UsageError(f"{form_name}: batch {index} is past the end of the campaign ({total} cases)")
    recorded = _recorded(backend, form)
    if recorded is not None:
        # recorded vectors: judge each line's own result, in file order
        found = disagreements(form, recorded[1][start:stop], [o[start:stop] for o in recorded[0]],
                              config.tininess, config.ulp_reading)
    elif config.exhaustive:
        found = backend.judge(form, _cases.exhaustive_batch(form, index, config.batch), config.tininess,
                              config.ulp_reading)
    else:
        found = backend.judge(form, _cases.batch(form, config.seed, index, stop - start), config.tininess,
                              config.ulp_reading)
    keep = []
    for j in range(min(found.count, config.max_findings)):
        keep.append((tuple(int(o[j]) for o in found.operands), int(found.results[j]), int(found.index[j]),
                     found.labels[j] if found.labels else ""))
    return BatchOutcome(form_name, index, int(found.cases), int(found.count), tuple(keep), device_label(backend),
                        worker_name(), time.perf_counter() - t0)


def run_batch(spec: BackendSpec, config: Config, form_name: str, index: int) -> BatchOutcome:
    """:func:`compute_batch` on this process's backend for ``spec`` (what a worker runs)."""
    return compute_batch(backend_for(spec), worker_database(), config, form_name, index)


def shrink_case(spec: BackendSpec, form_name: str, operands: tuple, result: int, tininess: str,
                ulp_reading: str = ULP_READING_DEFAULT) -> Shrunk:
    """:func:`tilecheck.diff.shrink.shrink` on this process's backend for ``spec``."""
    return _shrink(worker_database().form(form_name), backend_for(spec), operands, result, tininess=tininess,
                   ulp_reading=ulp_reading)


class SerialExecutor:
    """Runs batches one after the other in this process, on a backend instance."""

    def __init__(self, backend, db):
        self.backend = backend
        self.db = db

    def outcomes(self, config: Config, jobs: Iterable[tuple[str, int]]) -> Iterator[BatchOutcome]:
        """The outcome of each ``(form, index)`` job, in order, computed when asked for."""
        for form_name, index in jobs:
            yield compute_batch(self.backend, self.db, config, form_name, index)

    def shrink(self, form, operands, result: int, tininess: str, ulp_reading: str = ULP_READING_DEFAULT) -> Shrunk:
        """Shrink one finding here."""
        return _shrink(form, self.backend, operands, result, tininess=tininess, ulp_reading=ulp_reading)

    def workers(self) -> int | None:
        """None: not a cluster."""
        return None

    def close(self) -> None:
        """Nothing to release."""


# ---------------------------------------------------------------------------------------------
# checkpoints


def atomic_write(path: str, data: dict) -> None:
    """Write ``data`` as JSON to ``path`` so that a kill at any moment leaves the old file or the
    new one: a temporary file, fsynced, renamed over ``path``, and the folder fsynced."""
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


_STATE_FIELDS = [f.name for f in fields(FormState)]


def read_checkpoint(path: str) -> tuple[dict, Config, dict[str, FormState]]:
    """The checkpoint at ``path``: its data, configuration and per-form states, every field
    checked; an unreadable, binary, truncated or wrongly typed file is a
    :class:`~tilecheck.errors.UsageError` saying what is wrong."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the checkpoint: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not a tilecheck campaign checkpoint (binary data at byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: error: not a tilecheck campaign checkpoint "
                         f"(invalid JSON: {exc.msg})") from exc
    if not isinstance(data, dict) or "config" not in data or "format" not in data:
        raise UsageError(f"{path}: not a tilecheck campaign checkpoint (a JSON object with 'format' and "
                         "'config' expected)")
    if data["format"] != FORMAT:
        raise UsageError(f"{path}: checkpoint format {data['format']!r}, this tilecheck reads format {FORMAT}; "
                         "start a new campaign")
    config = Config.from_json(data["config"], path)
    states_data = data.get("states")
    if not isinstance(states_data, dict) or list(states_data) != list(config.forms):
        raise UsageError(f"{path}: 'states' must hold one entry per form of the configuration, in order")
    states = {}
    for name, s in states_data.items():
        if not isinstance(s, dict) or set(s) != set(_STATE_FIELDS) or not all(
                isinstance(s[k], int) and not isinstance(s[k], bool) and s[k] >= 0 for k in _STATE_FIELDS):
            raise UsageError(f"{path}: the state of {name} must hold the non-negative integers "
                             f"{', '.join(_STATE_FIELDS)}")
        st = FormState(**s)
        if st.done_batches > st.batches or st.cases > st.total or st.recorded > st.mismatches:
            raise UsageError(f"{path}: the state of {name} is inconsistent ({s})")
        states[name] = st
    for key in ("findings_bytes", "findings"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"{path}: {key!r} must be a non-negative integer")
    if not isinstance(data.get("done"), bool):
        raise UsageError(f"{path}: 'done' must be true or false")
    return data, config, states


def read_log(path: str, keep: int) -> tuple[int, list[dict]]:
    """The first ``keep`` complete lines of a batch log: their byte size and records."""
    size, records = 0, []
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if len(records) >= keep or not line.endswith(b"\n"):
                    break
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    break
                if not isinstance(rec, dict):
                    break
                records.append(rec)
                size += len(line)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the batch log: {exc.strerror or exc}") from exc
    return size, records


class Campaign:
    """One campaign: ``config`` over ``backend``, output in ``out_dir`` (see the module docstring).

    ``backend`` is a backend instance, or a :class:`BackendView` when ``executor`` runs the
    batches elsewhere; ``executor`` defaults to a :class:`SerialExecutor` on ``backend``.
    """

    def __init__(self, config: Config, backend, out_dir: str, *, db,
                 progress: Callable[[Progress], None] | None = None, executor=None):
        if config.batch < 1:
            raise UsageError("the batch size must be at least 1")
        if not config.exhaustive and config.cases < 1:
            raise UsageError("--cases must be at least 1")
        if config.shrink < 0 or config.max_findings < 0:
            raise UsageError("--shrink and --max-findings must be at least 0")
        if config.tininess not in TININESS:
            raise UsageError("tininess must be 'after' or 'before'")
        if config.ulp_reading not in ULP_READINGS:
            raise UsageError(f"ulp_reading must be one of {', '.join(ULP_READINGS)}")
        self.config = config
        self.backend = backend
        self.out_dir = out_dir
        self.db = db
        self.progress = progress
        if executor is None:
            if isinstance(backend, BackendView):
                raise UsageError("a campaign on a described backend needs the executor that runs it")
            executor = SerialExecutor(backend, self.db)
        self.executor = executor
        self.forms = [self.db.form(name) for name in config.forms]
        for form in self.forms:
            support = backend.support(form)
            if not support.ok:
                raise UsageError(f"backend {backend.name}: {support.reason}")
            if config.exhaustive and _recorded_total(backend, form) is None and _cases.exhaustive_size(form) is None:
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

    @property
    def batches_path(self) -> str:
        """``OUT/batches.jsonl``."""
        return os.path.join(self.out_dir, BATCHES)

    def _fresh_states(self) -> dict[str, FormState]:
        states = {}
        for form in self.forms:
            total = form_total(self.config, self.backend, form)
            states[form.name] = FormState(total, math.ceil(total / self.config.batch))
        return states

    def _load(self) -> tuple[dict, dict[str, FormState]]:
        path = self.checkpoint_path
        data, theirs, states = read_checkpoint(path)
        mine = self.config.to_json()
        diff = [k for k in mine if theirs.to_json().get(k) != mine[k]]
        if diff:
            shown = ", ".join(f"{k}: checkpoint {theirs.to_json().get(k)!r}, now {mine[k]!r}" for k in diff)
            raise UsageError(f"{path}: --resume with a different configuration ({shown})")
        fresh = self._fresh_states()
        for name, st in states.items():
            if (st.total, st.batches) != (fresh[name].total, fresh[name].batches):
                raise UsageError(f"{path}: {name} has {st.total} cases in the checkpoint, {fresh[name].total} now "
                                 "(a changed vector file?); start a new campaign")
        return data, states

    def _save(self, states: dict[str, FormState], findings_bytes: int, findings: int, done: bool) -> None:
        atomic_write(self.checkpoint_path, {
            "format": FORMAT, "config": self.config.to_json(), "backend": self.backend.info(),
            "states": {k: asdict(v) for k, v in states.items()}, "findings_bytes": findings_bytes,
            "findings": findings, "done": done})

    def _prepare_out(self) -> None:
        """Create the output folder; a file in the way or an unwritable place is a usage error."""
        if os.path.exists(self.out_dir) and not os.path.isdir(self.out_dir):
            raise UsageError(f"--out {self.out_dir}: exists and is not a folder")
        try:
            os.makedirs(self.out_dir, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out {self.out_dir}: cannot create the folder: {exc.strerror or exc}") from exc
        if not os.access(self.out_dir, os.W_OK | os.X_OK):
            raise UsageError(f"--out {self.out_dir}: the folder is not writable")

    def run(self, resume: bool = False, stop_after: int | None = None) -> Result:
        """Run (or continue) the campaign; returns the totals. ``stop_after`` ends this run after
        that many batches, checkpointed (a time-sliced campaign continues with ``resume``).
        ``resume`` needs a checkpoint in the output folder."""
        if resume and not os.path.isfile(self.checkpoint_path):
            raise UsageError(f"--resume: {self.out_dir} holds no campaign checkpoint ({CHECKPOINT}); "
                             "start the campaign without --resume")
        self._prepare_out()
        started = time.perf_counter()
        try:
            if resume:
                data, states = self._load()
                covered = int(data["findings_bytes"])
                have = os.path.getsize(self.findings_path) if os.path.exists(self.findings_path) else -1
                if have < covered:
                    raise UsageError(f"{self.findings_path} is shorter ({max(have, 0)} bytes) than the checkpoint "
                                     f"covers ({covered} bytes): findings were lost; start a new campaign")
                writer = FindingsWriter(self.findings_path, truncate_to=covered)
                count = int(data["findings"])
                log_size, log = read_log(self.batches_path, sum(s.done_batches for s in states.values()))
            else:
                if os.path.exists(self.checkpoint_path):
                    raise UsageError(f"{self.out_dir} already holds a campaign ({CHECKPOINT}); pass --resume to "
                                     "continue it, or choose another --out")
                states = self._fresh_states()
                writer = FindingsWriter(self.findings_path)
                count = 0
                log_size, log = 0, []
                self._save(states, writer.offset, count, False)
        except OSError as exc:  # e.g. a findings.jsonl that is a folder, a file made read-only
            raise UsageError(f"--out {self.out_dir}: {exc.strerror or exc}: {exc.filename}") from exc
        compute: dict[str, float] = {form.name: 0.0 for form in self.forms}
        for rec in log:
            if rec.get("form") in compute and isinstance(rec.get("seconds"), (int, float)):
                compute[rec["form"]] += float(rec["seconds"])
        resumed_from = sum(s.cases for s in states.values())
        all_total = sum(s.total for s in states.values())
        index_of = {form.name: i for i, form in enumerate(self.forms)}
        jobs = ((form.name, k) for form in self.forms
                for k in range(states[form.name].done_batches, states[form.name].batches))
        ran = 0
        finished = True
        outcomes = self.executor.outcomes(self.config, jobs)
        try:
            with open(self.batches_path, "ab") as log_fh:
                log_fh.truncate(log_size)
                while True:
                    if stop_after is not None and ran >= stop_after and any(
                            s.done_batches < s.batches for s in states.values()):
                        finished = False
                        break
                    try:
                        outcome = next(outcomes)
                    except StopIteration:
                        break
                    ran += 1
                    form = self.forms[index_of[outcome.form]]
                    state = states[form.name]
                    if outcome.index != state.done_batches:  # executors must deliver in order
                        raise RuntimeError(f"batch {outcome.form}#{outcome.index} arrived out of order")
                    count = self._merge(form, outcome, state, writer, count)
                    state.done_batches += 1
                    compute[form.name] += outcome.seconds
                    log_fh.write((json.dumps({"form": outcome.form, "batch": outcome.index, "cases": outcome.cases,
                                              "mismatches": outcome.mismatches, "device": outcome.device,
                                              "worker": outcome.worker, "seconds": round(outcome.seconds, 4)})
                                  + "\n").encode("utf-8"))
                    log_fh.flush()
                    writer.sync()  # what the checkpoint covers is on disk before the checkpoint
                    self._save(states, writer.offset, count, False)
                    self._report(index_of[form.name], form, states, all_total, started, resumed_from, False)
            if finished:
                self._save(states, writer.offset, count, True)
                if self.forms:
                    self._report(len(self.forms) - 1, self.forms[-1], states, all_total, started, resumed_from,
                                 True)
        finally:
            close = getattr(outcomes, "close", None)
            if close is not None:
                close()  # cancels what a distributed executor still has in flight
            writer.close()
        return Result(self.config, states, self.out_dir, resumed_from, time.perf_counter() - started,
                      self.backend.info(), finished=finished, compute=compute)

    def _merge(self, form, outcome: BatchOutcome, state: FormState, writer: FindingsWriter, count: int) -> int:
        """Fold one batch (the next in order) into the states and the findings file."""
        cfg = self.config
        state.cases += outcome.cases
        state.mismatches += outcome.mismatches
        for ops, result, position, run in outcome.found:
            if state.recorded >= cfg.max_findings:
                break
            shrunk = None
            if state.shrunk < cfg.shrink and self.backend.runs_any_input:
                shrunk = self.executor.shrink(form, ops, result, cfg.tininess, cfg.ulp_reading)
                state.shrunk += 1
            case = outcome.index * cfg.batch + position
            writer.write(finding(form, list(ops), result, case=case, batch=outcome.index, seed=cfg.seed,
                                 backend=cfg.backend, run=run, shrunk=shrunk, findings_path=self.findings_path,
                                 tininess=cfg.tininess, ulp_reading=cfg.ulp_reading, target=cfg.target,
                                 gpu_code=cfg.gpu_code,
                                 vectors=cfg.vectors, device=outcome.device if cfg.backend == "gpu" else ""))
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
                               finished, self.executor.workers()))
