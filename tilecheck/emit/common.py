"""Pieces the PTX and CUDA renderers share.

* :class:`~tilecheck.errors.EmitError` -- a legal program that uses something the emitter cannot express;
* literals: PTX float literals (``0f40800000``, ``0d4010000000000000``) and hex integers;
* register classes: the PTX register type and name prefix a value of a given width/type lives in
  (from the PTX type table, :mod:`tilecheck.spec.types`);
* the kernel ``.param`` type of each scalar parameter dtype.

The meaning of scalar expressions (``pred``, constants) is the tile language's
(:mod:`tilecheck.tile.scalars`), which the emitters and the IR interpreter each implement.
"""

from __future__ import annotations

from tilecheck.errors import EmitError  # noqa: F401 - re-exported: the emitter's error
from tilecheck.spec.types import PTX_TYPES


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


PARAM_PTX_TYPE = {
    "bool": "u8", "int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16", "float16": "b16",
    "bfloat16": "b16", "int32": "s32", "uint32": "u32", "float32": "f32", "int64": "s64", "uint64": "u64",
    "float64": "f64",
}
"""Kernel ``.param`` type of a scalar parameter of each dtype (tensors are ``.u64`` pointers)."""


def bounds_guard(regs: RegisterFile, emit, n_param: str, keep_tid: bool = False) -> tuple[str, str, str | None]:
    """The single-instruction kernels' preamble: ``i = ctaid.x * ntid.x + tid.x``, and threads with
    ``i >= n`` branch to ``$L__exit``. Returns the registers of ``n``, ``i`` and (``keep_tid``) of
    ``tid.x`` on its own, for kernels that also index per-CTA memory."""
    n_reg, ctaid, ntid = (regs.new("b32") for _ in range(3))
    tid = regs.new("b32") if keep_tid else None
    i_reg = regs.new("b32")
    emit(f"ld.param.u32 {n_reg}, [{n_param}];")
    emit(f"mov.u32 {ctaid}, %ctaid.x;")
    emit(f"mov.u32 {ntid}, %ntid.x;")
    emit(f"mov.u32 {tid or i_reg}, %tid.x;")
    emit(f"mad.lo.u32 {i_reg}, {ctaid}, {ntid}, {tid or i_reg};")
    guard = regs.new("pred")
    emit(f"setp.ge.u32 {guard}, {i_reg}, {n_reg};")
    emit(f"@{guard} bra $L__exit;")
    return n_reg, i_reg, tid


def single_entry(name: str, params, declarations: list[str], lines: list[str], indent: str = "    ") -> list[str]:
    """The ``.entry`` of a single-instruction kernel: its parameters (``KernelParam``), the
    declarations, the body and the ``$L__exit`` the bounds guard branches to."""
    entry = [f".visible .entry {name}("]
    entry += [f"{indent}.param .{p.ptx_type} {p.name}" + ("," if i < len(params) - 1 else "")
              for i, p in enumerate(params)]
    entry += [")", "{"] + [indent + d for d in declarations] + [""]
    return entry + [indent + line for line in lines] + ["$L__exit:", indent + "ret;", "}"]
