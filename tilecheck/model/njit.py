"""Numba compilation with an on-disk cache that never stops an import, and bit casts for kernels.

``numba.njit(cache=True)`` raises ``RuntimeError`` at decoration time when none of Numba's cache
locations is usable (a read-only install and no writable user cache directory); the model's
compiled kernels then compile once per process instead.
"""

from __future__ import annotations

import numba
from numba.core import types
from numba.extending import intrinsic

__all__ = ["address_pointer", "bitcast", "cached", "enabled"]


def cached(**options):
    """A ``numba.njit(**options)`` decorator that caches compiled code on disk where it can."""

    def decorate(fn):
        try:
            return numba.njit(cache=True, **options)(fn)
        except RuntimeError:
            return numba.njit(**options)(fn)

    return decorate


def enabled() -> bool:
    """Whether Numba compiles (``NUMBA_DISABLE_JIT=1`` runs kernels as Python, where the kernels'
    LLVM intrinsics do not exist: callers then take their numpy paths)."""
    return not numba.config.DISABLE_JIT


def _intrinsic(name: str, doc: str, signature, emit):
    """A Numba intrinsic of one argument: ``signature(argument type)`` types it and
    ``emit(context, builder, value)`` writes its LLVM code."""

    def typer(typingctx, x):
        def codegen(context, builder, sig, args):
            return emit(context, builder, args[0])

        return signature(x), codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


def bitcast(source, target, name: str):
    """A Numba intrinsic ``name(x)`` that reads the bits of a ``source`` value (a Numba type) as a
    ``target`` of the same width: one register move, no conversion (float <-> its bit pattern)."""
    return _intrinsic(name, f"The {target} with the bits of a {source}.", lambda x: target(source),
                      lambda context, builder, v: builder.bitcast(v, context.get_value_type(target)))


def address_pointer(target, name: str):
    """A Numba intrinsic ``name(addr)`` that makes the integer address ``addr`` (an array's
    ``ctypes.data``) a pointer to ``target`` values, for ``numba.carray``: a kernel that takes
    any number of arrays of several dtypes as one array of addresses, without building typed lists
    per call. The caller keeps the arrays alive, C-contiguous and of that dtype."""
    pointer = types.CPointer(target)
    return _intrinsic(name, f"A pointer to {target} values at an integer address.", lambda addr: pointer(addr),
                      lambda context, builder, v: builder.inttoptr(v, context.get_value_type(pointer)))
