"""Expansion of a checked apply call into instruction instances: the single source of truth for
code generation order and register binding (the emitter and the CPU simulator use exactly this).

The seed's "Code generation" rule: for each group coordinate, and within it each row-major repeat
coordinate, bind each tensor operand's final (atom) axis in increasing order and emit one
instruction; a scalar input is reused. So :func:`expand` yields :class:`Instance` objects ordered
by ``(group, repeat)`` row-major, group outermost. Each thread executes the instances whose
``group`` equals its own group coordinate (:func:`tilecheck.tile.coords.group_coordinate`), in
the order given -- ``product(repeat extents)`` instructions per thread.

Per operand, an instance holds either a :class:`TensorBinding` -- the register (or memory) slots
in increasing atom order -- or a :class:`ScalarBinding` holding the expression. A :class:`Slot`
names the buffer, the slot dtype and the element index in units of that dtype from the buffer's
start (row-major storage); ``byte_offset`` follows. For register buffers distributed over
lanes/warps, :meth:`Slot.thread_storage` says which thread holds it and at which private byte.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from tilecheck.tile.coords import group_axes, split_shape
from tilecheck.tile.dtypes import DType
from tilecheck.tile.exprs import Expr
from tilecheck.tile.layout import thread_position
from tilecheck.tile.views import Buffer, View


@dataclass(frozen=True)
class Slot:
    """One register (or memory word): ``buffer`` element ``index`` in units of ``dtype``."""

    buffer: Buffer
    dtype: DType
    index: int

    @property
    def byte_offset(self) -> int:
        """First byte of the slot in the buffer's row-major storage."""
        return self.index * self.dtype.bytes

    @property
    def nbytes(self) -> int:
        """Width of the slot in bytes."""
        return self.dtype.bytes

    def thread_storage(self) -> tuple[dict[str, int], int]:
        """``({"laneid": l, "warpid": w}, private_byte_offset)`` for a local buffer.

        The dict names the distributed coordinates of the thread holding the slot (empty for a
        thread-private buffer); the offset is the slot's byte within that thread's own storage
        (the buffer's ``"m"`` axes, row-major).
        """
        buffer = self.buffer
        element_bytes = buffer.dtype.bytes
        element = self.byte_offset // element_bytes
        index = tuple(int(i) for i in np.unravel_index(element, buffer.shape))
        owner, private = thread_position(buffer.layout, buffer.shape, index)
        return owner, private * element_bytes + self.byte_offset % element_bytes

    def __repr__(self) -> str:
        return f"{self.buffer.name}:{self.dtype}[{self.index}]"


@dataclass(frozen=True)
class TensorBinding:
    """A tensor operand's slots for one instance, in increasing atom order."""

    slots: tuple[Slot, ...]


@dataclass(frozen=True)
class ScalarBinding:
    """A scalar operand: the same expression for every instance (``Const``, ``ScalarParam``, ...)."""

    value: Expr


@dataclass(frozen=True)
class Instance:
    """One native instruction of an apply call: group and repeat coordinate, one binding per operand."""

    call: object  # the ApplyCall
    group: tuple[int, ...]
    repeat: tuple[int, ...]
    operands: tuple[TensorBinding | ScalarBinding, ...]


@dataclass(frozen=True)
class ExpandedCall:
    """A checked call, its resolved spec form and its instances in code-generation order."""

    call: object
    form: object
    instances: tuple[Instance, ...]


def expand(call, launch=None) -> Iterator[Instance]:
    """Yield the instances of ``call`` in code-generation order (see the module docstring).

    ``call`` must have passed the checker; ``launch`` is the program's launch config (needed for
    ``scope="cta"``). Raises ``ValueError`` when tensor operands disagree on group/repeat
    shape (an unchecked call).
    """
    axes, problem = group_axes(call.scope, launch)
    if problem:
        raise ValueError(f"cannot expand {call!r}: {problem}")
    n_group = len(axes)
    tensors = [op for op in call.operands if isinstance(op, View)]
    if not tensors:
        raise ValueError(f"cannot expand {call!r}: it has no tensor operand")
    group_shape, repeat_shape, _ = split_shape(tensors[0].shape, n_group)
    for view in tensors[1:]:
        g, r, _ = split_shape(view.shape, n_group)
        if (g, r) != (group_shape, repeat_shape):
            raise ValueError(f"cannot expand {call!r}: operand shapes {tensors[0].shape} and {view.shape} disagree")
    offsets = [op.element_offsets() if isinstance(op, View) else None for op in call.operands]
    for group in itertools.product(*(range(e) for e in group_shape)):
        for repeat in itertools.product(*(range(e) for e in repeat_shape)):
            bindings = []
            for op, grid in zip(call.operands, offsets):
                if isinstance(op, View):
                    atoms = grid[group + repeat]
                    bindings.append(TensorBinding(tuple(Slot(op.buffer, op.dtype, int(i)) for i in atoms)))
                elif isinstance(op, Expr):
                    bindings.append(ScalarBinding(op))
                else:
                    raise ValueError(f"cannot expand {call!r}: operand {op!r} is neither a view nor an expression")
            yield Instance(call, group, repeat, tuple(bindings))
