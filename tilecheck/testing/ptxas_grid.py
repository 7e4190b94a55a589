"""Candidate spellings of the arithmetic and memory instructions, and their ptxas batch statements.

The arithmetic grid crosses ``div rcp sqrt rsqrt ex2 lg2 sin cos tanh add sub mul fma`` with every rounding qualifier
(and none), ``.ftz`` or not, ``.sat`` or not (add/sub/mul/fma) and the float types; the memory grid
crosses ``ld/st`` in each state space of :data:`SPACES` (global, global ``.nc``, param, local, generic)
with the vector widths and the register types. Most candidates are not PTX: ptxas's verdict on
each is what the spec's legality is checked against. :func:`render` turns any candidate (the
instructions around the arithmetic through :mod:`surround_grid`) into one statement over the batch
registers of :mod:`tilecheck.ptxas`, and :func:`judge` asks ptxas about candidates in the function
each needs (:func:`harnesses`: a ``.param`` access names a kernel or function parameter). ``tests/spec/test_ptxas_agreement.py``
and ``tools/probe_ptxas.py`` both use this module.
"""

from __future__ import annotations

import itertools

from tilecheck import ptxas
from tilecheck.spec.database import split_spelling
from tilecheck.spec.registry import OPERATIONS
from tilecheck.spec.types import PTX_TYPES
from tilecheck.testing import surround_grid

ARITY = {op: OPERATIONS[op] for op in ("div", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "add", "sub", "mul",
                                        "fma")}
"""The arithmetic opcodes of the grid, with their arity from the spec registry."""
ROUNDING = ("approx", "full", "rn", "rz", "rm", "rp", "")
TYPES = ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "f32x2")
WITH_SAT = ("add", "sub", "mul", "fma")
MEMORY_TYPES = ("b16", "u16", "s16", "b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64", "f16", "bf16", "f16x2",
                "bf16x2", "f32x2")
SPACES = ("global", "global.nc", "param", "local", "")
"""State-space qualifiers of the memory grid ("" = generic addressing); ``.nc`` is crossed with every
space through the grid's neighbours (``ld.param.nc``, ``st.global.nc``, ...)."""


def arithmetic_candidates() -> list[str]:
    """Every candidate spelling of the arithmetic grid, in a stable order."""
    out = []
    for family in ARITY:
        sats = ("sat", "") if family in WITH_SAT else ("",)
        for rnd, ftz, sat, type_ in itertools.product(ROUNDING, ("ftz", ""), sats, TYPES):
            out.append(".".join(t for t in (family, rnd, ftz, sat, type_) if t))
    return out


def memory_types(db=None) -> tuple[str, ...]:
    """The memory grid's types: :data:`MEMORY_TYPES` (the register types and the float types ld/st
    lack) and every type an ld/st form of ``db`` uses, so that a form of a new type is crossed with
    every space and vector width without a change here."""
    extra = [] if db is None else [f.type for f in db.ptx_forms() if f.family in ("ld", "st")]
    return tuple(dict.fromkeys((*MEMORY_TYPES, *extra)))


def memory_candidates(types: tuple[str, ...] = MEMORY_TYPES) -> list[str]:
    """``ld/st{.space}{.nc}{.v2,.v4,.v8}.TYPE`` candidates over :data:`SPACES` (plus ``.nc`` on param
    and generic space) and ``types`` (:func:`memory_types`), in a stable order."""
    spaces = (*SPACES, "param.nc", "local.nc", "nc")
    return [".".join(t for t in (op, space, vec, type_) if t)
            for op, space, type_, vec in itertools.product(("ld", "st"), spaces, types, ("", "v2", "v4", "v8"))]


def harnesses(spelling: str) -> tuple[str, ...]:
    """The batch functions (:data:`tilecheck.ptxas.HARNESSES`) a candidate is judged in: a
    ``.param`` load in a kernel and in a function (it must assemble in both), a ``.param`` store in
    a function (its return parameter), everything else in the parameterless kernel."""
    opcode, mods, _ = split_spelling(spelling)
    if opcode in ("ld", "st") and "param" in mods:
        return ("kernel_param", "func_param") if opcode == "ld" else ("func_param",)
    return ("kernel",)


def judge(spellings: list[str], target: str, version: str = "9.0", *, arch: str | None = None,
          build: bool = False) -> list[ptxas.InstructionVerdict]:
    """ptxas's verdict on each spelling, judged in the harnesses it needs (one batch per harness):
    accepted when every harness accepts it, else the first rejection. A harness ptxas rejects as a
    whole on the target (``.param`` function parameters need sm_20: "Function parameter ... has
    illegal state space") judges nothing; a candidate no harness could judge is rejected with
    that message."""
    by_harness: dict[str, list[int]] = {}
    for i, s in enumerate(spellings):
        for h in harnesses(s):
            by_harness.setdefault(h, []).append(i)
    found: dict[int, ptxas.InstructionVerdict] = {}
    unavailable: dict[int, ptxas.InstructionVerdict] = {}
    for h, indices in by_harness.items():
        lines = [render(spellings[i], h) for i in indices]
        if h != "kernel":
            error = ptxas.harness_error(h, target, version, arch=arch)
            if error is not None:
                for i, line in zip(indices, lines):
                    unavailable[i] = ptxas.InstructionVerdict(line, False, (ptxas.Message(None, "error", error),))
                continue
        verdicts = ptxas.check_instructions(lines, target, version, arch=arch, build=build, harness=h)
        for i, v in zip(indices, verdicts):
            if i not in found or (found[i].accepted and not v.accepted):
                found[i] = v
    return [found.get(i) or unavailable[i] for i in range(len(spellings))]


def render(spelling: str, harness: str = "kernel") -> str:
    """One batch-register statement for any candidate spelling (legal or not); a memory access
    addresses ``[rd15]``, or the harness's parameter (:func:`harnesses`) for a ``.param`` one."""
    opcode, mods, type_ = split_spelling(spelling)
    register = PTX_TYPES[type_].register if type_ in PTX_TYPES else "b32"
    if opcode in surround_grid.FAMILIES and not (opcode in ARITY and type_ in TYPES):
        return surround_grid.render(spelling)
    if opcode in ARITY:
        return ptxas.candidate_instruction(spelling, register, ARITY[opcode])
    if opcode not in ("ld", "st"):
        raise ValueError(f"{spelling} is in no candidate grid")
    vec = [int(m[1:]) for m in mods if m in ("v2", "v4", "v8")]
    address = ptxas.ADDRESS_REGISTER
    if harness != "kernel":
        address = ptxas.PARAM_INPUT if opcode == "ld" else ptxas.PARAM_RETURN
    return ptxas.candidate_instruction(spelling, register, vector=vec[0] if vec else 1,
                                       memory="load" if opcode == "ld" else "store", address=address)
