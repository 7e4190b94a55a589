"""``tilecheck verify FILE.ptx --entry NAME --against REF``: verify compiler-written PTX.

``REF`` is ``OP.RND.FMT``, a PTX form name, or an expression of forms over the operands
(:mod:`tilecheck.verify.expression`: its names, sorted, are the operands in parameter order).

Every approximate instruction may return, per lane, any value its documented contract allows; the
verifier tries them all. Exit 0 verified (every input checked, every allowed choice equals REF)
or, for a sampled run, no counterexample in its inputs (reported as such, never as verified),
1 counterexample, 2 usage or unsupported PTX (located ``FILE:line:col``; a reference whose type
does not fit what the code loads and computes too), 4 unknown (some input reaches an instruction
whose contract cannot be enumerated, and nothing failed; or a run stopped by ``--stop-after``
before every input was checked).

Exhaustive runs in batches (:mod:`tilecheck.verify.sharded`): ``--workers N`` runs the batches on
a local Dask cluster of N worker processes, ``--scheduler ADDRESS`` on an existing cluster (the
same options, with the same meaning, as ``tilecheck fuzz``; a run without them uses worker
processes of its own, one per CPU up to 8 or ``TILECHECK_THREADS``, threads for small runs);
``--out DIR`` keeps a checkpoint after every batch, which ``--resume`` continues. The report and ``--json`` are the serial run's (all but ``seconds``).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from contextlib import nullcontext

import numpy as np

from tilecheck.commands.check_ptx import check_ptx_text
from tilecheck.commands.options import add_dask_options, dask_banner, on_dask, positive_int
from tilecheck.commands.output import check_writable
from tilecheck.diff.distributed import connect, dashboard_link, disconnect, workers_alive
from tilecheck.errors import TilecheckError, UsageError
from tilecheck.report import run_report
from tilecheck.spec.database import load_database
from tilecheck.verify import compiled, sharded
from tilecheck.sim.frontend import parse_module
from tilecheck.sources import read_source
from tilecheck.verify.compiled import MISROUNDED_CAP, producer

PTX_OPTIONS = ("entry", "against", "exhaustive", "ulp_reading", "approx", "input", "corpus")
BATCH_OPTIONS = ("workers", "scheduler", "out", "batch", "stop_after")
"""Options of batched exhaustive runs (``--resume`` too); they need ``FILE.ptx --exhaustive``."""


def add_arguments(p) -> None:
    """The options of the compiled-PTX path (they belong to ``tilecheck verify``)."""
    g = p.add_argument_group("compiled PTX (tilecheck verify FILE.ptx --entry NAME --against REF)")
    g.add_argument("--entry", metavar="NAME",
                   help="the .entry kernel or .func to verify: its PTX (mangled) name, or its C++ name "
                        "(tdiv<float>, div_gs, ns::f(float const*, float*)) where one function answers to it; "
                        "left out: the module's only kernel")
    g.add_argument("--against", metavar="REF",
                   help="OP.RND.FMT (div rcp sqrt rsqrt add sub mul fma; rn rz rm rp; f16 bf16 f32 f64), a PTX form, "
                        "or an expression of PTX forms over the operands, e.g. 'add.rn.f32(mul.rn.f32(a, b), c)' "
                        "(prove's query syntax): its names, sorted (a, b, c), are the kernel's operands (input buffers or "
                        ".func parameters) in parameter order; "
                        "an approximate form, anywhere, means every result its contract allows (inputs where a "
                        "contract bounds nothing are unknown); each operand has the format of the position it fills, "
                        "an integer one where a cvt or integer form takes it (cvt.rn.f32.s32, cvt.rzi.s8.f32, add.s32, shl.b32: "
                        "given in decimal or hex; div.s32 and rem.u32 are unknown where the ISA leaves the result "
                        "open, a zero divisor); choices as PTX makes them: "
                        "'selp.f32(a, 0.0, setp.gt.f32(a, 0.0))'; a kernel's floating-point parameter it reads is an "
                        "operand too (alpha in x * alpha)")
    g.add_argument("--exhaustive", action="store_true",
                   help="every input (16-bit unary and binary, f32 unary): the default where the operands "
                        "hold at most 32 bits together (--cases N samples instead); a wider domain is sampled")
    # --ulp-reading is verify's own option (either | exact | correctly-rounded), shared with FILE.ptx
    g.add_argument("--approx", choices=("all", "provisional", "reference"), default="all",
                   help="approximate instructions: every result a documented bound allows (default; an "
                        "instruction whose bound no document states makes its inputs unknown), 'provisional': "
                        "also every result the spec's provisional bound allows (rsqrt.approx.f64, the "
                        ".approx.ftz.f64 forms), or 'reference': only the model's representative")
    g.add_argument("--input", metavar="A[,B,...]", help="check one input (hex or decimal operands): a repro")
    g.add_argument("--misrounded", metavar="FILE",
                   help="write every misrounded input to FILE, one line each in input order (hex operands, "
                        "comma-separated, as --input takes them), as the run finds them: the whole set, where "
                        "--json lists the first 262,144 (an exhaustive run may find billions: the file grows with "
                        "them); not with the batched options")
    g.add_argument("--params", metavar="ROLE,...",
                   help="state each .entry parameter's role, in order: in (an operand: a buffer, or a floating-point "
                        "value such as Triton's alpha; operands in parameter order), "
                        "out (the result buffer), n (the element count), - (unused: 0 or a null pointer); e.g. "
                        "in,in,out,n,-,- for Triton's a / b. The elements per thread and their places are still "
                        "found by running the kernel, and must agree with what is stated")
    d = p.add_argument_group("exhaustive FILE.ptx runs in batches: resumable, on Dask (needs tilecheck[dist])")
    add_dask_options(d, "run the batches on a local Dask cluster of N worker processes, one thread each "
                        "(as in fuzz; without it: worker processes of this run, one per CPU up to 8 or "
                        "TILECHECK_THREADS)")
    d.add_argument("--out", metavar="DIR",
                   help="keep DIR/checkpoint.json (after batches, at most 5%% of the run's time) and "
                        "DIR/batches.jsonl: a resumable run")
    d.add_argument("--resume", action="store_true",
                   help="continue the run kept in --out after its last checkpointed batch (same FILE and options)")
    d.add_argument("--batch", type=positive_int, default=None, metavar="N",
                   help=f"inputs per batch (default {sharded.DEFAULT_BATCH}; at most "
                        f"{compiled.EXHAUSTIVE_BLOCK} or a multiple of it)")
    d.add_argument("--stop-after", type=positive_int, default=None, metavar="N",
                   help="stop after N batches of this run, checkpointed (continue with --resume)")


def wants_ptx(args) -> bool:
    """True when the command line is the compiled-PTX form."""
    return any(str(t).endswith(".ptx") for t in args.targets) or bool(getattr(args, "entry", None))


def batched(args) -> bool:
    """True when an option of batched runs is given."""
    return any(getattr(args, k, None) is not None for k in BATCH_OPTIONS) or bool(getattr(args, "resume", False))


def refuse_batch_options(args) -> None:
    """Verifying forms, programs and sequences takes none of the batched-run options."""
    if batched(args):
        raise UsageError("--workers, --scheduler, --out, --resume, --batch and --stop-after apply to "
                         "verify FILE.ptx --entry NAME --against REF --exhaustive")
    if getattr(args, "params", None):
        raise UsageError("--params states the parameters of a kernel: verify FILE.ptx --entry NAME --against REF")
    if getattr(args, "misrounded", None):
        raise UsageError("--misrounded lists the misrounded inputs of verify FILE.ptx --entry NAME --against REF")


def _only_kernel(path: str) -> str:
    """The name of the module's one ``.entry``; a usage error listing the kernels where there are
    none or several."""
    module = parse_module(read_source(path), path)
    kernels = [f.name for f in module.functions.values() if f.defined and f.kind == "entry"]
    if len(kernels) != 1:
        listed = ", ".join(kernels) or "none"
        raise UsageError(f"{path}: --entry NAME is needed: the module defines {len(kernels)} kernels ({listed})")
    return kernels[0]


def run(args) -> int:
    """Run the compiled-PTX verification; returns the exit code. With ``--json``, a refusal (exit 2)
    is written there too: ``{"verdict": "refused", "exit_code", "error", "location"}``, so that a
    pipeline reading the JSON sees why there is no verdict."""
    try:
        return _run(args)
    except TilecheckError as exc:
        if getattr(args, "json", None):
            _write_refusal(args, exc)
        raise


def _write_refusal(args, exc: TilecheckError) -> None:
    """The JSON of a run that gave no verdict (best effort: the error itself is what is reported)."""
    where = exc.location
    data = {"path": next((str(t) for t in args.targets if str(t).endswith(".ptx")), None),
            "entry": getattr(args, "entry", None), "against": getattr(args, "against", None),
            "verdict": "refused", "exit_code": exc.exit_code, "error": exc.message,
            "location": None if where is None else {"path": where.path, "line": where.line, "column": where.column}}
    text = json.dumps(data, indent=2) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
        return
    try:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        pass  # (an unwritable --json path is refused before the run; the error below is what matters)


def _run(args) -> int:
    ptx = [t for t in args.targets if str(t).endswith(".ptx")]
    if len(ptx) != 1 or len(args.targets) != 1:
        raise UsageError("verify FILE.ptx takes exactly one .ptx file (and --entry NAME --against REF)")
    if not args.against:
        raise UsageError("verify FILE.ptx needs --against REF (and --entry NAME where the module has several kernels)")
    if args.exhaustive and args.cases is not None:
        raise UsageError("--exhaustive and --cases are exclusive")
    if args.cases is not None and args.cases < 1:
        raise UsageError("--cases must be at least 1")
    refuse_illegal(ptx[0], load_database())
    if not args.entry:
        args.entry = _only_kernel(ptx[0])
        sys.stderr.write(f"note: --entry {args.entry} (the module's only kernel)\n")
    if args.misrounded and (batched(args) or args.input):
        raise UsageError("--misrounded writes the inputs of one run in this process: not with --input, --workers, "
                         "--scheduler, --out, --resume, --batch or --stop-after")
    check_writable(args.misrounded, "--misrounded")
    if batched(args):
        if args.input:
            raise UsageError("--input checks one input: it takes no --workers, --scheduler, --out, --resume, --batch "
                             "or --stop-after")
        if not args.exhaustive:
            raise UsageError("--workers, --scheduler, --out, --resume, --batch and --stop-after run exhaustive "
                             "verifications in batches: add --exhaustive")
        return _run_batched(args, ptx[0], load_database())
    db = load_database()
    if args.input:
        outcome = compiled.verify_single(ptx[0], args.entry, args.against, args.input.split(","), db=db,
                                         ulp_reading=args.ulp_reading, approx=args.approx, params=args.params)
    else:
        widths = compiled.operand_widths(compiled.parse_reference(args.against, db))

        def announce(total: int, workers: int) -> None:
            if not args.exhaustive and total > compiled.DEFAULT_CASES:  # say why a plain run takes minutes
                sys.stderr.write(f"note: every one of the {total} inputs, on {workers} worker(s) (TILECHECK_THREADS): "
                                 "the default where the operands hold at most 32 bits together; --cases N samples "
                                 "instead, --exhaustive --out DIR runs resumably\n")

        with MisroundedFile(args.misrounded, widths) if args.misrounded else nullcontext() as sink:
            outcome = compiled.verify_ptx(ptx[0], args.entry, args.against, db=db,
                                          exhaustive=True if args.exhaustive else None, cases=args.cases,
                                          seed=args.seed, ulp_reading=args.ulp_reading, approx=args.approx,
                                          params=args.params, progress=compiled.progress_printer(sys.stderr),
                                          misrounded=sink, announce=announce)
    return report_outcome(args, outcome)


class MisroundedFile:
    """``--misrounded FILE``: a callable taking rows of misrounded inputs (uint64, one column per
    operand) and writing each as a line of hex operands, zero-padded to its operand's width."""

    def __init__(self, path: str, widths: list):
        self.path = path
        self.digits = [max(1, w // 4) for w in widths]
        self.fh = None

    def __enter__(self) -> "MisroundedFile":
        try:
            self.fh = open(self.path, "w", encoding="ascii")
        except OSError as exc:
            raise UsageError(f"--misrounded {self.path}: cannot write: {exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc) -> None:
        self.fh.close()

    def __call__(self, rows: np.ndarray) -> None:
        cols = [np.char.zfill(np.char.mod("%x", rows[:, j]), d) for j, d in enumerate(self.digits)]
        lines = np.char.add("0x", cols[0])
        for col in cols[1:]:
            lines = np.char.add(np.char.add(lines, ",0x"), col)
        self.fh.write("\n".join(lines.tolist()) + "\n")


def refuse_illegal(path: str, db) -> None:
    """Stop (exit 2) before running a module that ptxas would not assemble: an instruction illegal
    for the module's ``.target`` or ``.version`` (:mod:`tilecheck.legality.ptx_module`), every one
    listed and located. A module that does not parse is left to the verifier's own located error."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        report = check_ptx_text(text, path, db)
    except (OSError, UnicodeDecodeError, UsageError):
        return
    # a spelling of an ISA newer than the spec's is not judged: said, and the run then refuses it
    # where it stands if the simulator does not know it either
    for f in report.findings:
        if f.code == "PX105":
            sys.stderr.write(f"{f}\n")
    # a spelling ptxas accepts whose meaning the spec records (its readings) runs, every reading allowed
    errors = [f for f in report.errors if not (f.code == "PX005" and db.readings(f.spelling))]
    if errors:
        listed = "\n".join(f"  {f}" for f in errors[:20]) + ("\n  ..." if len(errors) > 20 else "")
        raise UsageError(f"{len(errors)} instruction(s) that ptxas would not assemble for this module's target "
                         f"and version (or that the ISA does not define), not verified:\n{listed}",
                         errors[0].location)


def _run_batched(args, path: str, db) -> int:
    """An exhaustive run in batches, on Dask with ``--workers``/``--scheduler``."""
    client = cluster = None
    if on_dask(args):
        client, cluster = connect(workers=args.workers, scheduler=args.scheduler)
    try:
        if client is not None:
            sys.stderr.write(dask_banner(args, client.scheduler.address, workers_alive(client), dashboard_link(client)))
            sys.stderr.flush()
        run = sharded.verify_batched(path, args.entry, args.against, db=db, ulp_reading=args.ulp_reading,
                                     approx=args.approx, batch=args.batch, out=args.out, resume=args.resume,
                                     client=client, progress=_Progress(sys.stderr, client),
                                     stop_after=args.stop_after, params=args.params)
    finally:
        if client is not None:
            disconnect(client, cluster)
    if run.resumed_from:
        sys.stderr.write(f"resumed after {run.resumed_from} inputs (the checkpoint in {args.out})\n")
    if run.outcome is None:
        again = ["tilecheck", "verify", path, "--entry", args.entry, "--against", args.against, "--exhaustive",
                 "--out", args.out, "--resume"]
        again += [f"--ulp-reading={args.ulp_reading}"] if args.ulp_reading != "either" else []
        again += [f"--approx={args.approx}"] if args.approx != "all" else []
        again += [f"--params={args.params}"] if args.params else []
        sys.stdout.write(f"stopped after {run.batches_done} of {run.batches} batch(es) as asked: "
                         f"{run.tally.checked} inputs checked, {run.tally.misrounded} misrounded so far; continue "
                         f"with: {shlex.join(again)}\n")
        return 1 if run.tally.misrounded else 4  # a counterexample is final; nothing else is yet
    return report_outcome(args, run.outcome)


class _Progress:
    """Progress of a batched run on stderr, at most every 2 seconds: inputs, rate, misrounded so
    far, elapsed time, workers alive."""

    def __init__(self, stream, client=None):
        self.stream = stream
        self.client = client
        self.last = 0.0

    def __call__(self, p: sharded.Progress) -> None:
        now = time.monotonic()
        if not p.finished and now - self.last < 2:
            return
        self.last = now
        workers = f", {workers_alive(self.client)} worker(s) alive" if self.client is not None else ""
        self.stream.write(f"  {p.done}/{p.total} inputs ({100.0 * p.done / p.total:.1f}%), {p.rate / 1e6:.3f} M "
                          f"inputs/s, {p.misrounded} misrounded so far, {p.elapsed:.0f} s{workers}\n")
        self.stream.flush()


def report_outcome(args, outcome) -> int:
    """Print the report (and the JSON, and the HTML report: both from one data dict, so that
    they cannot disagree); the exit code of ``outcome``."""
    text = format_outcome(outcome)
    html = getattr(args, "html", None)
    if html and getattr(outcome, "prepared", None) is not None:
        # the traced re-run of some misrounded inputs: only a report that shows it pays for it
        outcome.misround_positions = compiled.misround_positions(outcome.prepared, outcome.misrounded)
    data = to_json(outcome)
    if args.json == "-":  # JSON on stdout, the report on stderr (as the other verify outputs)
        sys.stderr.write(text)
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(text)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2)
                fh.write("\n")
    if html:
        run_report.write_ptx_report(html, data, getattr(outcome, "prepared", None))
    return outcome.exit_code


def map_json(o) -> dict | None:
    """The misrounded map (:data:`compiled.MAP_BINS` bins per operand over the high byte of its
    first two operands' bit patterns) as its non-zero bins and total; None where a resumed run's
    checkpoint predates maps."""
    counts = getattr(o, "misrounded_map", None)
    if counts is None:
        return None
    return {"format": getattr(o, "format", None), "bins": "high byte of the bit pattern (sign, top exponent bits)",
            "total": int(counts.sum()), **compiled.sparse_map(counts)}


def approximate_sites(o) -> list:
    """Each approximate instruction of the code as run: line, text, form and ``.loc`` source."""
    p = getattr(o, "prepared", None)
    if p is None:
        return []
    seen, sites = set(), []
    for st in p.plan.steps:
        if st.approximate and st.instr.line not in seen:
            seen.add(st.instr.line)
            sites.append({"line": st.instr.line, "instruction": st.instr.text, "form": st.approximate,
                          **compiled.source_fields(st.instr)})
    return sorted(sites, key=lambda r: r["line"])


def to_json(o) -> dict:
    """The outcome as a JSON-ready dict. ``verdict`` is the honest word (``verified`` only for a
    run over every input, ``no-counterexample`` for a sampled one); ``misrounded_classes`` holds
    the non-empty classes of misrounded inputs, ``headline`` what the verdict leads with."""
    return {"file": o.path, "entry": o.entry, "against": o.ref, "verdict": o.verdict_word, "abi": o.abi,
            "inputs_checked": o.inputs_checked, "exhaustive": o.exhaustive, "inputs": o.inputs_text,
            "sampling": o.sampling,
            "lanes_run": o.lanes_run, "misrounded_count": o.misrounded_count,
            "misrounded_by_value_count": o.misrounded_by_value,
            "misrounded_classes": o.misrounded_classes,
            "headline": dict(o.headline, text=headline_text(o)),
            "misrounded_inputs": [[hex(v) for v in case] for case in o.misrounded],
            "misrounded_capped": o.misrounded_count > len(o.misrounded), "misrounded_cap": MISROUNDED_CAP,
            "unknown_count": o.unknown_count, "unknown_inputs": o.unknown_inputs,
            "counterexamples": o.counterexamples, "ulp_reading": o.ulp_reading, "sign_rule": o.sign_rule,
            "approx": o.approx, "approximate_instructions": o.approximate_forms,
            "stored_expression": getattr(o, "stored_expression", False),
            "read_as": getattr(o, "read_as", []),
            "readings_applied": getattr(o, "readings", {}),
            "contraction_sites": o.contraction_sites, "seconds": o.seconds, "producer": producer(o.path),
            "misrounded_map": map_json(o), "approximate_sites": approximate_sites(o),
            **({"misround_positions": o.misround_positions} if getattr(o, "misround_positions", None) else {})}


CLASS_TEXT = {"value": "in value",
              "nan_payload": "only by the payload of a NaN (both results NaNs)",
              "zero_sign": "only by the sign of a zero (both results zeros)"}
"""How the report names each class of misrounded inputs (:attr:`Outcome.misrounded_classes`)."""


def headline_text(o) -> str:
    """What the verdict says after its word: how many inputs misround and in which class (in
    value first: the count that matters), how many are unknown, or what passed (``no
    counterexample in 2000 sampled inputs``)."""
    checked = o.inputs_text
    given = "given" in o.sampling and o.inputs_checked == 1
    label = {k: v.split(" (")[0] for k, v in CLASS_TEXT.items()}
    if o.verdict == "counterexample":
        classes = o.misrounded_classes
        total = o.misrounded_count
        if given:
            return f"the given input misrounds {label[next(iter(classes))]}" if classes else "the given input misrounds"
        value = classes.get("value", 0)
        if value == total:
            return f"{total} of {checked} misrounded, all in value"
        others = ", ".join(f"{n} {label[k]}" for k, n in classes.items() if k != "value")
        if value:
            return (f"{value} of {checked} misrounded in value, to another number "
                    f"({total} misrounded in all: {others.replace(' only', ' more only')})")
        return f"{total} of {checked} misrounded, none in value: {others}"
    if o.verdict == "unknown":
        if given:
            return "the given input reaches a contract that leaves it unjudged (why: listed above)"
        return (f"{o.unknown_count} of {checked} reach a contract that leaves them unjudged (why: listed above); "
                f"no counterexample in the other {o.inputs_checked - o.unknown_count}")
    return f"no counterexample in {checked}" + (" (exhaustive)" if o.exhaustive else " (not exhaustive)")


def _source(rec: dict) -> str:
    """`` (kernel.py:12:5)`` after a PTX line number where the module has line info (``.loc``), with
    the header line of code inlined from one: `` (half.cu:32:56, inlined from cuda_fp16.hpp:708:1)``."""
    if not rec.get("source"):
        return ""
    inlined = rec.get("inlined_from")
    header = f", inlined from {inlined.rsplit('/', 1)[-1]}" if inlined else ""
    return f" ({rec['source']}{header})"


def format_outcome(o) -> str:
    """Human-readable report."""
    if o.exhaustive:
        how = "exhaustive"
    elif "exhaustive" in o.sampling:
        how = "the first inputs of the exhaustive enumeration"
    elif "given" in o.sampling:
        how = "given"
    else:
        how = "sampled: " + " + ".join(f"{k} {v}" for k, v in o.sampling.items())
    choices = {"all": "every allowed result", "provisional": "every allowed result, provisional bounds included",
               "reference": "the reference value only"}[o.approx]
    if getattr(o, "stored_expression", False):
        choices = ("every allowed result, by identity: the code stores the reference's own expression, so the "
                   "simulator's representative runs for each choice and the reference alone decides what is unknown")
    lines = [f"{o.path}: {o.entry} ({o.abi}) against {o.ref}",
             f"  inputs checked: {o.inputs_checked} ({how}); "
             f"lanes run (inputs x allowed choices; choices the next use of the result makes equal run once): "
             f"{o.lanes_run}",
             f"  approximate instructions: {', '.join(o.approximate_forms) or 'none'}; choices: "
             f"{choices}; ulp reading: {o.ulp_reading}"
             + (" (applied: " + ", ".join(f"{k}: {v}" for k, v in getattr(o, "readings", {}).items()) + ")"
                if getattr(o, "readings", None) else "")]
    if o.sign_rule_line:
        lines.append(f"  {o.sign_rule_line}")
    note = producer(o.path).get("version_note")
    if note:  # a module newer than the spec (Triton writes .version 9.4): accepted, and said so
        lines.append(f"  note: {note}")
    if o.contraction_sites:
        lines.append(f"  mul+add contraction allowed at: {'; '.join(o.contraction_sites)}")
    if getattr(o, "read_as", None):
        lines.append(f"  spellings the ISA leaves undefined (ptxas accepts them), every reading allowed: "
                     f"{'; '.join(o.read_as)}")
    if o.misrounded_count:
        lines.append(f"  misrounded inputs: {o.misrounded_count} of {o.inputs_text}, by class:")
        for kind, n in o.misrounded_classes.items():
            lines.append(f"    {CLASS_TEXT[kind]}: {n}")
    if o.unknown_count:
        shown = len(o.unknown_inputs)
        lines.append(f"  unknown inputs: {o.unknown_count} (a contract there bounds nothing, allows more results than are enumerated, or "
                     "is not modelled there: no result is judged)"
                     + ((f"; the first {shown}:" if shown < o.unknown_count else ":") if shown else ""))
        for u in o.unknown_inputs:
            why = "; ".join([f"line {r['line']}{_source(r)}: {r['instruction']} on {', '.join(r['operands'])}: "
                             f"{r['why']}" for r in u["reasons"]]
                            + ([f"the reference (--against {o.ref}): {u['reference']}"] if u.get("reference") else [])) \
                or "no instruction's contract explains it"
            lines.append(f"    ({', '.join(u['inputs'])}): {why}")
    for k, c in enumerate(o.counterexamples, 1):
        ins = ", ".join(f"{i['hex']} ({i['value']}, {i['class']})" for i in c["inputs"])
        lines.append(f"  counterexample {k}: inputs {ins}")
        lines.append(f"    expected {c['expected']['hex']} ({c['expected']['value']}), got {c['got']['hex']} "
                     f"({c['got']['value']})")
        for ch in c["approximate_choices"]:
            lines.append(f"    line {ch.get('line', '?')}{_source(ch)}: {ch.get('instruction', '?')} returned "
                         f"{ch['returned']} "
                         f"({ch['position']}), allowed: {ch['allowed']}")
        path = c.get("register_path")
        if path:
            lines.append("    registers on the path from the loads to the result:")
            width = max(len(r["register"]) for r in path)
            for r in path:
                lines.append(f"      {r['register']:<{width}} = {r['value']}   ({'; '.join(r['written'])})")
        elif c.get("registers"):
            lines.append("    registers: " + ", ".join(f"{k}={v}" for k, v in c["registers"].items()))
        lines.append(f"    repro: {c['repro']}")
    prepared = getattr(o, "prepared", None)
    if prepared is not None and not o.exhaustive and "given" not in o.sampling and prepared.domain > o.inputs_checked:
        # a sampled verdict says how to get the whole answer
        lines.append(f"  not exhaustive: --exhaustive runs every one of the {prepared.domain} inputs "
                     "(--workers N, --out DIR: on N processes, checkpointed)")
    head = headline_text(o)
    if o.verdict_word == "no-counterexample":  # "no counterexample in 2000 sampled inputs": the word says it
        lines.append(f"verdict: NO COUNTEREXAMPLE {head.removeprefix('no counterexample ')} ({o.seconds:.1f} s)")
    else:
        lines.append(f"verdict: {o.verdict_word.upper()}: {head} ({o.seconds:.1f} s)")
    return "\n".join(lines) + "\n"
