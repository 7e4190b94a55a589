"""``tilecheck emit PROGRAM.py [--target sm_90] [--format ptx|cuda] [--output FILE] [--function NAME]``.

Loads the program file, checks every ``@T.function`` program in it (or only ``--function NAME``)
for the target and prints one PTX module (``--format ptx``, default) or one CUDA C++ source
(``--format cuda``) holding a kernel per program. Illegal programs: their diagnostics go to
stderr, nothing is emitted, exit 1. A file that does not load, an unknown target or function:
exit 2.

Also hosts the golden regeneration command behind ``python -m tilecheck.emit.golden``
(:func:`run_golden`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from tilecheck.commands.output import check_writable
from tilecheck.errors import Location, UsageError, echo


def add_parser(subparsers):
    """Register the ``emit`` subcommand."""
    parser = subparsers.add_parser(
        "emit", help="emit PTX (or CUDA C++) for tile programs",
        description="Check the tile programs of a file and emit a PTX module (or CUDA C++ with inline-asm "
                    "helpers) with one kernel per program (exit 0 emitted, 1 illegal program, 2 usage error).")
    parser.add_argument("program", metavar="PROGRAM.py", help="tile program file")
    parser.add_argument("--target", default=None, metavar="sm_XX",
                        help="target architecture (default: the spec database's default, sm_90)")
    parser.add_argument("--format", default="ptx", choices=("ptx", "cuda"), help="output format (default: ptx)")
    parser.add_argument("--output", "-o", default=None, metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument("--function", default=None, metavar="NAME", help="emit only the program called NAME")
    return parser


def run(args) -> int:
    """Emit the programs; 0 emitted, 1 illegal program (diagnostics on stderr); usage errors raise (2)."""
    from tilecheck.emit import emit_programs
    from tilecheck.spec.database import load_database
    from tilecheck.tile.loader import display_path, load_programs

    check_writable(args.output, "--output")  # before any work, like every other output file
    db = load_database()
    target = db.target(args.target).name
    programs = load_programs(args.program)
    if args.function:
        chosen = [p for p in programs if p.name == args.function]
        if not chosen:
            names = ", ".join(p.name for p in programs)
            raise UsageError(f"{args.program}: no program named {echo(args.function)} (programs: {names})")
        programs = chosen
    illegal = 0
    for program in programs:
        errors = [d for d in program.check(target=target, db=db) if d.severity == "error"]
        for diag in errors:
            if diag.location is not None:
                diag = replace(diag, location=Location(display_path(diag.location.path), diag.location.line,
                                                       diag.location.column))
            sys.stderr.write(f"{diag}\n")
        if errors:
            illegal += 1
            sys.stderr.write(f"{args.program}: {program.name}: {len(errors)} legality violation(s) for {target}; "
                             "nothing emitted\n")
    if illegal:
        return 1
    text = emit_programs(programs, target=target, format=args.format, db=db)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror}") from exc
    else:
        sys.stdout.write(text)
    return 0


def run_golden(argv: list[str]) -> int:
    """``python -m tilecheck.emit.golden [--check] [--root DIR]``: regenerate (or check) the goldens."""
    from tilecheck.emit import golden

    parser = argparse.ArgumentParser(prog="python -m tilecheck.emit.golden",
                                     description="Regenerate the golden emitted PTX/CUDA files under emit/.")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a golden differs")
    parser.add_argument("--root", default=None, help="checkout root (default: the one holding this tilecheck)")
    args = parser.parse_args(argv)
    root = Path(args.root) if args.root else golden.repo_root()
    if not (root / "examples").is_dir():
        sys.stderr.write(f"error: {root} has no examples/ folder; run from a checkout (or pass --root)\n")
        return 2
    if args.check:
        problems = golden.compare_goldens(root)
        for rel, problem in problems:
            sys.stdout.write((problem if problem.startswith("---") else f"{rel}: {problem}") + "\n")
        sys.stdout.write(f"{len(problems)} golden file(s) differ\n" if problems else "goldens are up to date\n")
        return 1 if problems else 0
    written, removed = golden.write_goldens(root)
    for rel in written:
        sys.stdout.write(f"wrote {rel}\n")
    for rel in removed:
        sys.stdout.write(f"removed {rel}\n")
    total = len(golden.existing_goldens(root))
    sys.stdout.write(f"{len(written)} written, {len(removed)} removed, {total} golden file(s) in {root / 'emit'}\n")
    return 0
