"""``tilecheck verify [TARGET...]``: the main job -- verify forms, programs and sequences.

Loads and validates the whole spec database, then runs every applicable check on each target
(no target: every PTX form, example program and sequence) and prints a table. The last line is
``N cases, M mismatches, F failures``. Exit 0 only when everything passed, 1 on any mismatch or
failure, 2 on usage or environment errors (malformed spec, unknown target, missing GPU when
``--backend gpu`` is forced).
"""

from __future__ import annotations

import sys
import time

from tilecheck.spec.database import load_database


def add_parser(sub):
    """Register the ``verify`` subcommand."""
    p = sub.add_parser("verify", help="verify every form, program and sequence (the main job)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("targets", nargs="*", help="forms, families, ISAs (ptx, amdgpu), program files or sequences")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto",
                   help="where differential cases run (auto: GPU when present, else CPU)")
    p.add_argument("--cases", type=int, default=2000, help="generated cases per form and check (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of every generated input (default 0)")
    p.add_argument("--target", dest="arch", help="PTX target for emission checks (default: the database's)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON, one entry per item")
    p.add_argument("--semantics", choices=("observed", "documented"), default="observed",
                   help="semantics variant for AMD sequences (default observed)")
    p.add_argument("--vectors", metavar="FILE", action="append", default=[],
                   help="check a recorded vector file against the model (repeatable)")
    p.add_argument("--quiet", action="store_true", help="print only failing rows and the summary")
    return p


def run(args) -> int:
    """Run the verification and print the table; returns the exit code."""
    from tilecheck.errors import UsageError
    from tilecheck.verify import report, runner, targets
    from tilecheck.verify.checks import Context

    if args.cases < 1:
        raise UsageError("--cases must be at least 1")
    started = time.time()
    db = load_database()  # a malformed spec raises SpecError: every problem located, exit 2
    out = sys.stdout
    out.write(f"spec database: {len(db.families)} PTX families, {len(db.forms)} forms, "
              f"{len(db.extras.get('amdgpu', {}))} AMD instructions, {len(db.extras.get('sequences', {}))} sequences: valid\n")
    items = targets.resolve(args.targets, db) if (args.targets or not args.vectors) else []
    ctx = Context(db=db, cases=args.cases, seed=args.seed, backend=args.backend, target=args.arch,
                  extra={"semantics": args.semantics})
    width = min(max([len(i.name) for i in items] + [24]), 60)
    lines = report.format_table([], width)
    out.write(lines[0] + "\n" + lines[1] + "\n")

    def show(row):
        if args.quiet and row.ok:
            return
        out.write(report.format_table([row], width)[2] + "\n")
        for check in row.checks:
            for detail in check.details[:10]:
                out.write(f"    {check.name}: {detail}\n")
        out.flush()

    rows = runner.run(items, ctx, show)
    for path in args.vectors:
        from tilecheck.verify.vectors import verify_file

        row = verify_file(path, ctx)
        rows.append(row)
        show(row)
    failed = [r for r in rows if not r.ok]
    if args.json:
        meta = {"seed": args.seed, "cases": args.cases, "backend": args.backend, "targets": args.targets,
                "started": started, "seconds": round(time.time() - started, 3)}
        report.write_json(args.json, rows, meta)
    out.write(f"{len(rows)} items, {len(failed)} failed\n")
    out.write(report.summary_line(rows) + "\n")
    return 1 if failed else 0
