"""The T API calls that record into the program being traced.

``alloc_local``, ``device_entry``, ``apply``, ``T.ptx[...]``, ``T.Tensor``, ``T.cuda.LaunchConfig``
and the thread-index expressions. They never raise for a program's mistakes they can record:
a wrong argument becomes a diagnostic at the caller's line (TC8xx) and tracing goes on.
Anything about the instruction itself (opcode, operands, scope, pred) is left to the checker, so
that it is judged against the spec database and the target chosen at check time.
"""

from __future__ import annotations

import ast
import linecache

import numpy as np

from tilecheck.tile import dtypes as _dtypes
from tilecheck.tile.exprs import Const, Expr, ThreadIndex, as_expr
from tilecheck.tile.ir import ApplyCall, Instruction, LaunchConfig, Opaque, TensorType
from tilecheck.tile.layout import bind_layout
from tilecheck.tile.trace import active, caller_location, report
from tilecheck.tile.views import Buffer, View


def _shape(value) -> tuple[int, ...] | None:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, (tuple, list)) and value and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in value):
        return tuple(int(v) for v in value)
    return None


def tensor(shape, dtype) -> TensorType:
    """``T.Tensor(shape, dtype)``: the annotation of a global tensor parameter."""
    shape_t = _shape(shape)
    dtype_t = _dtypes.lookup(dtype)
    if shape_t is None:
        return TensorType((), dtype_t, f"T.Tensor shape must be a non-empty tuple of positive ints, got {shape!r}")
    if dtype_t is None:
        return TensorType(shape_t, None, _dtypes.describe_unknown(dtype), "TC801")
    return TensorType(shape_t, dtype_t)


def launch_config(grid=1, block=1) -> LaunchConfig:
    """``T.cuda.LaunchConfig(grid=..., block=...)``: 1 to 3 positive extents each."""
    grid_t, block_t = _shape(grid), _shape(block)
    for name, given, value in (("grid", grid, grid_t), ("block", block, block_t)):
        if value is None or len(value) > 3:
            return LaunchConfig(problem=f"{name} must be a positive int or 1-3 positive ints, got {given!r}")
    if np.prod(block_t) > 1024:
        return LaunchConfig(grid_t, block_t, f"a block has at most 1024 threads; block={block!r} has {int(np.prod(block_t))}")
    return LaunchConfig(grid_t, block_t)


def device_entry(launch=None) -> None:
    """``T.device_entry(launch=T.cuda.LaunchConfig(...))``: the kernel's launch configuration."""
    tracer = active("T.device_entry")
    location = caller_location()
    if tracer.launch is not None:
        report("TC804", f"the launch configuration was already set at {tracer.launch_location}", subject="T.device_entry")
        return
    if not isinstance(launch, LaunchConfig):
        report("TC804", f"launch must be a T.cuda.LaunchConfig(grid=..., block=...), got {launch!r}",
               subject="T.device_entry")
        return
    if launch.problem:
        report("TC804", launch.problem, subject="T.cuda.LaunchConfig")
        return
    tracer.launch = launch
    tracer.launch_location = location


def alloc_local(shape, dtype, layout="default", name: str | None = None) -> View:
    """``T.alloc_local(shape, dtype, layout=...)``: a local register buffer; returns its full view.

    ``layout`` is ``"default"`` (thread-private) or a :class:`~tilecheck.tile.layout.TileLayout`.
    """
    tracer = active("T.alloc_local")
    location = caller_location()
    shape_t = _shape(shape)
    dtype_t = _dtypes.lookup(dtype)
    if shape_t is None:
        report("TC802", f"shape must be a non-empty tuple of positive ints, got {shape!r}", subject="T.alloc_local")
    if dtype_t is None:
        report("TC801", _dtypes.describe_unknown(dtype), subject="T.alloc_local")
    names, problem = bind_layout(layout, shape_t or ())
    if problem and shape_t is not None:
        report("TC802", problem, subject="T.alloc_local")
    wanted = name if isinstance(name, str) and name else (_assigned_name(location) or f"local{len(tracer.locals)}")
    buffer = Buffer(tracer.unique_name(wanted), shape_t or (1,), dtype_t if shape_t else None, "local",
                    names if shape_t else ("m",), location)
    tracer.locals.append(buffer)
    return View.of(buffer)


def _assigned_name(location) -> str | None:
    """The variable name in ``name = T.alloc_local(...)`` on the caller's line, for messages."""
    if location is None:
        return None
    text = linecache.getline(location.path, location.line).strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a call spread over several lines: fall back to a generated name
        return None
    stmt = tree.body[0] if tree.body else None
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        if isinstance(target, ast.Name):
            return target.id
    return None


def apply(instruction, *operands, scope="thread", pred=None, preserve_dst=False, **parameters) -> ApplyCall:
    """``T.cuda.tile.apply(T.ptx[opcode], *operands, scope="thread", pred=None, preserve_dst=False)``.

    Records the call in program order with its source line; returns the recorded
    :class:`~tilecheck.tile.ir.ApplyCall`. Legality is judged by ``Program.check()``.
    """
    tracer = active("T.cuda.tile.apply")
    location = caller_location()
    if isinstance(instruction, str):
        instruction = Instruction(instruction)
    elif not isinstance(instruction, Instruction):
        instruction = Opaque(instruction)
    recorded = []
    for op in operands:
        if isinstance(op, View):
            recorded.append(op)
        else:
            expr = as_expr(op)
            recorded.append(expr if expr is not None else Opaque(op))
    if pred is not None and not isinstance(pred, (View, Expr)):
        expr = as_expr(pred)
        pred = expr if expr is not None else Opaque(pred)
    call = ApplyCall(len(tracer.calls), instruction, tuple(recorded),
                     scope if isinstance(scope, str) else Opaque(scope), pred, preserve_dst,
                     tuple(parameters.items()), location)
    tracer.calls.append(call)
    return call


class Ptx:
    """``T.ptx["div.rn.f32"]``: an instruction by its PTX spelling (qualifier order is free).

    Resolution against the spec database happens when the program is checked, so an unknown or
    illegal spelling is a diagnostic at the apply call, judged for the chosen target.
    """

    def __getitem__(self, spelling) -> Instruction | Opaque:
        if isinstance(spelling, str):
            return Instruction(spelling.strip())
        return Opaque(spelling)

    def __repr__(self) -> str:
        return "T.ptx"


def thread_id() -> ThreadIndex:
    """The issuing thread's linear index in its block (int32)."""
    return ThreadIndex("thread_id")


def lane_id() -> ThreadIndex:
    """The issuing thread's lane in its warp, 0..31 (int32)."""
    return ThreadIndex("lane_id")


def warp_id() -> ThreadIndex:
    """The issuing thread's warp index in its block (int32)."""
    return ThreadIndex("warp_id")


def constant(value, dtype) -> Const:
    """A typed constant (``T.const(4, "float32")``, same as ``T.float32(4)``)."""
    dtype_t = _dtypes.lookup(dtype)
    if dtype_t is None:
        report("TC801", _dtypes.describe_unknown(dtype), subject="T.const")
        return Const(value, None, _dtypes.describe_unknown(dtype))
    return Const.typed(value, dtype_t)
