"""``tilecheck fuzz FORM...``: differential fuzzing campaigns and exhaustive sweeps that lose nothing.

Runs each form's cases on a backend and judges every result with the model
(:func:`tilecheck.allowed`). Mismatches stream to ``OUT/findings.jsonl`` as they are found, each
shrunk to a minimal report with a one-line repro command; ``OUT/checkpoint.json`` is rewritten
atomically after every batch, so a campaign killed at any point continues with ``--resume``
without repeating or losing a case. ``--exhaustive`` sweeps every input of forms with at most 2**32
(``sqrt.rn.f32``: all 2**32 patterns, checked against the host's IEEE arithmetic on a CPU).
``--replay FILE`` re-runs recorded findings. Exit 0 when nothing disagreed, 1 on any mismatch,
2 on usage or environment errors.

Backends: ``auto`` (gpu when CuPy sees a device; otherwise ``host`` for exhaustive sweeps of the
forms it covers, else ``cpu``), ``cpu`` (emitted PTX executed by tilecheck's simulator), ``gpu``
(CuPy), ``host`` (numpy IEEE arithmetic, independent of the model), ``model`` (the model's exact
path), ``vectors`` (recorded results, ``--vectors FILE``).
"""

from __future__ import annotations

import sys
import time

from tilecheck.errors import UsageError


def add_parser(sub):
    """Register the ``fuzz`` subcommand."""
    p = sub.add_parser("fuzz", help="differential fuzzing campaigns and exhaustive sweeps (resumable)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("forms", nargs="*", metavar="FORM",
                   help="forms to fuzz (div.rn.f32 ...); a family name (div) takes all its forms")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--cases", type=int, default=100_000, help="cases per form (default 100000)")
    size.add_argument("--exhaustive", action="store_true", help="every input (domains of at most 2**32 points)")
    p.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu", "host", "model", "vectors"),
                   help="where the cases run (default auto)")
    p.add_argument("--vectors", metavar="FILE", help="recorded results for --backend vectors")
    p.add_argument("--gpu-code", choices=("jit", "cubin", "both"), default=None,
                   help="gpu backend: PTX through the driver JIT, a local-ptxas cubin, or both "
                        "(default: both when ptxas is present)")
    p.add_argument("--target", help="PTX target of the emitted kernels (default: the database's, or the device's)")
    p.add_argument("--out", default="fuzz-out", metavar="DIR",
                   help="campaign directory: checkpoint.json and findings.jsonl (default ./fuzz-out)")
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out after its last checkpoint")
    p.add_argument("--replay", metavar="FILE", help="re-run the findings recorded in a findings.jsonl")
    p.add_argument("--batch", type=int, default=None,
                   help="cases per batch and checkpoint (default 65536; 4194304 for exhaustive sweeps)")
    p.add_argument("--shrink", type=int, default=20, metavar="N", help="findings per form to shrink (default 20)")
    p.add_argument("--max-findings", type=int, default=1000, metavar="N",
                   help="findings per form written to the JSONL (mismatches beyond are counted; default 1000)")
    p.add_argument("--tininess", choices=("after", "before"), default="after",
                   help="the model's .ftz convention for the verdict (default after)")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop after N batches of this run, checkpointed (continue later with --resume)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def _forms(db, names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        if name in db.families:
            out += [f.name for f in db.families[name].forms]
        else:
            out.append(db.form(name).name)
    return list(dict.fromkeys(out))


def _backend(args, db, forms):
    from tilecheck.diff import backends

    name = args.backend
    vectors = None
    if args.vectors:
        if name not in ("vectors", "auto"):
            raise UsageError("--vectors goes with --backend vectors")
        from tilecheck.diff.vectors import read_vectors

        vectors = read_vectors(args.vectors, db)
        name = "vectors"
    modes = None if args.gpu_code in (None, "both") else (args.gpu_code,)
    if args.gpu_code == "both":
        modes = ("jit", "cubin")
    if name == "auto":
        if backends.gpu_status(db).available:
            name = "gpu"
        elif args.exhaustive and all(not backends.HostBackend().supports(db.form(f)) for f in forms):
            name = "host"
        else:
            name = "cpu"
    return backends.select(name, db, target=args.target, vectors=vectors, gpu_modes=modes)


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
        text = (f"[{p.form_index + 1}/{p.forms}] {p.form}: {p.cases}/{p.total} cases, "
                f"{_rate(p.rate)}, {p.mismatches} mismatches (all: {p.all_cases}/{p.all_total}, "
                f"{p.all_mismatches} mismatches, {p.elapsed:.0f} s)")
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


def _replay(args, db) -> int:
    import numpy as np

    from tilecheck.diff.cases import source_layout
    from tilecheck.diff.findings import read_findings

    records = read_findings(args.replay)
    forms = _forms(db, sorted({r["form"] for _, r in records}))
    backend = _backend(args, db, forms)
    out = sys.stdout
    out.write(f"replay {args.replay}: {len(records)} finding(s) on backend {backend.name}\n")
    cases = still = 0
    for line, rec in records:
        form = db.form(rec["form"])
        sets = [("recorded", rec["operands"])]
        if "shrunk" in rec:
            sets.append(("shrunk", rec["shrunk"]["operands"]))
        for label, texts in sets:
            try:
                values = [int(t, 16) for t in texts]
            except (TypeError, ValueError):
                raise UsageError(f"{args.replay}:{line}: error: operands must be hex strings, got {texts!r}") from None
            layout = source_layout(form)
            if len(values) != len(layout):
                raise UsageError(f"{args.replay}:{line}: error: {form.name} takes {len(layout)} operand(s), "
                                 f"the finding has {len(values)}")
            arrays = [np.array([v], dtype=spec[1]) for v, spec in zip(values, layout)]
            found = backend.judge(form, arrays, args.tininess)
            cases += 1
            verdict = "still disagrees" if found.count else "agrees now"
            if found.count:
                still += 1
            got = f", result 0x{int(found.results[0]):x}" if found.count else ""
            out.write(f"{args.replay}:{line}: {form.name} {' '.join(texts)} ({label}): {verdict}{got}\n")
    out.write(f"{cases} cases, {still} mismatches, 0 failures\n")
    return 1 if still else 0


def run(args) -> int:
    """Run the campaign (or the replay) and print the summary; returns the exit code."""
    from tilecheck.diff.campaign import Campaign, Config
    from tilecheck.spec.database import load_database

    db = load_database()
    if args.stop_after is not None and args.stop_after < 1:
        raise UsageError("--stop-after must be at least 1")
    if args.replay:
        if args.forms:
            raise UsageError("--replay takes no FORM arguments (the findings name their forms)")
        return _replay(args, db)
    if not args.forms:
        raise UsageError("name at least one FORM to fuzz (or --replay FILE)")
    forms = _forms(db, args.forms)
    backend = _backend(args, db, forms)
    batch = args.batch or (1 << 22 if args.exhaustive else 1 << 16)
    config = Config(tuple(forms), seed=args.seed, cases=args.cases, exhaustive=args.exhaustive, batch=batch,
                    backend=backend.name, shrink=args.shrink, max_findings=args.max_findings,
                    tininess=args.tininess)
    out = sys.stdout
    info = ", ".join(f"{k} {v}" for k, v in backend.info().items() if k != "backend")
    what = "every input" if args.exhaustive else f"{args.cases} cases per form"
    if backend.name == "vectors":
        what = "every recorded case"
    out.write(f"fuzz: {len(forms)} form(s), {what}, seed {args.seed}, batch {batch}; backend {backend.name} "
              f"({info}); verdict: tilecheck.allowed (tininess {args.tininess}); output {args.out}/\n")
    out.flush()
    campaign = Campaign(config, backend, args.out, db, _Progress(sys.stderr, args.quiet))
    result = campaign.run(resume=args.resume, stop_after=args.stop_after)
    if result.resumed_from:
        out.write(f"resumed after {result.resumed_from} cases\n")
    if not result.finished:
        out.write(f"stopped after {args.stop_after} batch(es) as asked; continue with --resume --out {args.out}\n")
    width = max(len(f) for f in forms)
    for name, st in result.states.items():
        rate = st.cases / st.seconds if st.seconds > 0 else 0.0
        out.write(f"  {name:<{width}}  {st.cases:>12} cases  {st.mismatches:>8} mismatches  "
                  f"{st.recorded:>5} recorded  {st.seconds:8.1f} s  {_rate(rate)}\n")
    if result.mismatches:
        extra = f" --vectors {args.vectors}" if backend.name == "vectors" else ""
        out.write(f"findings: {result.findings_path} (replay: tilecheck fuzz --replay {result.findings_path} "
                  f"--backend {backend.name}{extra})\n")
        _show_first(result.findings_path, out)
    out.write(f"{result.cases} cases, {result.mismatches} mismatches, 0 failures\n")
    return 1 if result.mismatches else 0


def _show_first(path: str, out, limit: int = 3) -> None:
    from tilecheck.diff.findings import read_findings

    for _, rec in read_findings(path)[:limit]:
        shown = rec.get("shrunk", rec)
        out.write(f"  {rec['form']}: inputs {', '.join(shown['inputs'])}; got {shown['result']}, "
                  f"model {shown['expected']}\n    repro: {rec.get('repro', '')}\n")
