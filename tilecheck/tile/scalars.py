"""The meaning of tile scalar expressions: the dtype each ``pred`` expression and constant is
evaluated in, and the value or bits a constant has there.

Tile programs compute no floating-point expressions, so ``pred`` is integer arithmetic (wrapping at
the dtype's width, floor division, shifts clamped at the width like PTX's ``shl``/``shr``),
comparisons and bool ``& | ^``. This is part of the language's definition, like the dtypes: the
PTX and CUDA emitters lower expressions by these rules and the IR interpreter
(:mod:`tilecheck.sim.interpret`) evaluates them by the same rules, each with its own arithmetic.
"""

from __future__ import annotations

from tilecheck.errors import EmitError
from tilecheck.spec.types import PTX_TYPES
from tilecheck.tile.dtypes import DTYPES, DType, float_dtype
from tilecheck.tile.exprs import BinOp, Compare, Const, Expr, ScalarParam, ThreadIndex

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


def literal_value(const: Const, dtype: DType, formats=None) -> int:
    """The value of a constant evaluated in ``dtype``: an integer for bool/int/uint dtypes (wrapped),
    the bit pattern for float dtypes (in ``formats``, the spec database's, as :meth:`Const.bits`).
    A non-integral float literal in an integer context is an :class:`EmitError` (converting it
    would change what the comparison means)."""
    value = const.value
    if dtype.kind == "float":
        return const.bits(dtype, formats)
    if isinstance(value, float):
        if not value.is_integer():
            raise EmitError(f"the float literal {value!r} meets a {dtype} value; write an integer constant")
        value = int(value)
    return wrap_int(int(value), dtype)


def scalar_operand_dtype(ptx_type: str, container_bits: int) -> DType:
    """The dtype an untyped literal takes as a scalar operand of a form operand of ``ptx_type``."""
    t = PTX_TYPES.get(ptx_type)
    return (float_dtype(t.element) if t is not None and t.is_float else None) or DTYPES[f"uint{container_bits}"]


def constant_bits(const: Const, ptx_type: str, container_bits: int, formats=None) -> int:
    """The register bits a constant scalar operand puts in a form operand of ``ptx_type``:
    its own dtype's encoding when typed (a ``T.uint32`` on an ``.f32`` operand is a bit
    container), the operand's type otherwise (``4`` on ``.f32`` is 4.0); float formats from
    ``formats``, the spec database's (see :meth:`Const.bits`)."""
    dtype = const.const_dtype or scalar_operand_dtype(ptx_type, container_bits)
    return const.bits(dtype, formats) & ((1 << container_bits) - 1)
