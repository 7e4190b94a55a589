"""Execute a tile program's IR directly with the reference model -- no PTX involved.

This is the independent side of the emitter's differential test: it walks
:func:`tilecheck.legality.checker.expand_program`'s instances (which thread executes which instance,
which register or memory slot each operand binds) and applies the model, while
:func:`tilecheck.sim.run_program` executes the *emitted PTX*. Equal bits on both sides mean the
emitter kept operand order, repeat order, register binding, addresses, scalars and guards.

State: each local buffer is a per-thread byte array (the thread's own storage, ``"m"`` axes,
row-major; :meth:`tilecheck.tile.expand.Slot.thread_storage` says where a slot lives and which
thread owns it); global tensors are the argument arrays' bytes. Calls run in program order;
within a call, repeat coordinates in row-major order, each over all threads at once. ``pred`` is
evaluated per thread with the rules of :mod:`tilecheck.tile.scalars` (integers wrap at their
dtype's width, ``//`` and ``%`` floor, shifts clamp at the width); a thread whose predicate is
false leaves its destinations unchanged. Registers start at zero.
"""

from __future__ import annotations

import math

import numpy as np

from tilecheck.legality.checker import expand_program
from tilecheck.model import api
from tilecheck.sim.errors import ExecutionError
from tilecheck.sim.memory import byte_view, gather_words, scatter_words
from tilecheck.sim.program import bind_arguments, scalar_bits, warn_approximate
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.tile.coords import group_axes
from tilecheck.tile.exprs import BinOp, Compare, Const, ScalarParam, ThreadIndex
from tilecheck.tile.ir import launch_of
from tilecheck.tile.scalars import BOOL_OPS, constant_bits, expr_dtype, literal_value, operand_dtype, wrap_int


def interpret_program(program, *arrays, target: str | None = None, db, tininess=None):
    """Run ``program``'s IR on ``arrays`` with the model (outputs written in place); return the
    tensor arguments in parameter order. Same conventions as :func:`tilecheck.sim.run_program`
    (approximate forms give the model's reference value and an ``ApproximateReferenceWarning``)."""
    expanded = expand_program(program, target=db.target(target).name, db=db)
    args = bind_arguments(program, arrays, db.formats)
    state = _State(program, args, tininess or TININESS_DEFAULT, db.formats)
    for ec in expanded:
        state.call(ec)
    warn_approximate(state.approximate)
    return tuple(a for p, a in zip(program.params, args) if p.is_tensor)


class _State:
    def __init__(self, program, args, tininess: str, formats):
        self.program = program
        self.formats = formats  # the spec database's: the dtypes' formats are looked up there
        self.tininess = tininess
        self.launch = launch_of(program)
        per_block = math.prod(self.launch.block)
        self.threads = per_block * math.prod(self.launch.grid)
        self.t = np.arange(self.threads, dtype=np.int64) % per_block
        self.globals = {}
        self.scalars = {}
        for p, value in zip(program.params, args):
            if p.is_tensor:
                self.globals[p.view.buffer] = byte_view(value, p.name)
            else:
                self.scalars[p.index] = scalar_bits(value)
        self.locals = {}
        for buffer in program.locals:
            private = math.prod(e for e, n in zip(buffer.shape, buffer.layout) if n == "m") * buffer.dtype.bytes
            self.locals[buffer] = np.zeros((self.threads, private), dtype=np.uint8)
        self.approximate: set[str] = set()

    # ---- one apply call ---------------------------------------------------------------------
    def call(self, ec) -> None:
        """Execute one expanded apply call over every thread."""
        call, form = ec.call, ec.form
        axes, problem = group_axes(call.scope, self.launch)
        if problem:
            raise ExecutionError(f"{call.location}: {problem}")
        instances = ec.instances
        groups = list(dict.fromkeys(inst.group for inst in instances))
        repeats = len(instances) // len(groups)
        coords = {"lane": self.t % 32, "warp_in_group": (self.t // 32) % 4, "warp_in_cta": self.t // 32}
        group_of = np.full(self.threads, -1, dtype=np.int64)
        for gi, group in enumerate(groups):
            hit = np.ones(self.threads, dtype=bool)
            for axis, g in zip(axes, group):
                hit &= coords[axis.name] == g
            group_of[hit & (group_of < 0)] = gi
        execute = group_of >= 0
        if call.pred is not None:
            execute &= self.predicate(call.pred)
        rows = np.flatnonzero(execute)
        if rows.size == 0:
            return
        g_rows = group_of[rows]
        for r in range(repeats):
            insts = [instances[gi * repeats + r] for gi in range(len(groups))]
            self.instance(call, form, axes, groups, insts, rows, g_rows)

    def instance(self, call, form, axes, groups, insts, rows, g_rows) -> None:
        """Execute one repeat coordinate of a call (one instance per group) for the executing threads."""
        key = form.semantics.key
        sources, destinations = [], []
        for k, spec in enumerate(form.operands):
            bindings = [inst.operands[k] for inst in insts]
            value = call.operands[k]
            if not hasattr(bindings[0], "slots"):
                sources.append(("scalar", self.scalar_operand(value, spec)))
                continue
            atoms = len(bindings[0].slots)
            buffer = bindings[0].slots[0].buffer
            width = bindings[0].slots[0].nbytes
            if buffer.is_global:
                offsets = np.array([[s.byte_offset for s in b.slots] for b in bindings], dtype=np.int64)
                place = ("global", buffer, offsets[g_rows], width, atoms)
            else:
                offsets = np.array([[self.private(s, axes, g, call) for s in b.slots]
                                    for b, g in zip(bindings, groups)], dtype=np.int64)
                place = ("local", buffer, offsets[g_rows], width, atoms)
            written = spec.role == "dst" or (spec.role == "addr" and key == "mem.st")
            (destinations if written else sources).append(place)
        values = [self.read(s, rows) for s in sources]
        if key in ("mem.ld", "mem.st"):
            self.write(destinations[0], rows, values[0])  # the words move unchanged
            return
        fn = api.evaluate if form.kind == "exact" else api.reference
        with np.errstate(all="ignore"):
            out = fn(form, *[v[0] if isinstance(v, list) else v for v in values], tininess=self.tininess)
        if form.kind == "contract":
            self.approximate.add(form.name)
        self.write(destinations[0], rows, [np.broadcast_to(out, rows.shape)])

    def private(self, slot, axes, group, call) -> int:
        """The slot's byte in its owner's storage, after checking the owner is the issuing thread."""
        owner, offset = slot.thread_storage()
        wanted = {axis.layout_axis: g for axis, g in zip(axes, group)}
        if any(wanted.get(name) != index for name, index in owner.items()):
            raise ExecutionError(f"{call.location}: {slot!r} is held by {owner}, not by the issuing thread "
                                 f"(group {group})")
        return offset

    def scalar_operand(self, value, spec) -> int:
        """The bits a scalar operand contributes (constant or scalar parameter)."""
        if isinstance(value, Const):
            return constant_bits(value, spec.ptx_type, spec.container_bits, self.formats)
        if isinstance(value, ScalarParam):
            return self.scalars[value.index]
        raise ExecutionError(f"unsupported scalar operand {value!r}")

    def read(self, source, rows):
        """A list of word arrays (one per atom) for a tensor operand, or the bits of a scalar."""
        if source[0] == "scalar":
            return source[1]
        kind, buffer, offsets, width, atoms = source
        if kind == "global":
            data = self.globals[buffer]
            return [gather_words(data, offsets[:, j], width) for j in range(atoms)]
        data = self.locals[buffer]
        flat = data.reshape(-1)
        base = rows * data.shape[1]
        return [gather_words(flat, base + offsets[:, j], width) for j in range(atoms)]

    def write(self, dest, rows, words) -> None:
        """Store word arrays (or one scalar's bits) into a destination place."""
        if isinstance(words, int):
            words = [np.full(rows.shape, words)] * dest[4]
        kind, buffer, offsets, width, atoms = dest
        if kind == "global":
            data = self.globals[buffer]
            for j in range(atoms):
                scatter_words(data, offsets[:, j], width, words[j])
            return
        data = self.locals[buffer]
        flat = data.reshape(-1)
        base = rows * data.shape[1]
        for j in range(atoms):
            scatter_words(flat, base + offsets[:, j], width, words[j])

    # ---- pred -----------------------------------------------------------------------------
    def predicate(self, expr) -> np.ndarray:
        """Per-thread truth of a ``pred`` expression."""
        value = self.value(expr, expr_dtype(expr))
        return value != 0 if value.dtype != bool else value

    def value(self, expr, dtype) -> np.ndarray:
        """``expr`` evaluated in ``dtype`` over all threads: bool array for bool, int64 (uint64 for
        unsigned 64-bit) holding the wrapped value for integers, float64 for floats."""
        n = self.threads
        if isinstance(expr, Const):
            v = literal_value(expr, dtype, self.formats)
            if dtype.kind == "float":
                return np.full(n, _float_value(v, self.formats[dtype.format]))
            if dtype.kind == "bool":
                return np.full(n, bool(v))
            return np.full(n, v, dtype=np.uint64 if dtype.kind == "uint" and dtype.bits == 64 else np.int64)
        if isinstance(expr, ScalarParam):
            bits = self.scalars[expr.index]
            d = expr.dtype
            if d.kind == "float":
                return np.full(n, _float_value(bits, self.formats[d.format]))
            if d.kind == "bool":
                return np.full(n, bool(bits))
            return np.full(n, wrap_int(bits, d), dtype=np.uint64 if d.kind == "uint" and d.bits == 64 else np.int64)
        if isinstance(expr, ThreadIndex):
            return {"thread_id": self.t, "lane_id": self.t % 32, "warp_id": self.t // 32}[expr.kind].copy()
        if isinstance(expr, Compare):
            cd = operand_dtype(expr.lhs, expr.rhs)
            a, b = self.value(expr.lhs, cd), self.value(expr.rhs, cd)
            if cd.kind == "bool":
                a, b = a.astype(np.int64), b.astype(np.int64)
            fn = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
                  "!=": np.not_equal}[expr.op]
            return fn(a, b)
        if isinstance(expr, BinOp):
            if expr.op in BOOL_OPS and expr_dtype(expr).kind == "bool":
                a, b = (self._as_bool(self.value(side, expr_dtype(side))) for side in (expr.lhs, expr.rhs))
                return {"&": np.logical_and, "|": np.logical_or, "^": np.logical_xor}[expr.op](a, b)
            d = expr_dtype(expr, dtype)
            return _integer_op(expr.op, self.value(expr.lhs, d), self.value(expr.rhs, d), d)
        raise ExecutionError(f"cannot evaluate {expr!r}")

    @staticmethod
    def _as_bool(values: np.ndarray) -> np.ndarray:
        return values if values.dtype == bool else values != 0


def _float_value(bits: int, fmt) -> float:
    return float(fmt.to_float64(np.array([bits], dtype=fmt.uint))[0])


def _wrap_array(values: np.ndarray, dtype) -> np.ndarray:
    """Integers wrapped to ``dtype`` (int64 result; uint64 for unsigned 64-bit)."""
    bits = dtype.bits
    with np.errstate(all="ignore"):
        if bits == 64:
            return values.astype(np.uint64 if dtype.kind == "uint" else np.int64)
        v = values.astype(np.int64) & ((1 << bits) - 1)
        if dtype.kind == "int":
            v = np.where(v >> (bits - 1) & 1, v - (1 << bits), v)
        return v


def _integer_op(op: str, a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """Integer arithmetic with the tile semantics (wrap at the width, floor division, clamped shifts)."""
    if dtype.kind not in ("int", "uint"):
        raise ExecutionError(f"'{op}' on {dtype} values")
    bits = dtype.bits
    with np.errstate(all="ignore"):
        if op in ("+", "-", "*"):
            ua, ub = a.astype(np.uint64), b.astype(np.uint64)
            out = ua + ub if op == "+" else ua - ub if op == "-" else ua * ub
            return _wrap_array(out.astype(np.int64) if bits < 64 else out, dtype)
        if op in ("&", "|", "^"):
            fn = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}[op]
            return _wrap_array(fn(a, b), dtype)
        if op in ("//", "%"):
            if (b == 0).any():
                raise ExecutionError("integer division by zero in pred")
            return _wrap_array(a // b if op == "//" else a % b, dtype)
        if op in ("<<", ">>"):
            amount = b.astype(np.uint64) & np.uint64((1 << bits) - 1) if bits < 64 else b.astype(np.uint64)
            big = amount >= np.uint64(bits)
            shift = np.minimum(amount, np.uint64(bits - 1))
            if op == "<<":
                out = np.where(big, np.uint64(0), a.astype(np.uint64) << shift)
                return _wrap_array(out.astype(np.int64) if bits < 64 else out, dtype)
            if dtype.kind == "int":
                return _wrap_array(a.astype(np.int64) >> shift.astype(np.int64), dtype)
            return _wrap_array(np.where(big, 0, a >> shift.astype(a.dtype)), dtype)
    raise ExecutionError(f"unknown operator {op!r}")
