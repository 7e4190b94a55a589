"""Launch an emitted single-instruction kernel on the compiled-PTX engine (:mod:`tilecheck.sim.plan`).

:func:`tilecheck.sim.execute` runs the kernels of the arithmetic on a small subset of PTX. The
kernels of memory forms in other state spaces (``.local``, ``.param`` through a call, generic and
``.nc`` accesses) and of ``cvta`` need what the compiled-PTX engine has: per-thread local memory,
``.shared`` memory with its generic window, ``.param`` variables and inlined calls. This module
binds a kernel's arguments the way :func:`~tilecheck.sim.execute` does (numpy arrays for pointer
parameters, updated in place; a count), runs every thread as one lane and writes each lane's
global stores back into the arrays.
"""

from __future__ import annotations

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import Memory, RunContext, compile_function
from tilecheck.spec.registry import TININESS_DEFAULT

_PLANS: dict = {}


def parse(kernel):
    """The kernel's function as the engine's front end reads it (a located error if it cannot)."""
    return parse_module(kernel.ptx, f"<{kernel.name}>").function(kernel.name)


def compiled_plan(kernel, db):
    """The kernel compiled for the engine (cached; unsupported PTX is a located error)."""
    key = (kernel.name, kernel.ptx, id(db))
    if key not in _PLANS:
        module = parse_module(kernel.ptx, f"<{kernel.name}>")
        _PLANS[key] = compile_function(module.function(kernel.name), db, f"<{kernel.name}>")
    return _PLANS[key]


def execute_plan(kernel, args: list, block: int, *, db, tininess: str | None = None) -> None:
    """Run ``kernel`` (an :class:`~tilecheck.emit.abi.EmittedKernel`) with ``args`` in parameter
    order (numpy arrays for ``.u64`` pointers, a number for the count) over ``n`` threads in CTAs
    of ``block``; every store to an array lands in it."""
    plan = compiled_plan(kernel, db)
    params = kernel.params
    if len(args) != len(params):
        raise UsageError(f"{kernel.name} takes {len(params)} arguments, got {len(args)}")
    arrays = [(p.name, a) for p, a in zip(params, args) if isinstance(a, np.ndarray)]
    n = int(next(a for p, a in zip(params, args) if p.role == "count"))
    if n == 0:
        return
    memory = Memory([(name, np.ascontiguousarray(a).view(np.uint8).reshape(-1)) for name, a in arrays])
    ctx = RunContext(memory=memory, block=block, threads=n, tininess=tininess or TININESS_DEFAULT, fuse=False)
    lanes = plan.new_lanes(n)
    k = 0
    for p, a in zip(params, args):
        if isinstance(a, np.ndarray):
            lanes.params[p.name] = np.full(n, memory.pointer(k), dtype=np.uint64)
            k += 1
        else:
            lanes.params[p.name] = np.full(n, int(a), dtype=np.uint64)
    plan.run(lanes, ctx)
    views = [np.ascontiguousarray(a).view(np.uint8).reshape(-1) for _, a in arrays]
    for region, nbytes, offs, vals, done in lanes.stores:
        rows = np.flatnonzero(done)
        if rows.size == 0:
            continue
        offsets = np.broadcast_to(np.asarray(offs, dtype=np.int64), done.shape)[rows]
        values = np.asarray(vals).astype(np.uint64)[rows] if np.ndim(vals) else np.full(rows.size, int(vals),
                                                                                       dtype=np.uint64)
        raw = values.astype(np.dtype(f"<u{8 if nbytes > 4 else nbytes if nbytes in (1, 2, 4) else 8}"))
        data = raw.view(np.uint8).reshape(rows.size, -1)[:, :nbytes]
        target = views[region]
        for j in range(nbytes):
            target[offsets + j] = data[:, j]
    for (_, a), v in zip(arrays, views):
        if not np.shares_memory(a, v):  # a non-contiguous argument got a copy: write it back
            a[...] = v.view(a.dtype).reshape(a.shape)
