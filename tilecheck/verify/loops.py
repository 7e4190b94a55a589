"""The simple loops of a function, and what makes two of them compute the same thing.

libdevice's ``sinf``/``cosf`` reduce a large argument (Payne-Hanek) in a counted loop that
multiplies the argument's mantissa by a table of 2/pi's bits into a local array; a kernel that
computes several elements per thread holds one copy of that loop per element. To tell that the
copies compute the same function of their elements (:class:`tilecheck.verify.slicing.Signatures`),
a loop is named by its body: its instructions in order with the registers it writes renamed by
first appearance, its branch targets relative to its header, and, for each register it reads
that is written before it, that value's signature. Two loops with equal names run the same
instructions on the same values, iteration by iteration, so every register at every point of
one holds what the same register of the other holds there, and on leaving.

Only loops that can be named that way are *simple* (:func:`simple_loops`): a header ``h`` and a
latch ``l >= h`` whose guarded branch back to ``h`` is the only backward edge in ``h .. l``, no
edge into ``h+1 .. l`` from outside, no way out but the latch's fall-through, and a body that
reads memory only from parameters and the module's initialized data (a table, never written)
and writes only local memory (the element's reduction; the local loads after the loop name the
stores they read). Any other loop is left unnamed: its values match nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecheck.sim.parser import Addr, Imm, Reg, Special, Symbol, Vec


@dataclass(frozen=True)
class Loop:
    """Instructions ``head .. latch`` (indices), the latch's guarded branch going back to the head."""

    head: int
    latch: int

    def __contains__(self, i: int) -> bool:
        return self.head <= i <= self.latch


def _head(ins) -> str:
    return ins.opcode.split(".", 1)[0]


def _allowed(sl, ins) -> bool:
    """An instruction a simple loop's body may hold (see the module doc)."""
    head = _head(ins)
    if head in ("call", "atom", "red", "bar", "barrier", "ret", "exit", "trap", "shfl", "vote", "match", "redux",
                "activemask", "elect", "cp", "tex", "tld4", "suld", "sust", "sured", "mbarrier", "mma", "wgmma",
                "membar", "fence"):
        return False  # calls, other threads' values, other memory, leaving
    if head in ("ld", "ldu"):
        return ".param" in ins.opcode or sl.reads_table(ins)
    if head == "st":
        return ".local" in ins.opcode
    return head not in ("ldmatrix", "stmatrix")


def simple_loops(sl) -> list[Loop]:
    """The simple loops of the function ``sl`` (a :class:`tilecheck.verify.slicing.Slicer`)
    analyses, as the module doc defines them, in program order."""
    back = [(i, sl.target(i)) for i, ins in enumerate(sl.instrs)
            if _head(ins) == "bra" and sl.target(i) <= i]
    out = []
    for latch, head in back:
        loop = Loop(head, latch)
        ins = sl.instrs[latch]
        if ins.guard is None or any(o_head <= latch and head <= other for other, o_head in back
                                    if (other, o_head) != (latch, head)):
            continue  # no way out, or another loop inside, around or across it
        ok = True
        for q in range(head, latch + 1):
            if not _allowed(sl, sl.instrs[q]):
                ok = False
                break
            if q > head and any(p not in loop for p in sl.preds[q]):
                ok = False  # an edge into the body from outside
                break
            if any(j not in loop and not (q == latch and j == latch + 1) for j in sl.succ[q]):
                ok = False  # a way out but the latch's fall-through
                break
        if ok:
            out.append(loop)
    return out


class Canonical:
    """Register names of a loop's body renamed by first appearance (``%r395`` -> 0, ...), for
    those the body writes; the others are read as the value ``outside(name, at)`` names."""

    def __init__(self, sl, loop: Loop):
        self.written = {name for q in range(loop.head, loop.latch + 1) for name in sl.written(sl.instrs[q])}
        self.ids: dict[str, int] = {}

    def name(self, reg: str):
        """The body's name for register ``reg``: its rank of first appearance, or None for a
        register the body only reads."""
        if reg not in self.written:
            return None
        return self.ids.setdefault(reg, len(self.ids))


def body(sl, loop: Loop, outside) -> tuple:
    """The name of ``loop``'s body (see the module doc): per instruction, its opcode, guard and
    operands with written registers renamed (:class:`Canonical`) and every other register
    replaced by ``outside(register, index)``, the signature of its value where the body reads it;
    branch targets relative to the head. Then, per written register that a read in the body may
    see before the body writes it, in the order of its name, ``outside``'s value of it entering
    the loop (the writes that reach the head from outside, ``outside(register, None)``)."""
    canon = Canonical(sl, loop)

    def operand(op, at: int):
        if isinstance(op, Reg):
            return ("reg",) + tuple(_reg(part, at) for part in op.name.split("|") if part)
        if isinstance(op, Vec):
            return ("vec",) + tuple(operand(item, at) for item in op.items)
        if isinstance(op, Addr):
            return ("addr", operand(op.base, at), op.offset)
        if isinstance(op, Imm):
            return ("imm", op.value)
        if isinstance(op, Special):
            return ("special", op.name)
        if isinstance(op, Symbol):
            target = sl.label(op.name)
            return ("label", target - loop.head) if target is not None else ("symbol", op.name)
        return ("operand", str(op))

    def _reg(reg: str, at: int):
        k = canon.name(reg)
        return ("w", k) if k is not None else ("r", outside(reg, at))

    items = []
    for q in range(loop.head, loop.latch + 1):
        ins = sl.instrs[q]
        guard = None if ins.guard is None else (_reg(ins.guard[0], q), ins.guard[1])
        items.append((ins.opcode, guard) + tuple(operand(op, q) for op in ins.operands))
    # a written register whose value from before the loop some read in it may see
    exposed = {reg for q in range(loop.head, loop.latch + 1) for reg in sl.read(sl.instrs[q])
               if reg in canon.written and any(d not in loop for d in sl.defs(q, reg))}
    entering = tuple((canon.name(reg), outside(reg, None)) for reg in sorted(exposed, key=canon.name))
    return tuple(items), entering, canon
