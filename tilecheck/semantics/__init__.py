"""tilecheck's semantics language: instruction bodies in a small subset of Python syntax.

``compile_body`` parses (with :mod:`ast`, never ``eval``) and type-checks a body, reporting
located errors; ``run`` interprets a compiled body with a backend: the vectorised numpy backend
(:mod:`tilecheck.model.semantics`) or the Z3 backend (``tilecheck.smt.semantics``). The
language and its primitives are documented in ``spec/amdgpu/README.md``.
"""

from tilecheck.semantics.interp import (PRIMITIVES, T_BOOL, T_INT, T_ROUNDING, Program, Type, compile_body,
                                        float_type, run)
from tilecheck.semantics.lang import Origin, block_scalar_origin

__all__ = ["PRIMITIVES", "Program", "Type", "T_BOOL", "T_INT", "T_ROUNDING", "Origin", "block_scalar_origin",
           "compile_body", "float_type", "run"]
