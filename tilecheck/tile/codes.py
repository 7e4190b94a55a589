"""Every diagnostic code of the tile legality checker, with its name and a one-line meaning.

Codes are stable: tests, corpus headers and users' suppressions refer to them. Add new codes;
never renumber or reuse one. Ranges: TC0xx instruction and call shape, TC1xx register ownership
and scope, TC2xx operand shapes, TC3xx scalar operands, TC4xx operand types, TC5xx ``pred`` and
``preserve_dst``, TC6xx memory operands of ld/st, TC7xx overlapping destinations, TC8xx frontend
misuse recorded while tracing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    """One diagnostic code: ``TC204``, its short name and what it means."""

    code: str
    name: str
    meaning: str


_CODES = [
    # -- instruction and call shape
    Code("TC001", "unknown-instruction", "T.ptx names an instruction the spec database does not know"),
    Code("TC002", "illegal-instruction", "the spelling is known to be illegal (the spec gives the reason)"),
    Code("TC003", "target-gate", "the form needs a newer target than the program is checked for"),
    Code("TC004", "operand-count", "the call passes a different number of operands than the form has"),
    Code("TC005", "not-an-instruction", "the first argument of apply is not T.ptx[...] or an opcode string"),
    Code("TC006", "unknown-parameter", "apply got a keyword that is not an instruction parameter (scope, pred, preserve_dst)"),
    Code("TC007", "unknown-scope", "scope is not one of thread, warp, warpgroup, cta"),
    Code("TC008", "bad-operand", "an operand is neither a tensor view nor a scalar expression"),
    # -- ownership and scope
    Code("TC101", "operand-not-owned", "a register slot is not owned by the thread that issues the instruction"),
    Code("TC102", "global-as-register", "a global tensor is used where the form needs registers (only ld/st take memory)"),
    Code("TC103", "scope-launch", "the scope's group does not fit the launch (no launch config, or threads not whole warps)"),
    # -- shapes
    Code("TC201", "operand-rank", "a tensor operand has fewer axes than the scope's group axes plus the atom axis"),
    Code("TC202", "group-extent", "a group axis extent differs from the scope's (lane 32, warp_in_group 4, warp_in_cta)"),
    Code("TC203", "repeat-rank", "tensor operands disagree on the number of repeat axes"),
    Code("TC204", "repeat-extent", "tensor operands disagree on a repeat axis extent"),
    Code("TC205", "atom-extent", "the final axis extent differs from the operand's native register count"),
    # -- scalars
    Code("TC301", "scalar-destination", "a scalar expression is given for a destination operand"),
    Code("TC302", "scalar-multi-register", "a scalar is given for an operand that spans several registers"),
    Code("TC303", "ambiguous-constant", "a Python literal cannot be typed for this operand (packed or bit operands need T.<dtype>(...))"),
    Code("TC304", "bad-constant", "a constant or scalar expression is malformed (out of range, float arithmetic, mixed dtypes)"),
    # -- types
    Code("TC401", "operand-dtype", "the operand's dtype is neither the form's register type nor an equal-width container"),
    # -- pred / preserve_dst
    Code("TC501", "pred-type", "pred is not a bool/uint32/int32 scalar expression"),
    Code("TC502", "preserve-needs-pred", "preserve_dst=True without pred"),
    Code("TC503", "preserve-uninitialised", "preserve_dst=True but a destination slot was not initialised earlier"),
    Code("TC504", "preserve-not-static", "preserve_dst is not a Python bool"),
    # -- memory operands (ld/st)
    Code("TC601", "memory-operand-not-global", "the memory operand of ld/st is not a global tensor view"),
    Code("TC602", "memory-atom-not-consecutive", "a memory atom's words are not consecutive"),
    Code("TC603", "memory-atom-misaligned", "a memory atom is not aligned to the whole vector's byte size"),
    # -- overlap
    Code("TC701", "destination-overlap", "two destination register slots of one call are the same register"),
    Code("TC702", "store-overlap", "two stored memory slots of one call are the same address"),
    # -- frontend
    Code("TC801", "unknown-dtype", "a dtype name is not known"),
    Code("TC802", "bad-argument", "an argument of a T API call has the wrong type or value"),
    Code("TC803", "bad-view", "a view, slice, dtype view or explicit stride selects outside the buffer or is malformed"),
    Code("TC804", "bad-launch", "the launch configuration is missing, malformed or given twice"),
]

CODES: dict[str, Code] = {c.code: c for c in _CODES}


def code_name(code: str) -> str:
    """The short name of a code (``TC204`` -> ``repeat-extent``)."""
    return CODES[code].name
