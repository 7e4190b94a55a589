"""The command line with and without Dask, for the commands that take ``--workers``/``--scheduler``
(``fuzz``, ``verify FILE.ptx``): the same two promises, checked the same way for each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DASK_OPTIONS = [["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:9"]]
"""One of each Dask option (nothing listens on port 9 of loopback)."""


def assert_runs_without_importing_dask(argv: list[str], exit_code: int) -> None:
    """``tilecheck ARGV`` in a fresh interpreter returns ``exit_code`` and imports no module of
    ``dask`` or ``distributed``."""
    code = ("import sys; from tilecheck.cli import main; "
            f"rc = main({argv!r}); assert rc == {exit_code}, rc; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')); "
            "assert not bad, bad")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def assert_usage_error_without_dask(monkeypatch, capsys, argv: list[str]) -> None:
    """With Dask not importable, ``tilecheck ARGV`` is exit 2 with the install hint, no traceback."""
    from tilecheck.cli import main

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    monkeypatch.setitem(sys.modules, "dask", None)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "pip install 'tilecheck[dist]'" in err and "Traceback" not in err
