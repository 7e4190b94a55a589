"""Register ownership: "All tensor operands are local registers owned by the issuing thread" (TC101).

With the layouts of :mod:`tilecheck.tile.layout`:

* at ``scope="thread"`` a register operand must come from a thread-private buffer (a buffer
  distributed over lanes or warps has elements other threads hold);
* at a group scope every group axis must address the buffer's matching distributed axis
  (``lane`` -> ``laneid``, ``warp_*`` -> ``warpid``) at the same index, for every coordinate --
  views may select gapped or permuted registers but never move a value to another lane or warp;
  a thread-private buffer has no axis that could, and a distributed axis the scope does not bind
  is held by threads the call cannot name;
* a register view whose element spans two threads' storage (possible through a dtype view) is
  not owned either.
"""

from __future__ import annotations

import numpy as np

from tilecheck.legality.context import CallContext, Operand
from tilecheck.tile.layout import describe, distributed_axes


def check_ownership(ctx: CallContext) -> None:
    """Report the first ownership violation of each usable register operand."""
    for op in ctx.operands:
        if op.kind == "register" and op.view is not None and op.rank_ok:
            _check_operand(ctx, op)


def _check_operand(ctx: CallContext, op: Operand) -> None:
    view = op.view
    buffer = view.buffer
    dist = distributed_axes(buffer.layout)
    bound = {axis.layout_axis: k for k, axis in enumerate(ctx.axes)}
    for k, axis in enumerate(ctx.axes):
        if axis.layout_axis not in dist:
            op.owned = False
            unit = "lane" if axis.layout_axis == "laneid" else "warp"
            ctx.add("TC101", f"the {axis.name} axis must address registers held by that {unit}",
                    operand=op.index, axis=k,
                    expected=f"a buffer axis distributed over {unit}s (layout name '{axis.layout_axis}')",
                    found=f"buffer {buffer.name!r} with layout {describe(buffer.layout)}",
                    hint=f"allocate it with layout=T.TileLayout(...) naming '{axis.layout_axis}' for that axis "
                         "(see tilecheck.tile.layout)")
            return
    for name, baxis in dist.items():
        if name not in bound:
            op.owned = False
            ctx.add("TC101", f"scope '{ctx.scope}' issues from threads that do not hold every register it names",
                    operand=op.index, expected="registers private to the issuing thread",
                    found=f"buffer {buffer.name!r} axis {baxis} is distributed ('{name}') and the scope binds no "
                          f"{'lane' if name == 'laneid' else 'warp'} axis",
                    hint="use a scope whose group axes cover the buffer's distributed axes")
            return
    if not dist:
        return
    vbytes, bbytes = view.dtype.bytes, buffer.dtype.bytes
    first_byte = view.byte_offsets()
    first = np.unravel_index(first_byte // bbytes, buffer.shape)
    last = np.unravel_index((first_byte + vbytes - 1) // bbytes, buffer.shape)
    for name, baxis in dist.items():
        k = bound[name]
        axis = ctx.axes[k]
        coord_shape = [1] * view.ndim
        coord_shape[k] = view.shape[k]
        coord = np.arange(view.shape[k]).reshape(coord_shape)
        bad = (first[baxis] != coord) | (last[baxis] != coord)
        if bad.any():
            pos = tuple(int(i) for i in np.argwhere(bad)[0])
            held = int(first[baxis][pos]) if first[baxis][pos] != pos[k] else int(last[baxis][pos])
            op.owned = False
            ctx.add("TC101", "views cannot move values between threads", operand=op.index, axis=k,
                    expected=f"{axis.name} {pos[k]} uses registers with {name} index {pos[k]}",
                    found=f"coordinate {pos} is {buffer.name!r} {name} index {held}")
            return
