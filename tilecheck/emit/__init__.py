"""The PTX emitter: checked tile programs -> PTX modules (and a CUDA C++ rendering); single-instruction
kernels for the differential engine.

Public API:

* :func:`emit_program` ``(program, target, format="ptx") -> str`` -- one program for a target the
  caller names (``"sm_90"``; ``None``: the spec database's default);
  ``format="cuda"`` gives CUDA C++ with one inline-asm helper per form;
* :func:`emit_programs` -- several programs in one module (``tilecheck emit`` on a file);
* :func:`single_instruction_kernel` ``(form, target, predicated=False) -> EmittedKernel``
  -- one form wrapped in a kernel with a fixed ABI (see :mod:`tilecheck.emit.kernel`);
* :func:`plan_program` -- the register/step plan both renderers read (:mod:`tilecheck.emit.plan`).

Code generation follows the seed's rules (see :mod:`tilecheck.emit.ptx`); emitted text is
deterministic (no timestamps, no absolute paths), so the goldens under ``emit/`` diff cleanly.
Regenerate them with ``python -m tilecheck.emit.golden``.
"""

from __future__ import annotations

import numpy as np

from tilecheck.emit.common import PARAM_PTX_TYPE, EmitError
from tilecheck.emit.cuda import program_source
from tilecheck.emit.kernel import EmittedKernel, KernelParam, kernel_name, single_instruction_kernel
from tilecheck.emit.plan import KernelPlan, plan_program
from tilecheck.emit.ptx import param_name, program_module
from tilecheck.errors import UsageError
from tilecheck.spec.database import load_database

FORMATS = ("ptx", "cuda")

__all__ = ["emit_program", "emit_programs", "program_kernel", "single_instruction_kernel", "plan_program",
           "EmittedKernel", "KernelParam", "KernelPlan", "EmitError", "kernel_name", "FORMATS"]


def emit_program(program, target: str | None, format: str = "ptx", db=None) -> str:
    """The PTX module (or CUDA C++ source) of one tile program for ``target``.

    The program must check clean: otherwise :class:`~tilecheck.errors.IllegalTileOpError` is
    raised with every diagnostic. ``target=None`` means the spec database's default (sm_90).
    """
    return emit_programs([program], target=target, format=format, db=db)


def emit_programs(programs, target: str | None, format: str = "ptx", db=None) -> str:
    """One PTX module (or CUDA source) holding a kernel per program, ``.version`` the highest needed."""
    if format not in FORMATS:
        raise UsageError(f"unknown emit format {format!r}; known: {', '.join(FORMATS)}")
    db = db or load_database()
    plans = [plan_program(p, target=target, db=db) for p in programs]
    if format == "ptx":
        return program_module(plans)
    return program_source(plans)


def program_kernel(program, target: str | None, db=None) -> EmittedKernel:
    """A program's PTX as an :class:`EmittedKernel`: parameters one per program parameter, in order;
    ``grid``/``block`` the launch it runs with (:func:`tilecheck.emit.plan.launch_of`)."""
    db = db or load_database()
    plan = plan_program(program, target=target, db=db)
    params = []
    for p in program.params:
        if p.is_tensor:
            buffer = p.view.buffer
            # numpy has no bfloat16: such tensors travel as their uint16 bits
            dtype = np.dtype(np.uint16) if buffer.dtype.name == "bfloat16" else np.dtype(buffer.dtype.name)
            params.append(KernelParam(param_name(p.name), "u64", "tensor", p.name, dtype, buffer.size))
        else:
            params.append(KernelParam(param_name(p.name), PARAM_PTX_TYPE[p.scalar.dtype.name], "scalar", p.name))
    return EmittedKernel(program.name, program_module([plan]), plan.version_text, plan.target, tuple(params),
                         grid=tuple(plan.launch.grid), block=tuple(plan.launch.block))
