"""Tile programs with everything that can be done to them: check, validate, expand, emit, run.

This facade sits above the legality checker, the emitter and the simulator, so the tile frontend
and its IR (:mod:`tilecheck.tile`) never import them. There is one ``T`` and one program class:
``tilecheck.program.T`` is :data:`tilecheck.tile.T`, and :class:`Program` is
:class:`tilecheck.tile.ir.Program`, whose methods look this module up by name when called and
delegate to the functions below. Programs written against either import behave the same::

    from tilecheck.program import T     # or: from tilecheck.tile import T (the seed's import)

    @T.function
    def root_ratio(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
        ...

    root_ratio.check()            # -> list of Diagnostic (empty: legal)
    root_ratio.validate()         # raises IllegalTileOpError listing every violation
    root_ratio.expand()           # instruction instances in code-generation order
    root_ratio.emit("sm_90")      # PTX module text
    root_ratio.run(a, out)        # emitted PTX executed on the CPU through the model

This is a public entry point: every operation takes ``db`` (a
:class:`~tilecheck.spec.database.SpecDatabase`) and, when it is left out, loads the spec under
:func:`~tilecheck.specio.files.spec_root` (``TILECHECK_SPEC_DIR`` or the packaged ``spec/``) once
per root. The library functions it re-exports (``check_program`` ...) take the database as a
parameter.
"""

from __future__ import annotations

import inspect

from tilecheck.emit import emit_program
from tilecheck.errors import UsageError
from tilecheck.legality.checker import check_program, expand_program, validate_program
from tilecheck.sim.program import run_program
from tilecheck.spec.database import load_database
from tilecheck.tile.ir import Program
from tilecheck.tile.namespace import T

__all__ = ["Program", "T", "check", "validate", "expand", "emit", "run", "check_program", "validate_program",
           "expand_program", "emit_program", "run_program"]


def check(program: Program, target: str | None = None, db=None) -> list:
    """Every legality violation of ``program``, as :class:`~tilecheck.tile.diagnostics.Diagnostic`
    in line order (``Program.check``).

    ``target`` (``"sm_90"``) defaults to the spec database's default target; an unknown
    target raises :class:`~tilecheck.errors.UnknownFormError`.
    """
    return check_program(program, target=target, db=db or load_database())


def validate(program: Program, target: str | None = None, db=None) -> None:
    """Raise :class:`~tilecheck.errors.IllegalTileOpError` (a ValueError) listing every violation
    (``Program.validate``)."""
    validate_program(program, target=target, db=db or load_database())


def expand(program: Program, target: str | None = None, db=None) -> list:
    """Validate, then every call's instruction instances (:func:`tilecheck.legality.expand_program`;
    ``Program.expand``)."""
    return expand_program(program, target=target, db=db or load_database())


def emit(program: Program, target: str | None, format: str = "ptx", db=None) -> str:
    """PTX (or with ``format="cuda"`` CUDA C++) for ``program`` for ``target`` (``"sm_90"``;
    ``None``: the spec database's default target) (:func:`tilecheck.emit.emit_program`;
    ``Program.emit``)."""
    return emit_program(program, target=target, format=format, db=db or load_database())


def run(program: Program, *arrays, backend: str = "cpu", **options):
    """Execute ``program`` on ``arrays`` (:func:`tilecheck.sim.run_program`; ``Program.run``).

    Keywords other than ``run_program``'s are a :class:`~tilecheck.errors.UsageError` naming the
    parameters, since a user passing arrays by name would otherwise get a bare TypeError.
    """
    accepted = [n for n in inspect.signature(run_program).parameters if n not in ("program", "arrays")]
    unknown = [k for k in options if k not in accepted]
    if unknown:
        params = ", ".join(p.name for p in program.params)
        raise UsageError(f"{program.name}.run(): unknown keyword argument(s) {', '.join(unknown)}; pass the arrays "
                         f"positionally in parameter order ({params}); keywords: {', '.join(accepted)}")
    options["db"] = options.get("db") or load_database()
    return run_program(program, *arrays, backend=backend, **options)
