"""Candidate spellings of the arithmetic and memory instructions, and their ptxas batch statements.

The arithmetic grid crosses ``div rcp sqrt rsqrt add sub mul fma`` with every rounding qualifier
(and none), ``.ftz`` or not, ``.sat`` or not (add/sub/mul/fma) and the float types; the memory grid
crosses ``ld/st.global`` with the vector widths and the register types. Most candidates are not
PTX: ptxas's verdict on each is what the spec's legality is checked against. :func:`render` turns
any candidate (the instructions around the arithmetic through :mod:`surround_grid`) into one
statement over the batch registers of :mod:`tilecheck.ptxas`. ``tests/spec/test_ptxas_agreement.py``
and ``tools/probe_ptxas.py`` both use this module.
"""

from __future__ import annotations

import itertools

from tilecheck import ptxas
from tilecheck.spec.database import split_spelling
from tilecheck.spec.registry import OPERATIONS
from tilecheck.spec.types import PTX_TYPES
from tilecheck.testing import surround_grid

ARITY = {op: OPERATIONS[op] for op in ("div", "rcp", "sqrt", "rsqrt", "add", "sub", "mul", "fma")}
"""The arithmetic opcodes of the grid, with their arity from the spec registry."""
ROUNDING = ("approx", "full", "rn", "rz", "rm", "rp", "")
TYPES = ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "f32x2")
WITH_SAT = ("add", "sub", "mul", "fma")
MEMORY_TYPES = ("b16", "b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64", "f16", "bf16", "f16x2", "bf16x2", "f32x2")


def arithmetic_candidates() -> list[str]:
    """Every candidate spelling of the arithmetic grid, in a stable order."""
    out = []
    for family in ARITY:
        sats = ("sat", "") if family in WITH_SAT else ("",)
        for rnd, ftz, sat, type_ in itertools.product(ROUNDING, ("ftz", ""), sats, TYPES):
            out.append(".".join(t for t in (family, rnd, ftz, sat, type_) if t))
    return out


def memory_candidates() -> list[str]:
    """``ld/st.global{.v2,.v4,.v8}.TYPE`` candidates, in a stable order."""
    return [".".join(t for t in (op, "global", vec, type_) if t)
            for op, type_, vec in itertools.product(("ld", "st"), MEMORY_TYPES, ("", "v2", "v4", "v8"))]


def render(spelling: str) -> str:
    """One batch-register statement for any candidate spelling (legal or not)."""
    opcode, mods, type_ = split_spelling(spelling)
    register = PTX_TYPES[type_].register if type_ in PTX_TYPES else "b32"
    if opcode in surround_grid.FAMILIES and not (opcode in ARITY and type_ in TYPES):
        return surround_grid.render(spelling)
    if opcode in ARITY:
        return ptxas.candidate_instruction(spelling, register, ARITY[opcode])
    if opcode not in ("ld", "st"):
        raise ValueError(f"{spelling} is in no candidate grid")
    vec = [int(m[1:]) for m in mods if m in ("v2", "v4", "v8")]
    return ptxas.candidate_instruction(spelling, register, vector=vec[0] if vec else 1,
                                       memory="load" if opcode == "ld" else "store")
