"""Register layouts of local buffers: which buffer axes are distributed over lanes and warps.

A simplified form of TIRx's ``TileLayout(S[shape : strides])`` over named axes: one name per
buffer axis, storage order row-major.

* ``"m"`` -- thread-local storage: every thread holds its own copy of this axis. A buffer whose
  axes are all ``"m"`` is thread-private; ``layout="default"`` means exactly that.
* ``"laneid"`` -- distributed over the 32 lanes of a warp: lane ``l`` holds index ``l`` (extent 32).
* ``"warpid"`` -- distributed over the warps of the apply's execution group: warp ``w`` of the
  group (``warp_in_group`` at ``scope="warpgroup"``, ``warp_in_cta`` at ``scope="cta"``) holds
  index ``w``.

Example: ``T.alloc_local((4, 32, 3, 1), "float32", layout=T.TileLayout("warpid", "laneid", "m", "m"))``
gives each of 4 warps x 32 lanes three private float32 registers; used whole at
``scope="warpgroup"``, operand coordinate ``(w, l, r, 0)`` is thread ``(w, l)``'s register ``r``.

Ownership (checked by :mod:`tilecheck.legality.ownership`): an apply's group axis ``lane``
must address the buffer's ``laneid`` axis at the same index, a group axis ``warp_*`` its
``warpid`` axis; a thread-private buffer cannot feed a group scope, and a distributed buffer
cannot be used at a scope that does not bind its distributed axes.
"""

from __future__ import annotations

from dataclasses import dataclass

AXIS_NAMES = {
    "m": "thread-local storage",
    "laneid": "distributed over the lanes of a warp",
    "warpid": "distributed over the warps of the execution group",
}
LANES = 32


@dataclass(frozen=True, init=False)
class TileLayout:
    """A register layout: one axis name per buffer axis (``"m"``, ``"laneid"``, ``"warpid"``).

    ``TileLayout()`` with no names is the default thread-private layout of any rank.
    """

    names: tuple

    def __init__(self, *names):
        object.__setattr__(self, "names", tuple(names))

    @classmethod
    def default(cls) -> "TileLayout":
        """The thread-private layout (every axis ``"m"``)."""
        return cls()

    def __repr__(self) -> str:
        return "T.TileLayout(" + ", ".join(repr(n) for n in self.names) + ")" if self.names else "T.TileLayout()"


def bind_layout(layout, shape: tuple[int, ...]) -> tuple[tuple[str, ...], str | None]:
    """Per-axis layout names for a buffer of ``shape`` and a problem text (None when fine).

    ``layout`` is ``"default"``, ``None`` or a :class:`TileLayout`. On a problem the default
    layout is returned so that later checks do not cascade.
    """
    default = ("m",) * len(shape)
    if layout is None or (isinstance(layout, str) and layout == "default"):
        return default, None
    if isinstance(layout, (tuple, list)) and all(isinstance(n, str) for n in layout):
        layout = TileLayout(*layout)
    if not isinstance(layout, TileLayout):
        return default, (f"layout must be 'default' or a T.TileLayout(...), got {layout!r}")
    if not layout.names:
        return default, None
    names = layout.names
    if len(names) != len(shape):
        return default, f"layout names {len(names)} axes, the buffer has {len(shape)} (shape {tuple(shape)})"
    for axis, name in enumerate(names):
        if name not in AXIS_NAMES:
            return default, f"layout axis {axis}: unknown axis name {name!r} (known: {', '.join(AXIS_NAMES)})"
    for name in ("laneid", "warpid"):
        if names.count(name) > 1:
            return default, f"layout names {name!r} more than once"
    if "laneid" in names and shape[names.index("laneid")] != LANES:
        return default, (f"layout axis {names.index('laneid')} ('laneid') needs extent {LANES}, "
                         f"the buffer has {shape[names.index('laneid')]}")
    return tuple(names), None


def distributed_axes(names: tuple[str, ...]) -> dict[str, int]:
    """``{"laneid": axis, "warpid": axis}`` for the distributed axes a layout has."""
    return {name: axis for axis, name in enumerate(names) if name != "m"}


def describe(names: tuple[str, ...]) -> str:
    """Short text for messages: ``default`` or ``('laneid', 'm')``."""
    if all(n == "m" for n in names):
        return "default (thread-private)"
    return "(" + ", ".join(repr(n) for n in names) + ")"


def thread_position(names: tuple[str, ...], shape: tuple[int, ...], index: tuple[int, ...]) -> tuple[dict[str, int], int]:
    """Where buffer element ``index`` lives: ``({"laneid": l, "warpid": w}, private_index)``.

    ``private_index`` is the row-major position among the thread's own (``"m"``) elements, i.e.
    the register number within the owning thread. Used by the emitter and simulator.
    """
    owner = {}
    private = 0
    for axis, name in enumerate(names):
        if name == "m":
            private = private * shape[axis] + index[axis]
        else:
            owner[name] = index[axis]
    return owner, private
