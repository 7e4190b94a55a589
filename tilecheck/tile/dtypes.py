"""Data types of tile programs: ``T.float32``, ``T.uint32``, ... and their bit widths.

A :class:`DType` is both a type (``T.Tensor((4, 1), T.float32)``, ``n: T.int32``) and a scalar
constructor (``T.float32(4)`` builds a typed constant). Dtypes are compared by identity: there is
exactly one object per name, kept in :data:`DTYPES`.
"""

from __future__ import annotations

from dataclasses import dataclass

# name -> (bits, kind, floating-point format name or None)
_TABLE: dict[str, tuple[int, str, str | None]] = {
    "bool": (8, "bool", None),
    "int8": (8, "int", None),
    "uint8": (8, "uint", None),
    "int16": (16, "int", None),
    "uint16": (16, "uint", None),
    "float16": (16, "float", "f16"),
    "bfloat16": (16, "float", "bf16"),
    "int32": (32, "int", None),
    "uint32": (32, "uint", None),
    "float32": (32, "float", "f32"),
    "int64": (64, "int", None),
    "uint64": (64, "uint", None),
    "float64": (64, "float", "f64"),
}


@dataclass(frozen=True, eq=False)
class DType:
    """One scalar data type: its name, width in bits and kind (``float``, ``int``, ``uint``, ``bool``).

    Calling it builds a typed constant: ``T.float32(4)`` or ``T.uint32(0x3c003c00)`` (a packed
    f16x2 constant must encode both halves; see :class:`tilecheck.tile.exprs.Const`).
    """

    name: str
    bits: int
    kind: str
    format: str | None  # the floating-point format (spec/formats) for float kinds

    @property
    def bytes(self) -> int:
        """Width in bytes (``bool`` is stored in one byte)."""
        return self.bits // 8

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integers (not bool, not float)."""
        return self.kind in ("int", "uint")

    def __call__(self, value):
        """A constant of this type (validated when the checker meets it)."""
        # exprs builds on the dtypes of this module; ``T.float32(4)`` is the one way back
        from tilecheck.tile.exprs import Const

        return Const.typed(value, self)

    def __repr__(self) -> str:
        return f"T.{self.name}"

    def __str__(self) -> str:
        return self.name


DTYPES: dict[str, DType] = {name: DType(name, bits, kind, fmt) for name, (bits, kind, fmt) in _TABLE.items()}


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
