"""The PTX type table: every PTX type token tilecheck knows, declared once.

One :class:`PtxType` per token (``f32``, ``f16x2``, ``u8``, ``pred``, ...) says what a value of that
type is (its element format from ``spec/formats``, lanes and width), which PTX register type holds
it, and how the emitters name and pass that register. Everything else derives from this table: the
spec loader's operand types, the model's and Z3's widths and signedness, the simulator's register
kinds, the emitter's register classes and prefixes, the CUDA carriers and inline-asm constraints,
and the legality checker's packed and float types. The spec loader checks each element format
against the formats of the root it loads (:func:`format_problems`).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("f", "x", "b", "u", "s", "pred")
"""Kinds of value: ``f`` one float, ``x`` packed floats, ``b`` untyped bits, ``u`` unsigned,
``s`` signed integers, ``pred`` a predicate (the simulator's register kinds)."""


@dataclass(frozen=True)
class PtxType:
    """One PTX type token.

    ``bits`` is the width of the value (``u8`` is 8 bits); ``register`` the PTX register type that
    holds one value (8-bit values live in 16-bit registers: PTX has no 8-bit arithmetic registers,
    ``ld``/``cvt`` widen into them). The naming fields are set on types that are register types:
    ``register_class`` is the class the emitter declares such a register in (``u32`` -> ``b32``; f32,
    f64 and pred keep their own type for readable PTX), ``prefix`` the register name stem (``f`` for
    ``%f3``), ``c_type`` and ``constraint`` the CUDA carrier and inline-asm letter.
    """

    name: str
    kind: str
    element: str | None
    lanes: int
    register: str
    bits: int
    register_class: str | None = None
    prefix: str | None = None
    c_type: str | None = None
    constraint: str | None = None

    @property
    def is_float(self) -> bool:
        """One floating-point value (``f16``, ``bf16``, ``f32``, ``f64``)."""
        return self.kind == "f"

    @property
    def is_packed(self) -> bool:
        """Several floating-point lanes in one register (``f16x2``, ``bf16x2``, ``f32x2``)."""
        return self.kind == "x"

    @property
    def is_integer(self) -> bool:
        """A bit, unsigned or signed integer type."""
        return self.kind in ("b", "u", "s")


def _t(name, kind, element, lanes, register, bits, register_class=None, prefix=None, c_type=None,
       constraint=None) -> PtxType:
    return PtxType(name, kind, element, lanes, register, bits, register_class, prefix, c_type, constraint)


PTX_TYPES: dict[str, PtxType] = {t.name: t for t in (
    # floating point: element format, lanes, holding register, width
    _t("f16", "f", "f16", 1, "b16", 16, "b16"),
    _t("bf16", "f", "bf16", 1, "b16", 16, "b16"),
    _t("f32", "f", "f32", 1, "f32", 32, "f32", "f", "float", "f"),
    _t("f64", "f", "f64", 1, "f64", 64, "f64", "fd", "double", "d"),
    _t("f16x2", "x", "f16", 2, "b32", 32, "b32"),
    _t("bf16x2", "x", "bf16", 2, "b32", 32, "b32"),
    _t("f32x2", "x", "f32", 2, "b64", 64, "b64"),
    # the 8-bit floats (mma's operand types; one alone is a reference's element, see
    # tilecheck.spec.forms.lane_conversion) and two of them in a .b16 register, which only cvt reads or writes
    _t("e4m3", "f", "e4m3", 1, "b16", 8),
    _t("e5m2", "f", "e5m2", 1, "b16", 8),
    _t("e4m3x2", "x", "e4m3", 2, "b16", 16, "b16"),
    _t("e5m2x2", "x", "e5m2", 2, "b16", 16, "b16"),
    # bits and integers
    _t("b16", "b", None, 1, "b16", 16, "b16", "h", "uint16_t", "h"),
    _t("b32", "b", None, 1, "b32", 32, "b32", "r", "uint32_t", "r"),
    _t("b64", "b", None, 1, "b64", 64, "b64", "rd", "uint64_t", "l"),
    _t("u32", "u", None, 1, "u32", 32, "b32", "u", "uint32_t", "r"),
    _t("u64", "u", None, 1, "u64", 64, "b64", "ud", "uint64_t", "l"),
    _t("s32", "s", None, 1, "s32", 32, "b32", "s", "int32_t", "r"),
    _t("s64", "s", None, 1, "s64", 64, "b64", "sd", "int64_t", "l"),
    _t("b8", "b", None, 1, "b16", 8),
    _t("u8", "u", None, 1, "b16", 8),
    _t("s8", "s", None, 1, "b16", 8),
    _t("u16", "u", None, 1, "b16", 16, "b16", None, "uint16_t", "h"),
    _t("s16", "s", None, 1, "b16", 16, "b16", None, "int16_t", "h"),
    _t("pred", "pred", None, 1, "pred", 1, "pred", "p"),
)}
"""PTX type token -> :class:`PtxType`."""

INTEGER_KIND: dict[str, str] = {t.name: t.kind for t in PTX_TYPES.values() if t.is_integer}
"""Integer type token -> its kind: ``b`` (bits), ``u`` (unsigned), ``s`` (signed)."""


def ptx_type(name: str) -> PtxType:
    """The :class:`PtxType` of a token; ``KeyError`` names the token when it is not a PTX type."""
    return PTX_TYPES[name]


def format_problems(formats, names) -> list[str]:
    """What is wrong between the types called ``names`` and a spec root's formats (``name ->
    Format``): an element format the root lacks, or a type whose width is not its lanes times the
    format's container."""
    problems = []
    for t in (PTX_TYPES[n] for n in sorted(names)):
        if t.element is None:
            continue
        fmt = formats.get(t.element)
        if fmt is None:
            problems.append(f"PTX type .{t.name} needs the format {t.element!r}, which spec/formats lacks")
        elif fmt.container_bits * t.lanes != t.bits:
            problems.append(f"PTX type .{t.name} is {t.bits} bits but {t.lanes} x {t.element} "
                            f"({fmt.container_bits}-bit containers) is {fmt.container_bits * t.lanes}")
    return problems
