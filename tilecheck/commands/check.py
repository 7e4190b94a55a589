"""``tilecheck check PROGRAM.py [--target sm_90]``: report every illegal tile apply call.

Loads each program file, checks every ``@T.function`` program it defines against the spec
database for the target, and prints each diagnostic compiler-style
(``root_ratio.py:9: illegal[TC204]: operand 2 ('b', denominator) axis 0 (repeat): expected
extent 4, found 3``), then one summary line per program.

Exit codes: 0 every program legal, 1 at least one legality violation, 2 usage error (unknown
target, missing file, a program file that does not load).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from tilecheck.legality.checker import check_program
from tilecheck.spec.database import load_database
from tilecheck.errors import Location
from tilecheck.tile.loader import display_path, load_programs


def add_parser(subparsers):
    """Register the ``check`` subcommand."""
    parser = subparsers.add_parser(
        "check", help="check tile programs for illegal T.cuda.tile.apply calls",
        description="Trace each @T.function program in the files and report every legality violation "
                    "(exit 0 legal, 1 illegal, 2 usage error).")
    parser.add_argument("programs", nargs="+", metavar="PROGRAM.py", help="tile program file(s)")
    parser.add_argument("--target", default=None, metavar="sm_XX",
                        help="target to check the forms' gates against (default: the spec database's default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per diagnostic instead of text")
    return parser


def run(args) -> int:
    """Check the programs; return 0 (legal), 1 (violations) or raise for usage errors (2)."""
    db = load_database()
    target = db.target(args.target).name
    loaded = [(path, load_programs(path)) for path in args.programs]  # every file loads before any output
    illegal = False
    for path, programs in loaded:
        for program in programs:
            diagnostics = check_program(program, target=target, db=db)
            errors = [d for d in diagnostics if d.severity == "error"]
            illegal = illegal or bool(errors)
            for diag in map(_relative, diagnostics):
                if args.json:
                    sys.stdout.write(json.dumps(dict(diag.to_dict(), program=program.name)) + "\n")
                else:
                    sys.stdout.write(f"{diag}\n")
            if not args.json:
                verdict = "legal" if not errors else f"{len(errors)} legality violation(s)"
                sys.stdout.write(f"{path}: {program.name}: {verdict} ({len(program.calls)} apply call(s), target {target})\n")
    return 1 if illegal else 0


def _relative(diag):
    """The diagnostic with its file shown relative to the working directory."""
    if diag.location is None:
        return diag
    where = Location(display_path(diag.location.path), diag.location.line, diag.location.column)
    return replace(diag, location=where)
