"""Pieces the PTX and CUDA renderers (and the IR interpreter in :mod:`tilecheck.sim`) share.

* :class:`EmitError` -- a legal program that uses something the emitter cannot express;
* literals: PTX float literals (``0f40800000``, ``0d4010000000000000``) and hex integers;
* register classes: the PTX register type and name prefix a value of a given width/type lives in;
* the typing rules of ``pred`` expressions (:func:`expr_dtype`, :func:`operand_dtype`,
  :func:`literal_value`, :func:`wrap_int`). Tile programs compute no floating-point expressions,
  so this is integer arithmetic (wrapping at the dtype's width, floor division, shifts clamped at
  the width like PTX's ``shl``/``shr``), comparisons and bool ``& | ^``. Emitters and interpreter
  must agree on these rules, so they live here once; everything else is computed independently.
"""

from __future__ import annotations

from tilecheck.errors import TilecheckError
from tilecheck.spec.types import PTX_TYPES
from tilecheck.tile.dtypes import DTYPES, DType, float_dtype
from tilecheck.tile.exprs import BinOp, Compare, Const, Expr, ScalarParam, ThreadIndex


class EmitError(TilecheckError):
    """A checked (legal) program uses something the emitter cannot express in PTX.

    Cause: e.g. a register view whose registers depend on the lane (PTX registers are static
    names), or a ``pred`` comparing half-precision values. Fix: the message names the call and
    what to change; report it if the program is legitimate.
    """

    exit_code = 2


# ---------------------------------------------------------------------------------------------
# literals


def float_literal(bits: int, width_bits: int) -> str:
    """The PTX hexadecimal float literal of an f32 (``0f3F800000``) or f64 (``0d3FF0...``) pattern."""
    if width_bits == 32:
        return f"0f{bits & 0xFFFFFFFF:08X}"
    if width_bits == 64:
        return f"0d{bits & 0xFFFFFFFFFFFFFFFF:016X}"
    raise ValueError(f"PTX float literals exist for f32 and f64 only, not {width_bits}-bit values")


def hex_literal(bits: int, width_bits: int) -> str:
    """A PTX hexadecimal integer literal holding ``bits`` (``0x3C003C00``)."""
    return f"0x{bits & ((1 << width_bits) - 1):0{max(1, width_bits // 4)}X}"


# ---------------------------------------------------------------------------------------------
# register classes

DECLARATION_ORDER = ("pred", "b16", "b32", "f32", "b64", "f64")
"""The register classes the emitter declares, in the order of the ``.reg`` lines."""

REGISTER_PREFIX = {cls: "%" + PTX_TYPES[cls].prefix for cls in DECLARATION_ORDER}
"""PTX register class -> name prefix (``%f3`` is f32 register 3)."""


def register_class(register_type: str) -> str:
    """The register class a form's register type is declared in (:class:`~tilecheck.spec.types.PtxType`):
    f32 and f64 keep their float type (readable PTX), every other type uses the bit type of its
    width (``u32`` -> ``b32``)."""
    t = PTX_TYPES.get(register_type)
    if t is None or t.register_class is None:
        width = t.bits if t is not None else "".join(c for c in register_type if c.isdigit())
        raise EmitError(f"no {width}-bit register class (tilecheck emits 16-, 32- and 64-bit registers)")
    return t.register_class


def class_width(cls: str) -> int:
    """Width in bits of a register class (``f32`` -> 32); pred -> 1."""
    return 1 if cls == "pred" else int(cls[1:])


def bit_class(width_bytes: int) -> str:
    """The bit register class of a width in bytes (4 -> ``b32``)."""
    return register_class(f"b{width_bytes * 8}")


class RegisterFile:
    """Numbered virtual registers per class, declared as ``.reg .b32 %r<N>;`` (numbering from 1)."""

    def __init__(self):
        self._count = {cls: 0 for cls in DECLARATION_ORDER}

    def new(self, cls: str) -> str:
        """A fresh register of class ``cls`` (``%r7``)."""
        self._count[cls] += 1
        return f"{REGISTER_PREFIX[cls]}{self._count[cls]}"

    def declarations(self) -> list[str]:
        """``.reg`` lines for every class used, in a fixed order."""
        return [f".reg .{cls} {REGISTER_PREFIX[cls]}<{n + 1}>;" for cls, n in self._count.items() if n]


# ---------------------------------------------------------------------------------------------
# typing of pred expressions

INT32 = DTYPES["int32"]
FLOAT64 = DTYPES["float64"]
BOOL = DTYPES["bool"]
BOOL_OPS = ("&", "|", "^")


def _declared(expr: Expr) -> DType | None:
    """The dtype an expression carries by itself (None for untyped literals and their arithmetic)."""
    if isinstance(expr, Const):
        return expr.const_dtype
    if isinstance(expr, (ScalarParam, ThreadIndex, Compare)):
        return expr.dtype
    if isinstance(expr, BinOp):
        if expr.op in BOOL_OPS and _declared(expr.lhs) is BOOL and _declared(expr.rhs) is BOOL:
            return BOOL
        return _declared(expr.lhs) or _declared(expr.rhs)
    raise EmitError(f"cannot type the expression {expr!r}")


def _is_float_literal(expr: Expr) -> bool:
    if isinstance(expr, Const):
        return expr.const_dtype is None and isinstance(expr.value, float)
    if isinstance(expr, BinOp):
        return _is_float_literal(expr.lhs) or _is_float_literal(expr.rhs)
    return False


def operand_dtype(lhs: Expr, rhs: Expr, hint: DType | None = None) -> DType:
    """The dtype both sides of a binary operation or comparison are evaluated in: the typed side's
    dtype (the checker rejects two different ones), else ``hint``, else int32 -- or float64 when
    an untyped float literal takes part."""
    found = _declared(lhs) or _declared(rhs) or hint
    if found is not None:
        return found
    return FLOAT64 if (_is_float_literal(lhs) or _is_float_literal(rhs)) else INT32


def expr_dtype(expr: Expr, hint: DType | None = None) -> DType:
    """The dtype ``expr`` is evaluated in (``hint``: the dtype the context wants for untyped literals)."""
    declared = _declared(expr)
    if declared is not None:
        return declared
    if isinstance(expr, BinOp):
        return operand_dtype(expr.lhs, expr.rhs, hint)
    if isinstance(expr, Const):
        if hint is not None:
            return hint
        return FLOAT64 if isinstance(expr.value, float) else INT32
    raise EmitError(f"cannot type the expression {expr!r}")


def wrap_int(value: int, dtype: DType) -> int:
    """``value`` wrapped to ``dtype``'s width: two's complement for int, modulo for uint, 0/1 for bool."""
    if dtype.kind == "bool":
        return 1 if value else 0
    bits = dtype.bits
    value &= (1 << bits) - 1
    if dtype.kind == "int" and value >> (bits - 1):
        value -= 1 << bits
    return value


def literal_value(const: Const, dtype: DType) -> int:
    """The value of a constant evaluated in ``dtype``: an integer for bool/int/uint dtypes (wrapped),
    the bit pattern for float dtypes. A non-integral float literal in an integer context is an
    :class:`EmitError` (converting it would change what the comparison means)."""
    value = const.value
    if dtype.kind == "float":
        return const.bits(dtype)
    if isinstance(value, float):
        if not value.is_integer():
            raise EmitError(f"the float literal {value!r} meets a {dtype} value; write an integer constant")
        value = int(value)
    return wrap_int(int(value), dtype)


def scalar_operand_dtype(ptx_type: str, container_bits: int) -> DType:
    """The dtype an untyped literal takes as a scalar operand of a form operand of ``ptx_type``."""
    t = PTX_TYPES.get(ptx_type)
    return (float_dtype(t.element) if t is not None and t.is_float else None) or DTYPES[f"uint{container_bits}"]


def constant_bits(const: Const, ptx_type: str, container_bits: int) -> int:
    """The register bits a constant scalar operand puts in a form operand of ``ptx_type``:
    its own dtype's encoding when typed (a ``T.uint32`` on an ``.f32`` operand is a bit
    container), the operand's type otherwise (``4`` on ``.f32`` is 4.0)."""
    dtype = const.const_dtype or scalar_operand_dtype(ptx_type, container_bits)
    return const.bits(dtype) & ((1 << container_bits) - 1)


PARAM_PTX_TYPE = {
    "bool": "u8", "int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16", "float16": "b16",
    "bfloat16": "b16", "int32": "s32", "uint32": "u32", "float32": "f32", "int64": "s64", "uint64": "u64",
    "float64": "f64",
}
"""Kernel ``.param`` type of a scalar parameter of each dtype (tensors are ``.u64`` pointers)."""
