"""Candidate spellings of the instructions around the arithmetic, and their ptxas batch statements.

The families ``mov cvt setp selp abs neg min max copysign testp and or xor not cnot shl shr``,
integer ``add sub mul mad``, ``cvta`` and ``prmt`` are judged against ptxas the way the arithmetic grid is:
:func:`candidates` lists plausible spellings (legal or not) per family, :func:`render` turns any
of them into one statement over the batch registers of :mod:`tilecheck.ptxas` (registers of the
size each operand's type needs: 8-bit integers in 16-bit registers, predicates in ``.pred``), so
one ptxas run judges a whole grid. ``tests/spec/test_ptxas_agreement.py`` and
``tools/probe_ptxas.py`` both use this module.
"""

from __future__ import annotations

import itertools

from tilecheck import ptxas
from tilecheck.spec.types import PTX_TYPES

FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")
BITS = ("b8", "b16", "b32", "b64")
PACKED = ("f16x2", "bf16x2")
CMP_FLOAT = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
CMP_INT = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
INT_ROUND = ("rni", "rzi", "rmi", "rpi")
FLOAT_ROUND = ("rn", "rz", "rm", "rp", "rna")

FAMILIES = ("mov", "cvt", "setp", "selp", "abs", "neg", "min", "max", "copysign", "testp", "and", "or", "xor",
            "not", "cnot", "shl", "shr", "add", "sub", "mul", "mad", "div", "rem", "cvta", "prmt")
"""Families with a surround grid (add/sub/mul/div also have float forms: their grid is integer-only)."""


def _join(*tokens: str) -> str:
    return ".".join(t for t in tokens if t)


def candidates(family: str) -> list[str]:
    """Every candidate spelling of ``family``'s grid, in a stable order."""
    out: list[str] = []
    if family == "mov":
        out = [_join("mov", t) for t in (*BITS, *INTS, *FLOATS, *PACKED, "pred")]  # no .b128 type in tilecheck
    elif family == "cvt":
        types = FLOATS + INTS
        for rnd, ftz, sat, relu, satfinite, d, a in itertools.product(
                ("",) + FLOAT_ROUND + INT_ROUND, ("", "ftz"), ("", "sat"), ("", "relu"), ("", "satfinite"),
                types, types):
            if (relu or satfinite) and d not in FLOATS:
                continue
            out.append(_join("cvt", rnd, ftz, sat, relu, satfinite, d, a))
    elif family == "setp":
        for cmp, ftz, boolop, t in itertools.product(CMP_FLOAT + ("lo", "ls", "hi", "hs"), ("", "ftz"),
                                                     ("", "and", "or", "xor"),
                                                     FLOATS + PACKED + INTS + BITS):
            out.append(_join("setp", cmp, ftz, boolop, t))
    elif family == "selp":
        out = [_join("selp", t) for t in (*BITS, *INTS, *FLOATS, *PACKED, "pred")]
    elif family in ("abs", "neg"):
        out = [_join(family, ftz, t) for ftz, t in itertools.product(("", "ftz"), (*FLOATS, *PACKED, *INTS, *BITS))]
    elif family in ("min", "max"):
        out = [_join(family, ftz, nan, relu, t) for ftz, nan, relu, t in itertools.product(
            ("", "ftz"), ("", "NaN"), ("", "relu"), (*FLOATS, *PACKED, *INTS, *BITS))]
    elif family == "copysign":
        out = [_join("copysign", t) for t in (*FLOATS, *PACKED, "f32x2")]
    elif family == "testp":
        out = [_join("testp", c, t) for c, t in itertools.product(
            ("finite", "infinite", "number", "notanumber", "normal", "subnormal"), (*FLOATS, *PACKED))]
    elif family in ("and", "or", "xor", "not", "cnot"):
        out = [_join(family, t) for t in ("pred", *BITS, *INTS, "f32")]
    elif family in ("shl", "shr"):
        out = [_join(family, t) for t in (*BITS, *INTS)]
    elif family in ("div", "rem"):
        out = [_join(family, t) for t in (*BITS, *INTS)] + (["rem.f32"] if family == "rem" else [])
    elif family in ("add", "sub"):
        out = [_join(family, sat, t) for sat, t in itertools.product(("", "sat"), (*INTS, *BITS))]
    elif family == "mul":
        out = [_join("mul", mode, t) for mode, t in itertools.product(("", "lo", "hi", "wide"), (*INTS, *BITS))]
    elif family == "mad":
        out = [_join("mad", mode, sat, t) for mode, sat, t in itertools.product(
            ("", "lo", "hi", "wide"), ("", "sat"), (*INTS, *BITS))]
    elif family == "prmt":  # (the modes, .f4e to .rc16, are not specified: no candidates)
        out = [_join("prmt", t) for t in ("b32", "u32", "s32", "b16", "b64")]
    elif family == "cvta":
        out = [_join("cvta", to, space, t) for to, space, t in itertools.product(
            ("", "to"), ("global", "shared", "local", "const", "param"), ("u32", "u64"))]
    else:
        raise ValueError(f"no surround grid for family {family!r}")
    return out


def _types(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t in PTX_TYPES]


def _reg(type_: str, counters: dict) -> str:
    register = PTX_TYPES[type_].register
    counters[register] = counters.get(register, 0) + 1
    return ptxas.operand_text(register, counters[register])


def _wide(type_: str) -> str:
    """The type twice as wide (mul.wide / mad.wide destinations)."""
    width = PTX_TYPES[type_].bits
    return f"{type_[0]}{2 * width}" if 2 * width <= 64 and f"{type_[0]}{2 * width}" in PTX_TYPES else type_


def operand_types(spelling: str) -> list[str]:
    """The type of each operand (PTX order) a statement for ``spelling`` uses."""
    tokens = spelling.split(".")
    family, mods = tokens[0], tokens[1:]
    types = _types(mods)
    t = types[-1] if types else "b32"
    if family == "cvt":
        d, a = (types[-2], types[-1]) if len(types) >= 2 else (t, t)
        # the packed conversions take two sources: d = {cvt(a), cvt(b)}
        return [d, a, a] if d in PTX_TYPES and PTX_TYPES[d].is_packed and a == "f32" else [d, a]
    if family == "setp":
        boolop = any(m in ("and", "or", "xor") for m in mods)
        return ["pred", t, t] + (["pred"] if boolop else [])
    if family == "selp":
        return [t, t, t, "pred"]
    if family == "testp":
        return ["pred", t]
    if family in ("shl", "shr"):
        return [t, t, "u32"]
    if family == "prmt":
        return [t, t, t, "b32"]
    if family in ("mul", "mad"):
        wide = "wide" in mods
        d = _wide(t) if wide else t
        return [d, t, t] + ([d] if family == "mad" else [])
    if family in ("mov", "abs", "neg", "not", "cnot", "cvta"):
        return [t, t]
    return [t, t, t]


def render(spelling: str) -> str:
    """One batch statement for any candidate spelling of a surround family."""
    counters: dict[str, int] = {}
    return ptxas.instruction_text(spelling, [_reg(t, counters) for t in operand_types(spelling)])


def render_form(form) -> str:
    """A statement for a spec form of a surround family (operand registers from the form)."""
    counters: dict[str, int] = {}
    names = []
    for operand in form.operands:
        names.append(_reg(operand.ptx_type, counters))
    return ptxas.instruction_text(form.name, names)
