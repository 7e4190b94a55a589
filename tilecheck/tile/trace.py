"""Tracing state: the program being recorded, source locations, frontend diagnostics.

``T.function`` runs the decorated function once under a :class:`Tracer` (kept in a context
variable, so tracing is re-entrant and thread-safe). The T API records allocations, the launch
configuration and apply calls into the active tracer; misuse that does not stop tracing (an
unknown dtype, a bad slice) is recorded with :func:`report` as a diagnostic at the user's line.
"""

from __future__ import annotations

import contextvars
import os
import sys
from functools import lru_cache
from pathlib import Path

from tilecheck.errors import Location, ProgramError
from tilecheck.tile.diagnostics import Diagnostic

_TILE_DIR = str(Path(__file__).resolve().parent)
_TILECHECK_DIR = str(Path(__file__).resolve().parent.parent)

_ACTIVE: contextvars.ContextVar["Tracer | None"] = contextvars.ContextVar("tilecheck_tile_tracer", default=None)


@lru_cache(maxsize=256)
def _in_tile_package(filename: str) -> bool:
    try:
        return str(Path(filename).resolve().parent) == _TILE_DIR
    except (OSError, ValueError):  # odd pseudo-filenames such as "<string>" cannot be resolved
        return False


@lru_cache(maxsize=256)
def _resolved(filename: str) -> str:
    try:
        return str(Path(filename).resolve())
    except (OSError, ValueError):
        return filename


@lru_cache(maxsize=256)
def in_tilecheck(filename: str) -> bool:
    """True when ``filename`` belongs to the tilecheck package (not to a user's program)."""
    try:
        return str(Path(filename).resolve()).startswith(_TILECHECK_DIR + os.sep)
    except (OSError, ValueError):
        return False


def user_location(tb, user_file: str) -> Location | None:
    """Where a program's own code raised, from a traceback; None when tilecheck itself raised.

    Walks from the innermost frame outwards: a tilecheck frame first means the error is ours (an
    internal bug, to be propagated unchanged); a frame of ``user_file`` gives the location.
    Frames of other modules (a helper the program imports) are skipped.
    """
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    wanted = _resolved(user_file)
    for filename, line in reversed(frames):
        if in_tilecheck(filename):
            return None
        if _resolved(filename) == wanted:
            return Location(filename, line)
    return Location(*frames[-1]) if frames else Location(user_file)


def caller_location() -> Location | None:
    """Location of the innermost frame outside ``tilecheck.tile``: the user's line that called the T API."""
    frame = sys._getframe(1)
    while frame is not None and _in_tile_package(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return Location(frame.f_code.co_filename, frame.f_lineno)


class Tracer:
    """What one traced function records; turned into a :class:`~tilecheck.tile.ir.Program` at the end."""

    def __init__(self, name: str, location: Location | None):
        self.name = name
        self.location = location
        self.params: list = []
        self.locals: list = []
        self.calls: list = []
        self.launch = None
        self.launch_location: Location | None = None
        self.diagnostics: list[Diagnostic] = []
        self._names: set[str] = set()

    def unique_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted_1``, ``wanted_2`` ... when a buffer already has that name."""
        name, n = wanted, 0
        while name in self._names:
            n += 1
            name = f"{wanted}_{n}"
        self._names.add(name)
        return name

    def activate(self):
        """Make this tracer the active one; returns the token for :meth:`deactivate`."""
        return _ACTIVE.set(self)

    @staticmethod
    def deactivate(token) -> None:
        """Restore the tracer that was active before :meth:`activate`."""
        _ACTIVE.reset(token)


def active(api: str) -> Tracer:
    """The active tracer; ``api`` names the T call for the error raised outside ``@T.function``."""
    tracer = _ACTIVE.get()
    if tracer is None:
        raise ProgramError(f"{api} can only be called inside a function decorated with @T.function "
                           "(it records into the program being traced)", caller_location())
    return tracer


def report(code: str, message: str, *, subject: str | None = None, expected: str | None = None,
           found: str | None = None, hint: str | None = None, location: Location | None = None) -> None:
    """Record a frontend diagnostic at the user's current line.

    Outside tracing there is no program to record into, so the problem is raised as a located
    :class:`ProgramError` instead.
    """
    location = location or caller_location()
    diag = Diagnostic(code, message, location, subject=subject, expected=expected, found=found, hint=hint)
    tracer = _ACTIVE.get()
    if tracer is None:
        raise ProgramError(diag.summary(), location)
    tracer.diagnostics.append(diag)
