"""CPU execution: emitted PTX run through the reference model, and a direct IR interpreter.

Public API:

* :func:`execute` ``(kernel_or_ptx_text, kernel_name, args, grid, block, *, db) -> ExecutionResult`` --
  parse a PTX module (the subset tilecheck emits; :mod:`tilecheck.sim.machine` lists it) and run
  one kernel on numpy arrays, vectorised over all threads;
* :func:`run_program` ``(program, *arrays, backend="cpu", db=...)`` -- what ``Program.run`` does: emit the
  program's PTX and execute it; outputs are written in place and the tensor arrays returned;
* :func:`interpret_program` ``(program, *arrays, db=...)`` -- execute the IR directly with the model (no
  PTX), the reference side of the emitter's differential tests;
* :class:`ApproximateReferenceWarning` -- raised (as a warning) when approximate forms returned
  the model's reference value; :class:`PtxError`, :class:`ExecutionError`.
"""

from __future__ import annotations

from tilecheck.sim.errors import ApproximateReferenceWarning, ExecutionError, PtxError
from tilecheck.sim.interpret import interpret_program
from tilecheck.sim.machine import ExecutionResult, execute
from tilecheck.sim.parser import parse_ptx
from tilecheck.sim.program import run_program

__all__ = ["execute", "run_program", "interpret_program", "parse_ptx", "ExecutionResult",
           "ApproximateReferenceWarning", "ExecutionError", "PtxError"]
