"""The ``T`` namespace: the seed page's API surface. There is one ``T``: :data:`tilecheck.program.T`
is this object, so ``from tilecheck.tile import T`` (the seed's import) and ``from
tilecheck.program import T`` build the same programs, with ``check``/``emit``/``run``.

=========================================  ==================================================
``T.function``                             decorator: trace into a :class:`Program`
``T.Tensor(shape, dtype)``                 global tensor parameter annotation
``T.int32`` / ``T.float32`` / ...          dtypes: scalar parameter annotations and constants
``T.alloc_local(shape, dtype, layout=)``   local register buffer (``layout="default"`` or ``T.TileLayout``)
``T.TileLayout("laneid", "m", ...)``       per-axis register layout (see :mod:`tilecheck.tile.layout`)
``T.device_entry(launch=...)``             the launch configuration
``T.cuda.LaunchConfig(grid=, block=)``     grid and block extents
``T.cuda.tile.apply(T.ptx[op], *ops, scope=, pred=, preserve_dst=)``  one tile instruction
``T.ptx["div.rn.f32"]``                    an instruction by PTX spelling
``T.thread_id()``, ``T.lane_id()``, ``T.warp_id()``  thread indices (int32), for ``pred``
``T.const(value, dtype)``                  a typed constant (same as ``T.<dtype>(value)``)
=========================================  ==================================================
"""

from __future__ import annotations

from tilecheck.tile import frontend
from tilecheck.tile.coords import SCOPES
from tilecheck.tile.dtypes import DTYPES
from tilecheck.tile.function import trace_function
from tilecheck.tile.layout import TileLayout


class _TileNamespace:
    """``T.cuda.tile``: the tile pattern calls."""

    SCOPES = SCOPES

    @staticmethod
    def apply(instruction, *operands, scope="thread", pred=None, preserve_dst=False, **parameters):
        """Apply one native instruction over tile operands (see :func:`tilecheck.tile.frontend.apply`)."""
        return frontend.apply(instruction, *operands, scope=scope, pred=pred, preserve_dst=preserve_dst,
                              **parameters)


class _CudaNamespace:
    """``T.cuda``: launch configuration and tile patterns."""

    def __init__(self):
        self.tile = _TileNamespace()

    @staticmethod
    def LaunchConfig(grid=1, block=1):  # noqa: N802 - mirrors the seed's API name
        """Grid and block extents of the kernel."""
        return frontend.launch_config(grid=grid, block=block)


class TNamespace:
    """The ``T`` object; it holds no program state (tracing state is per call)."""

    def __init__(self):
        self.cuda = _CudaNamespace()
        self.ptx = frontend.Ptx()
        self.TileLayout = TileLayout
        for name, dtype in DTYPES.items():
            setattr(self, name, dtype)

    def function(self, fn):
        """Decorator: trace ``fn`` once into a :class:`~tilecheck.tile.ir.Program` (which has
        ``check``, ``validate``, ``expand``, ``emit`` and ``run``)."""
        return trace_function(fn)

    @staticmethod
    def Tensor(shape, dtype):  # noqa: N802 - mirrors the seed's API name
        """Annotation of a global tensor parameter."""
        return frontend.tensor(shape, dtype)

    @staticmethod
    def alloc_local(shape, dtype, layout="default", name=None):
        """A local register buffer (returns its full view)."""
        return frontend.alloc_local(shape, dtype, layout=layout, name=name)

    @staticmethod
    def device_entry(launch=None):
        """Set the kernel's launch configuration."""
        return frontend.device_entry(launch=launch)

    @staticmethod
    def thread_id():
        """Linear thread index in the block."""
        return frontend.thread_id()

    @staticmethod
    def lane_id():
        """Lane index in the warp."""
        return frontend.lane_id()

    @staticmethod
    def warp_id():
        """Warp index in the block."""
        return frontend.warp_id()

    @staticmethod
    def const(value, dtype):
        """A typed constant."""
        return frontend.constant(value, dtype)

    def __repr__(self) -> str:
        return "<tilecheck T namespace>"


T = TNamespace()
