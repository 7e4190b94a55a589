"""Destination overlap (TC701, TC702): "Destination slots must not overlap."

Over all group, repeat and atom coordinates of one call, no two destination slots may be the
same register (TC701) -- or, for a store, the same memory bytes (TC702). Slots are compared as
byte ranges of the buffer's logical storage, so dtype views are handled; a zero stride on a
destination is an overlap by definition. Read-only operands may overlap freely (broadcast).
"""

from __future__ import annotations

import numpy as np

from tilecheck.legality.context import CallContext, Operand


def check_overlap(ctx: CallContext) -> None:
    """Report overlapping destination slots, within each written operand and between them."""
    written = [op for op in ctx.operands if op.written and op.view is not None and op.owned]
    for op in written:
        _check_within(ctx, op)
    for i, a in enumerate(written):
        for b in written[i + 1:]:
            if a.view.buffer is b.view.buffer:
                _check_between(ctx, a, b)


def _code(op: Operand) -> str:
    return "TC702" if op.kind == "memory" else "TC701"


def _what(op: Operand) -> str:
    return "memory bytes" if op.kind == "memory" else "register"


def _check_within(ctx: CallContext, op: Operand) -> None:
    view = op.view
    for axis, (extent, stride) in enumerate(zip(view.shape, view.strides)):
        if extent > 1 and stride == 0:
            ctx.add(_code(op), f"every coordinate along this axis writes the same {_what(op)}", operand=op.index,
                    axis=axis, expected="distinct destination slots", found=f"stride 0 over extent {extent}",
                    hint="zero-stride (broadcast) views are for read-only inputs")
            return
    flat = view.element_offsets().reshape(-1)
    # equal dtype within one operand: two slots overlap exactly when their element indices are equal
    order = np.argsort(flat, kind="stable")
    sorted_offsets = flat[order]
    dup = np.nonzero(sorted_offsets[1:] == sorted_offsets[:-1])[0]
    if dup.size:
        a, b = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        ca = tuple(int(i) for i in np.unravel_index(a, view.shape))
        cb = tuple(int(i) for i in np.unravel_index(b, view.shape))
        ctx.add(_code(op), "two destination slots of this call are the same " + _what(op), operand=op.index,
                expected="distinct destination slots",
                found=f"coordinates {ca} and {cb} both write {view.buffer.name!r} {view.dtype} element "
                      f"{int(flat[a])}")


def _check_between(ctx: CallContext, a: Operand, b: Operand) -> None:
    sa, sb = a.view.byte_offsets().reshape(-1), b.view.byte_offsets().reshape(-1)
    ea, eb = sa + a.view.dtype.bytes, sb + b.view.dtype.bytes
    hit = (sa[:, None] < eb[None, :]) & (sb[None, :] < ea[:, None])
    if hit.any():
        i, j = (int(x) for x in np.argwhere(hit)[0])
        ca = tuple(int(x) for x in np.unravel_index(i, a.view.shape))
        cb = tuple(int(x) for x in np.unravel_index(j, b.view.shape))
        ctx.add(_code(b), f"destinations {a.index} and {b.index} share storage", operand=b.index,
                expected="distinct destination slots",
                found=f"operand {a.index} coordinate {ca} and operand {b.index} coordinate {cb} write the same "
                      f"bytes of {a.view.buffer.name!r}")
