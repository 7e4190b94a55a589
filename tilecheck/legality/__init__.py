"""The tile legality checker: a traced :class:`~tilecheck.tile.ir.Program` -> a list of diagnostics.

* :mod:`~tilecheck.legality.codes` -- every diagnostic code with its one-line meaning;
* :mod:`~tilecheck.legality.diagnostics` -- the :class:`Diagnostic` record and its rendering;
* :mod:`~tilecheck.legality.checker` -- ``check_program(program, target=None, db=None)``, which
  resolves each call's form through the spec database and runs the per-condition modules
  (``binding``, ``shapes``, ``dtypes``, ``ownership``, ``memory``, ``overlap``, ``predication``).

The checker depends on :mod:`tilecheck.spec` and the tile IR only. This package's ``__init__``
imports nothing from the checker so that the tile frontend can use :class:`Diagnostic` freely.
"""

from tilecheck.legality.codes import CODES, Code
from tilecheck.legality.diagnostics import Diagnostic

__all__ = ["CODES", "Code", "Diagnostic", "check_program"]


def __getattr__(name):
    # check_program imports the tile IR, which imports Diagnostic from here: load it on first use
    if name == "check_program":
        from tilecheck.legality.checker import check_program

        return check_program
    raise AttributeError(f"module 'tilecheck.legality' has no attribute {name!r}")
