"""The tile legality checker: a traced :class:`~tilecheck.tile.ir.Program` -> a list of diagnostics.

* :mod:`~tilecheck.tile.codes` -- every diagnostic code with its one-line meaning;
* :mod:`~tilecheck.tile.diagnostics` -- the :class:`Diagnostic` record and its rendering;
* :mod:`~tilecheck.legality.checker` -- ``check_program(program, target=None, *, db)``, which
  resolves each call's form through the spec database and runs the per-condition modules
  (``binding``, ``shapes``, ``dtypes``, ``ownership``, ``memory``, ``overlap``, ``predication``);
  ``validate_program`` raises on any error, ``expand_program`` validates then expands.

The checker depends on :mod:`tilecheck.spec` and the tile IR only; the diagnostic record and the
code table live in the tile package (:mod:`tilecheck.tile.diagnostics`, :mod:`tilecheck.tile.codes`)
because the frontend reports problems found while tracing with them too.
"""

from tilecheck.legality.checker import check_program, expand_program, validate_program
from tilecheck.tile.codes import CODES, Code
from tilecheck.tile.diagnostics import Diagnostic

__all__ = ["CODES", "Code", "Diagnostic", "check_program", "expand_program", "validate_program"]
