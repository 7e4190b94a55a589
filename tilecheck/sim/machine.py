"""Execute a PTX kernel on numpy arrays, vectorised over every thread of the launch.

Each register is a numpy array with one element per thread (bits; predicates are bool arrays);
each PTX instruction is one vectorised operation over the threads that execute it (active, and
passing its ``@%p`` guard). Threads run in lockstep in program order, so cross-thread effects
are those of one valid GPU interleaving; a store of several threads to one address keeps the
last thread's value.

Supported subset (anything else is a :class:`~tilecheck.sim.errors.PtxError` naming the line):

* ``.reg`` of types pred, b/u/s 8-64, f16/bf16/f32/f64 (and packed x2 types, held as bits);
* ``mov`` (registers, immediates, special registers, vector pack/unpack), ``cvta{.to}.global.u64``;
* ``ld.param``; ``ld``/``st`` ``.global`` (or generic, same addresses) incl. ``.v2/.v4/.v8`` and the
  cache operators ``.ca .cg .cs .lu .cv .nc``;
* integer ``add sub mul{.lo,.hi,.wide} mad{.lo,.hi,.wide} div rem min max neg abs`` on s/u 16-64,
  ``shl``/``shr``, ``and or xor not`` (bits and predicates), ``cvt`` between integer types,
  ``setp`` (integer and f16/bf16/f32/f64 comparisons, ordered and unordered), ``selp``;
* ``bra`` forward to a label (e.g. a bounds guard), ``ret``, ``exit``;
* every arithmetic form of the spec database through the model:
  :func:`tilecheck.model.api.evaluate` for exact forms, :func:`~tilecheck.model.api.reference`
  (the model's representative value) for approximate ones, packed types on their containers.

Special registers: ``%tid``, ``%ntid``, ``%ctaid``, ``%nctaid`` (``.x/.y/.z``), ``%laneid`` and
``%warpid`` (the linear thread index in the block mod / div 32), ``%nwarpid``, ``%warpsize``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.model import api
from tilecheck.sim.errors import ExecutionError, PtxError
from tilecheck.sim.memory import UINT, GlobalMemory
from tilecheck.sim.parser import Addr, Imm, Kernel, Reg, Special, Statement, Symbol, Vec, parse_ptx
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.spec.types import PTX_TYPES

TYPES: dict[str, tuple[int, str]] = {t.name: (t.bits, t.kind) for t in PTX_TYPES.values()}
"""PTX type token -> (width in bits, kind); the kinds of :data:`tilecheck.spec.types.KINDS`."""
STORAGE = {1: np.dtype(bool), 8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
           64: np.dtype(np.uint64)}
CACHE_OPS = ("ca", "cg", "cs", "lu", "cv", "nc", "wb", "wt")
INT_OPS = ("add", "sub", "mul", "mad", "div", "rem", "min", "max", "neg", "abs")


def _mask(width: int) -> int:
    return (1 << width) - 1


@dataclass(frozen=True)
class ExecutionResult:
    """What :func:`execute` did: the arguments (arrays updated in place), the approximate forms whose
    results are the model's reference value, the number of threads and of instructions executed."""

    args: list
    approximate: tuple[str, ...]
    threads: int
    instructions: int


@dataclass(frozen=True)
class _Op:
    line: int
    text: str
    guard: tuple[str, bool] | None
    run: Callable | None
    label: str | None = None


class _Machine:
    """Per-launch state: registers, parameters, memory, special registers, thread masks."""

    def __init__(self, kernel: Kernel, grid: tuple[int, int, int], block: tuple[int, int, int]):
        per_block = block[0] * block[1] * block[2]
        self.grid, self.block = grid, block
        self.threads = per_block * grid[0] * grid[1] * grid[2]
        self.regs: dict[str, np.ndarray] = {}
        for name, rtype in kernel.registers:
            self.regs[name] = np.zeros(self.threads, dtype=STORAGE[TYPES[rtype][0]])
        self.params: dict[str, bytes] = {}
        self.memory = GlobalMemory()
        self.active = np.ones(self.threads, dtype=bool)
        self.waiting: dict[str, np.ndarray] = {}
        self.approximate: set[str] = set()
        self._special: dict[str, np.ndarray] = {}

    def special(self, name: str) -> np.ndarray:
        """uint32 array of a special register over all threads."""
        if name not in self._special:
            gid = np.arange(self.threads, dtype=np.int64)
            bx, by, bz = self.block
            gx, gy, gz = self.grid
            per_block = bx * by * bz
            base, _, axis = name.partition(".")
            if base in ("%ntid", "%nctaid", "%nwarpid", "%warpsize"):
                value = {"%ntid": dict(zip("xyz", self.block)), "%nctaid": dict(zip("xyz", self.grid))}.get(
                    base, {}).get(axis, -(-per_block // 32) if base == "%nwarpid" else 32)
                values = np.full(self.threads, value, dtype=np.int64)
            elif base in ("%tid", "%laneid", "%warpid"):
                t = gid % per_block
                values = {"x": t % bx, "y": (t // bx) % by, "z": t // (bx * by)}[axis] if base == "%tid" else (
                    t % 32 if base == "%laneid" else t // 32)
            else:  # %ctaid
                b = gid // per_block
                values = {"x": b % gx, "y": (b // gx) % gy, "z": b // (gx * gy)}[axis]
            self._special[name] = values.astype(np.uint32)  # the parser admits known names only
        return self._special[name]


class _Compiler:
    """Turns parsed statements into closures ``run(machine, idx)``; all checks happen here, once."""

    def __init__(self, kernel: Kernel, db, source: str | None, tininess: str, under_test: str | None = None):
        self.kernel = kernel
        self.db = db
        self.under_test = under_test
        self.source = source
        self.tininess = tininess
        self.reg_types = dict(kernel.registers)
        self.param_types = {p.name: p.ptx_type for p in kernel.params}
        self.labels = {s.label: i for i, s in enumerate(kernel.statements) if s.label}

    def error(self, stmt: Statement, message: str) -> PtxError:
        """A PtxError located at ``stmt``."""
        return PtxError(message, stmt.line, self.source)

    # ---- operand access -------------------------------------------------------------------
    def reg_width(self, stmt: Statement, name: str) -> int:
        """Declared width in bits of register ``name`` (PtxError if undeclared)."""
        if name not in self.reg_types:
            raise self.error(stmt, f"register {name} is not declared")
        return TYPES[self.reg_types[name]][0]

    def reader(self, stmt: Statement, op, width: int, *, float_width: int = 0, wider: bool = False):
        """A function ``(m, idx) -> bits`` (uint array or int) of an operand read as ``width`` bits.

        ``float_width`` (32/64/16): the operand is a float of that type, so float immediates are
        converted to it. ``wider``: a register wider than ``width`` is allowed and truncated.
        """
        if isinstance(op, Reg):
            rw = self.reg_width(stmt, op.name)
            name = op.name
            if rw == width:
                return lambda m, idx: _get(m.regs[name], idx)
            if rw > width and wider:
                dtype = STORAGE[width]
                return lambda m, idx: _get(m.regs[name], idx).astype(dtype)
            raise self.error(stmt, f"register {name} is {rw}-bit; the instruction reads {width} bits")
        if isinstance(op, Imm):
            bits = self.immediate(stmt, op, width, float_width)
            return lambda m, idx: bits
        if isinstance(op, Special):
            if width != 32:
                raise self.error(stmt, f"special register {op.name} is 32-bit; the instruction reads {width} bits")
            name = op.name
            return lambda m, idx: _get(m.special(name), idx)
        raise self.error(stmt, f"unsupported operand {op!r} here")

    def immediate(self, stmt: Statement, op: Imm, width: int, float_width: int) -> int:
        """The bits of an immediate for a ``width``-bit operand."""
        if float_width:
            if op.float_bits == float_width:
                return int(op.value)
            if op.float_bits in (32, 64) or op.float_bits == 0:
                if op.float_bits == 32:
                    value = np.array([op.value], dtype=np.uint32).view(np.float32)[0]
                elif op.float_bits == 64:
                    value = np.array([op.value], dtype=np.uint64).view(np.float64)[0]
                else:
                    value = np.float64(op.value)
                target = {16: np.float16, 32: np.float32, 64: np.float64}.get(float_width)
                if target is None:
                    raise self.error(stmt, f"no {float_width}-bit float immediates")
                with np.errstate(all="ignore"):
                    return int(np.array([value]).astype(target).view(UINT[float_width // 8])[0])
            raise self.error(stmt, f"integer immediate {op.text} for a floating-point operand")
        if op.float_bits is not None:
            if op.float_bits == width:
                return int(op.value)
            raise self.error(stmt, f"float immediate {op.text} for a {width}-bit integer operand")
        return int(op.value) & _mask(width)

    def writer(self, stmt: Statement, op, width: int, *, wider: bool = False, signed: bool = False):
        """A function ``(m, idx, bits)`` writing ``width``-bit values to a register operand
        (a wider register is allowed with ``wider``: the value is sign- or zero-extended)."""
        if not isinstance(op, Reg):
            raise self.error(stmt, f"the destination must be a register, got {op!r}")
        rw = self.reg_width(stmt, op.name)
        name = op.name
        if rw == width:
            dtype = STORAGE[rw]

            def write(m, idx, bits):
                _set(m.regs[name], idx, np.asarray(bits).astype(dtype, copy=False))
            return write
        if rw > width and wider:
            dtype = STORAGE[rw]

            def write_ext(m, idx, bits):
                values = np.asarray(bits).astype(np.uint64)
                if signed:
                    values = _sign_extend(values, width) & np.uint64(_mask(rw))
                _set(m.regs[name], idx, values.astype(dtype))
            return write_ext
        raise self.error(stmt, f"register {name} is {rw}-bit; the instruction writes {width} bits")

    def pred_reader(self, stmt: Statement, op):
        """A function ``(m, idx) -> bool array`` reading a predicate register (or 0/1 immediate)."""
        if isinstance(op, Reg):
            if self.reg_types.get(op.name) != "pred":
                raise self.error(stmt, f"{op.name} is not a predicate register")
            name = op.name
            return lambda m, idx: _get(m.regs[name], idx)
        if isinstance(op, Imm) and op.float_bits is None:
            value = bool(op.value)
            return lambda m, idx: np.full(idx.size, value)
        raise self.error(stmt, f"expected a predicate, got {op!r}")

    def pred_writer(self, stmt: Statement, op):
        """A function ``(m, idx, values)`` writing a predicate register."""
        if not isinstance(op, Reg) or self.reg_types.get(op.name) != "pred":
            raise self.error(stmt, f"expected a predicate register destination, got {op!r}")
        name = op.name

        def write(m, idx, values):
            _set(m.regs[name], idx, values)
        return write

    # ---- compilation ----------------------------------------------------------------------
    def compile(self) -> list[_Op]:
        """Every statement as an ``_Op`` (labels kept as markers); raises PtxError on the first unsupported one."""
        ops = []
        for pos, stmt in enumerate(self.kernel.statements):
            if stmt.label:
                ops.append(_Op(stmt.line, stmt.text, None, None, stmt.label))
                continue
            if stmt.guard is not None and self.reg_types.get(stmt.guard[0]) != "pred":
                raise self.error(stmt, f"guard {stmt.guard[0]} is not a declared predicate register")
            ops.append(_Op(stmt.line, stmt.text, stmt.guard, self.instruction(stmt, pos)))
        return ops

    def instruction(self, stmt: Statement, pos: int):
        """Dispatch one instruction to its handler (builtins first, then spec-database forms): a
        spelling the builtins do not cover that is a form around the arithmetic (``cvt.rn.f16.f32``,
        ``setp.lt.and.f32``) runs through the model."""
        try:
            return self._instruction(stmt, pos)
        except PtxError as refused:
            form = self.db.resolve(stmt.opcode)
            if form is None or form.kind != "function" or form.family == "cvta":
                raise
            try:
                return self.function(stmt, form)
            except PtxError:
                raise refused from None  # the builtin's message names what is wrong with the operands

    def _instruction(self, stmt: Statement, pos: int):
        tokens = stmt.opcode.split(".")
        head, mods = tokens[0], tokens[1:]
        with_types = [t for t in mods if t in TYPES]
        if head in ("bra", "ret", "exit"):
            return self.control(stmt, head, mods, pos)
        if stmt.opcode == self.under_test:
            # the instruction a single-instruction kernel tests runs through the model, whatever
            # the simulator's own subset covers: the harness around it stays independent of it
            form = self.db.resolve(stmt.opcode)
            if form is not None and form.kind == "function":
                return self.function(stmt, form)
        if head == "mov":
            return self.mov(stmt, mods)
        if head in ("ld", "st"):
            return self.memory(stmt, head, mods)
        if head == "cvta":
            return self.cvta(stmt, mods)
        if head == "setp":
            return self.setp(stmt, mods)
        if head == "selp":
            return self.selp(stmt, mods)
        if head == "cvt":
            return self.cvt(stmt, mods)
        if head in ("and", "or", "xor", "not"):
            return self.logic(stmt, head, mods)
        if head in ("shl", "shr"):
            return self.shift(stmt, head, mods)
        if head in INT_OPS and with_types and TYPES[with_types[-1]][1] in ("u", "s", "b") and \
                TYPES[with_types[-1]][0] >= 16:
            return self.integer(stmt, head, mods)
        form = self.db.resolve(stmt.opcode)
        if form is not None and form.kind in ("exact", "contract"):
            return self.model(stmt, form)
        raise self.error(stmt, f"unsupported instruction {stmt.opcode!r} "
                               "(not in the simulator's subset and not a form of the spec database)")

    def control(self, stmt, head, mods, pos):
        """``bra`` (forward only), ``ret`` and ``exit``."""
        if head == "bra":
            if mods not in ([], ["uni"]) or len(stmt.operands) != 1 or not isinstance(stmt.operands[0], Symbol):
                raise self.error(stmt, f"unsupported branch {stmt.text!r}")
            label = stmt.operands[0].name
            if label not in self.labels:
                raise self.error(stmt, f"branch to unknown label {label}")
            if self.labels[label] <= pos:
                raise self.error(stmt, f"unsupported backward branch to {label} (only forward branches, e.g. a "
                                       "bounds guard, are simulated)")

            def branch(m, idx):
                m.active[idx] = False
                m.waiting.setdefault(label, np.zeros(m.threads, dtype=bool))[idx] = True
            return branch
        if mods or stmt.operands:
            raise self.error(stmt, f"unsupported {stmt.text!r}")

        def finish(m, idx):
            m.active[idx] = False
        return finish

    def _single_type(self, stmt, mods, allowed=None) -> str:
        types = [t for t in mods if t in TYPES]
        if len(types) != 1:
            raise self.error(stmt, f"unsupported instruction {stmt.opcode!r}: expected one type suffix")
        if allowed is not None and TYPES[types[0]][1] not in allowed:
            raise self.error(stmt, f"unsupported instruction {stmt.opcode!r}: type .{types[0]}")
        return types[0]

    def mov(self, stmt, mods):
        """``mov``: register/immediate/special copies, vector pack and unpack."""
        type_ = self._single_type(stmt, mods)
        if len(mods) != 1 or len(stmt.operands) != 2:
            raise self.error(stmt, f"unsupported mov {stmt.text!r}")
        width, kind = TYPES[type_]
        d, a = stmt.operands
        if kind == "pred":
            read, write = self.pred_reader(stmt, a), self.pred_writer(stmt, d)
            return lambda m, idx: write(m, idx, read(m, idx))
        if isinstance(a, Vec) and isinstance(d, Reg):
            readers, widths = self._vector_parts(stmt, a, width)
            write = self.writer(stmt, d, width)

            def pack(m, idx):
                out = np.zeros(idx.size, dtype=np.uint64)
                shift = 0
                for r, w in zip(readers, widths):
                    out |= (np.asarray(r(m, idx)).astype(np.uint64) & np.uint64(_mask(w))) << np.uint64(shift)
                    shift += w
                write(m, idx, out)
            return pack
        if isinstance(d, Vec) and isinstance(a, Reg):
            read = self.reader(stmt, a, width)
            writers, widths = [], []
            for item in d.items:
                if not isinstance(item, Reg):
                    raise self.error(stmt, f"unpack destinations must be registers, got {item!r}")
                w = self.reg_width(stmt, item.name)
                writers.append(self.writer(stmt, item, w))
                widths.append(w)
            if sum(widths) != width:
                raise self.error(stmt, f"unpacking {width} bits into registers of {sum(widths)} bits")

            def unpack(m, idx):
                value = np.asarray(read(m, idx)).astype(np.uint64)
                shift = 0
                for wr, w in zip(writers, widths):
                    wr(m, idx, (value >> np.uint64(shift)) & np.uint64(_mask(w)))
                    shift += w
            return unpack
        float_width = width if kind == "f" else 0
        read = self.reader(stmt, a, width, float_width=float_width)
        write = self.writer(stmt, d, width)
        return lambda m, idx: write(m, idx, read(m, idx))

    def _vector_parts(self, stmt, vec: Vec, width: int):
        readers, widths = [], []
        for item in vec.items:
            if not isinstance(item, Reg):
                raise self.error(stmt, f"pack sources must be registers, got {item!r}")
            w = self.reg_width(stmt, item.name)
            readers.append(self.reader(stmt, item, w))
            widths.append(w)
        if sum(widths) != width:
            raise self.error(stmt, f"packing registers of {sum(widths)} bits into {width} bits")
        return readers, widths

    def cvta(self, stmt, mods):
        """``cvta{.to}.global.u64``: the identity (simulated global addresses are generic ones)."""
        if mods not in (["to", "global", "u64"], ["global", "u64"]) or len(stmt.operands) != 2:
            raise self.error(stmt, f"unsupported {stmt.opcode!r} (the simulator's global addresses are generic "
                                   "addresses: cvta{.to}.global.u64 only)")
        read = self.reader(stmt, stmt.operands[1], 64)
        write = self.writer(stmt, stmt.operands[0], 64)
        return lambda m, idx: write(m, idx, read(m, idx))

    def memory(self, stmt, head, mods):
        """``ld.param``, ``ld.global``/``st.global`` (scalar and vector), generic ld/st."""
        mods = list(mods)
        space = "global"
        if mods and mods[0] in ("global", "param", "shared", "local", "const"):
            space = mods.pop(0)
        if space not in ("global", "param") or (space == "param" and head == "st"):
            raise self.error(stmt, f"unsupported {head}.{space}: the simulator has global memory and kernel "
                                   "parameters only")
        vec = 1
        rest = []
        for t in mods:
            if t in ("v2", "v4", "v8"):
                vec = int(t[1:])
            elif t in CACHE_OPS:
                continue  # cache operators do not change the values a single kernel observes
            else:
                rest.append(t)
        if len(rest) != 1 or rest[0] not in TYPES or rest[0] == "pred":
            raise self.error(stmt, f"unsupported instruction {stmt.opcode!r}")
        width, kind = TYPES[rest[0]]
        nbytes = width // 8
        signed = kind == "s"
        if len(stmt.operands) != 2:
            raise self.error(stmt, f"{head} takes two operands")
        value_op, addr = (stmt.operands if head == "ld" else stmt.operands[::-1])
        if not isinstance(addr, Addr):
            raise self.error(stmt, f"{head} needs an address operand [..], got {addr!r}")
        items = value_op.items if isinstance(value_op, Vec) else (value_op,)
        if len(items) != vec:
            raise self.error(stmt, f"{stmt.opcode} moves {vec} value(s); {len(items)} given")
        if space == "param":
            if vec != 1 or not isinstance(addr.base, Symbol) or addr.base.name not in self.param_types:
                raise self.error(stmt, f"ld.param needs [<kernel parameter>], got {stmt.text!r}")
            name, offset = addr.base.name, addr.offset
            write = self.writer(stmt, items[0], width, wider=True, signed=signed)

            def load_param(m, idx):
                raw = m.params[name]
                if offset < 0 or offset + nbytes > len(raw):
                    raise ExecutionError(f"ld.param reads bytes {offset}..{offset + nbytes - 1} of {name} "
                                         f"({len(raw)} bytes)", stmt.line)
                value = int.from_bytes(raw[offset:offset + nbytes], "little")
                write(m, idx, np.full(idx.size, value, dtype=STORAGE[width]))
            return load_param
        if not isinstance(addr.base, Reg) or self.reg_width(stmt, addr.base.name) != 64:
            raise self.error(stmt, f"{head}.global needs a 64-bit address register, got {stmt.text!r}")
        base_name, offset = addr.base.name, addr.offset
        what = f"{stmt.opcode} (line {stmt.line})"
        if head == "ld":
            writers = [self.writer(stmt, it, width, wider=True, signed=signed) for it in items]

            def load(m, idx):
                address = _get(m.regs[base_name], idx) + np.uint64(offset & _mask(64))
                region, off = m.memory.check(address, nbytes * vec, nbytes * vec, stmt.line, what)
                for j, wr in enumerate(writers):
                    wr(m, idx, m.memory.load(region, off + j * nbytes, nbytes))
            return load
        float_width = width if kind == "f" else 0
        readers = [self.reader(stmt, it, width, float_width=float_width, wider=True) for it in items]

        def store(m, idx):
            address = _get(m.regs[base_name], idx) + np.uint64(offset & _mask(64))
            region, off = m.memory.check(address, nbytes * vec, nbytes * vec, stmt.line, what)
            for j, rd in enumerate(readers):
                m.memory.store(region, off + j * nbytes, nbytes, rd(m, idx))
        return store

    def setp(self, stmt, mods):
        """``setp.<cmp>.<type>``: integer and floating-point comparisons."""
        if len(mods) != 2 or len(stmt.operands) != 3:
            raise self.error(stmt, f"unsupported setp form {stmt.opcode!r}")
        cmp, type_ = mods
        if type_ not in TYPES or type_ == "pred":
            raise self.error(stmt, f"unsupported setp type .{type_}")
        width, kind = TYPES[type_]
        write = self.pred_writer(stmt, stmt.operands[0])
        if kind == "f":
            ra = self.reader(stmt, stmt.operands[1], width, float_width=width)
            rb = self.reader(stmt, stmt.operands[2], width, float_width=width)
            compare = _float_compare(cmp, self.db.formats[PTX_TYPES[type_].element])
            if compare is None:
                raise self.error(stmt, f"unsupported comparison .{cmp} for .{type_}")
            return lambda m, idx: write(m, idx, compare(_widen(ra(m, idx), idx), _widen(rb(m, idx), idx)))
        if kind not in ("u", "s", "b") or width < 16:
            raise self.error(stmt, f"unsupported setp type .{type_}")
        ra = self.reader(stmt, stmt.operands[1], width)
        rb = self.reader(stmt, stmt.operands[2], width)
        signed = kind == "s"
        ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
               "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
        if cmp not in ops or (kind == "b" and cmp not in ("eq", "ne")) or (signed and cmp in ("lo", "ls", "hi", "hs")):
            raise self.error(stmt, f"unsupported comparison .{cmp} for .{type_}")
        fn = ops[cmp]

        def run(m, idx):
            a, b = _ints(ra(m, idx), idx, width, signed), _ints(rb(m, idx), idx, width, signed)
            write(m, idx, fn(a, b))
        return run

    def selp(self, stmt, mods):
        """``selp.<type> d, a, b, p``."""
        type_ = self._single_type(stmt, mods)
        width, kind = TYPES[type_]
        if len(stmt.operands) != 4 or kind == "pred":
            raise self.error(stmt, f"unsupported selp {stmt.text!r}")
        float_width = width if kind == "f" else 0
        ra = self.reader(stmt, stmt.operands[1], width, float_width=float_width)
        rb = self.reader(stmt, stmt.operands[2], width, float_width=float_width)
        rc = self.pred_reader(stmt, stmt.operands[3])
        write = self.writer(stmt, stmt.operands[0], width)
        return lambda m, idx: write(m, idx, np.where(rc(m, idx), _widen(ra(m, idx), idx, width),
                                                     _widen(rb(m, idx), idx, width)))

    def cvt(self, stmt, mods):
        """``cvt.<dst>.<src>`` between integer types (truncation or sign/zero extension)."""
        if len(mods) != 2 or any(t not in TYPES for t in mods) or len(stmt.operands) != 2:
            raise self.error(stmt, f"unsupported conversion {stmt.opcode!r} (integer cvt.<dst>.<src> only)")
        dst, src = mods
        dw, dk = TYPES[dst]
        sw, sk = TYPES[src]
        if dk not in ("u", "s", "b") or sk not in ("u", "s", "b"):
            raise self.error(stmt, f"unsupported conversion {stmt.opcode!r} (integer types only)")
        read = self.reader(stmt, stmt.operands[1], sw, wider=True)
        write = self.writer(stmt, stmt.operands[0], dw, wider=True, signed=dk == "s")

        def run(m, idx):
            value = _ints(read(m, idx), idx, sw, sk == "s")
            write(m, idx, _wrap(value, dw))
        return run

    def logic(self, stmt, head, mods):
        """``and/or/xor/not`` on predicates and bit types."""
        type_ = self._single_type(stmt, mods)
        width, kind = TYPES[type_]
        arity = 1 if head == "not" else 2
        if len(stmt.operands) != arity + 1 or len(mods) != 1:
            raise self.error(stmt, f"unsupported {stmt.text!r}")
        fns = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
        if kind == "pred":
            readers = [self.pred_reader(stmt, o) for o in stmt.operands[1:]]
            write = self.pred_writer(stmt, stmt.operands[0])
            if head == "not":
                return lambda m, idx: write(m, idx, ~readers[0](m, idx))
            fn = fns[head]
            return lambda m, idx: write(m, idx, fn(readers[0](m, idx), readers[1](m, idx)))
        if kind != "b":
            raise self.error(stmt, f"unsupported {stmt.opcode!r} (logic ops take .pred or .bN)")
        readers = [self.reader(stmt, o, width) for o in stmt.operands[1:]]
        write = self.writer(stmt, stmt.operands[0], width)
        if head == "not":
            return lambda m, idx: write(m, idx, _widen(readers[0](m, idx), idx, width) ^ STORAGE[width].type(
                _mask(width)))
        fn = fns[head]
        return lambda m, idx: write(m, idx, fn(_widen(readers[0](m, idx), idx, width),
                                               _widen(readers[1](m, idx), idx, width)))

    def shift(self, stmt, head, mods):
        """``shl``/``shr`` with PTX clamping (amounts at or above the width shift everything out)."""
        type_ = self._single_type(stmt, mods)
        width, kind = TYPES[type_]
        if len(stmt.operands) != 3 or width < 16 or (head == "shl" and kind != "b") or kind not in ("b", "u", "s"):
            raise self.error(stmt, f"unsupported {stmt.opcode!r}")
        ra = self.reader(stmt, stmt.operands[1], width)
        rb = self.reader(stmt, stmt.operands[2], 32)
        write = self.writer(stmt, stmt.operands[0], width)
        arithmetic = head == "shr" and kind == "s"

        def run(m, idx):
            amount = np.minimum(_ints(rb(m, idx), idx, 32, False), width).astype(np.int64)
            if arithmetic:
                out = _ints(ra(m, idx), idx, width, True) >> np.minimum(amount, width - 1)
            else:
                a = _ints(ra(m, idx), idx, width, False).astype(np.uint64)
                shifted = (a << np.minimum(amount, width - 1).astype(np.uint64) if head == "shl"
                           else a >> np.minimum(amount, width - 1).astype(np.uint64))
                out = np.where(amount >= width, np.uint64(0), shifted)
            write(m, idx, _wrap(out, width))
        return run

    def integer(self, stmt, head, mods):
        """Integer ``add sub mul mad div rem min max neg abs`` (wrapping, truncating division)."""
        mods = list(mods)
        mode = None
        if head in ("mul", "mad"):
            if not mods or mods[0] not in ("lo", "hi", "wide"):
                raise self.error(stmt, f"unsupported {stmt.opcode!r} (mul/mad need .lo, .hi or .wide)")
            mode = mods.pop(0)
        if len(mods) != 1 or TYPES[mods[0]][1] not in ("u", "s"):
            raise self.error(stmt, f"unsupported {stmt.opcode!r}")
        width, kind = TYPES[mods[0]]
        signed = kind == "s"
        arity = {"neg": 1, "abs": 1, "mad": 3}.get(head, 2)
        if len(stmt.operands) != arity + 1:
            raise self.error(stmt, f"{stmt.opcode} takes {arity + 1} operands")
        if mode == "hi" and width == 64:
            raise self.error(stmt, f"unsupported {stmt.opcode!r} (64-bit high products)")
        out_width = 2 * width if mode == "wide" else width
        if out_width > 64:
            raise self.error(stmt, f"unsupported {stmt.opcode!r}")
        readers = [self.reader(stmt, o, width) for o in stmt.operands[1:1 + min(arity, 2)]]
        addend = self.reader(stmt, stmt.operands[3], out_width) if head == "mad" else None
        write = self.writer(stmt, stmt.operands[0], out_width)

        def run(m, idx):
            vals = [_ints(r(m, idx), idx, width, signed) for r in readers]
            # modular operations in uint64 (two's complement): exact for every width up to 64
            u = [v.astype(np.uint64) for v in vals]
            if head == "add":
                out = u[0] + u[1]
            elif head == "sub":
                out = u[0] - u[1]
            elif head == "neg":
                out = np.uint64(0) - u[0]
            elif head in ("mul", "mad"):
                if mode == "hi":
                    # width <= 32: the full product fits int64 (signed) / uint64 (unsigned)
                    product = vals[0] * vals[1] if signed else u[0] * u[1]
                    out = (product >> width).astype(np.uint64)
                else:
                    out = u[0] * u[1]
                if head == "mad":
                    out = out + _ints(addend(m, idx), idx, out_width, signed).astype(np.uint64)
            elif head in ("div", "rem"):
                # a zero divisor's result is "an unspecified, machine-specific value" (PTX ISA
                # §9.7.1.8-9), not a trap: the model's representative, 0, as the model writes it
                a, b = vals
                zero = b == 0
                q = _trunc_div(a, np.where(zero, 1, b).astype(b.dtype))
                out = np.where(zero, 0, q if head == "div" else a - q * b)
            elif head == "min":
                out = np.minimum(vals[0], vals[1])
            elif head == "max":
                out = np.maximum(vals[0], vals[1])
            else:
                out = np.abs(vals[0]) if signed else vals[0]
            write(m, idx, _wrap(out, out_width))
        return run

    def function(self, stmt, form):
        """A form of kind ``function`` (cvt, setp, selp, ...) through the model: every operand read
        at its own type's width (8-bit ones from 16-bit registers), predicates as predicates, and
        ``setp ... p|q`` writing both destinations."""
        if len(stmt.operands) != len(form.operands):
            raise self.error(stmt, f"{form.name} takes {len(form.operands)} operands, got {len(stmt.operands)}")
        readers, writers = [], []
        for spec, op in zip(form.operands, stmt.operands):
            if spec.role == "dst":
                names = op.name.split("|") if isinstance(op, Reg) else [op]
                for name in names:
                    reg = Reg(name) if isinstance(name, str) else name
                    if spec.ptx_type == "pred":
                        writers.append(self.pred_writer(stmt, reg))
                    else:
                        writers.append(self.writer(stmt, reg, spec.container_bits, wider=spec.container_bits < 16,
                                                   signed=TYPES[spec.ptx_type][1] == "s"))
            elif spec.ptx_type == "pred":
                readers.append((self.pred_reader(stmt, op), None))
            else:
                float_width = spec.container_bits if spec.ptx_type in ("f32", "f64") else 0
                readers.append((self.reader(stmt, op, spec.container_bits, float_width=float_width,
                                            wider=spec.container_bits < 16), spec.container_bits))
        tininess = self.tininess
        destinations = len(writers)

        def run(m, idx):
            values = [np.asarray(r(m, idx), dtype=bool) if w is None else
                      _widen(r(m, idx), idx, w).astype(np.uint64) for r, w in readers]
            with np.errstate(all="ignore"):
                out = api.evaluate(form, *values, tininess=tininess, destinations=destinations)
            for write, value in zip(writers, out if destinations == 2 else (out,)):
                write(m, idx, np.broadcast_to(value, idx.shape))
        return run

    def model(self, stmt, form):
        """A spec-database form through the reference model (reference value for approximate forms)."""
        if len(stmt.operands) != len(form.operands):
            raise self.error(stmt, f"{form.name} takes {len(form.operands)} operands, got {len(stmt.operands)}")
        width = form.operands[0].container_bits
        float_width = width if form.type in ("f32", "f64") else 0
        readers, write = [], None
        for spec, op in zip(form.operands, stmt.operands):
            if spec.role == "dst":
                write = self.writer(stmt, op, width)
            else:
                if isinstance(op, Imm) and not float_width:
                    raise self.error(stmt, f"{form.name} takes no immediate operands (ptxas rejects them)")
                readers.append(self.reader(stmt, op, width, float_width=float_width))
        fn = api.evaluate if form.kind == "exact" else api.reference
        approximate = form.kind == "contract"
        tininess = self.tininess

        def run(m, idx):
            values = [r(m, idx) for r in readers]
            with np.errstate(all="ignore"):
                out = fn(form, *values, tininess=tininess)
            write(m, idx, np.broadcast_to(out, idx.shape))
            if approximate:
                m.approximate.add(form.name)
        return run


# ---------------------------------------------------------------------------------------------
# register access: ``idx`` is the sorted array of executing threads; when every thread executes
# (the usual case) whole arrays are used instead of gathers and scatters


def _get(array: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``array[idx]`` (the array itself when ``idx`` is every thread: callers never write to it)."""
    return array if idx.size == array.size else array[idx]


def _set(array: np.ndarray, idx: np.ndarray, values) -> None:
    """``array[idx] = values``."""
    if idx.size == array.size:
        array[...] = values
    else:
        array[idx] = values


# ---------------------------------------------------------------------------------------------
# integer helpers: values as int64 arrays (uint64 for unsigned 64-bit values)


def _widen(value, idx, width: int | None = None) -> np.ndarray:
    """An operand value (array or int) as an array over ``idx`` of the storage dtype."""
    if isinstance(value, np.ndarray):
        return value
    dtype = STORAGE[width] if width else np.dtype(np.uint64)
    return np.full(idx.size, value, dtype=dtype)


def _ints(value, idx, width: int, signed: bool) -> np.ndarray:
    """Bits of ``width`` read as signed or unsigned integers (int64 array; uint64 for unsigned 64)."""
    if not isinstance(value, np.ndarray):
        value = np.full(idx.size, int(value) & _mask(width), dtype=np.uint64)
    value = value.astype(np.uint64)
    if width == 64:
        return value.view(np.int64) if signed else value
    out = value.astype(np.int64)
    if signed:
        out = np.where(out >> (width - 1) & 1, out - (1 << width), out)
    return out


def _sign_extend(values: np.ndarray, width: int) -> np.ndarray:
    values = values & np.uint64(_mask(width))
    sign = (values >> np.uint64(width - 1)) & np.uint64(1)
    return np.where(sign == 1, values | np.uint64(_mask(64) ^ _mask(width)), values)


def _wrap(values, width: int) -> np.ndarray:
    """Integers (int64 or uint64 arrays) reduced modulo 2**width, as uint64."""
    arr = np.asarray(values)
    with np.errstate(all="ignore"):
        return arr.astype(np.uint64) & np.uint64(_mask(width))


def _trunc_div(a, b):
    """Integer division truncating toward zero (PTX div), on int64/uint64 arrays."""
    with np.errstate(all="ignore"):
        if a.dtype.kind == "u":
            return a // b
        # magnitudes as uint64: |INT64_MIN| does not fit int64 (np.abs leaves it negative)
        ua, ub = a.astype(np.uint64), b.astype(np.uint64)
        q = np.where(a < 0, ~ua + np.uint64(1), ua) // np.where(b < 0, ~ub + np.uint64(1), ub)
        return np.where((a < 0) != (b < 0), ~q + np.uint64(1), q).astype(np.int64)


def _float_compare(cmp: str, fmt: Format):
    """A comparison of float bit patterns of format ``fmt`` (ordered and unordered forms)."""

    def values(bits):
        return fmt.to_float64(np.asarray(bits).astype(fmt.uint))

    ordered = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
               "ge": np.greater_equal}
    if cmp in ordered:
        fn = ordered[cmp]

        def run(a, b):
            x, y = values(a), values(b)
            return fn(x, y) & ~np.isnan(x) & ~np.isnan(y)
        return run
    if cmp.endswith("u") and cmp[:-1] in ordered:
        fn = ordered[cmp[:-1]]

        def run_u(a, b):
            x, y = values(a), values(b)
            return fn(x, y) | np.isnan(x) | np.isnan(y)
        return run_u
    if cmp in ("num", "nan"):
        def run_n(a, b):
            unordered = np.isnan(values(a)) | np.isnan(values(b))
            return unordered if cmp == "nan" else ~unordered
        return run_n
    return None


# ---------------------------------------------------------------------------------------------


def _dims(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except TypeError:
        raise UsageError(f"{what} must be an int or 1-3 ints, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise UsageError(f"{what} must be 1-3 positive ints, got {value!r}")
    return dims + (1,) * (3 - len(dims))


def _scalar_bits(value, ptx_type: str, name: str) -> int:
    width, kind = TYPES.get(ptx_type, (None, None))
    if width is None or kind == "pred":
        raise UsageError(f"parameter {name} has unsupported type .{ptx_type}")
    if isinstance(value, np.generic):
        if value.dtype.itemsize * 8 != width:
            raise UsageError(f"parameter {name} (.{ptx_type}) needs a {width}-bit value, got {value.dtype}")
        return int(np.asarray(value).reshape(1).view(STORAGE[width])[0])
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and kind == "f":
        if ptx_type not in ("f32", "f64"):
            raise UsageError(f"parameter {name} (.{ptx_type}): pass a numpy scalar (e.g. np.float16) or its bits "
                             "as a numpy unsigned integer")
        return int(np.array([value], dtype=np.float32 if width == 32 else np.float64).view(STORAGE[width])[0])
    if isinstance(value, int):
        low = -(1 << (width - 1)) if kind in ("s", "b") else 0
        if not low <= value < (1 << width) or (kind == "s" and value >= 1 << (width - 1)):
            raise UsageError(f"parameter {name} (.{ptx_type}): {value} is out of range")
        return value & _mask(width)
    raise UsageError(f"parameter {name} (.{ptx_type}): cannot pass {type(value).__name__} {value!r} "
                     "(give a numpy scalar of the parameter's width, an int or a float)")


def execute(kernel_or_ptx_text, kernel_name: str | None = None, args=None, grid=1, block=1, *, db,
            tininess: str | None = None, source: str | None = None) -> ExecutionResult:
    """Run a PTX kernel on the CPU through the reference model.

    ``kernel_or_ptx_text`` is PTX text or an :class:`~tilecheck.emit.kernel.EmittedKernel`
    (whose ``name`` is then the default ``kernel_name``). ``args`` gives one value per ``.param``
    in order (a list) or by name (a dict; the ``param_`` prefix may be left out): numpy arrays for
    pointer parameters -- loaded from and written to in place -- and numpy scalars, ints or floats
    for the others. ``grid``/``block`` are ints or 1-3 tuples (x, y, z). ``tininess`` is passed to
    the model (default: the model's). Approximate forms return the model's reference value; the
    result's ``approximate`` names them. Unsupported PTX raises :class:`PtxError` (``line N: ...``)
    before anything runs; a bad access raises :class:`ExecutionError`.
    """
    text = kernel_or_ptx_text
    if hasattr(kernel_or_ptx_text, "ptx") and hasattr(kernel_or_ptx_text, "name"):
        text = kernel_or_ptx_text.ptx
        kernel_name = kernel_name or kernel_or_ptx_text.name
    if not isinstance(text, str):
        raise UsageError(f"execute needs PTX text or an EmittedKernel, got {type(text).__name__}")
    module = parse_ptx(text, source)
    kernel = module.kernel(kernel_name)
    under_test = getattr(kernel_or_ptx_text, "form", None)  # an EmittedKernel names the form it tests
    ops = _Compiler(kernel, db, source, tininess or TININESS_DEFAULT, under_test).compile()
    grid3, block3 = _dims(grid, "grid"), _dims(block, "block")
    if kernel.reqntid is not None:
        want = tuple(kernel.reqntid) + (1,) * (3 - len(kernel.reqntid))
        if want != block3:
            raise ExecutionError(f"kernel {kernel.name} requires block {want} (.reqntid), launched with {block3}")
    if kernel.maxntid is not None and block3[0] * block3[1] * block3[2] > int(np.prod(kernel.maxntid)):
        raise ExecutionError(f"kernel {kernel.name} allows at most {kernel.maxntid} threads per block (.maxntid)")
    machine = _Machine(kernel, grid3, block3)
    ordered = _order_args(kernel, args)
    for decl, value in zip(kernel.params, ordered):
        width = TYPES.get(decl.ptx_type, (None,))[0]
        if isinstance(value, np.ndarray):
            if width != 64:
                raise UsageError(f"parameter {decl.name} (.{decl.ptx_type}) is not a pointer; got an array")
            bits = machine.memory.add(value, decl.name)
        else:
            bits = _scalar_bits(value, decl.ptx_type, decl.name)
        machine.params[decl.name] = int(bits).to_bytes(width // 8, "little")
    executed = 0
    for op in ops:
        if op.label is not None:
            waiting = machine.waiting.pop(op.label, None)
            if waiting is not None:
                machine.active |= waiting
            continue
        mask = machine.active
        if op.guard is not None:
            g = machine.regs[op.guard[0]]
            mask = mask & (~g if op.guard[1] else g)
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            continue
        with np.errstate(all="ignore"):
            op.run(machine, idx)
        executed += 1
    return ExecutionResult(list(ordered), tuple(sorted(machine.approximate)), machine.threads, executed)


def _order_args(kernel: Kernel, args) -> list:
    names = [p.name for p in kernel.params]
    if args is None:
        args = []
    if isinstance(args, dict):
        out = []
        by_name = {}
        for key, value in args.items():
            name = key if key in names else f"param_{key}"
            if name not in names:
                raise UsageError(f"kernel {kernel.name} has no parameter {key!r} (parameters: {', '.join(names)})")
            by_name[name] = value
        missing = [n for n in names if n not in by_name]
        if missing:
            raise UsageError(f"kernel {kernel.name}: no value for {', '.join(missing)}")
        return [by_name[n] for n in names]
    out = list(args)
    if len(out) != len(names):
        raise UsageError(f"kernel {kernel.name} takes {len(names)} argument(s) ({', '.join(names)}), got {len(out)}")
    return out
