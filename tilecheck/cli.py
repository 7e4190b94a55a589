"""The ``tilecheck`` command line: the only place that turns exceptions into exit codes.

Each subcommand lives in ``tilecheck/commands/<name>.py`` and defines ``add_parser(subparsers)``
and ``run(args) -> int``. Exit codes: 0 everything verified / legal, 1 a mismatch, an illegal
form or program, or a failed check, 2 usage or environment error (malformed spec, unknown form,
bad operand, missing ptxas or GPU). ``--debug`` shows the Python traceback of internal errors.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback

from tilecheck import __version__
from tilecheck.commands import check, doc, emit, fuzz, prove, spec, verify
from tilecheck.commands import eval as evaluate
from tilecheck.errors import TilecheckError

# Subcommands in the order ``--help`` lists them.
COMMANDS = {"verify": verify, "eval": evaluate, "spec": spec, "check": check, "emit": emit, "fuzz": fuzz,
            "prove": prove, "doc": doc}

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


# an argument that reads as a signed number (``-inf``, ``-1e5``, ``-0.5,2``, ``-1/3``, ``-nan``)
# is an operand, not an option: no option of any subcommand is spelled like a number
_NUMBER_LIKE = re.compile(r"^-(?:[0-9.]|inf|infinity|nan)", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors get exit code 2 and our format."""

    def error(self, message):  # noqa: D401 - argparse API
        raise _UsageExit(f"{self.prog}: {message}")

    def _parse_optional(self, arg_string):
        # argparse only lets ``-1`` and ``-.5`` through as values; ``-inf`` and ``-1e5`` would be
        # read as unknown options. Returning None classifies the argument as a positional/value.
        if _NUMBER_LIKE.match(arg_string) and arg_string not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)


class _UsageExit(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = _Parser(prog="tilecheck", description="Executable semantics and verification for GPU arithmetic instructions.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    parser.add_argument("--version", action="version", version=f"tilecheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in COMMANDS.values():
        sp = module.add_parser(sub)
        sp.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tilecheck`` console script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv or bool(os.environ.get("TILECHECK_DEBUG"))
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except _UsageExit as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except SystemExit as exc:  # --help and --version have printed their text
            return exc.code if isinstance(exc.code, int) else EXIT_OK
        if not getattr(args, "_run", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return int(args._run(args))
    except TilecheckError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # an internal bug: say so plainly, traceback on request
        if debug:
            traceback.print_exc()
        print(f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback; "
              "please report it)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
