"""The kernel plan: a checked program turned into per-thread instruction steps over register cells.

The PTX and CUDA renderers both read a :class:`KernelPlan`; nothing here prints text.

Source of truth: :func:`tilecheck.legality.checker.expand_program` gives every call's instances in
code-generation order. A GPU thread runs the same instruction text as every other thread, so the
plan checks that each repeat coordinate binds *the same* registers for every group coordinate
(ownership makes the group axes address the thread's own lane/warp; what is left must not depend
on them) and that memory addresses differ between groups only by a runtime part linear in the
group coordinates. Per call, the plan then holds one :class:`Step` per repeat coordinate,
row-major -- the seed's "one instruction per group and row-major repeat coordinate" as executed by
one thread -- plus the group-dependent address part of each memory operand.

Register storage: each local buffer's per-thread bytes are split into *cells* of one width (the
narrowest access the program makes to that buffer), one PTX register per cell that is accessed.
An access as wide as a cell uses the cell directly; a wider access (e.g. a float16 buffer used as
b32 words by one call and as b16 halves by another) packs consecutive cells, little-endian, with
``mov``. A cell accessed only as ``.f32`` (``.f64``) is declared ``.f32`` (``.f64``), any other
cell with the bit type of its width, which every PTX instruction of that width accepts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import numpy as np

from tilecheck.emit.common import EmitError, bit_class, register_class
from tilecheck.legality.checker import expand_program
from tilecheck.spec.forms import Form, OperandSpec
from tilecheck.tile.coords import GroupAxis, group_axes
from tilecheck.tile.exprs import Const, Expr, ScalarParam
from tilecheck.tile.ir import LaunchConfig, Param, launch_of
from tilecheck.tile.layout import thread_position
from tilecheck.tile.scalars import constant_bits
from tilecheck.tile.views import Buffer, View

DEFAULT_LAUNCH = LaunchConfig((1,), (1,))


@dataclass(frozen=True, eq=False)
class Cell:
    """One register of a thread: bytes ``[index*width, (index+1)*width)`` of ``buffer``'s private storage."""

    buffer: Buffer
    index: int
    width: int
    cls: str  # register class: f32 f64 b16 b32 b64

    def __repr__(self) -> str:
        return f"Cell({self.buffer.name}[{self.index}] {self.cls})"


@dataclass(frozen=True)
class RegAccess:
    """One register slot of an operand: ``width`` bytes held in one cell or packed from several."""

    width: int
    cells: tuple[Cell, ...]

    @property
    def direct(self) -> bool:
        """True when one cell holds exactly this slot."""
        return len(self.cells) == 1


@dataclass(frozen=True)
class RegisterOperand:
    """A tensor operand in registers: one access per atom slot, in increasing atom order."""

    spec: OperandSpec
    accesses: tuple[RegAccess, ...]
    written: bool


@dataclass(frozen=True)
class MemoryOperand:
    """The memory operand of ld/st: ``param``'s tensor at the call's group address plus ``offset`` bytes."""

    spec: OperandSpec
    param: Param
    offset: int
    written: bool


@dataclass(frozen=True)
class ScalarOperand:
    """A scalar read input: a constant (``bits`` in the operand's container) or a scalar parameter."""

    spec: OperandSpec
    expr: Expr
    bits: int | None

    @property
    def param(self) -> ScalarParam | None:
        """The scalar parameter, or None for a constant."""
        return self.expr if isinstance(self.expr, ScalarParam) else None


Operand = Union[RegisterOperand, MemoryOperand, ScalarOperand]


@dataclass(frozen=True)
class Step:
    """One instruction a thread executes: the repeat coordinate and one binding per operand."""

    repeat: tuple[int, ...]
    operands: tuple[Operand, ...]


@dataclass(frozen=True)
class GroupAddress:
    """The runtime part of a memory operand's address: ``sum(coordinate[axis] * stride)`` bytes.

    ``strides`` lists ``(group axis name, byte stride)`` for the axes whose stride is not zero.
    """

    operand: int
    param: Param
    strides: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class CallPlan:
    """One apply call: its form, the spelling to emit (the form's canonical name), scope, steps and
    memory group addresses."""

    call: object
    form: Form
    spelling: str
    scope: str
    axes: tuple[GroupAxis, ...]
    repeat_shape: tuple[int, ...]
    steps: tuple[Step, ...]
    addresses: tuple[GroupAddress, ...]
    pred: Expr | None
    preserve: bool

    @property
    def location_text(self) -> str:
        """``root_ratio.py:9`` (file name only: emitted text must not depend on where the checkout is)."""
        loc = self.call.location
        if loc is None:
            return f"call {self.call.index}"
        name = loc.path.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{name}:{loc.line}"


@dataclass(frozen=True)
class KernelPlan:
    """A whole program: target, ``.version``, launch, register cells and the planned calls."""

    program: object
    target: str
    version: tuple[int, int]
    launch: LaunchConfig
    cells: tuple[Cell, ...]
    calls: tuple[CallPlan, ...]
    forms: tuple[Form, ...]
    formats: dict = field(default_factory=dict, repr=False)  # the spec database's (constants' formats)

    @property
    def version_text(self) -> str:
        """``7.8``."""
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def tensor_params(self) -> tuple[Param, ...]:
        """The program's global tensor parameters, in parameter order."""
        return tuple(p for p in self.program.params if p.is_tensor)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RawAccess:
    buffer: Buffer
    offset: int  # private byte offset
    width: int
    register_type: str


def _private_slot(slot, call, group: tuple[int, ...], axes) -> tuple[int, int]:
    """(private byte offset, width) of a register slot, checking it is the group's own and contiguous."""
    buffer = slot.buffer
    owner, start = slot.thread_storage()
    wanted = {axis.layout_axis: g for axis, g in zip(axes, group)}
    if any(wanted.get(name) != index for name, index in owner.items()):
        raise EmitError(f"{_where(call)}: register {slot!r} is held by {owner}, not by the issuing thread "
                        f"(group coordinate {group}); the program should not have passed the checker")
    last_byte = slot.byte_offset + slot.nbytes - 1
    element_bytes = buffer.dtype.bytes
    index = tuple(int(i) for i in np.unravel_index(last_byte // element_bytes, buffer.shape))
    last_owner, last_private = thread_position(buffer.layout, buffer.shape, index)
    end = last_private * element_bytes + last_byte % element_bytes
    if last_owner != owner or end != start + slot.nbytes - 1:
        raise EmitError(f"{_where(call)}: register slot {slot!r} spans storage of different threads or "
                        "non-adjacent registers")
    return start, slot.nbytes


def _where(call) -> str:
    return f"{call.location}" if call.location is not None else f"apply call {call.index}"


def plan_program(program, target: str | None = None, *, db) -> KernelPlan:
    """Validate ``program`` for ``target`` and plan its kernel.

    Raises :class:`~tilecheck.errors.IllegalTileOpError` (with every diagnostic) for an illegal
    program and :class:`EmitError` for a legal one the emitter cannot express.
    """
    target_name = db.target(target).name
    expanded = expand_program(program, target=target_name, db=db)
    launch = launch_of(program)
    params_by_buffer = {p.view.buffer: p for p in program.params if p.is_tensor}
    raw_calls = []
    accesses: list[_RawAccess] = []
    for ec in expanded:
        raw_calls.append(_plan_call(ec, launch, params_by_buffer, accesses))
    cells, cell_of = _allocate_cells(program, accesses)
    calls = tuple(_bind_cells(raw, cell_of, db.formats) for raw in raw_calls)
    forms = tuple(dict.fromkeys(c.form for c in calls))
    version = max([db.min_version(f, target_name) for f in forms], default=db.target(target_name).min_ptx)
    return KernelPlan(program, target_name, version, launch, cells, calls, forms, db.formats)


def _plan_call(ec, launch, params_by_buffer, accesses: list[_RawAccess]):
    call, form = ec.call, ec.form
    axes, problem = group_axes(call.scope, launch)
    if problem:
        raise EmitError(f"{_where(call)}: {problem}")
    n_group = len(axes)
    instances = ec.instances
    groups = list(dict.fromkeys(inst.group for inst in instances))
    per_group = len(instances) // len(groups)
    if per_group * len(groups) != len(instances):
        raise EmitError(f"{_where(call)}: the expansion does not give every group the same repeats")
    tensor = next(op for op in call.operands if isinstance(op, View))
    repeat_shape = tuple(tensor.shape[n_group:-1])
    # byte strides of every memory operand's group axes (the runtime address part)
    group_strides = {}
    for i, op in enumerate(call.operands):
        if isinstance(op, View) and op.buffer.is_global:
            group_strides[i] = tuple(op.strides[k] * op.dtype.bytes for k in range(n_group))
    steps = []
    for r in range(per_group):
        reference = None
        for gi, group in enumerate(groups):
            inst = instances[gi * per_group + r]
            if inst.group != group:
                raise EmitError(f"{_where(call)}: the expansion is not ordered group-major")
            signature = _signature(call, form, inst, axes, group_strides)
            if reference is None:
                reference = signature
                repeat = inst.repeat
            elif signature != reference:
                raise EmitError(
                    f"{_where(call)}: repeat coordinate {inst.repeat} binds different registers (or address "
                    f"offsets) for group {groups[0]} and group {group}; PTX registers are static names, so a "
                    "view may select registers per repeat but not per lane/warp")
        operands = []
        for spec, entry in zip(form.operands, reference):
            kind = entry[0]
            if kind == "reg":
                raw = tuple(_RawAccess(buf, off, width, spec.register_type) for buf, off, width in entry[1])
                accesses.extend(raw)
                operands.append(("reg", spec, raw, spec.role == "dst"))
            elif kind == "mem":
                _, buffer, offset = entry
                param = params_by_buffer.get(buffer)
                if param is None:
                    raise EmitError(f"{_where(call)}: memory operand {buffer.name!r} is not a tensor parameter")
                written = not any(s.role == "dst" for s in form.operands)
                operands.append(("mem", spec, param, offset, written))
            else:
                operands.append(("scalar", spec, entry[1]))
        steps.append((repeat, operands))
    addresses = []
    for i, strides in group_strides.items():
        param = params_by_buffer[call.operands[i].buffer]
        named = tuple((axis.name, s) for axis, s in zip(axes, strides) if s != 0)
        addresses.append(GroupAddress(i, param, named))
    pred = call.pred
    return (ec, axes, repeat_shape, steps, tuple(addresses), pred, call.preserve_dst is True)


def _signature(call, form, inst, axes, group_strides) -> tuple:
    """What one instance binds, with the group-dependent address part removed (equal across groups)."""
    out = []
    for i, (spec, binding) in enumerate(zip(form.operands, inst.operands)):
        if hasattr(binding, "slots"):
            slots = binding.slots
            if slots[0].buffer.is_global:
                base = slots[0].byte_offset
                for j, s in enumerate(slots):
                    if s.byte_offset != base + j * s.nbytes:
                        raise EmitError(f"{_where(call)}: the words of one memory access are not consecutive")
                group_part = sum(g * s for g, s in zip(inst.group, group_strides[i]))
                out.append(("mem", slots[0].buffer, base - group_part))
            else:
                out.append(("reg", tuple((s.buffer,) + _private_slot(s, call, inst.group, axes) for s in slots)))
        else:
            out.append(("scalar", binding.value))
    return tuple(out)


def _allocate_cells(program, accesses: list[_RawAccess]):
    """Choose each buffer's cell width and each cell's register class; return (cells, lookup)."""
    unit: dict[Buffer, int] = {}
    for a in accesses:
        unit[a.buffer] = min(unit.get(a.buffer, a.width), a.width)
    for a in accesses:
        if a.offset % unit[a.buffer]:
            raise EmitError(f"register slot at byte {a.offset} of {a.buffer.name!r} is not aligned to its "
                            f"{unit[a.buffer]}-byte registers")
    direct_types: dict[tuple[Buffer, int], set[str]] = {}
    used: set[tuple[Buffer, int]] = set()
    for a in accesses:
        u = unit[a.buffer]
        first = a.offset // u
        for k in range(first, first + a.width // u):
            used.add((a.buffer, k))
        if a.width == u:
            direct_types.setdefault((a.buffer, first), set()).add(register_class(a.register_type))
    order = {b: i for i, b in enumerate(program.locals)}
    cells, lookup = [], {}
    for buffer, index in sorted(used, key=lambda key: (order.get(key[0], len(order)), key[1])):
        width = unit[buffer]
        types = direct_types.get((buffer, index), set())
        cls = next(iter(types)) if len(types) == 1 and next(iter(types)) in ("f32", "f64") else bit_class(width)
        cell = Cell(buffer, index, width, cls)
        cells.append(cell)
        lookup[(buffer, index)] = cell
    return tuple(cells), (lookup, unit)


def _bind_cells(raw, cell_of, formats) -> CallPlan:
    ec, axes, repeat_shape, raw_steps, addresses, pred, preserve = raw
    lookup, unit = cell_of
    steps = []
    for repeat, operands in raw_steps:
        bound = []
        for entry in operands:
            if entry[0] == "reg":
                _, spec, raw_accesses, written = entry
                acc = []
                for a in raw_accesses:
                    u = unit[a.buffer]
                    acc.append(RegAccess(a.width, tuple(lookup[(a.buffer, k)]
                                                         for k in range(a.offset // u, (a.offset + a.width) // u))))
                bound.append(RegisterOperand(spec, tuple(acc), written))
            elif entry[0] == "mem":
                _, spec, param, offset, written = entry
                bound.append(MemoryOperand(spec, param, offset, written))
            else:
                _, spec, expr = entry
                bits = None
                if isinstance(expr, Const):
                    bits = constant_bits(expr, spec.ptx_type, spec.container_bits, formats)
                bound.append(ScalarOperand(spec, expr, bits))
        steps.append(Step(tuple(repeat), tuple(bound)))
    call = ec.call
    # the selected form's canonical spelling (qualifier order is free in the program)
    return CallPlan(call, ec.form, ec.form.name, call.scope, tuple(axes), tuple(repeat_shape), tuple(steps),
                    addresses, pred, preserve)
