"""``pred`` and ``preserve_dst`` (TC501-TC504), with initialisation tracking across the program.

* ``pred`` is keyword-only: a bool/uint32/int32 scalar expression (a constant, a scalar
  parameter, ``T.thread_id()``/``T.lane_id()``/``T.warp_id()``, integer arithmetic and
  comparisons of those); anything else is TC501.
* ``preserve_dst`` is a static Python bool (TC504); ``True`` requires ``pred`` (TC502) and a
  destination whose every slot was initialised before the call (TC503).

Initialisation is tracked per byte of each local buffer, in program order: an unpredicated write
(or a constant-true ``pred``) initialises its destination slots; a predicated write without
``preserve_dst`` leaves them undefined for inactive threads, so they count as uninitialised
afterwards; a predicated write with ``preserve_dst=True`` keeps their state. Global tensors are
initialised (they are the kernel's inputs and outputs).
"""

from __future__ import annotations

import numpy as np

from tilecheck.legality.context import CallContext
from tilecheck.tile.exprs import Const, Expr
from tilecheck.tile.views import View

PRED_DTYPES = ("bool", "uint32", "int32")


class InitState:
    """Which bytes of each local buffer hold a defined value at the current point of the program."""

    def __init__(self):
        self._bytes: dict = {}

    def _of(self, buffer) -> np.ndarray:
        if buffer not in self._bytes:
            self._bytes[buffer] = np.zeros(buffer.nbytes, dtype=bool)
        return self._bytes[buffer]

    def uninitialised(self, view) -> np.ndarray:
        """Boolean array of ``view.shape``: True where a slot has an undefined byte."""
        if view.buffer.is_global:
            return np.zeros(view.shape, dtype=bool)
        state = self._of(view.buffer)
        starts = view.byte_offsets()
        defined = np.ones(view.shape, dtype=bool)
        for b in range(view.dtype.bytes):
            defined &= state[starts + b]
        return ~defined

    def set(self, view, defined: bool) -> None:
        """Mark every byte of ``view``'s slots defined (or undefined)."""
        if view.buffer.is_global:
            return
        state = self._of(view.buffer)
        starts = view.byte_offsets().reshape(-1)
        for b in range(view.dtype.bytes):
            state[starts + b] = defined


def _unconditional(pred) -> bool:
    return pred is None or (isinstance(pred, Const) and pred.problem is None and bool(pred.value))


def check_predication(ctx: CallContext, state: InitState) -> None:
    """Report pred/preserve_dst violations of the call (before its writes are recorded)."""
    call = ctx.call
    pred, preserve = call.pred, call.preserve_dst
    pred_ok = pred is not None and _check_pred(ctx, pred)
    if not isinstance(preserve, bool):
        ctx.add("TC504", "must be a static Python bool", subject="preserve_dst", expected="True or False",
                found=f"{preserve!r} ({type(preserve).__name__})")
        return
    if not preserve:
        return
    if pred is None:
        ctx.add("TC502", "True keeps the old destination where pred is false, so it needs a pred",
                subject="preserve_dst", expected="pred=<bool/uint32/int32 expression>", found="pred=None",
                hint="drop preserve_dst, or pass pred=...")
        return
    if not pred_ok:
        return
    for op in ctx.operands:
        if op.written and op.kind == "register" and op.view is not None:
            missing = state.uninitialised(op.view)
            if missing.any():
                pos = tuple(int(i) for i in np.argwhere(missing)[0])
                element = int(op.view.element_offsets()[pos])
                ctx.add("TC503", "preserve_dst=True keeps this destination, but it was not initialised before",
                        operand=op.index,
                        expected="every destination slot written by an earlier unpredicated apply (or a load)",
                        found=f"{op.view.buffer.name!r} {op.view.dtype} element {element} (coordinate {pos}) "
                              "is not initialised",
                        hint="initialise the destination first; a predicated write without preserve_dst leaves "
                             "it undefined for inactive threads")


def _check_pred(ctx: CallContext, pred) -> bool:
    if not isinstance(pred, Expr):
        kind = f"tensor view of {pred.buffer.name!r}" if isinstance(pred, View) else f"{pred!r} ({pred.type_name})"
        ctx.add("TC501", "must be a scalar expression, not a tensor or other value", subject="pred", expected=" / ".join(PRED_DTYPES),
                found=kind)
        return False
    problems = pred.problems()
    for problem in problems:
        ctx.add("TC304", problem, subject="pred")
    if problems:
        return False
    dtype = pred.dtype
    if dtype is None and isinstance(pred, Const) and isinstance(pred.value, int):
        return True  # an untyped Python int constant is an int32 predicate
    if dtype is None or dtype.name not in PRED_DTYPES:
        found = f"{dtype} ({pred!r})" if dtype is not None else f"float literal {pred!r}"
        ctx.add("TC501", "must be a bool/uint32/int32 expression", subject="pred",
                expected=" / ".join(PRED_DTYPES), found=found)
        return False
    return True


def record_writes(ctx: CallContext, state: InitState) -> None:
    """Update ``state`` with the call's destination writes (after its checks)."""
    call = ctx.call
    if _unconditional(call.pred):
        defined = True
    elif call.preserve_dst is True:
        return
    else:
        defined = False
    written = [op.view for op in ctx.operands if op.written and op.kind == "register" and op.view is not None]
    if not ctx.operands and call.operands and isinstance(call.operands[0], View) and not call.operands[0].poisoned:
        # no form (or a wrong operand count): assume the usual destination-first order so that
        # one bad call does not make every later preserve_dst use of its destination fail too
        written = [call.operands[0]]
    for view in written:
        state.set(view, defined)

