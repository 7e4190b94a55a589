"""Operand types per the selected form (TC401, TC303, TC304).

"Each operand uses the scalar PTX register type or its equal-width bit container. A packed
f16x2/bf16x2 value occupies one b32 container; f32x2 occupies one b64 container."

=============  =================================
PTX type       accepted dtypes
=============  =================================
f32            float32, uint32, int32
f64            float64, uint64, int64
f16            float16, uint16, int16
bf16           bfloat16, uint16, int16
f16x2/bf16x2   uint32, int32 (packed carriers)
f32x2          uint64, int64 (packed carrier)
bN, uN, sN     any N-bit dtype
=============  =================================

Untyped Python literals take the form's type for scalar float forms (``4`` and ``4.0`` are the
value 4) and are bit patterns for integer/bit forms; packed forms need an explicit carrier
constant encoding both values (``T.uint32(0x3c003c00)``).
"""

from __future__ import annotations

from tilecheck.legality.context import CallContext, Operand
from tilecheck.spec.types import PTX_TYPES
from tilecheck.tile.dtypes import DTYPES, DType, float_dtype
from tilecheck.tile.exprs import Const, Expr

_FLOAT_DTYPE = {t.name: float_dtype(t.element) for t in PTX_TYPES.values() if t.is_float}
"""Scalar float PTX type -> the dtype of its values (``f16`` -> float16)."""
_PACKED = tuple(t.name for t in PTX_TYPES.values() if t.is_packed)


def allowed_dtypes(ptx_type: str, container_bits: int) -> tuple[DType, ...]:
    """The dtypes an operand of PTX type ``ptx_type`` may have (see the module table)."""
    ints = tuple(d for d in DTYPES.values() if d.is_integer and d.bits == container_bits)
    if ptx_type in _FLOAT_DTYPE:
        return (_FLOAT_DTYPE[ptx_type],) + ints
    if ptx_type in _PACKED:
        return ints
    return tuple(d for d in DTYPES.values() if d.kind != "bool" and d.bits == container_bits)


def _describe(ptx_type: str, allowed) -> str:
    names = [d.name for d in allowed]
    text = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    return f"{text} (for .{ptx_type})"


def check_dtypes(ctx: CallContext) -> None:
    """Report dtype mismatches of tensor operands and type problems of scalar operands."""
    for op in ctx.operands:
        if not op.usable:
            continue
        if op.view is not None:
            _check_tensor(ctx, op)
        elif isinstance(op.value, Expr):
            _check_scalar(ctx, op)


def _check_tensor(ctx: CallContext, op: Operand) -> None:
    spec = op.type_spec
    allowed = allowed_dtypes(spec.ptx_type, spec.container_bits)
    dtype = op.view.dtype
    if dtype in allowed:
        return
    op.dtype_ok = False
    hint = None
    if spec.ptx_type in _PACKED and dtype.kind == "float" and dtype.bits * 2 == spec.container_bits:
        hint = (f"view the {dtype} storage as packed words: x.view('uint{spec.container_bits}') "
                f"(two {dtype} values per word; a reinterpretation, not a conversion)")
    elif dtype.bits != spec.container_bits:
        hint = f".{spec.ptx_type} registers are {spec.container_bits}-bit; {dtype} is {dtype.bits}-bit"
    ctx.add("TC401", "", operand=op.index, expected=_describe(spec.ptx_type, allowed), found=str(dtype), hint=hint)


def _check_scalar(ctx: CallContext, op: Operand) -> None:
    expr: Expr = op.value
    spec = op.type_spec
    for problem in expr.problems():
        ctx.add("TC304", problem, operand=op.index)
    if expr.problems():
        op.usable = False
        return
    dtype = expr.dtype
    if dtype is None:  # an untyped Python literal: the form decides what it means
        value = expr.value if isinstance(expr, Const) else None
        if spec.ptx_type in _PACKED:
            ctx.add("TC303", f"a packed .{spec.ptx_type} constant must encode both values", operand=op.index,
                    expected=f"a uint{spec.container_bits} constant", found=repr(value),
                    hint=f"write the packed bits, e.g. T.uint{spec.container_bits}(0x...)")
            op.usable = False
        elif spec.ptx_type in _FLOAT_DTYPE:
            return
        elif isinstance(value, float):
            ctx.add("TC303", f"a float literal is ambiguous for a .{spec.ptx_type} operand", operand=op.index,
                    expected=f"a typed constant such as T.float{spec.container_bits}({value!r}) or T.uint"
                             f"{spec.container_bits}(bits)", found=repr(value))
            op.usable = False
        elif not -(1 << (spec.container_bits - 1)) <= value < (1 << spec.container_bits):
            ctx.add("TC304", f"{value:#x} does not fit a {spec.container_bits}-bit register", operand=op.index)
            op.usable = False
        return
    allowed = allowed_dtypes(spec.ptx_type, spec.container_bits)
    if dtype not in allowed:
        hint = None
        if spec.ptx_type in _PACKED:
            hint = f"a packed constant encodes both values in one word: T.uint{spec.container_bits}(0x...)"
        ctx.add("TC401", "", operand=op.index, expected=_describe(spec.ptx_type, allowed),
                found=f"{dtype} ({expr!r})", hint=hint)
        op.usable = False
