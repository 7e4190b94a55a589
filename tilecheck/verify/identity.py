"""Kernels whose every stored element is one approximate instruction applied to the element's
loaded operand: ``ld; lg2.approx.ftz.f32; st``, against ``--against lg2.approx.ftz.f32`` or
another form of the same operation (``lg2.approx.f32``).

Where an approximate instruction's contract allows more results than the simulator enumerates
(``lg2.approx`` near 1: every value within 2^-22 of log2(a)), its lanes are unknown: the run keeps
one representative result, and the rest of the code could map the others anywhere. When the code
stores the instruction's result unchanged, from the operand it loaded unchanged, the kernel's
allowed results for an input *are* that form's, whatever they are. Against that very form, such an
input is judged by the reference alone (verified where its contract bounds the result, unknown only
where it bounds nothing); against another form of the same operand and result format, it is
verified where every result the kernel's form allows the reference allows too
(:func:`tilecheck.model.api.results_within`), refuted where none does
(:func:`tilecheck.model.api.results_disjoint`: whatever the instruction returns is refused), and
stays unknown otherwise. :func:`stored_form` decides that from the code, conservatively (any doubt leaves the inputs
unknown, as before):

- the reference is one approximate form of one operand, with a bound a document states (not a
  provisional one), and every approximate instruction of the function is one form of one operand
  with that same format of operand and result, unguarded, also with a stated bound;
- the function is straight-line code (no call, and no branch but forward ones to a ``ret``: the
  early exit nvcc compiles ``if (i < n)`` to), so every run is a prefix of program order and
  "before" is program order; each write below comes before the read it feeds;
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

__all__ = ["stored_form"]

_STRAIGHT_LINE_BREAKERS = ("bra", "brx", "call")
_STAGING_SPACES = (".shared", ".local", ".const")


def _element_memory(opcode: str) -> bool:
    """Whether an access reaches the kernel's elements: global memory, named or generic (nvcc's
    accesses through a pointer), or a ``.func``'s parameters -- not memory a kernel stages values in."""
    return not any(space in opcode for space in _STAGING_SPACES)


def _unary_bounded(form) -> bool:
    """An approximate form of one operand whose bound a document states."""
    return form is not None and form.kind == "contract" and len(form.sources) == 1 and form.lanes == 1 and \
        not (form.contract is not None and form.contract.provisional)


def stored_form(plan, ref, db):
    """The approximate form whose result, applied to the element's loaded operand, is every element
    ``plan``'s function stores with only moves between (see the module doc), when it can stand
    beside ``ref``'s form (one operand, the same operand and result format); else None."""
    form = getattr(ref, "form", None)
    if not _unary_bounded(form):
        return None
    instrs = [st.instr for st in plan.steps]
    if not all(_early_exit(plan.steps, k) for k, ins in enumerate(instrs)
               if ins.opcode.split(".", 1)[0] in _STRAIGHT_LINE_BREAKERS):
        return None
    approximate = [st for st in plan.steps if st.approximate]
    names = {st.approximate for st in approximate}
    if len(names) != 1 or any(st.instr.guard is not None for st in approximate):
        return None
    name = names.pop()
    stored = form if name == form.name else db.form(name)
    if stored is not form and not (_unary_bounded(stored) and stored.container_bits == form.container_bits
                                   and stored.format == form.format
                                   and stored.sources[0].format == form.sources[0].format):
        return None
    width = form.container_bits
    writers: dict = {}
    readers: dict = {}
    for ins in instrs:
        for reg in slicing.registers_written(ins):
            writers.setdefault(reg, []).append(ins)
        for reg in slicing.registers_read(ins):
            readers.setdefault(reg, []).append(ins)
    at = {id(ins): k for k, ins in enumerate(instrs)}
    return stored if all(_one(st.instr, width, writers, readers, at) for st in approximate) else None


def _early_exit(steps, k: int) -> bool:
    """Whether step ``k`` is a forward branch to a ``ret`` (or past the last step): a thread that
    takes it runs a prefix of the code in program order, then stops."""
    st = steps[k]
    if st.instr.opcode.split(".", 1)[0] != "bra" or getattr(st, "target", None) is None or st.target <= k:
        return False
    return st.target >= len(steps) or steps[st.target].instr.opcode.split(".", 1)[0] == "ret"


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
