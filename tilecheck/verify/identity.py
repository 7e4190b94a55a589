"""Kernels whose every stored element *is* the reference's approximate instruction applied to the
element's loaded operand: ``ld; lg2.approx.ftz.f32; st`` against ``--against lg2.approx.ftz.f32``.

Where an approximate instruction's contract allows more results than the simulator enumerates
(``lg2.approx`` near 1: every value within 2^-22 of log2(a)), its lanes are unknown: the run keeps
one representative result, and the rest of the code could map the others anywhere. When the code
stores the instruction's result unchanged, from the operand it loaded unchanged, and the reference
is that very form, the kernel's allowed results *are* the reference's, whatever they are: such an
input is judged by the reference alone (verified where its contract bounds the result, unknown
only where it bounds nothing). :func:`stores_the_form_of_its_operand` decides that from the code,
conservatively (any doubt leaves the inputs unknown, as before):

- the reference is one approximate form of one operand, with a bound a document states (not a
  provisional one), and every approximate instruction of the function is that form, unguarded;
- the function is straight-line code (no branch or call), so "before" is program order, and each
  write below comes before the read it feeds;
- each such instruction's operand register is written only by one global (or, for a ``.func``,
  parameter) load of an element of the form's width -- and perhaps by a ``mov`` of a constant
  before it (Triton's masked default), in which case the load is guarded and every store of the
  result is guarded by the same predicate, itself written once;
- its result register is written only by it, and read only by whole-register ``mov``\\ s into
  registers written only by them (the same rule again) and by stores to global memory (or the
  return parameter) of the element's width.

Which element a store writes and which a load reads is what the layout discovery establishes
(:mod:`tilecheck.verify.layout`: each stored element's bits come from the loads of that element);
this module only adds that nothing but moves lies between them.
"""

from __future__ import annotations

from tilecheck.sim.frontend import Instr
from tilecheck.sim.parser import Addr, Imm, Reg, Vec
from tilecheck.verify import slicing

__all__ = ["stores_the_form_of_its_operand"]

_STRAIGHT_LINE_BREAKERS = ("bra", "brx", "call")
_STAGING_SPACES = (".shared", ".local", ".const")


def _element_memory(opcode: str) -> bool:
    """Whether an access reaches the kernel's elements: global memory, named or generic (nvcc's
    accesses through a pointer), or a ``.func``'s parameters -- not memory a kernel stages values in."""
    return not any(space in opcode for space in _STAGING_SPACES)


def stores_the_form_of_its_operand(plan, ref) -> bool:
    """True when every element ``plan``'s function stores is ``ref``'s approximate form applied to
    the element's loaded operand, with only moves between (see the module doc)."""
    form = getattr(ref, "form", None)
    if form is None or form.kind != "contract" or len(form.sources) != 1 or form.lanes != 1:
        return False
    if form.contract is not None and form.contract.provisional:
        return False
    instrs = [st.instr for st in plan.steps]
    if any(ins.opcode.split(".", 1)[0] in _STRAIGHT_LINE_BREAKERS for ins in instrs):
        return False
    approximate = [st.instr for st in plan.steps if st.approximate]
    if not approximate or any(ins.opcode != form.name or ins.guard is not None for ins in approximate):
        return False
    width = form.container_bits
    writers: dict = {}
    readers: dict = {}
    for ins in instrs:
        for name in slicing.registers_written(ins):
            writers.setdefault(name, []).append(ins)
        for name in slicing.registers_read(ins):
            readers.setdefault(name, []).append(ins)
    at = {id(ins): k for k, ins in enumerate(instrs)}
    return all(_one(ins, width, writers, readers, at) for ins in approximate)


def _one(ins: Instr, width: int, writers: dict, readers: dict, at: dict) -> bool:
    """The module doc's rules for one approximate instruction (``at``: program positions)."""
    if len(ins.operands) != 2 or not all(isinstance(o, Reg) for o in ins.operands):
        return False
    dest, src = ins.operands[0].name, ins.operands[1].name
    load_guard = _loaded_operand(src, width, writers, at, at[id(ins)])
    if load_guard is False:
        return False
    if writers.get(dest) != [ins]:
        return False
    return _stored_unchanged(dest, at[id(ins)], width, load_guard, writers, readers, at, set())


def _loaded_operand(src: str, width: int, writers: dict, at: dict, before: int):
    """The guard of the one load that writes ``src`` before position ``before`` (None:
    unguarded), or False where ``src`` is written otherwise (a computed value, two loads, a
    guarded load with no single guard, a write after the read)."""
    loads = [w for w in writers.get(src, []) if w.opcode.split(".", 1)[0] == "ld"]
    presets = [w for w in writers.get(src, []) if w.opcode.split(".", 1)[0] == "mov"
               and len(w.operands) == 2 and isinstance(w.operands[1], Imm)]
    if len(loads) != 1 or len(loads) + len(presets) != len(writers.get(src, [])) or len(presets) > 1:
        return False
    load = loads[0]
    if not at[id(load)] < before or any(at[id(p)] > at[id(load)] for p in presets):
        return False
    if not _element_memory(load.opcode) or slicing.item_bits(load) != width:
        return False
    if presets and load.guard is None:
        return False
    if load.guard is not None and len(writers.get(load.guard[0], [])) != 1:
        return False
    return load.guard


def _stored_unchanged(reg: str, written: int, width: int, guard, writers: dict, readers: dict, at: dict,
                      seen: set) -> bool:
    """Every reader of ``reg`` (written at position ``written``) comes after that write and is a
    whole-register move (whose target passes the same test) or a store of ``reg`` as one
    ``width``-bit element, guarded as the load was."""
    if reg in seen:
        return False
    seen.add(reg)
    uses = readers.get(reg, [])
    if not uses:
        return False
    for use in uses:
        if at[id(use)] <= written:
            return False
        head = use.opcode.split(".", 1)[0]
        if head == "mov":
            if use.guard is not None or len(use.operands) != 2 or not all(isinstance(o, Reg) for o in use.operands):
                return False
            target = use.operands[0].name
            if writers.get(target) != [use] or not _stored_unchanged(target, at[id(use)], width, guard, writers,
                                                                      readers, at, seen):
                return False
        elif head == "st":
            if not _element_memory(use.opcode):
                return False
            value = use.operands[1] if len(use.operands) == 2 else None
            items = value.items if isinstance(value, Vec) else (value,)
            if not any(isinstance(i, Reg) and i.name == reg for i in items) or slicing.item_bits(use) != width:
                return False
            address = use.operands[0]
            if isinstance(address, Addr) and isinstance(address.base, Reg) and address.base.name == reg:
                return False  # the value used as an address
            if guard is not None and use.guard != guard:
                return False
        else:
            return False
    return True
