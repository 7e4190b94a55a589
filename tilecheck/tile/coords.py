"""Execution scopes and the operand coordinate split ``(*group, *repeat, *atom)``.

Group axes come from ``scope`` (tile-api.md §1.3):

========== ================================ =====================================
scope      group axes                       extents
========== ================================ =====================================
thread     (none)                           --
warp       (lane,)                          (32,)
warpgroup  (warp_in_group, lane)            (4, 32)
cta        (warp_in_cta, lane)              (threads per block // 32, 32)
========== ================================ =====================================

The scope does not launch threads or elect one: every thread of the block issues the call, and
the group coordinate of a thread is derived from its linear thread index ``t``: ``lane = t % 32``,
``warp_in_cta = t // 32``, ``warp_in_group = (t // 32) % 4``. The checker, the expansion, the
emitter and the simulator all use this module so they agree on these conventions.
"""

from __future__ import annotations

from dataclasses import dataclass

SCOPES = ("thread", "warp", "warpgroup", "cta")
LANES = 32
WARPS_PER_GROUP = 4


@dataclass(frozen=True)
class GroupAxis:
    """One group axis: its name, the layout axis name it binds, and its extent (None if unknown)."""

    name: str          # lane | warp_in_group | warp_in_cta
    layout_axis: str   # laneid | warpid (see tilecheck.tile.layout)
    extent: int | None


def group_axes(scope: str, launch) -> tuple[tuple[GroupAxis, ...], str | None]:
    """The group axes of ``scope`` under ``launch`` and a problem text (None when the launch fits).

    ``scope`` must be one of :data:`SCOPES` (callers check). ``launch`` is a
    :class:`~tilecheck.tile.ir.LaunchConfig` or None when the program set none.
    """
    threads = launch.threads if launch is not None else None
    lane = GroupAxis("lane", "laneid", LANES)
    if scope == "thread":
        return (), None
    if scope == "warp":
        if threads is not None and threads % LANES:
            return (lane,), f"scope 'warp' needs whole warps; the block has {threads} threads"
        return (lane,), None
    if scope == "warpgroup":
        axes = (GroupAxis("warp_in_group", "warpid", WARPS_PER_GROUP), lane)
        if threads is not None and threads % (LANES * WARPS_PER_GROUP):
            return axes, f"scope 'warpgroup' needs whole warpgroups of 128 threads; the block has {threads} threads"
        return axes, None
    if scope == "cta":
        if threads is None:
            return (GroupAxis("warp_in_cta", "warpid", None), lane), \
                "scope 'cta' needs the block size: call T.device_entry(launch=T.cuda.LaunchConfig(grid=..., block=...))"
        if threads % LANES:
            return (GroupAxis("warp_in_cta", "warpid", None), lane), \
                f"scope 'cta' needs whole warps; the block has {threads} threads"
        return (GroupAxis("warp_in_cta", "warpid", threads // LANES), lane), None
    raise ValueError(f"unknown scope {scope!r}")


def split_shape(shape: tuple[int, ...], n_group: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``(group, repeat, atom_extent)`` of an operand shape with ``n_group`` leading group axes.

    Needs ``len(shape) >= n_group + 1`` (the checker reports TC201 otherwise).
    """
    if len(shape) < n_group + 1:
        raise ValueError(f"shape {shape} has no room for {n_group} group axes and an atom axis")
    return tuple(shape[:n_group]), tuple(shape[n_group:-1]), shape[-1]


def axis_kind(axis: int, ndim: int, n_group: int) -> str:
    """``group``, ``repeat`` or ``atom`` for axis ``axis`` of an operand with ``ndim`` axes."""
    if axis < n_group:
        return "group"
    if axis == ndim - 1:
        return "atom"
    return "repeat"


def group_coordinate(scope: str, thread: int) -> tuple[int, ...]:
    """The group coordinate of linear thread index ``thread`` at ``scope`` (for emitter/simulator)."""
    lane, warp = thread % LANES, thread // LANES
    if scope == "thread":
        return ()
    if scope == "warp":
        return (lane,)
    if scope == "warpgroup":
        return (warp % WARPS_PER_GROUP, lane)
    if scope == "cta":
        return (warp, lane)
    raise ValueError(f"unknown scope {scope!r}")
