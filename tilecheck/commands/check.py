"""``tilecheck check PROGRAM.py [--target sm_90]``: report every illegal tile apply call
(``FILE.ptx``, ``FILE.cu`` or ``-``: judge PTX against the spec, :mod:`tilecheck.commands.check_ptx`).

Loads each program file, checks every ``@T.function`` program it defines against the spec
database for the target, and prints each diagnostic compiler-style
(``root_ratio.py:9: illegal[TC204]: operand 2 ('b', denominator) axis 0 (repeat): expected
extent 4, found 3``), then one summary line per program.

Exit codes: 0 every program legal, 1 at least one legality violation, 2 usage error (unknown
target, missing file, a program file that does not load).
"""

from __future__ import annotations

from dataclasses import replace

from tilecheck.commands import check_ptx
from tilecheck.commands.output import check_writable, human_stream, write_json
from tilecheck.errors import Location, UsageError, echo
from tilecheck.legality.checker import check_program
from tilecheck.spec.database import load_database
from tilecheck.tile.loader import display_path, load_programs


def add_parser(subparsers):
    """Register the ``check`` subcommand."""
    parser = subparsers.add_parser(
        "check", help="check tile programs for illegal apply calls, or PTX (modules, inline asm) against the spec",
        description="Trace each @T.function program in the files and report every legality violation; or judge "
                    "every instruction of PTX modules (FILE.ptx, '-' for stdin) and of inline asm in CUDA C++ "
                    "(FILE.cu) for their target and PTX version (exit 0 legal, 1 illegal, 2 usage error).")
    parser.add_argument("programs", nargs="+", metavar="PROGRAM.py|FILE.ptx|FILE.cu|-",
                        help="tile program file(s), or PTX / CUDA C++ files")
    parser.add_argument("--target", default=None, metavar="sm_XX",
                        help="target to check the forms' gates against (default: the spec database's default; "
                             "PTX: the module's .target)")
    parser.add_argument("--version", default=None, metavar="X.Y",
                        help="PTX: judge against this PTX ISA version instead of the module's .version")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE|-",
                        help="also write one JSON document (every program, legal or not, with its diagnostics) "
                             "to FILE; '-' or no FILE: stdout, the text report then goes to stderr")
    return parser


def run(args) -> int:
    """Check the programs; return 0 (legal), 1 (violations) or raise for usage errors (2)."""
    if args.json and args.json.endswith(".py"):  # `check --json prog.py other.py` would overwrite prog.py
        raise UsageError(f"--json {echo(args.json)} names a program file; write `--json -` or a .json file name")
    check_writable(args.json)
    db = load_database()
    ptx = [check_ptx.is_ptx_target(p) for p in args.programs]
    if any(ptx):
        if not all(ptx):
            raise UsageError("check takes tile programs (*.py) or PTX / CUDA C++ files, not both in one run")
        return check_ptx.run(args, db)
    if args.version is not None:
        raise UsageError("--version applies to PTX files (FILE.ptx, FILE.cu, -)")
    target = db.target(args.target).name
    loaded = [(path, load_programs(path)) for path in args.programs]  # every file loads before any output
    out = human_stream(args)
    illegal = False
    records = []
    for path, programs in loaded:
        for program in programs:
            diagnostics = check_program(program, target=target, db=db)
            errors = [d for d in diagnostics if d.severity == "error"]
            illegal = illegal or bool(errors)
            shown = list(map(_relative, diagnostics))
            for diag in shown:
                out.write(f"{diag}\n")
            verdict = "legal" if not errors else f"{len(errors)} legality violation(s)"
            out.write(f"{path}: {program.name}: {verdict} ({len(program.calls)} apply call(s), target {target})\n")
            records.append({"file": path, "program": program.name, "legal": not errors, "violations": len(errors),
                            "apply_calls": len(program.calls),
                            "diagnostics": [dict(d.to_dict(), program=program.name) for d in shown]})
    write_json(args.json, {"target": target, "legal": not illegal,
                           "totals": {"programs": len(records), "illegal": sum(not r["legal"] for r in records),
                                      "violations": sum(r["violations"] for r in records)},
                           "programs": records})
    return 1 if illegal else 0


def _relative(diag):
    """The diagnostic with its file shown relative to the working directory."""
    if diag.location is None:
        return diag
    where = Location(display_path(diag.location.path), diag.location.line, diag.location.column)
    return replace(diag, location=where)
