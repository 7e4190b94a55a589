"""``tilecheck doc --out DIR``: write the static reference site generated from ``spec/``.

One page per PTX family and per AMD instruction form, an index and the corpus page
(:mod:`tilecheck.report.site`). Prints the index path and the page count. Needs the ``report``
extra (Jinja2, Matplotlib): without it, exit 2 naming ``pip install 'tilecheck[report]'``. An
output folder that cannot be created or written is a usage error (exit 2) naming ``--out``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tilecheck.errors import UsageError, echo
from tilecheck.report.render import environment, require
from tilecheck.report.site import build_site
from tilecheck.spec.database import load_database


def add_parser(sub):
    """Register the ``doc`` subcommand."""
    p = sub.add_parser("doc", help="write the static instruction reference site generated from spec/",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the site into (created if missing)")
    return p


def _check_out(path: str) -> Path:
    """``--out`` as a writable folder (created), or a UsageError naming the option and the path."""
    out = Path(path)
    shown = echo(path, limit=4096)  # a path is located in full (echo shortens long operands)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {shown}: is a file; give a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {shown}: cannot create the folder: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {shown}: folder is not writable (permission denied)")
    return out


def run(args) -> int:
    """Build the site; returns 0."""
    # the missing extra is reported before any other work, as for verify --html
    environment()
    require("matplotlib")
    out = _check_out(args.out)
    pages = build_site(load_database(), out)
    sys.stdout.write(f"{pages[0]}\n{len(pages)} pages written to {out}\n")
    return 0
