"""``tilecheck fuzz FORM...``: differential fuzzing campaigns and exhaustive sweeps that lose nothing.

Runs each form's cases on a backend and judges every result with the model
(:func:`tilecheck.allowed`). Mismatches stream to ``OUT/findings.jsonl`` as they are found, each
shrunk to a minimal report with a one-line repro command; ``OUT/checkpoint.json`` is rewritten
atomically after every batch, so a campaign killed at any point continues with ``--resume``
without repeating or losing a case. ``--exhaustive`` sweeps every input of forms with at most 2**32
(``sqrt.rn.f32``: all 2**32 patterns; on a CPU the model's own results, each judged by a certificate
of correct rounding, :mod:`tilecheck.diff.certificate`, which shares no arithmetic with the model;
forms without a certificate are judged by :func:`tilecheck.allowed`).
``--replay FILE`` re-runs recorded findings, each with the settings recorded with it
(tininess, backend, target, GPU code path, vector file; an option given on the command line
overrides). ``--resume`` takes the forms and every option from the checkpoint. ``--workers N``
runs the batches on a local Dask cluster of N processes (one per GPU with ``--backend gpu``),
``--scheduler ADDRESS`` on an existing one (:mod:`tilecheck.diff.distributed`); the checkpoint and
the findings are the same as a serial run's. Exit 0 when nothing disagreed, 1 on any mismatch,
2 on usage or environment errors.

Backends: ``auto`` (gpu when CuPy sees a device; otherwise ``reference`` for exhaustive sweeps of
certified forms, ``host`` for the other forms it covers, else ``cpu``), ``cpu`` (emitted PTX
executed by tilecheck's simulator), ``gpu`` (CuPy), ``host`` (numpy IEEE arithmetic: rounds as the
model's binary32 fast path does, so not independent of it), ``model`` (the model's exact path),
``reference`` (the model's public evaluation, judged by certificate), ``vectors`` (recorded
results, ``--vectors FILE``).
"""

from __future__ import annotations

import os
import shlex
import sys
import time

import numpy as np

from tilecheck.commands.options import add_dask_options, dask_banner, nonnegative_int, on_dask, positive_int
from tilecheck.diff import backends
from tilecheck.diff.backends import NAMES, verdict_text
from tilecheck.diff.campaign import CHECKPOINT, BackendSpec, Campaign, Config, read_checkpoint
from tilecheck.diff.cases import source_layout
from tilecheck.diff.distributed import DaskExecutor
from tilecheck.diff.findings import read_findings, replay_command
from tilecheck.errors import Location, UnknownFormError, UsageError
from tilecheck.spec.contract import ULP_READING_DEFAULT, ULP_READINGS
from tilecheck.spec.database import load_database
from tilecheck.spec.registry import TININESS, TININESS_DEFAULT


def add_parser(sub):
    """Register the ``fuzz`` subcommand."""
    p = sub.add_parser("fuzz", help="differential fuzzing campaigns and exhaustive sweeps (resumable)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("forms", nargs="*", metavar="FORM",
                   help="forms to fuzz (div.rn.f32 ...); a family name (div) takes all its forms")
    # None marks an option not given: --resume then takes it from the checkpoint, --replay from
    # each finding, a new campaign from DEFAULTS
    size = p.add_mutually_exclusive_group()
    size.add_argument("--cases", type=positive_int, default=None, help="cases per form (default 100000)")
    size.add_argument("--exhaustive", action="store_true", default=None,
                      help="every input (domains of at most 2**32 points)")
    p.add_argument("--seed", type=nonnegative_int, default=None, help="campaign seed (default 0)")
    p.add_argument("--backend", default=None, choices=("auto", "cpu", "gpu", "host", "model", "reference", "vectors"),
                   help="where the cases run (default auto)")
    p.add_argument("--vectors", metavar="FILE", help="recorded results for --backend vectors")
    p.add_argument("--gpu-code", choices=("jit", "cubin", "both"), default=None,
                   help="gpu backend: PTX through the driver JIT, a local-ptxas cubin, or both "
                        "(default: both when ptxas is present)")
    p.add_argument("--target", help="PTX target of the emitted kernels (default: the database's, or the device's)")
    p.add_argument("--out", default="fuzz-out", metavar="DIR",
                   help="campaign directory: checkpoint.json, findings.jsonl, batches.jsonl (default ./fuzz-out)")
    p.add_argument("--resume", action="store_true",
                   help="continue the campaign in --out after its last checkpoint, with its forms and options")
    p.add_argument("--replay", metavar="FILE", help="re-run the findings recorded in a findings.jsonl")
    p.add_argument("--batch", type=positive_int, default=None,
                   help="cases per batch and checkpoint (default 65536; 4194304 for exhaustive sweeps)")
    p.add_argument("--shrink", type=nonnegative_int, default=None, metavar="N", help="findings per form to shrink (default 20)")
    p.add_argument("--max-findings", type=nonnegative_int, default=None, metavar="N",
                   help="findings per form written to the JSONL (mismatches beyond are counted; default 1000)")
    p.add_argument("--tininess", choices=TININESS, default=None,
                   help="the model's .ftz convention for the verdict (default after)")
    p.add_argument("--ulp-reading", choices=ULP_READINGS, default=None,
                   help="how approximate forms' ulp bounds are read: from the exact value, from the correctly "
                        "rounded result (the CUDA guide's), or either (default: either)")
    p.add_argument("--stop-after", type=positive_int, default=None, metavar="N",
                   help="stop after N batches of this run, checkpointed (continue later with --resume)")
    add_dask_options(p, "run the batches on a local Dask cluster of N worker processes (--backend gpu: one "
                        "per GPU); needs tilecheck[dist]")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


DEFAULTS = {"cases": 100_000, "exhaustive": False, "seed": 0, "backend": "auto", "shrink": 20,
            "max_findings": 1000, "tininess": TININESS_DEFAULT, "target": None, "gpu_code": None, "vectors": None,
            "ulp_reading": ULP_READING_DEFAULT}
"""Option values of a new campaign when not given (``batch`` depends on ``exhaustive``)."""


def _forms(db, names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if name in db.families:
            out += [f.name for f in db.families[name].forms]
        else:
            out.append(db.form(name).name)
    return list(dict.fromkeys(out))


def _check_numbers(args) -> None:
    """Refuse nonsense sizes before anything runs (argparse has checked the signs; this is for
    callers that build the namespace themselves)."""
    for option, value, low in (("--cases", args.cases, 1), ("--batch", args.batch, 1), ("--shrink", args.shrink, 0),
                               ("--max-findings", args.max_findings, 0), ("--stop-after", args.stop_after, 1),
                               ("--workers", args.workers, 1)):
        if value is not None and value < low:
            raise UsageError(f"{option} must be at least {low}, got {value}")
    if args.seed is not None and not 0 <= args.seed < 1 << 64:
        raise UsageError(f"--seed must be in 0 .. 2**64-1, got {args.seed}")


def _resolve_backend(name: str, exhaustive: bool, forms, db, vectors: str | None) -> str:
    """The concrete backend name: ``vectors`` with a vector file, ``auto`` resolved (gpu when CuPy
    sees a device; for exhaustive sweeps reference when the certificate covers every form, else host
    when it does; else cpu)."""
    if vectors:
        if name not in ("vectors", "auto"):
            raise UsageError("--vectors goes with --backend vectors")
        return "vectors"
    if name == "vectors":
        raise UsageError("the vectors backend needs a vector file (--vectors FILE)")
    if name != "auto":
        return name
    if backends.gpu_status(db=db).available:
        return "gpu"
    if exhaustive and all(backends.ReferenceBackend().support(db.form(f)).ok for f in forms):
        return "reference"
    if exhaustive and all(backends.HostBackend().support(db.form(f)).ok for f in forms):
        return "host"
    return "cpu"


def _new_config(args, db):
    if not args.forms:
        raise UsageError("name at least one FORM to fuzz (or --replay FILE, or --resume --out DIR)")
    forms = _forms(db, args.forms)
    opt = {k: (getattr(args, k) if getattr(args, k) is not None else v) for k, v in DEFAULTS.items()}
    backend = _resolve_backend(opt["backend"], opt["exhaustive"], forms, db, opt["vectors"])
    batch = args.batch or (1 << 22 if opt["exhaustive"] else 1 << 16)
    return Config(tuple(forms), seed=opt["seed"], cases=opt["cases"], exhaustive=opt["exhaustive"], batch=batch,
                  backend=backend, shrink=opt["shrink"], max_findings=opt["max_findings"], tininess=opt["tininess"],
                  target=opt["target"], gpu_code=opt["gpu_code"], vectors=opt["vectors"],
                  ulp_reading=opt["ulp_reading"])


def _resumed_config(args, db):
    """The checkpoint's configuration; options given on the command line must agree with it."""
    path = os.path.join(args.out, CHECKPOINT)
    if not os.path.isfile(path):
        raise UsageError(f"--resume: {args.out} holds no campaign checkpoint ({CHECKPOINT}); start the campaign "
                         "without --resume")
    _, config, _ = read_checkpoint(path)
    given = {k: getattr(args, k) for k in (*DEFAULTS, "batch") if getattr(args, k) is not None}
    if given.get("backend") == "auto":
        given.pop("backend")
    if given.get("exhaustive") is False:
        given.pop("exhaustive")
    if args.forms:
        given["forms"] = tuple(_forms(db, args.forms))
    wrong = [f"{k.replace('_', '-')}: checkpoint {getattr(config, k)!r}, given {v!r}"
             for k, v in given.items() if getattr(config, k) != v]
    if wrong:
        raise UsageError(f"{path}: --resume continues the campaign as it was started; these differ: "
                         + "; ".join(wrong))
    return config


def run(args) -> int:
    """Run the campaign (or the replay) and print the summary; returns the exit code."""
    _check_numbers(args)
    if args.replay:
        if args.forms:
            raise UsageError("--replay takes no FORM arguments (the findings name their forms)")
        if args.resume or on_dask(args):
            raise UsageError("--replay runs in this process: it takes no --resume, --workers or --scheduler")
        return _replay(args, load_database())
    db = load_database()
    config = _resumed_config(args, db) if args.resume else _new_config(args, db)
    if on_dask(args):
        return _campaign_on_dask(args, db, config)
    return _campaign(args, db, config, BackendSpec.of(config).build(db=db), None)


def _campaign_on_dask(args, db, config) -> int:
    executor = DaskExecutor.start(BackendSpec.of(config), workers=args.workers, scheduler=args.scheduler)
    try:
        sys.stderr.write(dask_banner(args, executor.address, executor.workers(), executor.dashboard))
        sys.stderr.flush()
        view = executor.describe(config.forms)
        return _campaign(args, db, config, view, executor)
    finally:
        executor.close()


def _campaign(args, db, config, backend, executor) -> int:
    out = sys.stdout
    info = ", ".join(f"{k} {v}" for k, v in backend.info().items() if k != "backend")
    what = "every input" if config.exhaustive else f"{config.cases} cases per form"
    if backend.name == "vectors":
        what = "every recorded case"
    verdicts = sorted({verdict_text(backend.name, db.form(f), config.tininess, bool(config.exhaustive))
                       for f in config.forms})
    out.write(f"fuzz: {len(config.forms)} form(s), {what}, seed {config.seed}, batch {config.batch}; backend "
              f"{backend.name} ({info}); verdict: {' | '.join(verdicts)}; ulp reading {config.ulp_reading}; "
              f"output {args.out}/\n")
    out.flush()
    campaign = Campaign(config, backend, args.out, db=db, progress=_Progress(sys.stderr, args.quiet), executor=executor)
    result = campaign.run(resume=args.resume, stop_after=args.stop_after)
    if result.resumed_from:
        out.write(f"resumed after {result.resumed_from} cases\n")
    if not result.finished:
        out.write(f"stopped after {args.stop_after} batch(es) as asked; continue with: tilecheck fuzz --resume "
                  f"--out {shlex.quote(args.out)}\n")
    width = max(len(f) for f in config.forms)
    for name, st in result.states.items():
        seconds = result.compute.get(name, 0.0)
        rate = st.cases / seconds if seconds > 0 else 0.0
        out.write(f"  {name:<{width}}  {st.cases:>12} cases  {st.mismatches:>8} mismatches  "
                  f"{st.recorded:>5} recorded  {seconds:8.1f} s  {_rate(rate)}\n")
    if result.mismatches:
        command = replay_command(result.findings_path, config.backend, config.tininess, config.target,
                                 config.gpu_code, config.vectors, config.ulp_reading)
        out.write(f"findings: {result.findings_path} (replay: {command})\n")
        _show_first(result.findings_path, out)
    run_rate = (result.cases - result.resumed_from) / result.seconds if result.seconds > 0 else 0.0
    out.write(f"this run: {result.seconds:.1f} s, {_rate(run_rate)}\n")
    out.write(f"{result.cases} cases, {result.mismatches} mismatches\n")
    return 1 if result.mismatches else 0


class _Progress:
    """One updating line on a TTY, a plain line every 10 s otherwise."""

    def __init__(self, stream, quiet: bool):
        self.stream = stream
        self.quiet = quiet
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.last = 0.0
        self.width = 0
        self.shown = ""

    def __call__(self, p) -> None:
        if self.quiet:
            return
        workers = f", {p.workers} worker(s) alive" if p.workers is not None else ""
        text = (f"[{p.form_index + 1}/{p.forms}] {p.form}: {p.cases}/{p.total} cases, "
                f"{_rate(p.rate)}, {p.mismatches} mismatches (all: {p.all_cases}/{p.all_total}, "
                f"{p.all_mismatches} mismatches, {p.elapsed:.0f} s{workers})")
        now = time.monotonic()
        if self.tty:
            pad = max(0, self.width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self.width = len(text)
            if p.finished:
                self.stream.write("\n")
            self.stream.flush()
        elif (p.finished or now - self.last >= 10 or p.cases == p.total) and text != self.shown:
            self.stream.write(text + "\n")
            self.stream.flush()
            self.last = now
            self.shown = text


def _rate(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:.1f} M cases/s"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f} k cases/s"
    return f"{rate:.0f} cases/s"


def _field(rec: dict, key: str, kind, where, default=None):
    """``rec[key]`` when of type ``kind`` (absent: ``default``), else a located usage error."""
    value = rec.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise UsageError(f"{key!r} has the wrong type ({type(value).__name__})", where)
    return value


def _replay_settings(args, rec: dict, where) -> tuple[str, str, str | None, str | None, str | None, str]:
    """``(backend, tininess, target, gpu_code, vectors, ulp_reading)`` of one finding: the options
    given on the command line, else what the finding recorded, else the defaults."""
    settings = _field(rec, "settings", dict, where, {})
    recorded_tininess = settings.get("tininess", TININESS_DEFAULT)
    if recorded_tininess not in TININESS:
        raise UsageError(f"settings.tininess must be 'after' or 'before', got {recorded_tininess!r}", where)
    recorded_reading = settings.get("ulp_reading", ULP_READING_DEFAULT)
    if recorded_reading not in ULP_READINGS:
        raise UsageError(f"settings.ulp_reading must be one of {', '.join(ULP_READINGS)}, got {recorded_reading!r}"[:200],
                         where)
    recorded = {}
    for key in ("target", "gpu_code", "vectors"):
        value = settings.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"settings.{key} must be a string", where)
        recorded[key] = value
    backend = args.backend
    if backend is None:
        name = _field(rec, "backend", str, where, "auto")
        backend = name if name in NAMES else "auto"  # a backend only tests can build: replay on the default
    vectors = args.vectors if args.vectors is not None else recorded["vectors"]
    if backend != "vectors" and args.vectors is None:
        vectors = None
    return (backend, args.tininess or recorded_tininess, args.target or recorded["target"],
            args.gpu_code or recorded["gpu_code"], vectors, args.ulp_reading or recorded_reading)


def _replay(args, db) -> int:
    records = read_findings(args.replay)
    out = sys.stdout
    out.write(f"replay {args.replay}: {len(records)} finding(s), each with the settings recorded with it"
              + (" (overridden: " + ", ".join(f"--{k.replace('_', '-')} {getattr(args, k)}" for k in
                                              ("backend", "tininess", "target", "gpu_code", "vectors",
                                               "ulp_reading")
                                              if getattr(args, k) is not None) + ")"
                 if any(getattr(args, k) is not None for k in ("backend", "tininess", "target", "gpu_code",
                                                                 "vectors", "ulp_reading")) else "") + "\n")
    backends: dict = {}
    cases = still = 0
    for line, rec in records:
        where = Location(args.replay, line)
        form_name = _field(rec, "form", str, where)
        try:
            form = db.form(form_name)
        except UnknownFormError as exc:
            raise UsageError(exc.message, where) from exc
        backend_name, tininess, target, gpu_code, vectors, ulp_reading = _replay_settings(args, rec, where)
        key = (backend_name, target, gpu_code, vectors)
        if key not in backends:
            name = _resolve_backend(backend_name, False, [form.name], db, vectors)
            backends[key] = BackendSpec(name, target, gpu_code, vectors).build(db=db)
        backend = backends[key]
        support = backend.support(form)
        if not support.ok:
            raise UsageError(f"backend {backend.name}: {support.reason}", where)
        sets = [("recorded", rec["operands"])]
        if "shrunk" in rec:
            shrunk = _field(rec, "shrunk", dict, where)
            sets.append(("shrunk", shrunk.get("operands")))
        for label, texts in sets:
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise UsageError(f"operands must be a list of hex strings, got {texts!r}"[:200], where)
            try:
                values = [int(t, 16) for t in texts]
            except ValueError:
                raise UsageError(f"operands must be hex strings, got {texts!r}"[:200], where) from None
            layout = source_layout(form)
            if len(values) != len(layout):
                raise UsageError(f"{form.name} takes {len(layout)} operand(s), the finding has {len(values)}", where)
            for v, spec in zip(values, layout):
                if not 0 <= v < 1 << (8 * np.dtype(spec[1]).itemsize):
                    raise UsageError(f"operand 0x{v:x} does not fit {np.dtype(spec[1]).name}", where)
            arrays = [np.array([v], dtype=spec[1]) for v, spec in zip(values, layout)]
            found = backend.judge(form, arrays, tininess, ulp_reading)
            cases += 1
            verdict = "still disagrees" if found.count else "agrees now"
            if found.count:
                still += 1
            got = f", result 0x{int(found.results[0]):x}" if found.count else ""
            out.write(f"{args.replay}:{line}: {form.name} {' '.join(texts)} ({label}; backend {backend.name}, "
                      f"tininess {tininess}, ulp reading {ulp_reading}): {verdict}{got}\n")
    out.write(f"{cases} cases, {still} mismatches\n")
    return 1 if still else 0


def _show_first(path: str, out, limit: int = 3) -> None:
    for _, rec in read_findings(path)[:limit]:
        shown = rec.get("shrunk", rec)
        out.write(f"  {rec['form']}: inputs {', '.join(shown['inputs'])}; got {shown['result']}, "
                  f"model {shown['expected']}\n    repro: {rec.get('repro', '')}\n")
