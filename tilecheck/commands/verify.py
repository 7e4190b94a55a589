"""``tilecheck verify [TARGET...]``: the main job -- verify forms, programs and sequences.

Loads and validates the whole spec database, then runs every applicable check on each target
(no target: every PTX form, example program, AMD instruction form and sequence) and prints a
table (item, checks, cases, mismatches, failures, time). Per form: schema, legality (spec vs
ptxas), examples, contract, emission, ptxas and differential checks, the last on the best backend
present (``--backend auto``: a GPU through CuPy when present, else the CPU simulator). Per AMD
form: examples, an independent oracle and llvm-mc encodings (:mod:`tilecheck.verify.amdgpu_forms`).
``--vectors FILE`` checks recorded results against the model. The last line is ``N cases, M
mismatches, F failures``. Exit 0 only when everything passed, 1 on any mismatch or failure, 2 on usage or
environment errors (malformed spec or vector file, unknown target, ``--backend gpu`` without a
GPU).
"""

from __future__ import annotations

import time

from tilecheck import ptxas
from tilecheck.commands import verify_amdgcn, verify_ptx
from tilecheck.commands.options import nonnegative_int, positive_int
from tilecheck.commands.output import add_json_option, check_writable, human_stream, write_json
from tilecheck.diff import backends
from tilecheck.diff.vectors import read_vectors
from tilecheck.errors import Location, UsageError
from tilecheck.report import render, run_report
from tilecheck.spec.amdgpu import amdgpu_forms
from tilecheck.spec.contract import ULP_READING_DEFAULT, ULP_READINGS
from tilecheck.spec.database import load_database
from tilecheck.tile.loader import load_programs
from tilecheck.verify import function_checks, report, runner, targets
from tilecheck.verify.checks import Context
from tilecheck.verify.vectors import verify_file


def add_parser(sub):
    """Register the ``verify`` subcommand."""
    p = sub.add_parser("verify", help="verify every form, program and sequence (the main job)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("targets", nargs="*", help="forms, families, ISAs (ptx, amdgpu), program files or sequences")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu", "model"), default="auto",
                   help="where differential cases run (auto: GPU when present, else the CPU simulator)")
    p.add_argument("--cases", type=positive_int, default=None,
                   help="generated cases per form and check (default 2000; the forms around the arithmetic: "
                        "their edge set and 64 or more); for FILE.ptx/.s: sampled inputs (as many as "
                        "the domain or more: every input)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of every generated input (default 0)")
    p.add_argument("--target", dest="arch", help="PTX target for emission checks (default: the database's)")
    add_json_option(p, "also write the results as JSON, one entry per item, to FILE ('-': stdout, the table "
                       "then goes to stderr); checked for writability before the run")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="also write a self-contained HTML report of the run to FILE (verdict, settings, the items "
                        "and their checks; for FILE.ptx the listing, counterexamples and pictures of the misrounded "
                        "inputs); needs tilecheck[report]; checked for writability before the run")
    p.add_argument("--semantics", choices=("observed", "documented"), default="observed",
                   help="semantics variant of AMD instructions: for AMD sequences and FILE.s (default observed)")
    p.add_argument("--rcp", choices=("nearest", "contract"), default="nearest",
                   help="AMD sequences: the reciprocal step correctly rounded (default: the sequence's claim) or "
                        "anywhere inside its contract (finds the known Markstein-exception counterexamples)")
    p.add_argument("--sequence-cases", type=positive_int, default=1_000_000, metavar="N",
                   help="cases per AMD sequence campaign (default 1000000)")
    p.add_argument("--vectors", metavar="FILE", action="append", default=[],
                   help="check a recorded vector file against the model (repeatable)")
    p.add_argument("--ulp-reading", choices=ULP_READINGS, default=ULP_READING_DEFAULT,
                   help="how approximate forms' ulp bounds are read: from the exact value, from the correctly "
                        "rounded result (the CUDA guide's), or either (default: either)")
    p.add_argument("--quiet", action="store_true", help="print only failing rows and the summary")
    verify_ptx.add_arguments(p)
    return p


def run(args) -> int:
    """Run the verification and print the table; returns the exit code."""
    check_writable(args.json)  # a missing folder must not cost the whole run its results
    if args.html:  # nor a missing folder or a missing extra its report
        check_writable(args.html, "--html")
        if args.html == "-":
            raise UsageError("--html FILE: give a file name (the report is one HTML file)")
        render.require("jinja2")
        render.require("matplotlib")
    if verify_amdgcn.wants_amdgcn(args):
        return verify_amdgcn.run(args)
    if verify_ptx.wants_ptx(args):
        return verify_ptx.run(args)
    verify_ptx.refuse_batch_options(args)
    function_cases = args.cases  # the forms around the arithmetic take few cases unless asked
    if args.cases is None:
        args.cases = 2000
    started = time.time()
    db = load_database()  # a malformed spec raises SpecError: every problem located, exit 2
    for path in args.vectors:
        # a malformed or empty vector file is a usage error before any output
        if not read_vectors(path, db=db).cases:
            raise UsageError("no case lines (a vector file holds FORM OPERANDS... RESULT lines)",
                             Location(path))
    items = targets.resolve(args.targets, db) if (args.targets or not args.vectors) else []
    for item in items:
        if item.kind == "program":
            load_programs(item.payload)  # a program file that does not load is exit 2, as in `check`
    if args.arch:
        db.target(args.arch)
    # a forced backend that cannot run here is an environment error (exit 2), not a skipped check
    try:
        backend = backends.select(args.backend, db=db, target=args.arch)
    except backends.BackendUnavailableError as exc:
        if args.backend != "auto":
            raise
        backend = f"backend unavailable: {exc.message}"
    out = human_stream(args)
    out.write(f"spec database: {len(db.families)} PTX families, {len(db.forms)} forms, "
              f"{len(amdgpu_forms(db))} AMD instructions, "
              f"{len(db.extras.get('sequences', {}))} sequences: valid\n")
    if isinstance(backend, str):
        out.write(f"differential backend: none ({backend})\n")
    else:
        info = ", ".join(f"{k} {v}" for k, v in backend.info().items() if k != "backend")
        around = f"at least {function_cases or function_checks.FUNCTION_CASES} and the whole edge set"
        out.write(f"differential backend: {backend.name} ({info}); {args.cases} cases per arithmetic form, {around} "
                  f"per form around the arithmetic, seed {args.seed}\n")
    sign_rule = getattr(db, "sign_rule", None)  # spec/rules/contracts.yaml: stated once, quoted here
    out.write(f"contracts: ulp bounds read as {args.ulp_reading} (--ulp-reading)"
              + (f"; {sign_rule.describe()}" if sign_rule is not None else "") + "\n")
    ctx = Context(db=db, cases=args.cases, seed=args.seed, backend=backend, target=args.arch,
                  semantics=args.semantics, rcp=args.rcp, sequence_cases=args.sequence_cases,
                  ulp_reading=args.ulp_reading, forms=[i.payload for i in items if i.kind == "form"],
                  function_cases=function_cases)
    if isinstance(backend, str):
        ctx.resolved_backend = backend
    width = min(max([len(i.name) for i in items] + [len(v) for v in args.vectors] + [24]), 60)
    lines = report.format_table([], width)
    out.write(report.checks_legend() + "\n")
    out.write(lines[0] + "\n" + lines[1] + "\n")

    def show(row):
        if args.quiet and row.ok:
            return
        out.write(report.format_table([row], width)[2] + "\n")
        if row.ok and row.kind != "vectors":
            return  # notes of passing items are in --json
        # a vector file reports every disagreement; a sequence its first counterexample in full
        limit = {"vectors": None, "sequence": 24}.get(row.kind, 10)
        for check in row.checks:
            for detail in check.details[:limit]:
                out.write(f"    {check.name}: {detail}\n")
            if limit is not None and len(check.details) > limit:
                out.write(f"    {check.name}: ... {len(check.details) - limit} more\n")
        out.flush()

    rows = runner.run(items, ctx, show)
    for path in args.vectors:
        row = verify_file(path, ctx)
        rows.append(row)
        show(row)
    failed = [r for r in rows if not r.ok]
    if args.json or args.html:
        meta = {"seed": args.seed, "cases": args.cases, "backend": backend if isinstance(backend, str)
                else backend.info(), "targets": args.targets, "vectors": args.vectors,
                "ptxas": ctx.ptxas, "ulp_reading": args.ulp_reading,
                "sign_rule": sign_rule.short if sign_rule is not None else None, "started": started,
                "seconds": round(time.time() - started, 3)}
    if ctx.ptxas:
        out.write(f"assembler: {ptxas.describe(ctx.ptxas)}\n")
    out.write(f"{report.plural(len(rows), 'item')}, {len(failed)} failed ({time.time() - started:.1f} s)"
              + (f": {report.kinds_text(rows)}" if rows else "") + "\n")
    out.write(report.summary_line(rows) + "\n")
    out.flush()
    data = report.json_data(rows, meta) if (args.json or args.html) else None
    if args.json:
        write_json(args.json, data)
    if args.html:
        run_report.write_main_report(args.html, data, db)
    return 1 if failed else 0
