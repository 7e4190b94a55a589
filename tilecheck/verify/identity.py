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
from tilecheck.verify.expression import Call, Const, Var

__all__ = ["stored_form", "stored_expression"]

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
    if not _straight_line(plan.steps):
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
    writers, readers, at = _def_use([st.instr for st in plan.steps])
    return stored if all(_one(st.instr, form.container_bits, writers, readers, at) for st in approximate) else None


def _straight_line(steps) -> bool:
    """No call, and no branch but forward ones to a ``ret`` (:func:`_early_exit`): every run is a
    prefix of program order."""
    return all(_early_exit(steps, k) for k, st in enumerate(steps)
               if st.instr.opcode.split(".", 1)[0] in _STRAIGHT_LINE_BREAKERS)


def _def_use(instrs) -> tuple[dict, dict, dict]:
    """``(writers, readers, at)``: the instructions that write and that read each register, and
    each instruction's program position."""
    writers: dict = {}
    readers: dict = {}
    for ins in instrs:
        for reg in slicing.registers_written(ins):
            writers.setdefault(reg, []).append(ins)
        for reg in slicing.registers_read(ins):
            readers.setdefault(reg, []).append(ins)
    return writers, readers, {id(ins): k for k, ins in enumerate(instrs)}


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


def stored_expression(plan, ref, db) -> bool:
    """Whether every element ``plan``'s function stores is ``ref``'s expression itself, applied to
    the element's loaded operand: the same forms (the same approximate forms by name, the exact ones
    by their semantics: Triton's ``mul.f32`` is ``mul.rn.f32`` where nothing can contract it), the
    same constants, nothing but moves between them, under the rules of the module doc (straight-line
    code; each operand register written once, before it is read, by the tree's own instruction, a
    load of the element or a constant; each result read only by the tree above it or the stores).

    Then the kernel's allowed results for an input *are* the reference's, whatever they are: a run
    need not enumerate its approximate instructions' choices (the simulator's representative
    stands for them, and the reference alone decides which inputs are unknown). Only a reference of
    one operand with an approximate call is matched (``mul.rn.f32(lg2.approx.ftz.f32(a), c)``,
    Triton's ``fast_logf``); anything else answers False and the run enumerates as before."""
    root = getattr(ref, "root", None)
    if root is None or not getattr(ref, "approximate", False) or len(getattr(ref, "variables", ())) != 1:
        return False
    steps = plan.steps
    instrs = [st.instr for st in steps]
    if not _straight_line(steps):
        return False
    writers, readers, at = _def_use(instrs)
    step_of = {id(st.instr): st for st in steps}
    width = ref.fmt.width
    matched: set = set()
    stores = [ins for ins in instrs if ins.opcode.split(".", 1)[0] == "st" and _element_memory(ins.opcode)]
    if not stores:
        return False
    tree = _Tree(db, writers, at, step_of, ref.variables[0].fmt.width, matched)
    for store in stores:
        value = store.operands[1] if len(store.operands) == 2 else None
        items = value.items if isinstance(value, Vec) else (value,)
        if slicing.item_bits(store) != width or not all(isinstance(i, Reg) for i in items):
            return False
        for item in items:
            if not tree.match(item.name, root, at[id(store)]) or store.guard != tree.guard:
                return False
    # every approximate instruction is one of the trees', and every value of the trees is read only
    # by the trees and the stores (a choice could otherwise steer a branch, a guard or an address)
    if any(st.approximate and id(st.instr) not in matched for st in steps):
        return False
    allowed = matched | {id(s) for s in stores}
    for ins in (i for i in instrs if id(i) in matched):
        for reg in slicing.registers_written(ins):
            if any(id(r) not in allowed for r in readers.get(reg, [])):
                return False
    return True


class _Tree:
    """Matches registers against an expression tree (:func:`stored_expression`)."""

    def __init__(self, db, writers, at, step_of, operand_width: int, matched: set):
        self.db, self.writers, self.at, self.step_of = db, writers, at, step_of
        self.operand_width = operand_width
        self.matched = matched
        self.guard = False  # the loads' guard once one is seen (None: unguarded); False: none seen yet

    def _writer(self, reg: str, before: int):
        ws = self.writers.get(reg, [])
        if len(ws) != 1 or self.at[id(ws[0])] >= before:
            return None
        return ws[0]

    def match(self, reg: str, node, before: int) -> bool:
        """Whether register ``reg``, as read at position ``before``, holds ``node``'s value."""
        if isinstance(node, Var):
            guard = _loaded_operand(reg, self.operand_width, self.writers, self.at, before)
            if guard is False or (self.guard is not False and guard != self.guard):
                return False
            self.guard = guard
            self.matched.update(id(w) for w in self.writers[reg])
            return True
        w = self._writer(reg, before)
        if w is None or w.guard is not None:
            return False
        head = w.opcode.split(".", 1)[0]
        if head == "mov" and len(w.operands) == 2 and isinstance(w.operands[1], Reg):
            self.matched.add(id(w))
            return self.match(w.operands[1].name, node, self.at[id(w)])
        if isinstance(node, Const):
            return head == "mov" and len(w.operands) == 2 and _same_constant(w.operands[1], node) and \
                not self.matched.add(id(w))
        if not isinstance(node, Call) or not self._same_form(w, node.form) or len(w.operands) != 1 + len(node.args):
            return False
        self.matched.add(id(w))
        for op, arg in zip(w.operands[1:], node.args):
            if isinstance(op, Imm):
                if not (isinstance(arg, Const) and _same_constant(op, arg)):
                    return False
            elif not (isinstance(op, Reg) and self.match(op.name, arg, self.at[id(w)])):
                return False
        return True

    def _same_form(self, ins: Instr, form) -> bool:
        """The instruction computes ``form``: that very approximate form, or an exact form of the same
        semantics and operand types that nothing may contract (the simulator forks a contraction site)."""
        step = self.step_of.get(id(ins))
        if step is None or (step.approximate and "contracted" in step.approximate):
            return False
        if form.kind == "contract":
            return step.approximate == form.name
        have = self.db.resolve(ins.opcode)
        return have is not None and have.kind == form.kind and have.semantics == form.semantics and \
            [o.ptx_type for o in have.operands] == [o.ptx_type for o in form.operands]


def _same_constant(op, node) -> bool:
    """An immediate operand that is the constant ``node`` (bits of its format)."""
    if not isinstance(op, Imm):
        return False
    if op.float_bits:
        return op.float_bits == node.fmt.width and op.value == node.bits
    return isinstance(op.value, int) and op.value == node.bits
