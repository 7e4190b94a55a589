"""Load a tile program file and collect the programs it defines (for ``tilecheck check``/``emit``).

The file is executed as a fresh module (not registered in ``sys.modules``); every
:class:`~tilecheck.tile.ir.Program` bound at module level is returned, in definition order.
A syntax error, an import error or any exception raised by the file's own code becomes a
:class:`~tilecheck.errors.ProgramError` located at the offending line.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from tilecheck.errors import Location, ProgramError, TilecheckError, UsageError
from tilecheck.tile.ir import Program
from tilecheck.tile.trace import user_location


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (for messages)."""
    try:
        relative = Path(path).resolve().relative_to(Path.cwd().resolve())
    except (OSError, ValueError):  # elsewhere on disk, or a pseudo-file such as "<string>"
        return str(path)
    return relative.as_posix()


def _shown(location: Location | None) -> Location | None:
    if location is None:
        return None
    return Location(display_path(location.path), location.line, location.column)


def load_programs(path: str | Path) -> list[Program]:
    """Execute the program file at ``path`` and return its module-level programs.

    Raises :class:`UsageError` when the file does not exist and :class:`ProgramError` when it
    cannot be executed or defines no ``@T.function`` program.
    """
    shown = str(path)
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{shown}: no such program file")
    digest = hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"tilecheck_program_{digest}", shown)
    if spec is None or spec.loader is None:
        raise ProgramError("not a Python source file", Location(shown))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ProgramError as exc:
        raise ProgramError(exc.message, _shown(exc.location)) from exc
    except TilecheckError:
        raise
    except SyntaxError as exc:
        raise ProgramError(f"syntax error: {exc.msg}", _shown(Location(exc.filename or shown, exc.lineno or 0,
                                                                       exc.offset or 0))) from exc
    except Exception as exc:  # the program file's own code can raise anything: locate it
        where = user_location(exc.__traceback__, shown)
        if where is None:
            raise
        raise ProgramError(f"{type(exc).__name__}: {exc}", _shown(where)) from exc
    programs, seen = [], set()
    for value in vars(module).values():
        if isinstance(value, Program) and id(value) not in seen:
            seen.add(id(value))
            programs.append(value)
    if not programs:
        raise ProgramError("no @T.function program at module level (decorate a function with @T.function)",
                           Location(shown))
    return programs
