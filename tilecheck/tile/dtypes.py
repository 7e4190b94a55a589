"""Data types of tile programs: ``T.float32``, ``T.uint32``, ... looked up by name or format.

A :class:`DType` is both a type (``T.Tensor((4, 1), T.float32)``, ``n: T.int32``) and a scalar
constructor (``T.float32(4)`` builds a typed constant). Dtypes are compared by identity: there is
exactly one object per name, kept in :data:`DTYPES`. The class and the table are declared in
:mod:`tilecheck.tile.exprs` beside the constants a dtype builds (so neither module needs the
other's import at call time); this module re-exports them with the lookups.
"""

from __future__ import annotations

from tilecheck.tile.exprs import DTYPES, DType

__all__ = ["DTYPES", "DType", "float_dtype", "lookup", "describe_unknown"]


def float_dtype(format_name: str | None) -> DType | None:
    """The float dtype whose values are of the format ``format_name`` (``f16`` -> float16), or None."""
    return next((d for d in DTYPES.values() if d.format is not None and d.format == format_name), None)


def lookup(value) -> DType | None:
    """The dtype named by ``value`` (a :class:`DType` or its name), or None when there is none."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        return DTYPES.get(value.strip())
    return None


def describe_unknown(value) -> str:
    """Message for a value that names no dtype, listing the known names."""
    return f"unknown dtype {value!r}; known dtypes: {', '.join(DTYPES)}"
