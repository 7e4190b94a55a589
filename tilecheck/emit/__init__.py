"""The PTX emitter: checked tile programs -> PTX modules (and a CUDA C++ rendering); single-instruction
kernels for the differential engine.

Public API (``db`` is the :class:`~tilecheck.spec.database.SpecDatabase` the caller loaded):

* :func:`emit_program` ``(program, target, format="ptx", *, db) -> str`` -- one program for a target the
  caller names (``"sm_90"``; ``None``: the spec database's default);
  ``format="cuda"`` gives CUDA C++ with one inline-asm helper per form;
* :func:`emit_programs` -- several programs in one module (``tilecheck emit`` on a file);
* :func:`single_instruction_kernel` ``(form, target, predicated=False, *, db) -> EmittedKernel``
  -- one form wrapped in a kernel with a fixed ABI (see :mod:`tilecheck.emit.kernel`);
* :func:`plan_program` -- the register/step plan both renderers read (:mod:`tilecheck.emit.plan`).

Code generation follows the seed's rules (see :mod:`tilecheck.emit.ptx`); emitted text is
deterministic (no timestamps, no absolute paths), so the goldens under ``emit/`` diff cleanly.
Regenerate them with ``python -m tilecheck.emit.golden``.
"""

from __future__ import annotations

from tilecheck.emit.common import EmitError
from tilecheck.emit.kernel import EmittedKernel, KernelParam, kernel_name, single_instruction_kernel
from tilecheck.emit.module import FORMATS, emit_program, emit_programs, program_kernel
from tilecheck.emit.plan import KernelPlan, plan_program

__all__ = ["emit_program", "emit_programs", "program_kernel", "single_instruction_kernel", "plan_program",
           "EmittedKernel", "KernelParam", "KernelPlan", "EmitError", "kernel_name", "FORMATS"]
