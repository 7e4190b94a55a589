"""Tile programs with everything that can be done to them: check, validate, expand, emit, run.

This facade sits above the legality checker, the emitter and the simulator, so the tile frontend
and its IR (:mod:`tilecheck.tile`) never import them. Write programs against its ``T``::

    from tilecheck.program import T

    @T.function
    def root_ratio(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
        ...

    root_ratio.check()            # -> list of Diagnostic (empty: legal)
    root_ratio.validate()         # raises IllegalTileOpError listing every violation
    root_ratio.expand()           # instruction instances in code-generation order
    root_ratio.emit("sm_90")      # PTX module text
    root_ratio.run(a, out)        # emitted PTX executed on the CPU through the model

``tilecheck.tile.T`` traces the same programs into the bare IR (:class:`tilecheck.tile.ir.Program`);
the command-line tools accept files written against either, since they call the functions below.

This is a public entry point: every method takes ``db`` (a
:class:`~tilecheck.spec.database.SpecDatabase`) and, when it is left out, loads the spec under
:func:`~tilecheck.specio.files.spec_root` (``TILECHECK_SPEC_DIR`` or the packaged ``spec/``) once
per root. The library functions below it take the database as a parameter.
"""

from __future__ import annotations

import inspect

from tilecheck.emit import emit_program
from tilecheck.errors import UsageError
from tilecheck.legality.checker import check_program, expand_program, validate_program
from tilecheck.sim.program import run_program
from tilecheck.spec.database import load_database
from tilecheck.tile import ir
from tilecheck.tile.namespace import TNamespace

__all__ = ["Program", "T", "check_program", "validate_program", "expand_program", "emit_program",
           "run_program"]


class Program(ir.Program):
    """A traced ``@T.function`` program (:class:`tilecheck.tile.ir.Program`) with its operations."""

    def check(self, target: str | None = None, db=None) -> list:
        """Every legality violation, as :class:`~tilecheck.tile.diagnostics.Diagnostic` in line order.

        ``target`` (``"sm_90"``) defaults to the spec database's default target; an unknown
        target raises :class:`~tilecheck.errors.UnknownFormError`.
        """
        return check_program(self, target=target, db=db or load_database())

    def validate(self, target: str | None = None, db=None) -> None:
        """Raise :class:`~tilecheck.errors.IllegalTileOpError` (a ValueError) listing every violation."""
        validate_program(self, target=target, db=db or load_database())

    def expand(self, target: str | None = None, db=None) -> list:
        """Validate, then every call's instruction instances (:func:`tilecheck.legality.expand_program`)."""
        return expand_program(self, target=target, db=db or load_database())

    def emit(self, target: str | None, format: str = "ptx", db=None) -> str:
        """PTX (or with ``format="cuda"`` CUDA C++) for this program for ``target`` (``"sm_90"``;
        ``None``: the spec database's default target) (:func:`tilecheck.emit.emit_program`)."""
        return emit_program(self, target=target, format=format, db=db or load_database())

    def run(self, *arrays, backend: str = "cpu", **options):
        """Execute the program on ``arrays`` (:func:`tilecheck.sim.run_program`)."""
        accepted = [n for n in inspect.signature(run_program).parameters if n not in ("program", "arrays")]
        unknown = [k for k in options if k not in accepted]
        if unknown:
            params = ", ".join(p.name for p in self.params)
            raise UsageError(f"{self.name}.run(): unknown keyword argument(s) {', '.join(unknown)}; pass the arrays "
                             f"positionally in parameter order ({params}); keywords: {', '.join(accepted)}")
        options["db"] = options.get("db") or load_database()
        return run_program(self, *arrays, backend=backend, **options)


T = TNamespace(Program)
