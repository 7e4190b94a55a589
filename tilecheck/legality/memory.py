"""Memory operands of ld/st (TC602, TC603): "Each memory atom must be consecutive and aligned to
the whole vector's byte size."

Offsets are checked relative to the tensor's base, which tilecheck assumes aligned to at least
16 bytes (the emitter allocates and passes tensors that way; CUDA allocations are 256-byte
aligned).
"""

from __future__ import annotations

import numpy as np

from tilecheck.legality.context import CallContext, Operand


def check_memory(ctx: CallContext) -> None:
    """Report non-consecutive or misaligned memory atoms of usable ld/st memory operands."""
    for op in ctx.operands:
        if op.kind == "memory" and op.view is not None and op.rank_ok and op.dtype_ok and op.view.shape[-1] == op.atom:
            _check_operand(ctx, op)


def _check_operand(ctx: CallContext, op: Operand) -> None:
    view, vec = op.view, op.atom
    last = view.ndim - 1
    if vec > 1 and view.strides[-1] != 1:
        ctx.add("TC602", f"the {vec} words of one access must be consecutive in memory", operand=op.index, axis=last,
                expected="stride 1", found=f"stride {view.strides[-1]}")
        return
    if vec == 1:
        return  # a single naturally aligned word: views are element-aligned by construction
    starts = view.element_offsets()[..., 0]
    bad = starts % vec != 0
    if not bad.any():
        return
    pos = tuple(int(i) for i in np.argwhere(bad)[0])
    culprit = next((axis for axis in range(last) if view.shape[axis] > 1 and view.strides[axis] % vec), None)
    nbytes = vec * view.dtype.bytes
    ctx.add("TC603", f"a .v{vec} access must be {nbytes}-byte aligned", operand=op.index, axis=culprit,
            expected=f"every atom to start at a multiple of {vec} elements",
            found=(f"stride {view.strides[culprit]}" if culprit is not None else f"offset {view.offset}")
            + f" (atom at coordinate {pos + (0,)} starts at element {int(starts[pos])})")
