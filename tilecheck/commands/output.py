"""Output helpers shared by the subcommands: ``--json FILE|-`` and where human text goes.

``--json -`` writes the JSON document to stdout and moves the human report to stderr, so stdout
holds exactly one JSON document. ``--json FILE`` is checked for writability before any work
starts (a long run must not end by losing its results to a missing folder).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tilecheck.errors import UsageError, echo

JSON_HELP = "also write the results as JSON to FILE ('-': stdout, the human report then goes to stderr)"


def add_json_option(parser, help_text: str = JSON_HELP) -> None:
    """The common ``--json FILE|-`` option."""
    parser.add_argument("--json", metavar="FILE|-", default=None, help=help_text)


def human_stream(args):
    """Where the human report goes: stderr when the JSON document takes stdout."""
    return sys.stderr if getattr(args, "json", None) == "-" else sys.stdout


def check_writable(path: str | None, option: str = "--json") -> None:
    """Raise a UsageError now if ``path`` cannot be written later (missing folder, a folder,
    no permission). ``-`` and ``None`` are always fine."""
    if path in (None, "-"):
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"{option} {echo(path)}: is a folder; give a file name")
    if not folder.is_dir():
        raise UsageError(f"{option} {echo(path)}: folder {echo(str(folder))} does not exist")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise UsageError(f"{option} {echo(path)}: file is not writable")
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {echo(path)}: cannot create a file in {echo(str(folder))} (permission denied)")


def _plain(value):
    """JSON for what json cannot write: numpy numbers as numbers, sets as lists, the rest as text."""
    if hasattr(value, "item") and hasattr(value, "dtype"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def write_json(path: str | None, data, option: str = "--json") -> None:
    """Write ``data`` as one JSON document to ``path`` (``-``: stdout); nothing when ``path`` is None."""
    if path is None:
        return
    text = json.dumps(data, indent=1, default=_plain) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option} {echo(path)}: cannot write: {exc.strerror or exc}") from None
