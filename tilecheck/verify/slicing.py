"""Which instructions compute each element a kernel stores, bit by bit, and what each element is.

A kernel that computes several elements per thread (Triton's unrolled and vectorised blocks,
``#pragma unroll`` CUDA) holds them side by side in registers: packed two to a 32-bit register
(``mov.b32 %r9, {%rs1, %rs2}``, ``cvt.rn.f16x2.f32``), four registers to a 128-bit store. Lane
forking multiplies the lanes of a run by the allowed results of every approximate instruction it
meets, so running all the elements of a thread at once would multiply their choices together.
:func:`element_slice` finds, for one stored element, the instructions its bits come from --
following bit ranges through moves, packing and unpacking, lanewise packed arithmetic, shifts and
bitwise logic -- plus everything that decides control flow, guards and addresses; the function cut
down to those instructions (:func:`sliced_function`) computes that element as the whole function
does, with the other elements' approximate instructions gone.

:class:`Signatures` gives each element an expression signature: the operations its value is made
of, hash-consed, with moves resolved to the bits they carry and loads named by the operand buffer
and the bytes of the element they read. Elements with equal signatures compute the same function
of their operands (the PTX semantics of each operation is its own, whichever lane it is in).
What decides a write on data is part of it: a guard on data by its predicate's signature, and a
read that several writes reach across branches on data by the paths into it (each named by the
branches that decide its writes and the writes it makes); a value of a simple loop is named by
the loop (:mod:`tilecheck.verify.loops`), a value carried around any other loop matches nothing.
Guards, branches and addresses on where an element is (registers no data reaches:
:attr:`Slicer.data`) are not part of a signature: they are checked by running every element
(:mod:`tilecheck.verify.layout`), which also checks that what a guard or branch on data reads
is the element's own.

The analysis follows the writes of a register that may reach each read (reaching definitions over
the control flow); where it cannot tell bits or writes apart it keeps them all, so a slice may
hold more than the element needs, never less: only the run's cost depends on its precision. The
carry flag of extended-precision arithmetic (``add.cc`` ... ``madc``) is a register here like the
others; local memory is followed only through the stores a run saw each local load read
(``Slicer(local_flows=...)``, which the caller checks on every later run).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tilecheck.sim.frontend import Function, Instr
from tilecheck.sim.parser import Addr, Imm, Reg, Special, Symbol, Vec
from tilecheck.sim.plan import TYPES
from tilecheck.sim.wide_int import CARRY, reads_carry, writes_carry
from tilecheck.spec.types import PTX_TYPES
from tilecheck.verify import loops

CONTROL = ("bra", "ret", "exit", "bar", "barrier", "membar", "fence", "trap", "brkpt", "nanosleep", "call")
JUMPS = ("bra", "ret", "exit", "trap")
"""The control instructions that decide where a thread goes next (a guarded one: which way)."""
"""Instructions kept in every slice: they decide which instructions run (and when)."""
_BITWISE = ("and", "or", "xor", "not", "cnot")
def _packed_conversion(head: str, types: list[str]) -> tuple[int, int] | None:
    """For a conversion that writes or reads packed lanes (``cvt.rn.f16x2.f32``,
    ``cvt.rn.satfinite.e4m3x2.f16x2``, ``cvt.rn.f16x2.e4m3x2``): the bits of one lane of the
    destination and of the source (a scalar source's: its width); else None."""
    if head != "cvt" or len(types) != 2 or types[0] not in PTX_TYPES or types[1] not in PTX_TYPES:
        return None
    d, a = PTX_TYPES[types[0]], PTX_TYPES[types[1]]
    if not (d.is_packed or a.is_packed):
        return None
    return d.bits // d.lanes, a.bits // a.lanes


MAX_PATHS = 64
"""Paths into a read steered by branches on data beyond which its value is not named (it then
matches nothing else: only the run's cost depends on it)."""

_LANEWISE = ("add", "sub", "mul", "fma", "neg", "abs", "min", "max", "div", "rcp", "sqrt", "ex2", "lg2", "tanh",
             "copysign")


def _mask(width: int) -> int:
    return (1 << width) - 1


def _names(op) -> list[str]:
    if isinstance(op, Reg):
        return [n for n in op.name.split("|") if n]
    if isinstance(op, Vec):
        return [n for item in op.items for n in _names(item)]
    return []


LOADS = ("ld", "ldu", "ldmatrix")
"""The loads whose destination bits are bytes of memory (a leaf of a slice)."""
STORES = ("st", "stmatrix")
"""The stores: every operand is read, no register written."""


def item_bits(ins: Instr) -> int:
    """The bits of memory each register of a load receives (or of a store gives): its type's,
    except ``ldmatrix``'s, which gives each register a 32-bit word (two ``.b16`` elements)."""
    types = _types(ins)
    return 32 if _head(ins) == "ldmatrix" else TYPES[types[-1]][0] if types else 64


def _head(ins: Instr) -> str:
    return ins.opcode.split(".", 1)[0]


def _types(ins: Instr) -> list[str]:
    return [p for p in ins.opcode.split(".")[1:] if p in TYPES]


def _is_param(ins: Instr) -> bool:
    return ".param" in ins.opcode


@dataclass(frozen=True)
class Leaf:
    """Bytes ``lo .. hi-1`` of what the global load ``load`` read (counted from its address)."""

    load: Instr
    lo: int
    hi: int


class Slicer:
    """The bit-level data flow of one function (see the module doc)."""

    def __init__(self, fn: Function, local_flows: dict | None = None):
        """``local_flows``: per local load (instruction index), the indices of the local stores
        whose bytes it reads, as a run saw them (``RunContext.record_loads``): a value that
        passes through local memory is followed through those stores, and a local load no run
        saw has no sources (every later run is checked against them, ``RunContext.local_flows``,
        and refused where a load reads anything else: one that never ran included). None: local
        memory is not followed; a local load is then a leaf of nothing (its caller refuses it)."""
        self.fn = fn
        self.instrs = [item for item in fn.body if isinstance(item, Instr)]
        self.index = {id(ins): i for i, ins in enumerate(self.instrs)}
        self.local_flows = local_flows
        self.writers: dict[str, list[Instr]] = {}
        for ins in self.instrs:
            for name in self.written(ins):
                self.writers.setdefault(name, []).append(ins)
        self.reach = self._reaching(fn)
        self.tables = self._table_pointers(fn)
        self.data = self._data_registers()
        self.steered = self._reached_by_data_branches()
        self.loops = loops.simple_loops(self)
        self.loop_of = {i: loop for loop in self.loops for i in range(loop.head, loop.latch + 1)}
        self._controlled: list | bool | None = None  # per instruction, what it controls (controlled())
        self._reachable: dict = {}              # per instruction, what runs after it (reachable())
        self._between: dict = {}                # per local load, local_stores_between()

    def _table_pointers(self, fn: Function) -> frozenset:
        """The registers that hold addresses inside the module's initialized data (a table's address
        moved into a register, plus offsets): what a load through them reads is a constant, not an
        element's bytes. By register name: a register counts only where every write of it derives
        from a table (one also written with anything else, a buffer's address say, does not)."""
        names = {c.name for c in fn.constants}

        def derived(ins: Instr, out: set) -> bool:
            return _head(ins) in ("mov", "add", "sub", "mad", "cvt", "cvta") and len(self.written(ins)) == 1 and \
                any(isinstance(op, Symbol) and op.name in names or isinstance(op, Reg) and op.name in out
                    for op in ins.operands[1:])

        out: set = set()
        grown = bool(names)
        while grown:  # every register some write of which derives from a table ...
            grown = False
            for ins in self.instrs:
                if derived(ins, out) and self.written(ins)[0] not in out:
                    out.add(self.written(ins)[0])
                    grown = True
        shrunk = True
        while shrunk:  # ... less those with a write that does not
            shrunk = False
            for name in list(out):
                if not all(derived(w, out) for w in self.writers.get(name, [])):
                    out.discard(name)
                    shrunk = True
        return frozenset(out)

    def _data_registers(self) -> frozenset:
        """The registers some write of which may depend on what a kernel reads from memory (an
        operand, local memory, an atomic's old value, a table entry at a data-dependent address),
        directly, through its sources or through its guard: the rest depend only on where an
        element is (thread and CTA indices, parameters, constants). By register name, flow-blind:
        a register counts as data if any of its writes does, which can only make more values data."""
        def data(ins: Instr) -> bool:
            head = _head(ins)
            if head in LOADS and _is_param(ins):
                return bool(ins.guard) and ins.guard[0] in out
            if (head in LOADS or head == "atom") and not self.reads_table(ins):
                return True
            return any(n in out for n in registers_read(ins))  # a table entry is data where its address is

        readers: dict[str, list[Instr]] = {}
        for ins in self.instrs:
            for name in registers_read(ins):
                readers.setdefault(name, []).append(ins)
        out: set = set()
        work = list(self.instrs)
        while work:
            ins = work.pop()
            written = [n for n in self.written(ins) if n not in out]
            if written and data(ins):
                out.update(written)
                for name in written:
                    work.extend(readers.get(name, ()))
        return frozenset(out)

    def _reached_by_data_branches(self) -> frozenset:
        """The instructions a branch on data (its predicate one of :attr:`data`) may lead to: where
        several writes of a register reach one of them, which one does depends on the data."""
        n = len(self.instrs)
        todo = [j for i, ins in enumerate(self.instrs)
                if _head(ins) == "bra" and ins.guard is not None and ins.guard[0] in self.data
                for j in self.succ[i] if j < n]
        seen: set = set()
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            todo.extend(j for j in self.succ[i] if j < n and j not in seen)
        return frozenset(seen)

    def single_entry(self, at: int, lowest: int) -> int | None:
        """The nearest instruction ``s <= lowest`` that every path into ``at`` passes through with
        only forward edges between (every edge into ``s+1 .. at`` comes from ``s .. at-1`` and goes
        forward), or None where ``at`` lies in a loop or no such ``s`` exists."""
        preds = self.preds
        s = min(lowest, at - 1)
        need = s
        covered = at + 1
        while True:
            for q in range(s + 1, covered):
                for p in preds[q]:
                    if p >= q and self.loop_of.get(q) == loops.Loop(q, p) and p < at:
                        continue  # a simple loop's way back: the loop is one step of a path
                    if p >= q or p > at:
                        return None  # a backward edge: a loop through the region
                    need = min(need, p)
            covered = s + 1
            if need >= s:
                return s if s >= 0 else None
            s = need

    def _deciding(self, s: int, at: int, name: str) -> set:
        """The control instructions in ``s .. at-1`` that can skip a write of ``name`` there, or
        ``at``, or another such instruction (a fixed point, as :func:`element_slice` keeps
        branches): the others lead to the same writes whichever way they go."""
        control = [i for i in range(s, at) if _head(self.instrs[i]) in CONTROL]
        marks = {i for i in range(s, at) if name in self.written(self.instrs[i])} | {at}
        out: set = set()
        grown = True
        while grown:
            grown = False
            for i in control:
                if i in out:
                    continue
                lo, hi = self.span(i)
                if any(lo <= k < hi for k in marks):
                    out.add(i)
                    marks.add(i)
                    grown = True
        return out

    def paths(self, s: int, at: int, most: int, name: str) -> list | None:
        """Every path from instruction ``s`` to ``at`` (forward edges only, as :meth:`single_entry`
        finds them) as far as the writes of ``name`` go: per path, the guarded branches and
        returns on it that decide them (:meth:`_deciding`) with the way it takes (``[(index,
        taken)]``) and the instructions it runs before ``at`` (a simple loop as its
        :class:`~tilecheck.verify.loops.Loop`, one step), in the order that takes the fall-through
        first; a branch that decides nothing is taken. None past ``most`` paths, or where a call
        may run."""
        deciding = self._deciding(s, at, name)
        out: list = []
        stack = [(s, (), ())]
        while stack:
            i, decisions, through = stack.pop()
            if i == at:
                out.append((decisions, through))
                if len(out) > most:
                    return None
                continue
            if i > at or i >= len(self.instrs):
                continue  # left the region: this path never reaches ``at``
            ins = self.instrs[i]
            head = _head(ins)
            if head == "call":
                return None
            loop = self.loop_of.get(i)
            if loop is not None and loop.head == i and loop.latch < at:
                stack.append((loop.latch + 1, decisions, through + (loop,)))  # the loop as one step
                continue
            through += (i,)
            if any(j <= i for j in self.succ[i]):
                return None  # a way back that is no simple loop's
            if head == "bra" and i not in deciding:
                stack.append((self.target(i), decisions, through))
            elif ins.guard is not None and head in JUMPS:
                # taken: a branch goes to its target, a return leaves (no path to ``at``)
                ways = [(i + 1, False)] + ([(self.target(i), True)] if head == "bra" else [])
                for j, taken in reversed(ways):
                    stack.append((j, decisions + ((i, taken),), through))
            else:
                for j in reversed(self.succ[i]):
                    stack.append((j, decisions, through))
        return out

    def reads_table(self, ins: Instr) -> bool:
        """True for a load whose address lies in the module's initialized data."""
        addr = next((op for op in ins.operands[1:] if isinstance(op, Addr)), None)
        base = addr.base if addr is not None else None
        return isinstance(base, Reg) and base.name in self.tables or \
            isinstance(base, Symbol) and any(c.name == base.name for c in self.fn.constants)

    def _reaching(self, fn: Function) -> list[dict]:
        """Per instruction, the instructions whose writes of each register may reach it (a
        forward data-flow fixed point over the control flow: a guarded write does not kill).
        Compilers reuse registers across unrolled elements; following only the writes that
        reach a read keeps their slices apart."""
        label_at, k = {}, 0
        for item in fn.body:
            if isinstance(item, Instr):
                k += 1
            elif hasattr(item, "name"):
                label_at[item.name] = k
        self._label_at = label_at
        n = len(self.instrs)
        succ = []
        for i, ins in enumerate(self.instrs):
            head = _head(ins)
            if head == "bra":
                target = ins.operands[-1]
                t = label_at.get(getattr(target, "name", ""), n)
                succ.append([t] if ins.guard is None else [i + 1, t])
            elif head in ("ret", "exit", "trap") and ins.guard is None:
                succ.append([])
            else:
                succ.append([i + 1])
        self.succ = succ
        self.preds: list[list[int]] = [[] for _ in range(n + 1)]
        for i, targets in enumerate(succ):
            for j in targets:
                if j <= n:
                    self.preds[j].append(i)
        into: list = [None] * (n + 1)
        into[0] = {}
        order = list(range(n))
        changed = True
        while changed:
            changed = False
            for i in order:
                cur = into[i]
                if cur is None:
                    continue
                ins = self.instrs[i]
                out = dict(cur)
                for name in self.written(ins):
                    out[name] = frozenset({i}) if ins.guard is None else cur.get(name, frozenset()) | {i}
                for j in succ[i]:
                    if j > n:
                        continue
                    old = into[j]
                    if old is None:
                        into[j] = out
                        changed = changed or j <= i
                        continue
                    merged = None
                    for name, defs in out.items():
                        have = old.get(name)
                        if have is None or not defs <= have:
                            merged = merged if merged is not None else dict(old)
                            merged[name] = (have or frozenset()) | defs
                    if merged is not None:
                        into[j] = merged
                        changed = changed or j <= i
        return [x if x is not None else {} for x in into]

    def span(self, i: int) -> tuple[int, int]:
        """The instructions (``lo .. hi-1``) that control instruction ``i`` can skip or repeat."""
        ins = self.instrs[i]
        n = len(self.instrs)
        if _head(ins) != "bra":
            return i + 1, n  # a return, exit or trap ends the thread
        t = self.target(i)
        return (i + 1, t) if t > i else (t, i + 1)

    def controlled(self, i: int) -> frozenset:
        """The instructions whose running depends on which way the guarded branch or return ``i``
        goes (control dependence: an instruction that post-dominates one way out of ``i`` and not
        ``i`` itself; a loop's body depends on its branch back). Found from the control-flow
        graph, not the instructions' order, so that a branch to a block placed after the
        function's ``ret`` (LLVM moves cold paths there) controls only what its two ways do not
        share. Where some instruction cannot reach the function's end (a loop with no way out),
        ``span``'s order-based reading stands instead. Unguarded instructions control nothing."""
        if self._controlled is None:
            self._controlled = self._control_dependence()
        if self._controlled is False:
            lo, hi = self.span(i)
            return frozenset(range(lo, hi))
        return self._controlled[i]

    def reachable(self, i: int) -> frozenset:
        """The instructions some path from instruction ``i`` runs after it (loops included)."""
        known = self._reachable.get(i)
        if known is None:
            seen: set = set()
            work = [j for j in self.succ[i] if j < len(self.instrs)]
            while work:
                j = work.pop()
                if j not in seen:
                    seen.add(j)
                    work.extend(k for k in self.succ[j] if k < len(self.instrs) and k not in seen)
            known = self._reachable[i] = frozenset(seen)
        return known

    def local_stores_between(self, load: int) -> frozenset:
        """The local stores some path runs after a store the local load ``load`` was seen to read
        (after the entry, where it read bytes nothing wrote) and before ``load``: each could change
        what it reads in a run the discovery did not see (loops and blocks laid out out of order
        included)."""
        known = self._between.get(load)
        if known is None:
            stores = [i for i, ins in enumerate(self.instrs) if _head(ins) in STORES and ".local" in ins.opcode]
            out: set = set()
            for w in (self.local_flows or {}).get(load, ()):
                after = self.reachable(w) if w >= 0 else range(len(self.instrs))
                out.update(s for s in stores if s in after and load in self.reachable(s))
            known = self._between[load] = frozenset(out)
        return known

    def _control_dependence(self):
        """Per instruction, the instructions control dependent on it (Cooper, Harvey and Kennedy's
        post-dominators on the instruction graph with one exit node); False where an instruction
        cannot reach the exit."""
        n = len(self.instrs)
        out_of = []
        for i, ins in enumerate(self.instrs):
            ways = {min(j, n) for j in self.succ[i]}
            if _head(ins) in ("ret", "exit", "trap") and ins.guard is not None:
                ways.add(n)  # a guarded return leaves, or falls through
            out_of.append(sorted(ways) or [n])
        into: list[list[int]] = [[] for _ in range(n + 1)]
        for i, ways in enumerate(out_of):
            for j in ways:
                into[j].append(i)
        # post-order of the reversed graph from the exit (iterative depth-first search)
        order, seen, stack = [], {n}, [(n, iter(into[n]))]
        while stack:
            node, it = stack[-1]
            nxt = next((p for p in it if p not in seen), None)
            if nxt is None:
                order.append(node)
                stack.pop()
            else:
                seen.add(nxt)
                stack.append((nxt, iter(into[nxt])))
        if len(seen) != n + 1:
            return False
        rank = {node: k for k, node in enumerate(order)}
        ipdom = {n: n}

        def meet(a: int, b: int) -> int:
            while a != b:
                while rank[a] < rank[b]:
                    a = ipdom[a]
                while rank[b] < rank[a]:
                    b = ipdom[b]
            return a

        changed = True
        while changed:
            changed = False
            for node in reversed(order):
                if node == n:
                    continue
                new = None
                for s in out_of[node]:
                    if s in ipdom:
                        new = s if new is None else meet(s, new)
                if ipdom.get(node) != new:
                    ipdom[node] = new
                    changed = True
        controlled: list = [set() for _ in range(n)]
        for a in range(n):
            if len(out_of[a]) < 2:
                continue
            for b in out_of[a]:
                runner = b
                while runner != ipdom[a] and runner != n:
                    controlled[a].add(runner)
                    runner = ipdom[runner]
        return [frozenset(c) for c in controlled]

    def label(self, name: str) -> int | None:
        """The instruction label ``name`` stands before (None: no such label)."""
        return self._label_at.get(name)

    def target(self, i: int) -> int:
        """The instruction a branch goes to."""
        return self._label_at.get(getattr(self.instrs[i].operands[-1], "name", ""), len(self.instrs))

    def defs(self, at: int, name: str) -> frozenset:
        """The instructions (indices) whose writes of ``name`` may reach instruction ``at``."""
        return self.reach[at].get(name, frozenset())

    def width(self, name: str) -> int:
        """Bits of register ``name`` (a predicate: 1)."""
        t = self.fn.registers.get(name)
        return 1 if t == "pred" else TYPES[t][0] if t in TYPES else 64

    def read(self, ins: Instr) -> list[str]:
        """The registers ``ins`` reads (:func:`registers_read`)."""
        return registers_read(ins)

    def written(self, ins: Instr) -> list[str]:
        """The registers ``ins`` writes (the carry flag too, for a ``.cc`` form)."""
        return registers_written(ins)

    def support(self, ins: Instr) -> list[str]:
        """Registers ``ins`` reads that are not its data: its guard and its address's base."""
        out = [ins.guard[0]] if ins.guard else []
        for op in ins.operands:
            if isinstance(op, Addr) and isinstance(op.base, Reg):
                out.append(op.base.name)
        return out

    def sources(self, ins: Instr, reg: str, bits: int) -> tuple[list, list]:
        """What bits ``bits`` of register ``reg``, as ``ins`` writes them, are made of:
        ``([(register, bits)], [Leaf])``, each register with some bits (a shift or a mask may
        leave a source none)."""
        regs, leaves = self._sources(ins, reg, bits)
        return [(name, b) for name, b in regs if b], leaves

    def _sources(self, ins: Instr, reg: str, bits: int) -> tuple[list, list]:
        head = _head(ins)
        ops = ins.operands
        dst, srcs = ops[0], ops[1:]
        if writes_carry(ins.opcode) or reads_carry(ins.opcode):
            # extended precision (add.cc, madc.hi, ...): the result and the carry out depend on every
            # bit of every operand and of the carry in
            names = [n for s in srcs for n in _names(s)] + ([CARRY] if reads_carry(ins.opcode) else [])
            return [(n, _mask(self.width(n))) for n in names], []
        if head in LOADS:
            if _is_param(ins) or self.reads_table(ins):  # a parameter or a table entry: no element's bytes
                return [], []
            if ".local" in ins.opcode and self.local_flows is not None:
                return [], []  # bytes of local stores, which element_slice follows
            items = dst.items if isinstance(dst, Vec) else (dst,)
            type_ = _types(ins)[-1] if _types(ins) else "b64"
            nbytes = item_bits(ins) // 8
            j = next(k for k, it in enumerate(items) if reg in _names(it))
            # a register wider than the loaded type holds its extension above it (zeros, or copies of
            # the top loaded bit for a signed type: ld.global.s8 into a 16-bit register)
            bits = _extension_source(bits, 8 * nbytes, TYPES[type_][1] == "s")
            if not bits:
                return [], []
            lo, hi = _bit_range(bits)
            return [], [Leaf(ins, j * nbytes + lo // 8, j * nbytes + -(-hi // 8))]
        if head == "mov" and len(srcs) == 1:
            src = srcs[0]
            if isinstance(dst, Vec):  # unpack: item j is bits [j*w, (j+1)*w) of the source
                w = self.width(src.name) // len(dst.items) if isinstance(src, Reg) else 0
                j = next(k for k, it in enumerate(dst.items) if reg in _names(it))
                return ([(src.name, bits << (j * w))] if isinstance(src, Reg) else []), []
            if isinstance(src, Vec):  # pack: item j goes to bits [j*w, (j+1)*w)
                w = self.width(reg) // len(src.items)
                out = []
                for j, it in enumerate(src.items):
                    part = (bits >> (j * w)) & _mask(w)
                    if part and isinstance(it, Reg):
                        out.append((it.name, part))
                return out, []
            if isinstance(src, Reg):
                return [(src.name, bits)], []
            return [], []
        types = _types(ins)
        lanes = _packed_conversion(head, types)
        if lanes and len(srcs) == 2:
            # d = {cvt(a) in the upper half, cvt(b) in the lower}
            out = []
            for k, src in ((0, srcs[1]), (1, srcs[0])):
                if (bits >> (lanes[0] * k)) & _mask(lanes[0]) and isinstance(src, Reg):
                    out.append((src.name, _mask(self.width(src.name))))
            return out, []
        if lanes and len(srcs) == 1 and isinstance(srcs[0], Reg):
            # lane k of d is the conversion of lane k of a
            w_d, w_a = lanes
            need = 0
            for k in range(2):
                if (bits >> (w_d * k)) & _mask(w_d):
                    need |= _mask(w_a) << (w_a * k)
            return [(srcs[0].name, need)], []
        lane = _lane_bits(types)
        if lane and head == "setp" and isinstance(dst, Reg) and len(_names(dst)) == 2:
            # setp.CMP.f16x2 p|q: p compares the low lanes, q the high ones (a predicate operand,
            # combined into both, stays whole)
            k = _names(dst).index(reg)
            return [(s.name, _mask(lane) << (lane * k) if self.width(s.name) == 2 * lane else _mask(self.width(s.name)))
                    for s in srcs if isinstance(s, Reg)], []
        if lane and head in _LANEWISE:
            need = 0
            for k in range(0, 64, lane):
                if (bits >> k) & _mask(lane):
                    need |= _mask(lane) << k
            return [(s.name, need) for s in srcs if isinstance(s, Reg)], []
        if head in ("shl", "shr") and len(srcs) == 2 and isinstance(srcs[1], Imm) and isinstance(srcs[1].value, int) \
                and isinstance(srcs[0], Reg) and (head == "shl" or types[:1] != ["s32"] and types[:1] != ["s64"]):
            n, w = srcs[1].value, self.width(reg)
            return [(srcs[0].name, (bits >> n) if head == "shl" else (bits << n) & _mask(w))], []
        if head == "prmt" and len(srcs) == 3 and isinstance(srcs[2], Imm) and isinstance(srcs[2].value, int) \
                and not [m for m in ins.opcode.split(".")[1:] if m != "b32"]:
            # byte i of d is one byte of the pair {b, a} (copied, or its top bit replicated)
            need = {0: 0, 1: 0}
            for i in range(4):
                part = (bits >> (8 * i)) & 0xFF
                if not part:
                    continue
                nibble = (srcs[2].value >> (4 * i)) & 0xF
                which, byte = divmod(nibble & 7, 4)
                need[which] |= (0x80 if nibble & 8 else part) << (8 * byte)
            return [(srcs[k].name, need[k]) for k in (0, 1) if need[k] and isinstance(srcs[k], Reg)], []
        if head in _BITWISE:
            # a constant operand of and/or fixes bits: where an and's mask is 0 or an or's is 1 the
            # result does not depend on the other operand (Triton masks each byte it packs this way)
            consts = [s.value & _mask(self.width(reg)) for s in srcs if isinstance(s, Imm) and isinstance(s.value, int)]
            if head in ("and", "or") and consts:
                for c in consts:
                    bits &= c if head == "and" else ~c
            return [(s.name, bits) for s in srcs if isinstance(s, Reg)], []
        if head == "cvt" and len(types) == 2 and all(TYPES[t][1] in "bus" for t in types) and isinstance(srcs[0], Reg):
            # between integers: the narrower type's bits move, those above are its extension (by the
            # source's signedness when widening, the destination's when narrowing: PTX ISA §6.5.1)
            wd, ws = TYPES[types[0]][0], TYPES[types[1]][0]
            signed = TYPES[types[1] if ws < wd else types[0]][1] == "s"
            return [(srcs[0].name, _extension_source(bits, min(wd, ws), signed))], []
        return [(n, _mask(self.width(n))) for s in srcs for n in _names(s)], []


def _extension_source(bits: int, width: int, signed: bool) -> int:
    """Which of the low ``width`` bits the ``bits`` of a value extended from ``width`` bits are
    made of: the bits themselves below ``width``, and above it the top one (sign extension) or none
    (zero extension)."""
    below = bits & _mask(width)
    if signed and bits >> width:
        below |= 1 << (width - 1)
    return below


def _bit_range(bits: int) -> tuple[int, int]:
    lo = (bits & -bits).bit_length() - 1
    return lo, bits.bit_length()


def _lane_bits(types: list[str]) -> int:
    """Lane width of a packed type named in the opcode (f16x2: 16; f32x2: 32), else 0."""
    for t in types:
        if t in ("f16x2", "bf16x2"):
            return 16
        if t == "f32x2":
            return 32
    return 0


@dataclass
class Slice:
    """What one element needs: the instructions kept (by identity), and the bytes of global loads
    its value is computed from (``leaves``; loads that only decide guards, branches or addresses
    are kept but are not leaves: a dependence through control flow alone is not followed);
    ``values``: the instructions on the value path itself (by identity; no address, guard or
    branch), which :mod:`tilecheck.verify.layout` reads to tell a move from arithmetic;
    ``steering``: the bytes of global loads that decide its guards, branches or addresses."""

    kept: set
    leaves: set
    values: set = field(default_factory=set)
    steering: set = field(default_factory=set)


def element_slice(sl: Slicer, seeds: list[tuple[str, int]], stores: list[Instr]) -> Slice:
    """The instructions that compute bits ``seeds`` (``(register, bits)``) stored by ``stores``,
    and every instruction deciding control flow, guards and addresses on the way (following the
    writes that reach each read)."""
    kept: set = set()
    leaves: set = set()
    values: set = set()
    steering: set = set()
    needed: dict = {}   # (writer index, register, value?) -> bits of its write needed
    work: list = []

    def need(at: int, name: str, bits: int, value: bool) -> None:
        bits &= _mask(sl.width(name))
        for d in sl.defs(at, name):
            new = bits & ~needed.get((d, name, value), 0)
            if new:
                needed[(d, name, value)] = needed.get((d, name, value), 0) | new
                work.append((d, name, new, value))

    def keep(i: int) -> None:
        if id(sl.instrs[i]) not in kept:
            kept.add(id(sl.instrs[i]))
            for name in sl.support(sl.instrs[i]):
                need(i, name, _mask(sl.width(name)), False)

    for i, ins in enumerate(sl.instrs):
        if _head(ins) in CONTROL and ins.guard is None and _head(ins) != "bra":
            keep(i)  # barriers, the final ret
    for ins in stores:
        i = sl.index[id(ins)]
        keep(i)
        for name, bits in seeds:
            need(i, name, bits, True)
    control = [i for i, ins in enumerate(sl.instrs) if _head(ins) in CONTROL and id(ins) not in kept]
    while True:
        while work:
            d, name, bits, value = work.pop()
            keep(d)
            regs, lv = sl.sources(sl.instrs[d], name, bits)
            if value:  # the element's bits come from these loads (guards and addresses only steer them)
                leaves.update(lv)
                values.add(id(sl.instrs[d]))
            else:
                steering.update(lv)
            for src, b in regs:
                need(d, src, b, value)
            for st in (sl.local_flows or {}).get(d, ()):  # a local load: the stores whose bytes it read
                if st >= 0:
                    keep(st)
                    for src in _names(sl.instrs[st].operands[1]):
                        need(st, src, _mask(sl.width(src)), value)
        # a branch or early return matters where it can skip (or repeat) a kept instruction: the
        # other elements' branches stay out, and with them their approximate instructions
        at = sorted(sl.index[k] for k in kept if k in sl.index)
        # an unguarded branch kept for the function's shape runs only where its way there does:
        # it asks for no guarded branch (one placed after the ret, on a path the cut-down function
        # never takes, would otherwise bring in the branch that leads there)
        decided = [k for k in at if sl.instrs[k].guard is not None or _head(sl.instrs[k]) not in JUMPS]
        # a local store between a kept local load and the store it was seen to read could change what
        # it reads (local loads follow the flows one run saw): a branch deciding one stays too
        for load in (k for k in at if k in (sl.local_flows or {})):
            decided += sl.local_stores_between(load)
        grown = False
        for i in control:
            if id(sl.instrs[i]) in kept:
                continue
            if sl.instrs[i].guard is not None and _head(sl.instrs[i]) in JUMPS:
                controls = any(k in sl.controlled(i) for k in decided if k != i)
            else:  # an unguarded branch keeps the cut-down function's shape where it jumps over kept code
                lo, hi = sl.span(i)
                controls = any(lo <= k < hi for k in at if k != i)
            if controls:
                keep(i)
                grown = True
        if not grown and not work:
            break
    return Slice(kept, leaves, values, steering)


def sliced_function(fn: Function, kept: set) -> tuple[Function, dict]:
    """``fn`` with only the instructions in ``kept`` (by identity); labels stay. The other
    elements' slots of a kept vector store or packing conversion (``st.global.v4.b32 [a], {%r9,
    %r10, ...}``, ``cvt.rn.f16x2.f32 %r9, %r37, %r36``) whose registers nothing kept writes --
    zero in every lane, and never judged -- become the immediate 0, so that those registers are not
    live (a fork copies every live register per lane); a vector store left with one register
    becomes a scalar store of it at its place; likewise a vector load of which one register is
    read becomes a scalar load of that register (``ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [a]``
    with only %r1 read: ``ld.global.b32 %r1, [a]``). Returns the function and, by the identity of
    each original instruction that changed, its replacement."""
    written = {name for ins in fn.body if isinstance(ins, Instr) and id(ins) in kept for name in registers_written(ins)}
    read = {name for ins in fn.body if isinstance(ins, Instr) and id(ins) in kept for name in registers_read(ins)}
    body, changed = [], {}
    for item in fn.body:
        if not isinstance(item, Instr):
            body.append(item)
            continue
        if id(item) not in kept:
            continue
        new = _narrow_load(_zero_unwritten(item, written), read)
        if new is not item:
            changed[id(item)] = new
        body.append(new)
    return replace(fn, body=tuple(body)), changed


def registers_written(ins: Instr) -> list[str]:
    """The registers ``ins`` writes: its destination operand's, and the carry flag for a ``.cc`` form."""
    head = _head(ins)
    if head in CONTROL or head in (*STORES, "red") or not ins.operands:
        return []
    return _names(ins.operands[0]) + ([CARRY] if writes_carry(ins.opcode) else [])


def registers_read(ins: Instr) -> list[str]:
    """The registers ``ins`` reads: its sources, address bases and guard (every operand of a store),
    and the carry flag for ``addc``/``subc``/``madc``."""
    ops = ins.operands if _head(ins) in (*STORES, "red") or not registers_written(ins) else ins.operands[1:]
    names = [n for op in ops for n in _names(op)]
    names += [n for op in ins.operands if isinstance(op, Addr) for n in _names(op.base)]
    names += [CARRY] if reads_carry(ins.opcode) else []
    return names + ([ins.guard[0]] if ins.guard else [])


def _narrow_load(ins: Instr, read: set) -> Instr:
    """A vector load of which one destination register is read, as a scalar load of it at its place
    (a load has no other effect: the bytes left out are never read)."""
    ops = ins.operands
    if _head(ins) != "ld" or len(ops) != 2 or not isinstance(ops[0], Vec) or not isinstance(ops[1], Addr):
        return ins
    items = ops[0].items
    live = [j for j, it in enumerate(items) if isinstance(it, Reg) and it.name in read]
    if len(live) != 1 or len(items) < 2:
        return ins
    j = live[0]
    nbytes = TYPES[_types(ins)[-1]][0] // 8
    opcode = ".".join(p for p in ins.opcode.split(".") if p not in ("v2", "v4", "v8"))
    return replace(ins, opcode=opcode, operands=(items[j], Addr(ops[1].base, ops[1].offset + j * nbytes)))


def _zero_unwritten(ins: Instr, written: set) -> Instr:
    """``ins`` with the unwritten registers of its other-element slots as immediate zeros."""
    head, types = _head(ins), _types(ins)
    ops = list(ins.operands)
    if head == "st" and len(ops) == 2 and isinstance(ops[1], Vec) and len(ops[1].items) > 1:
        items = tuple(Imm("0", 0) if isinstance(it, Reg) and it.name not in written else it for it in ops[1].items)
        regs = [j for j, it in enumerate(items) if isinstance(it, Reg)]
        if len(regs) == 1 and isinstance(ops[0], Addr):
            # one register left: a scalar store of it, at its place in the vector
            j = regs[0]
            nbytes = TYPES[types[-1]][0] // 8
            opcode = ".".join(p for p in ins.opcode.split(".") if p not in ("v2", "v4", "v8"))
            return replace(ins, opcode=opcode, operands=(Addr(ops[0].base, ops[0].offset + j * nbytes), items[j]))
        if items != ops[1].items:
            ops[1] = Vec(items, ops[1].source)
    elif _packed_conversion(head, types) and len(ops) == 3:
        for k in (1, 2):
            if isinstance(ops[k], Reg) and ops[k].name not in written:
                ops[k] = Imm("0f00000000", 0, 32)
    return ins if ops == list(ins.operands) else replace(ins, operands=tuple(ops))


def sliceable(fn: Function, shared: bool = False, local: bool = False) -> bool:
    """True when every load the slices follow reads global memory that no store of the function
    writes, or a table of the module's data (a constant: :meth:`Slicer.reads_table`): no ``.local``
    arrays, no stores to other spaces, no atomics. (Otherwise a value could travel through memory,
    which the bit-level flow does not follow: the function then runs whole.)
    ``shared``: ``.shared`` accesses are allowed (the caller follows shared memory itself:
    :mod:`tilecheck.verify.layout`); ``local``: ``.local`` ones too (the slicer follows each local
    load through the stores a run saw it read: ``Slicer(local_flows=...)``, checked on every run)."""
    if fn.frames and not local:
        return False
    for item in fn.body:
        if not isinstance(item, Instr):
            continue
        head = _head(item)
        if head in ("atom", "red"):
            return False
        spaces = (".const",) + (() if local else (".local",)) + (() if shared else (".shared",))
        if head in (*STORES, *LOADS) and not _is_param(item) and any(sp in item.opcode for sp in spaces):
            return False
    return True


class Signatures:
    """Hash-consed expression signatures of stored elements (see the module doc): equal
    integers mean equal expressions. ``region_of`` names each global load's operand buffer
    (``id(load) -> index``); ``element_bytes`` is the operands' element size, ``region_bytes``
    (region -> size) where an operand's differs."""

    def __init__(self, sl: Slicer, region_of: dict, element_bytes: int, region_bytes: dict | None = None):
        self.sl = sl
        self.region_of = region_of
        self.eb = element_bytes
        self.region_bytes = region_bytes or {}
        self.table: dict = {}
        self.memo: dict = {}
        self.busy: set = set()
        self.loops: dict = {}  # Loop -> (its signature, its Canonical names), or None while named

    def _intern(self, node) -> int:
        return self.table.setdefault(node, len(self.table))

    def of(self, name: str, bits: int, at: int) -> int:
        """The signature of bits ``bits`` of register ``name`` as instruction ``at`` reads them
        (every write of it that may reach there, in program order)."""
        loop = self.sl.loop_of.get(at)
        if loop is not None:
            named = self._loop(loop)
            if named is not None and name in named[1].written:
                # a value of a simple loop: named by the loop, the place and the register
                return self._intern(("loop-at", named[0], at - loop.head, named[1].name(name), bits))
        return self._merge(name, bits, at, self.sl.defs(at, name))

    def _merge(self, name: str, bits: int, at: int, defs: frozenset) -> int:
        """:meth:`of` where the writes ``defs`` reach ``at``."""
        # where a branch on data steers which write reaches, the value is a function of the path
        # taken (and, for each path, of its writes), so it is named per read
        steered = len(defs) > 1 and at in self.sl.steered
        key = (name, bits, defs, at) if steered else (name, bits, defs)
        if key in self.memo:
            return self.memo[key]
        if key in self.busy:  # a value carried around a loop no simple loop names: it matches nothing else
            return self._intern(("loop",) + key)
        self.busy.add(key)
        if steered:
            sig = self._steered(name, bits, at, defs)
        else:
            parts = tuple(self._write(d, name, bits) for d in self._writes(defs))
            sig = parts[0] if len(parts) == 1 else self._intern(("writers",) + parts)
        self.busy.discard(key)
        self.memo[key] = sig
        return sig

    def _writes(self, defs) -> list:
        """The writes ``defs`` in program order, those inside one simple loop as the loop (what it
        leaves in the register), in the loop's place."""
        out, seen = [], set()
        for d in sorted(defs):
            loop = self.sl.loop_of.get(d)
            if loop is not None and self._loop(loop) is not None:
                if loop not in seen:
                    seen.add(loop)
                    out.append(loop)
            else:
                out.append(d)
        return out

    def _write(self, write, name: str, bits: int) -> int:
        """The signature of what ``write`` (an instruction's index, or a simple loop) leaves in
        bits ``bits`` of ``name``."""
        if isinstance(write, loops.Loop):
            sig, canon = self._loop(write)
            return self._intern(("loop-out", sig, canon.name(name), bits))
        return self._node(write, name, bits)

    def _loop(self, loop: "loops.Loop"):
        """``(signature, Canonical)`` of a simple loop (:func:`tilecheck.verify.loops.body`), or
        None while it is being named (a value it reads depends on its own: then it matches
        nothing)."""
        if loop in self.loops:
            return self.loops[loop]
        self.loops[loop] = None
        sl = self.sl

        def outside(reg: str, at: int | None) -> int:
            full = _mask(sl.width(reg))
            if at is not None:
                return self._merge(reg, full, at, sl.defs(at, reg))
            entering = frozenset(d for d in sl.defs(loop.head, reg) if d not in loop)
            return self._merge(reg, full, loop.head, entering)

        items, entering, canon = loops.body(sl, loop, outside)
        named = (self._intern(("loop", items, entering)), canon)
        self.loops[loop] = named
        return named

    def _steered(self, name: str, bits: int, at: int, defs: frozenset) -> int:
        """A read that branches on data steer (see :meth:`of`): the paths into it from the nearest
        point ``s`` at or before its first write through which every path into it passes, with no
        loop between but simple ones (each one step of a path), each named by the branches it takes (their predicates' signatures) and the
        writes it makes. Equal signatures: for equal operands the same branches are taken, so the
        corresponding paths run and make equal writes. Where no such point is found below
        :data:`MAX_PATHS` paths, the value is unique (it matches nothing else)."""
        sl = self.sl
        # a simple loop's writes start at its head (the loop is one step of a path)
        s = sl.single_entry(at, min(w.head if isinstance(w, loops.Loop) else w for w in self._writes(defs)))
        paths = None if s is None else sl.paths(s, at, MAX_PATHS, name)
        if paths is None or any(isinstance(i, loops.Loop) and self._loop(i) is None for _, through in paths
                                for i in through):
            return self._intern(("steered", name, bits, defs, at))
        named = []
        for decisions, through in paths:
            writes = [i for i in through if name in (self._loop(i)[1].written if isinstance(i, loops.Loop)
                                                     else sl.written(sl.instrs[i]))]
            # a loop leaves its value whichever way it goes: like an unguarded write
            last = max((k for k, i in enumerate(writes) if isinstance(i, loops.Loop) or sl.instrs[i].guard is None),
                       default=None)
            if last is None:  # a path that may keep the value from before ``s``
                before = sl.defs(s, name)
                values = (self.of(name, bits, s) if before else self._intern(("undefined", name)),)
            else:
                values = ()
                writes = writes[last:]
            values += tuple(self._write(i, name, bits) for i in writes)
            named.append((tuple(self._decision(i, taken) for i, taken in decisions), values))
        if len({values for _, values in named}) == 1:
            # the same writes whichever way it comes: they name the value (reaching the read at all
            # is decided where the element is stored)
            values = named[0][1]
            return values[0] if len(values) == 1 else self._intern(("writers",) + values)
        return self._intern(("paths", tuple(named)))

    def _decision(self, at: int, taken: bool) -> tuple:
        """A guarded branch (or return) on a path, and which way the path goes: its guard as
        :meth:`_guard` names it."""
        return self._guard(self.sl.instrs[at], at) + (taken,)

    def _guard(self, ins: Instr, at: int) -> tuple:
        """What decides whether ``ins`` writes: nothing (``()``); a guard on where the element is
        (a mask: the same for every element there, which the runs of every element check); or a
        guard on data, named by its predicate's signature, since the last write whose guard holds
        is the value (and a guard on another comparison is another function)."""
        if ins.guard is None:
            return ()
        pred, negated = ins.guard
        if pred not in self.sl.data:
            return ("where", negated)
        return ("if", negated, self.of(pred, 1, at))

    def _local(self, at: int, ins: Instr, bits: int, guarded: tuple) -> int:
        """A local load's bits: what the stores a run saw it read wrote there (their values and
        addresses) and its own address, which here decides the value (a data-dependent index
        into a local array); a load no run saw is unique, so it matches nothing."""
        flows = (self.sl.local_flows or {}).get(at)
        if flows is None:
            return self._intern(("local?", at))
        parts = []
        for st in sorted(flows):
            if st < 0:
                parts.append(("unwritten",))
                continue
            store = self.sl.instrs[st]
            values = tuple(self.of(r, _mask(self.sl.width(r)), st) for r in _names(store.operands[1]))
            parts.append((store.opcode, self._guard(store, st)) + values + _address_parts(self, store, st))
        return self._intern(("local", ins.opcode, guarded, bits) + _address_parts(self, ins, at) + tuple(parts))

    def element(self, name: str, bits: int, store: Instr) -> int:
        """The signature of the element a store writes from bits ``bits`` of ``name``."""
        return self.of(name, bits, self.sl.index[id(store)])

    def _node(self, at: int, name: str, bits: int) -> int:
        ins = self.sl.instrs[at]
        head = _head(ins)
        guarded = self._guard(ins, at)
        types = _types(ins)
        regs, leaves = self.sl.sources(ins, name, bits)
        if head in LOADS and ".local" in ins.opcode:
            return self._local(at, ins, bits, guarded)
        if head in LOADS:
            if self.sl.reads_table(ins):  # a constant of the module's data: the load itself names it
                return self._intern(("table", ins.line, ins.col, bits, guarded))
            if not leaves and not _is_param(ins):  # only zero-extension bits above the loaded type
                lo, hi = _bit_range(bits)
                return self._intern(("const", 0, hi - lo, guarded))
            if not leaves:
                return self._intern(("param", ins.operands[1].base.name if isinstance(ins.operands[1], Addr)
                                     and isinstance(ins.operands[1].base, Symbol) else ins.text))
            lf = leaves[0]
            region = self.region_of.get(id(ins), -1)
            eb = self.region_bytes.get(region, self.eb)
            width = item_bits(ins)
            # bits above the loaded type are its extension, which the type's signedness decides
            extension = (TYPES[types[-1]][1] == "s") if types and bits >> width else None
            return self._intern(("in", region, lf.lo % eb, lf.hi - lf.lo, guarded) +
                                (() if extension is None else (extension,)))
        if head == "mov" and (isinstance(ins.operands[0], Vec) or isinstance(ins.operands[1], (Vec, Reg))):
            # a move carries bits: the signature is that of the bits it moves
            if len(regs) == 1 and not guarded:
                return self.of(*regs[0], at)
            return self._intern(("pack", guarded) + tuple(self.of(r, b, at) for r, b in regs))
        if _packed_conversion(head, types) and len(regs) == 1:
            # each half is the lane's own conversion: the same operation whichever half it is
            (src, b), = regs
            return self._intern(("op", ins.opcode.replace("x2", "", 1), guarded, self.of(src, b, at)))
        lane = _lane_bits(types)
        if lane and (head in _LANEWISE or head == "setp" and len(_names(ins.operands[0])) == 2):
            # one lane of a packed operation: that lane's operation on the same lane of each source
            return self._intern(("op", ins.opcode.replace("x2", ""), guarded) + tuple(self.of(r, b, at) for r, b in regs))
        if head == "mov" and isinstance(ins.operands[1], Imm) and isinstance(ins.operands[1].value, int):
            # a constant: the bits it puts where the element is
            lo, hi = _bit_range(bits)
            return self._intern(("const", (ins.operands[1].value >> lo) & _mask(hi - lo), hi - lo, guarded))
        consts = tuple(_const(op) for op in ins.operands[1:] if not isinstance(op, (Reg, Vec)))
        # a .cc form's carry out is a second result of its operation: named apart from its value
        kind = "carry" if name == CARRY else "op"
        return self._intern((kind, ins.opcode, guarded, bits, consts) + tuple(self.of(r, b, at) for r, b in regs))


def _address_parts(sig: "Signatures", ins: Instr, at: int) -> tuple:
    """An access's address in a signature: its base register's signature (or symbol) and offset."""
    addr = next((op for op in ins.operands if isinstance(op, Addr)), None)
    if addr is None:
        return ()
    base = addr.base
    if isinstance(base, Reg):
        return (sig.of(base.name, _mask(sig.sl.width(base.name)), at), addr.offset)
    return (getattr(base, "name", str(base)), addr.offset)


def _const(op) -> object:
    if isinstance(op, Imm):
        return ("imm", op.value)
    if isinstance(op, Special):
        return ("special", op.name)
    if isinstance(op, Symbol):
        return ("symbol", op.name)
    return ("operand", str(op))
