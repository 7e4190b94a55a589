"""Whole tile programs to text: a PTX module (or CUDA C++ source) per set of programs, and a
program's kernel with its parameters (what the simulator and the GPU backend launch)."""

from __future__ import annotations

import numpy as np

from tilecheck.emit.common import PARAM_PTX_TYPE
from tilecheck.emit.cuda import program_source
from tilecheck.emit.kernel import EmittedKernel, KernelParam
from tilecheck.emit.plan import plan_program
from tilecheck.emit.ptx import param_name, program_module
from tilecheck.errors import UsageError

FORMATS = ("ptx", "cuda")
"""What :func:`emit_programs` renders: PTX or CUDA C++."""


def emit_program(program, target: str | None, format: str = "ptx", *, db) -> str:
    """The PTX module (or CUDA C++ source) of one tile program for ``target``.

    The program must check clean: otherwise :class:`~tilecheck.errors.IllegalTileOpError` is
    raised with every diagnostic. ``target=None`` means the spec database's default (sm_90).
    """
    return emit_programs([program], target=target, format=format, db=db)


def emit_programs(programs, target: str | None, format: str = "ptx", *, db) -> str:
    """One PTX module (or CUDA source) holding a kernel per program, ``.version`` the highest needed."""
    if format not in FORMATS:
        raise UsageError(f"unknown emit format {format!r}; known: {', '.join(FORMATS)}")
    plans = [plan_program(p, target=target, db=db) for p in programs]
    if format == "ptx":
        return program_module(plans)
    return program_source(plans)


def program_kernel(program, target: str | None, *, db) -> EmittedKernel:
    """A program's PTX as an :class:`EmittedKernel`: parameters one per program parameter, in order;
    ``grid``/``block`` the launch it runs with (:func:`tilecheck.tile.ir.launch_of`)."""
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
