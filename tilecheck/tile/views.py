"""Buffers and views: what tensor operands of ``apply`` are made of.

A :class:`Buffer` is storage: a global tensor parameter or a local register allocation, with a
shape, a dtype and (for local buffers) a register layout (:mod:`tilecheck.tile.layout`). Its
storage is row-major, so element ``i`` of the flattened buffer starts at byte ``i * dtype.bytes``.

A :class:`View` selects elements of a buffer: ``dtype``, ``shape``, ``strides`` and ``offset``,
strides and offset counted in elements of the view's dtype (container elements). Views come from

* slicing ``v[0:4:2, :]`` (integer indices drop the axis, ``None`` adds an extent-1 axis,
  ``...`` fills; negative steps allowed),
* ``v.view(dtype)`` -- reinterpret the bits (a float16 buffer seen as uint32 words that each hold
  two halves); never a conversion. A width change needs the last axis consecutive,
* ``v.as_strided(shape, strides, offset=0)`` -- explicit strides relative to ``v``'s first element,
* ``v.broadcast_to(shape)`` -- zero strides (read-only broadcast; a destination may not overlap),
* ``v.reshape(shape)`` for consecutive views, ``v.permute(*axes)``.

A malformed view is reported as a TC803 diagnostic at the user's line and yields a *poisoned*
view, which the checker skips (so one mistake gives one diagnostic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from tilecheck.errors import Location
from tilecheck.tile import dtypes as _dtypes
from tilecheck.tile.dtypes import DType
from tilecheck.tile.exprs import Expr
from tilecheck.tile.trace import report


@dataclass(frozen=True, eq=False)
class Buffer:
    """Storage of a tensor: a global parameter (``space="global"``) or a local allocation.

    ``layout`` has one name per axis (see :mod:`tilecheck.tile.layout`); global buffers use
    ``"m"`` throughout (memory is not owned by a thread). ``dtype`` is None when the program
    named an unknown dtype (already diagnosed); views of such a buffer are poisoned.
    """

    name: str
    shape: tuple[int, ...]
    dtype: DType | None
    space: str
    layout: tuple[str, ...]
    location: Location | None = None
    param_index: int | None = None

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of storage (0 when the dtype is unknown)."""
        return self.size * self.dtype.bytes if self.dtype else 0

    @property
    def is_global(self) -> bool:
        """True for global-memory tensors (kernel parameters)."""
        return self.space == "global"

    def __repr__(self) -> str:
        return f"Buffer({self.name!r}, {self.shape}, {self.dtype}, {self.space})"


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides (in elements) of a consecutive array of ``shape``."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


@dataclass(frozen=True, eq=False)
class View:
    """A strided selection of a buffer's elements, in units of ``dtype`` (see the module doc)."""

    buffer: Buffer
    dtype: DType | None
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    poisoned: bool = False

    # ---- construction -----------------------------------------------------------------------
    @classmethod
    def of(cls, buffer: Buffer) -> "View":
        """The whole buffer."""
        return cls(buffer, buffer.dtype, buffer.shape, contiguous_strides(buffer.shape), 0,
                   poisoned=buffer.dtype is None)

    def _poison(self) -> "View":
        return replace(self, poisoned=True)

    # ---- geometry ---------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements selected (with repetitions for zero strides)."""
        return math.prod(self.shape)

    @property
    def capacity(self) -> int:
        """Number of whole ``dtype`` elements in the buffer's storage."""
        return self.buffer.nbytes // self.dtype.bytes if self.dtype else 0

    def element_offsets(self) -> np.ndarray:
        """int64 array of ``shape``: each element's index in ``dtype`` units from the buffer start."""
        grid = np.full((1,) * self.ndim, self.offset, dtype=np.int64)
        for axis, (extent, stride) in enumerate(zip(self.shape, self.strides)):
            shape = [1] * self.ndim
            shape[axis] = extent
            grid = grid + (np.arange(extent, dtype=np.int64) * stride).reshape(shape)
        return np.broadcast_to(grid, self.shape)

    def byte_offsets(self) -> np.ndarray:
        """int64 array of ``shape``: each element's first byte in the buffer."""
        return self.element_offsets() * (self.dtype.bytes if self.dtype else 1)

    def is_consecutive(self) -> bool:
        """True when the view selects a row-major consecutive run of elements."""
        return all(e == 1 or s == c for e, s, c in zip(self.shape, self.strides, contiguous_strides(self.shape)))

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        flag = " poisoned" if self.poisoned else ""
        return (f"View({self.buffer.name}, {self.dtype}, shape={self.shape}, strides={self.strides}, "
                f"offset={self.offset}{flag})")

    # ---- views ------------------------------------------------------------------------------
    def __getitem__(self, key) -> "View":
        if self.poisoned:
            return self
        key = key if isinstance(key, tuple) else (key,)
        used = sum(1 for k in key if k is not None and k is not Ellipsis)
        if sum(1 for k in key if k is Ellipsis) > 1:
            return self._bad("an index can have only one '...'")
        if used > self.ndim:
            return self._bad(f"too many indices: {used} for a view with {self.ndim} axes (shape {self.shape})")
        expanded = []
        for k in key:
            if k is Ellipsis:
                expanded.extend([slice(None)] * (self.ndim - used))
            else:
                expanded.append(k)
        expanded.extend([slice(None)] * (self.ndim - sum(1 for k in expanded if k is not None)))
        shape, strides, offset, axis = [], [], self.offset, 0
        for k in expanded:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            extent, stride = self.shape[axis], self.strides[axis]
            if isinstance(k, slice):
                for part in (k.start, k.stop, k.step):
                    if part is not None and not _is_int(part):
                        return self._bad(f"axis {axis}: slice bounds must be Python ints, got {part!r}")
                if k.step == 0:
                    return self._bad(f"axis {axis}: slice step cannot be zero")
                start, stop, step = k.indices(extent)
                count = len(range(start, stop, step))
                if count == 0:
                    return self._bad(f"axis {axis}: the slice {_slice_text(k)} of extent {extent} selects nothing")
                offset += start * stride
                shape.append(count)
                strides.append(stride * step)
            elif _is_int(k):
                index = int(k)
                if not -extent <= index < extent:
                    return self._bad(f"axis {axis}: index {index} is out of range for extent {extent}")
                offset += (index % extent) * stride
            elif isinstance(k, Expr):
                return self._bad(f"axis {axis}: views are static; a runtime index {k!r} cannot select registers")
            else:
                return self._bad(f"axis {axis}: cannot index with {type(k).__name__} {k!r}")
            axis += 1
        return replace(self, shape=tuple(shape), strides=tuple(strides), offset=offset)

    def view(self, dtype) -> "View":
        """The same bits seen as ``dtype`` (e.g. float16 pairs as uint32 words); not a conversion."""
        if self.poisoned:
            return self
        new = _dtypes.lookup(dtype)
        if new is None:
            report("TC801", _dtypes.describe_unknown(dtype), subject="view(dtype)")
            return self._poison()
        old = self.dtype
        if new.bytes == old.bytes:
            return replace(self, dtype=new)
        if self.ndim == 0:
            return self._bad(f"a 0-d view cannot change width from {old} to {new}")
        shape, strides = list(self.shape), list(self.strides)
        if new.bytes > old.bytes:
            k = new.bytes // old.bytes
            if strides[-1] != 1 and shape[-1] != 1:
                return self._bad(f"view({new}) needs consecutive {old} elements on the last axis; its stride is {strides[-1]}")
            if shape[-1] % k:
                return self._bad(f"view({new}) packs {k} {old} elements per {new}; the last axis has {shape[-1]}")
            if self.offset % k or any(s % k for s in strides[:-1]):
                return self._bad(f"view({new}) would start inside a {new} word: offset {self.offset} and strides "
                                 f"{tuple(strides[:-1])} must be multiples of {k} {old} elements")
            shape[-1] //= k
            strides = [s // k for s in strides[:-1]] + [1]
            return replace(self, dtype=new, shape=tuple(shape), strides=tuple(strides), offset=self.offset // k)
        k = old.bytes // new.bytes
        if shape[-1] != 1 and strides[-1] != 1:
            return self._bad(f"view({new}) needs consecutive {old} elements on the last axis; its stride is {strides[-1]}")
        shape[-1] *= k
        strides = [s * k for s in strides[:-1]] + [1]
        return replace(self, dtype=new, shape=tuple(shape), strides=tuple(strides), offset=self.offset * k)

    def as_strided(self, shape, strides, offset: int = 0) -> "View":
        """Explicit ``shape`` and ``strides`` (in ``dtype`` elements) from this view's first element
        plus ``offset``; every selected element must lie inside the buffer."""
        if self.poisoned:
            return self
        shape_t, strides_t = _int_tuple(shape), _int_tuple(strides)
        if shape_t is None or any(e <= 0 for e in shape_t):
            return self._bad(f"as_strided shape must be a tuple of positive ints, got {shape!r}")
        if strides_t is None or len(strides_t) != len(shape_t):
            return self._bad(f"as_strided strides must be {len(shape_t)} ints (one per axis), got {strides!r}")
        if not _is_int(offset):
            return self._bad(f"as_strided offset must be an int, got {offset!r}")
        start = self.offset + int(offset)
        low = start + sum(min(0, (e - 1) * s) for e, s in zip(shape_t, strides_t))
        high = start + sum(max(0, (e - 1) * s) for e, s in zip(shape_t, strides_t))
        if low < 0 or high >= self.capacity:
            return self._bad(f"as_strided{shape_t} with strides {strides_t} from element {start} selects elements "
                             f"{low}..{high}; {self.buffer.name} holds {self.capacity} {self.dtype} elements")
        return replace(self, shape=shape_t, strides=strides_t, offset=start)

    def broadcast_to(self, shape) -> "View":
        """Zero-stride view of ``shape`` (numpy broadcasting rules); for read-only inputs."""
        if self.poisoned:
            return self
        shape_t = _int_tuple(shape)
        if shape_t is None or any(e <= 0 for e in shape_t) or len(shape_t) < self.ndim:
            return self._bad(f"cannot broadcast shape {self.shape} to {shape!r}")
        lead = len(shape_t) - self.ndim
        strides = [0] * lead
        for have, stride, want in zip(self.shape, self.strides, shape_t[lead:]):
            if have == want:
                strides.append(stride)
            elif have == 1:
                strides.append(0)
            else:
                return self._bad(f"cannot broadcast shape {self.shape} to {shape_t}")
        return replace(self, shape=shape_t, strides=tuple(strides))

    def reshape(self, *shape) -> "View":
        """Another shape over the same elements without moving any (numpy's no-copy reshape):
        axes can be split or merged only where the view's elements are evenly spaced."""
        if self.poisoned:
            return self
        shape_t = _int_tuple(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)
        if shape_t is None or any(e <= 0 for e in shape_t):
            return self._bad(f"reshape needs positive ints, got {shape!r}")
        if math.prod(shape_t) != self.size:
            return self._bad(f"cannot reshape {self.size} elements (shape {self.shape}) into {shape_t}")
        strides = _nocopy_strides(self.shape, self.strides, shape_t)
        if strides is None:
            return self._bad(f"cannot reshape shape {self.shape} with strides {self.strides} into {shape_t} "
                             "without moving elements; use as_strided(shape, strides) instead")
        return replace(self, shape=shape_t, strides=strides)

    def permute(self, *axes) -> "View":
        """The axes reordered (``permute(1, 0)`` transposes)."""
        if self.poisoned:
            return self
        axes_t = _int_tuple(axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes)
        if axes_t is None or sorted(axes_t) != list(range(self.ndim)):
            return self._bad(f"permute needs a permutation of 0..{self.ndim - 1}, got {axes!r}")
        return replace(self, shape=tuple(self.shape[a] for a in axes_t), strides=tuple(self.strides[a] for a in axes_t))

    def _bad(self, message: str) -> "View":
        report("TC803", message, subject=f"view of {self.buffer.name}")
        return self._poison()


def _nocopy_strides(shape, strides, new_shape) -> tuple[int, ...] | None:
    """Strides giving ``new_shape`` over the same elements, or None (numpy's attempt_nocopy_reshape).

    Groups of old axes whose extents multiply to groups of new axes are matched left to right; a
    group can be re-split only when its old axes are row-major consecutive relative to each other.
    """
    old = [(e, s) for e, s in zip(shape, strides) if e != 1]
    new_strides = [1] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(old):
        np_, op = new_shape[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * new_shape[k]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    return tuple(new_strides)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _int_tuple(value) -> tuple[int, ...] | None:
    if _is_int(value):
        return (int(value),)
    if isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    return None


def _slice_text(k: slice) -> str:
    parts = ["" if p is None else str(p) for p in (k.start, k.stop)]
    if k.step is not None:
        parts.append(str(k.step))
    return ":".join(parts)
