"""Execute compiler-written PTX as a compiled plan of vectorised steps over all lanes, forking lanes
wherever the ISA leaves a choice.

:func:`compile_function` turns a parsed :class:`~tilecheck.sim.frontend.Function` into a
:class:`Plan` once: every instruction becomes one step, a closure over numpy arrays that holds
every decision (types, widths, the model form, operand readers) taken at compile time. Running a
plan costs one Python call per step, never one per lane.

State (:class:`Lanes`): each register is a numpy array with one element per lane; a lane is one
input case under one combination of choices, ``origin`` says which input case. Branches are lane
masks: each lane has a program counter, the lowest pending one runs next (lanes that took a
forward branch wait for the others, which is where structured code reconverges); while all lanes
agree no mask is built. Backward branches (loops) run under a step limit per loop label.

Choices (``approx="all"``): an approximate instruction (rcp.approx, div.approx, sqrt.approx,
rsqrt.approx, ...) forks every lane into one lane per result its contract allows
(:func:`tilecheck.sim.choices.allowed_choices`; ``np.repeat`` of all live registers). Lanes whose
contract is unbounded keep the representative value and are marked ``unknown``. An unqualified
``add``/``sub`` of f32/f64 fed by an unqualified ``mul`` of the same block forks into the separate
and the fused (``fma.rn``) result, which ptxas may choose. ``approx="reference"`` takes the model's
representative value and never forks.

Arithmetic goes through the model: spec forms (``tilecheck.model.api.evaluate`` for exact forms)
for every floating-point operation of the spec database; conversions through the model's
``convert``; comparisons, selection, moves, integer and bit operations are numpy on bit patterns
here. NaN results of abs/neg/cvt of f32/f16/bf16 (an "unspecified NaN" in the ISA) are the
format's canonical NaN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable

import numpy as np

from tilecheck.errors import Location, TilecheckError
from tilecheck.spec.registry import ROUNDINGS, TININESS_DEFAULT
from tilecheck.model import api, ops
from tilecheck.sim import fused, shared, wide_int
from tilecheck.sim.conversions import native_convert
from tilecheck.sim.choices import Choices, ScaledChoices, ScaledPairChoices, allowed_choices
from tilecheck.sim.errors import ExecutionError, OutsideBuffersError, StepLimitError, UnsupportedPtxError
from tilecheck.sim.frontend import Function, Instr, Label, variable_layout
from tilecheck.sim.parser import Addr, Imm, Reg, Special, Symbol, Vec
from tilecheck.spec.types import PTX_TYPES

TYPES: dict[str, tuple[int, str]] = {t.name: (t.bits, t.kind) for t in PTX_TYPES.values()}
"""PTX type -> (width, kind): the kinds of :data:`tilecheck.spec.types.KINDS`."""

_UINT = {1: np.dtype(bool), 8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}
_SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
END = 1 << 30
DEFAULT_STEP_LIMIT = 100_000
"""Backward branches taken per loop label before the run stops with a StepLimitError."""

LANE_BYTES = 6 << 30
"""The most memory a run's forked lanes may take (registers, local memory): a fork that would need
more stops the run with a located ExecutionError instead of exhausting the machine's memory."""


class _TooManyLanes(Exception):
    """A fork that would exceed :data:`LANE_BYTES` (located by :meth:`Plan.run`)."""


def _room(L: "Lanes", c: "RunContext", lanes: int) -> None:
    """Refuse a fork into ``lanes`` lanes whose registers and local memory would pass :data:`LANE_BYTES`."""
    per_lane = 8 * (len(c.live) + 1)
    if L.local is not None:
        per_lane += L.local.shape[1] * (5 if L.local_writer is not None else 1)
    if lanes * per_lane > LANE_BYTES:
        raise _TooManyLanes(f"the allowed results of the approximate instructions fork the run into {lanes:,} lanes "
                            f"(about {lanes * per_lane / 2**30:.0f} GiB): refused rather than run out of memory (the "
                            "choices of several approximate instructions run together multiply)")


PARAM = "param "
"""Prefix of a parameter's name in the liveness sets (register names never contain a space)."""

REGION_SHIFT = 40
REGION_BASE = 1 << 44
LOCAL_BASE = 1 << 62
"""Address of a thread's first local byte (its ``.local`` arrays, ``-G`` builds' stack frames, one
after another): far above every global buffer, so a generic address says which memory it names."""
CONSTANT_BASE = 3 << 60
"""Where the module's initialized ``.global`` data lies (:func:`constant_layout`): above every
buffer region and the generic shared window (``shared.SHARED_BASE``), below local memory; a kernel
reads it and never writes it."""


@dataclass
class Lanes:
    """Per-lane state of a run: registers, origin case, program counters, flags, records."""

    regs: dict
    origin: np.ndarray
    pcs: np.ndarray | None = None
    unknown: np.ndarray | None = None
    params: dict = field(default_factory=dict)       # param name -> per-lane uint64 bits (.func ABI)
    stores: list = field(default_factory=list)       # per-lane store records (region, width, offset, value, done);
    #                                                  a value is an unsigned array of the store's width or wider
    trace: dict = field(default_factory=dict)        # step index -> (returned, reference, low, high) per lane
    loads: list = field(default_factory=list)        # (region, width, offsets, origins, step) seen (ABI discovery)
    # ld.shared seen (ABI discovery): (step, origins, offsets, then per lane and byte read: the writing
    # thread, its store's step and the byte of that store's vector)
    shared_loads: list = field(default_factory=list)
    store_slots: dict = field(default_factory=dict)  # (store step, 64-bit part) -> its record's index in ``stores``
    dtypes: dict = field(default_factory=dict)       # register name -> dtype (registers may be dropped)
    local: np.ndarray | None = None                  # lanes x bytes of the .local arrays (None: none declared)
    # lanes x bytes: the step that last stored each local byte (-1: none), kept where the run tracks
    # local memory's flow (RunContext.record_loads or .local_flows); (ld.local step, writer step) seen
    local_writer: np.ndarray | None = None
    local_flows: set = field(default_factory=set)
    shared: "shared.SharedMemory | None" = None      # per-CTA .shared memory (not per lane: forks leave it)
    # a fork whose register copies wait for the next step (RunContext.defer_fork): (rows, {name:
    # array}) means lane i's register `name` is array[rows[i]], or array[i % rows] where rows is an
    # int (a tiled fork); those names are absent from ``regs`` meanwhile
    pending: tuple | None = None

    @property
    def size(self) -> int:
        """Number of lanes."""
        return int(self.origin.shape[0])

    def reg(self, name: str) -> np.ndarray:
        """Register ``name`` of every lane; zeros for a register dropped where it was dead (forking
        keeps only live registers, so its lanes' values are don't-cares)."""
        arr = self.regs.get(name)
        return np.zeros(self.size, dtype=self.dtypes.get(name, np.uint64)) if arr is None else arr

    def _each(self, fn, keep: set | None, rows: np.ndarray | None = None) -> None:
        """Replace every per-lane array ``v`` by ``fn(v)``, dropping the registers and parameters not in
        ``keep`` (dead ones; None keeps everything). With ``rows`` (``fn(v)`` is ``v[rows]``) the
        registers are not copied now but left pending (:meth:`materialize`)."""
        def lane(x):
            return fn(x) if isinstance(x, np.ndarray) else x
        assert self.pending is None, "a fork of lanes whose previous fork is still pending"
        kept = {k: v for k, v in self.regs.items() if keep is None or k in keep}
        if rows is None:
            self.regs = {k: fn(v) for k, v in kept.items()}
        else:
            self.regs, self.pending = {}, (rows, kept)
        self.origin = fn(self.origin)
        self.pcs = lane(self.pcs)
        self.unknown = lane(self.unknown)
        self.params = {k: fn(v) for k, v in self.params.items() if keep is None or PARAM + k in keep}
        self.stores = [tuple(lane(x) for x in st) for st in self.stores]
        self.trace = {k: tuple(fn(x) for x in v) for k, v in self.trace.items()}
        self.local = lane(self.local)
        self.local_writer = lane(self.local_writer)

    def take_tiled(self, times: int, keep: set, defer: bool = False) -> None:
        """Every per-lane array repeated ``times`` times end to end (lane i + k*n is a copy of i);
        ``defer``: the registers' copies are left pending (:meth:`materialize`)."""
        self._each(lambda v: np.concatenate([v] * times), keep, self.size if defer else None)

    def append_copies(self, rows: np.ndarray, keep: set, defer: bool = False) -> None:
        """Append a copy of lanes ``rows`` (in that order) after the existing lanes, dropping dead
        registers and parameters (not in ``keep``): forking in place of :meth:`take` where the
        lanes' order does not matter, at the cost of copying only the new lanes. ``defer``: the
        registers' copies are left pending (:meth:`materialize`)."""
        n = self.size
        every = np.concatenate([np.arange(n), rows]) if defer else None

        def appended(v):
            out = np.empty((n + rows.shape[0],) + v.shape[1:], dtype=v.dtype)
            out[:n] = v
            np.take(v, rows, axis=0, out=out[n:])
            return out

        self._each(appended, keep, every)

    def materialize(self, names=None) -> None:
        """Copy the pending registers (all, or those in ``names``; the others are dropped) into
        ``regs``: a fused region reads them through the rows instead (``fused.Region.run``)."""
        if self.pending is None:
            return
        rows, regs = self.pending
        self.pending = None
        for k, v in regs.items():
            if names is None or k in names:
                self.regs[k] = np.tile(v, self.size // rows) if isinstance(rows, int) else v[rows]

    def take(self, rep: np.ndarray, keep: set | None) -> None:
        """Replace every per-lane array by ``array[rep]`` (lane forking); dead registers and
        parameters are dropped unless ``keep`` is None (tracing keeps everything)."""
        self._each(lambda v: v[rep], keep)


@dataclass
class Memory:
    """Global memory for the ``.entry`` ABI: read-only regions (uint8 arrays) at ``pointer``
    addresses; every region starts at ``REGION_BASE + k << REGION_SHIFT``."""

    regions: list  # (name, uint8 array)

    def pointer(self, k: int) -> int:
        """The address of region ``k``."""
        return REGION_BASE + (k << REGION_SHIFT)


@dataclass
class Step:
    """One compiled instruction."""

    kind: str  # op, bra, ret
    run: Callable | None
    instr: Instr
    guard: tuple[str, bool] | None = None
    target: int = 0
    target_label: str = ""
    reads: frozenset = frozenset()
    writes: frozenset = frozenset()
    approximate: str | None = None  # the form name, for reports
    # where the ISA leaves some results open (integer div by zero): operand values -> why, or None
    unspecified: Callable | None = None
    # the one register it writes is a function of the registers it reads, nothing else (no memory,
    # parameters, special registers or run state): a choice collapse may run it on scratch lanes
    pure: bool = False


class Plan:
    """A compiled function: steps, labels, register types; :meth:`run` executes it on lanes."""

    def __init__(self, function: Function, steps: list[Step], path: str):
        self.function = function
        self.steps = steps
        self.path = path
        self.regions: dict = {}  # first step -> fused.Region (set by compile_function)
        self.db = None           # the spec database it was compiled with (set by compile_function)
        self.local_bytes = frame_layout(function)[1]
        self.shared_vars, self.shared_bytes = shared.layout(function)
        # dynamic shared memory (.extern .shared): the launch's bytes after the sized variables;
        # until a run says what the kernel touches, the most an sm_90 CTA may have
        self.dynamic_shared = shared.DYNAMIC_SHARED_MOST if any(getattr(v, "dynamic", False)
                                                              for v in function.shared) else 0
        self.backward = any(s.kind == "bra" and s.target <= i for i, s in enumerate(steps))
        # parameters are live like registers: read by ld.param; the return parameters are read by
        # the caller after the run
        params = {PARAM + key for p in function.params + function.returns + function.locals for key in param_words(p)}
        every = frozenset(function.registers) | params
        end = frozenset(PARAM + key for p in function.returns for key in param_words(p))
        n = len(steps)
        # read_after[k]: everything a step at or after k reads. It is what lanes waiting at any pc
        # beyond the current step may still need (the executor always runs the lowest pc first).
        self.read_after: list = [end] * (n + 1)
        # live_in[k]: live on entry to step k along the control flow (a write by an unguarded step
        # kills); exact for a lane that runs on from k, and used when every lane is at one pc.
        self.live_in: list = [end] * (n + 1)
        for k in range(n - 1, -1, -1):
            st = steps[k]
            guard = {st.guard[0]} if st.guard else set()
            self.read_after[k] = self.read_after[k + 1] | st.reads | guard
            if st.kind == "ret":
                out = end
            elif st.kind == "bra":
                out = self.live_in[st.target] | (self.live_in[k + 1] if st.guard else frozenset())
            else:
                out = self.live_in[k + 1]
            kill = st.writes if st.guard is None else frozenset()
            self.live_in[k] = (out - kill) | st.reads | guard
        if self.backward:
            self.read_after = self.live_in = [every] * (n + 1)
        # approximate step -> the step its choices collapse through (_collapse_target)
        self.collapse = {k: use for k in range(n) if (use := _collapse_target(steps, k, self.live_in)) is not None}

    def new_lanes(self, n: int, origin: np.ndarray | None = None) -> Lanes:
        """Fresh lanes (zeroed registers; ``origin`` defaults to 0..n-1)."""
        dtypes = {name: _UINT[TYPES[t][0]] if t in TYPES else np.dtype(np.uint64)
                  for name, t in self.function.registers.items()}
        # one zero array per dtype, shared: registers are never written in place
        zeros = {dt: np.zeros(n, dtype=dt) for dt in set(dtypes.values())}
        regs = {name: zeros[dt] for name, dt in dtypes.items()}
        origin = np.arange(n, dtype=np.int64) if origin is None else origin.astype(np.int64)
        # local memory starts as zeros; the ISA leaves unwritten local memory undefined, and code
        # nvcc writes stores a frame slot before it loads it
        local = np.zeros((n, self.local_bytes), dtype=np.uint8) if self.local_bytes else None
        size = self.shared_bytes + self.dynamic_shared
        smem = shared.SharedMemory(size, self.shared_vars) if size else None
        return Lanes(regs, origin, None, np.zeros(n, dtype=bool), dtypes=dtypes, local=local, shared=smem)

    def run(self, lanes: Lanes, ctx: "RunContext") -> Lanes:
        """Execute the plan on ``lanes`` (modified and returned; forking replaces its arrays)."""
        steps, n = self.steps, len(self.steps)
        pc = 0
        loops: dict[int, int] = {}
        while True:
            if lanes.pcs is None:
                if pc >= n:
                    break
                cur, sel = pc, None
            else:
                if lanes.size == 0:
                    break
                cur = int(lanes.pcs.min())
                if cur >= n:
                    break
                here = lanes.pcs == cur
                if here.all():
                    lanes.pcs, sel = None, None
                else:
                    sel = np.flatnonzero(here)
            if lanes.pcs is None and cur in self.regions and ctx.fuse and not ctx.trace:
                region = self.regions[cur]
                if region.usable(ctx, lanes.size):
                    # every lane stands at the region's first step: one compiled loop runs it
                    region.run(lanes, self.live_in[region.end])
                    pc = region.end
                    continue
            lanes.materialize()
            step = steps[cur]
            guard = None
            if step.guard is not None:
                g = lanes.regs[step.guard[0]]
                guard = g if sel is None else g[sel]
                if step.guard[1]:
                    guard = ~guard
            if step.kind in ("bra", "ret"):
                target = step.target if step.kind == "bra" else END
                if step.kind == "bra" and target <= cur:
                    loops[cur] = loops.get(cur, 0) + 1
                    if loops[cur] > ctx.step_limit:
                        loc = Location(self.path, step.instr.line, step.instr.col)
                        raise StepLimitError(f"the loop at label {step.target_label} ran more than "
                                             f"{ctx.step_limit} iterations (step limit)", loc)
                if guard is None or (sel is None and lanes.pcs is None and bool(guard.all())):
                    if lanes.pcs is None:
                        pc = target
                    else:
                        lanes.pcs[sel] = target
                elif lanes.pcs is None and not guard.any():
                    pc = cur + 1
                else:
                    nxt = np.where(guard, target, cur + 1).astype(np.int32)
                    if lanes.pcs is None:
                        lanes.pcs = nxt
                    else:
                        lanes.pcs[sel] = nxt
                continue
            # advance first: a forking step repeats the counters along with everything else
            if lanes.pcs is None:
                pc = cur + 1
            else:
                lanes.pcs[sel] = cur + 1
            sub = sel
            if guard is not None:
                if sel is None:
                    sub = None if guard.all() else np.flatnonzero(guard)
                else:
                    sub = sel[guard]
                if sub is not None and sub.size == 0:
                    continue
            ctx.live = self.live_in[cur + 1] if lanes.pcs is None else self.read_after[cur + 1]
            ctx.step = cur
            ctx.collapse = None if ctx.trace else self.collapse.get(cur)
            # a fork right before a fused region leaves its register copies to the region's loop
            ctx.defer_fork = (lanes.pcs is None and cur + 1 in self.regions and ctx.fuse and not ctx.trace
                              and self.regions[cur + 1].usable(ctx, lanes.size))
            try:
                step.run(lanes, sub, ctx)
            except _TooManyLanes as exc:
                raise ExecutionError(f"{Location(self.path, step.instr.line, step.instr.col)}: {exc}") from None
        lanes.materialize()
        return lanes


@dataclass
class RunContext:
    """Settings of one run: choice enumeration, readings, memory, launch, tracing."""

    approx: str = "all"            # all | provisional (bounds no document states used too) | reference
    ulp_reading: str = "either"
    tininess: str = TININESS_DEFAULT
    memory: Memory | None = None
    block: int = 256
    thread_base: int = 0
    threads: int = 0               # threads launched (%nctaid = ceil(threads / block)); 0: not known
    trace: bool = False
    record_loads: bool = False     # keep every load's (region, width, offsets, origins, step): ABI discovery only
    # st.shared steps whose elements are recorded as global stores instead, each alone: step ->
    # {the element's first byte in the stored vector: (its bytes, the address per thread (indexed
    # by lane origin) where it ends up)} (verify/layout.py's sinks)
    store_redirect: dict = field(default_factory=dict)
    single_cta: bool = False       # every thread is in CTA 0 (%tid = index mod block): launches of one CTA each
    step_limit: int = DEFAULT_STEP_LIMIT
    contraction: bool = True
    fuse: bool = field(default_factory=fused.enabled)  # fused regions (sim/fused.py); off: every step as numpy
    approx_used: set = field(default_factory=set)
    live: frozenset = frozenset()
    step: int = 0
    defer_fork: bool = False       # a fork may leave its register copies pending (Lanes.pending)
    collapse: "Step | None" = None  # the step an approximate step's choices collapse through (Plan.collapse)
    # ld.local step -> the st.local steps (-1: no store) whose bytes it may read, as a discovery run
    # saw them (verify/layout.py follows values through local memory by it); a run that reads others
    # stops with an ExecutionError. None: not checked
    local_flows: dict | None = None

    @property
    def tracks_local(self) -> bool:
        """True when the run records or checks which store wrote each local byte a load reads."""
        return self.record_loads or self.local_flows is not None


# ---------------------------------------------------------------------------------------------
# compilation


def _fmt_of(type_: str) -> str:
    return PTX_TYPES[type_].element


class _Compiler:
    def _format(self, type_: str):
        """The element format of a PTX type, from the compiler's own spec database."""
        return self.db.formats[_fmt_of(type_)]

    def __init__(self, fn: Function, db, path: str, module_params: dict | None = None):
        self.fn = fn
        self.db = db
        self.path = path
        self.reg_types = dict(fn.registers)
        self.params = {p.name: p for p in fn.params + fn.returns + fn.locals}
        labels = {}
        pos = 0
        for item in fn.body:
            if isinstance(item, Label):
                labels[item.name] = pos
            else:
                pos += 1
        self.labels = labels
        self.instrs = [i for i in fn.body if isinstance(i, Instr)]
        self.frames, self.local_bytes = frame_layout(fn)
        self.shared_vars = shared.layout(fn)[0]
        self.constants, self.constant_bytes = constant_layout(fn)

    def error(self, ins: Instr, message: str, unsupported: bool = True) -> UnsupportedPtxError:
        return UnsupportedPtxError(message, Location(self.path, ins.line, ins.col), unsupported=unsupported)

    def unsupported(self, ins: Instr, what: str = "instruction") -> UnsupportedPtxError:
        why = _CROSS_THREAD.get(ins.opcode.split(".", 1)[0], "")
        return self.error(ins, f"unsupported {what} '{ins.opcode}'" + (f" ({why})" if why else ""))

    # -- operand access -----------------------------------------------------------------------

    def reg(self, ins: Instr, op) -> str:
        if not isinstance(op, Reg):
            raise self.error(ins, f"expected a register, got {op!r}", unsupported=False)  # repr: the PTX text, quoted
        if op.name not in self.reg_types:
            if op.name.split(".")[0] in _MACHINE_SPECIALS or op.name.startswith(("%lanemask_", "%pm", "%envreg")):
                raise self.error(ins, f"special register {op.name} is not modelled: its value is the machine's (a "
                                      "clock, a counter or a hardware id), not a function of the kernel's inputs")
            raise self.error(ins, f"undeclared register {op!r}", unsupported=False)
        return op.name

    def reader(self, ins: Instr, op, width: int, ftype: str | None = None):
        """A function (lanes, sub, ctx) -> uint array of ``width`` bits (bool for width 1)."""
        dt = _UINT[width]
        if isinstance(op, Reg):
            name = self.reg(ins, op)
            rw = TYPES.get(self.reg_types[name], (64, "b"))[0]
            if width == 1:
                if rw != 1:
                    raise self.error(ins, f"{name} is not a predicate", unsupported=False)
                return (lambda L, s, c: L.regs[name] if s is None else L.regs[name][s]), {name}
            if rw == 1:
                raise self.error(ins, f"predicate {name} used as a value", unsupported=False)
            if rw == width:
                return (lambda L, s, c: L.regs[name] if s is None else L.regs[name][s]), {name}
            return (lambda L, s, c: (L.regs[name] if s is None else L.regs[name][s]).astype(dt)), {name}
        if isinstance(op, Imm):
            bits = self.immediate(ins, op, width, ftype)
            value = dt.type(bits)
            return (lambda L, s, c: np.full(L.size if s is None else s.size, value, dtype=dt)), set()
        if isinstance(op, Special):
            name = op.name
            return (lambda L, s, c: _special(name, L, s, c).astype(dt)), set()
        if isinstance(op, Symbol) and op.name in self.shared_vars:
            # a .shared variable's shared state-space address (mov.u32/.u64, [sym+off])
            address = dt.type(shared.SHARED_START + self.shared_vars[op.name])
            return (lambda L, s, c: np.full(L.size if s is None else s.size, address, dtype=dt)), set()
        if isinstance(op, Symbol) and op.name in self.frames and width in (32, 64):
            # a .local array's address: 64 bits, as generic addresses are here; 32 bits, its offset in
            # the local window (LLVM's short local pointers), which only .local accesses take
            address = dt.type(LOCAL_BASE + self.frames[op.name] if width == 64 else self.frames[op.name])
            return (lambda L, s, c: np.full(L.size if s is None else s.size, address, dtype=dt)), set()
        if isinstance(op, Symbol) and op.name in self.constants:
            if width != 64 or self.constants[op.name][1] != "global":
                raise self.error(ins, f"module data {op.name!r}: only a .global variable's 64-bit address is "
                                      "modeled (ld.const and 32-bit addresses are not)")
            address = np.uint64(CONSTANT_BASE + self.constants[op.name][0])  # initialized module data
            return (lambda L, s, c: np.full(L.size if s is None else s.size, address, dtype=dt)), set()
        raise self.error(ins, f"unsupported operand {op!r}")

    def address(self, ins: Instr, addr: Addr):
        """``[base+offset]`` as a function (lanes, sub, ctx) -> uint64 addresses, and the registers it
        reads. A 32-bit base register makes a 32-bit address (a .local or .shared window offset), its
        sum with the offset taken modulo 2^32 as the hardware's address arithmetic does (libdevice's
        argument reduction indexes its local table from a pointer below the frame)."""
        narrow = isinstance(addr.base, Reg) and TYPES.get(self.reg_types.get(addr.base.name, ""), (64, ""))[0] == 32
        base, reads = self.reader(ins, addr.base, 64)
        off = np.uint64(addr.offset & ((1 << 64) - 1))
        if narrow:
            return (lambda L, s, c: (base(L, s, c) + off) & np.uint64(0xFFFFFFFF)), reads
        if not addr.offset:  # (addresses are never written in place: the register itself serves)
            return base, reads
        return (lambda L, s, c: base(L, s, c) + off), reads

    def immediate(self, ins: Instr, op: Imm, width: int, ftype: str | None) -> int:
        mask = (1 << width) - 1
        if op.float_bits:
            if ftype is None or op.float_bits == width:
                return op.value & mask
            value = np.array([op.value], dtype=np.uint32 if op.float_bits == 32 else np.uint64)
            f = value.view(np.float32 if op.float_bits == 32 else np.float64)[0]
            return _float_bits(float(f), ftype, self.db.formats)
        if op.float_bits == 0:
            if ftype is None:
                raise self.error(ins, f"floating-point literal {op.text} in an integer operation", unsupported=False)
            return _float_bits(float(op.value), ftype, self.db.formats)
        value = int(op.value)
        if ftype is not None and ftype in ("f32", "f64", "f16", "bf16"):
            raise self.error(ins, f"integer literal {op.text} as a floating-point operand", unsupported=False)
        return value & mask

    def writer(self, ins: Instr, op):
        """(function (lanes, sub, values) -> None, written register name or None for '_')."""
        if isinstance(op, Symbol) and op.name == "_":
            return (lambda L, s, v: None), None
        name = self.reg(ins, op)
        dt = _UINT[TYPES.get(self.reg_types[name], (64, "b"))[0]]

        def write(L, s, v):
            v = np.asarray(v)
            if v.dtype != dt:
                v = v.astype(dt)
            if s is None:
                L.regs[name] = np.broadcast_to(v, (L.size,)).copy() if v.shape != (L.size,) else v
            else:
                arr = L.reg(name).copy()  # registers may share arrays: never write in place
                arr[s] = v
                L.regs[name] = arr
        return write, name

    # -- dispatch -------------------------------------------------------------------------------

    def compile(self) -> list[Step]:
        steps = []
        for pos, ins in enumerate(self.instrs):
            if ins.guard is not None:
                g = ins.guard[0]
                if self.reg_types.get(g) != "pred":
                    raise self.error(ins, f"guard {g} is not a declared predicate register", unsupported=False)
            step = self.instruction(ins, pos)
            step.guard = ins.guard
            steps.append(step)
        self._check_carry()
        self._contractions(steps)
        return steps

    def instruction(self, ins: Instr, pos: int) -> Step:
        if ins.opcode.split(".", 1)[0] in ("ld", "st"):
            plain = self._without_hints(ins)
            if plain is not ins:
                # compiled as the form without its hints; the step keeps the module's instruction
                # (the analyses of tilecheck.verify know instructions by identity)
                step = self.instruction(plain, pos)
                step.instr = ins
                return step
        tokens = ins.opcode.split(".")
        head, mods = tokens[0], tokens[1:]
        if head == "bra":
            if any(m != "uni" for m in mods) or len(ins.operands) != 1 or not isinstance(ins.operands[0], Symbol):
                raise self.unsupported(ins, "branch")
            label = ins.operands[0].name
            if label not in self.labels:
                raise self.error(ins, f"branch to unknown label {label!r}", unsupported=False)
            return Step("bra", None, ins, target=self.labels[label], target_label=label)
        if head in ("ret", "exit"):
            if any(m != "uni" for m in mods) or ins.operands:
                raise self.unsupported(ins)
            return Step("ret", None, ins)
        handler = getattr(self, "op_" + head, None)
        if handler is not None:
            try:
                result = handler(ins, mods)
            except UnsupportedPtxError as exc:
                # a variant the dedicated step does not cover (mul.hi.u64, cnot, add.sat.s32, ...)
                # runs its spec form's model when the spec has one; else the step's own error
                if not exc.unsupported:
                    raise
                return self._spec_or(ins, exc)
            if result is not None:
                return result
        form = self.db.resolve(ins.opcode)
        if form is not None and form.kind in ("exact", "contract"):
            return self.model(ins, form)
        return self._spec_or(ins, self.unsupported(ins))

    def _spec_or(self, ins: Instr, error: UnsupportedPtxError) -> Step:
        form = self.db.resolve(ins.opcode)
        if form is None or form.kind != "function" or any(o.role == "addr" for o in form.operands):
            raise error
        # the model refuses some forms as written (cvta.shared: one memory; setp.f16x2 with one
        # destination, which the ISA leaves undefined): probe it now, so that they stay located
        # errors here instead of failing while running
        probe = [np.zeros(1, dtype=bool if o.ptx_type == "pred" else _UINT[max(8, o.container_bits)])
                 for o in form.operands if o.role != "dst"]
        try:
            with np.errstate(all="ignore"):
                api.evaluate(form, *probe, destinations=2 if ins.operands and _pair(ins.operands[0]) else 1)
            return self.model(ins, form)
        except (UnsupportedPtxError, TilecheckError):
            raise error from None

    def by_spec(self, ins: Instr) -> Step:
        """An instruction around the arithmetic that has no dedicated step here but a spec form with
        model semantics (registry kind ``function``, e.g. ``cvt.rni.s32.f16``): run the model's
        evaluation of that form; a spelling ptxas accepts that the ISA leaves undefined, where the
        spec records what it may mean (``cvt.bf16.f16``: any of the four roundings), runs as
        :meth:`readings`; anything else stays a located error."""
        form = self.db.resolve(ins.opcode)
        if form is None:
            readings = self.db.readings(ins.opcode)
            if readings:
                return self.readings(ins, readings)
        if form is None or form.kind != "function":
            raise self.unsupported(ins)
        return self.model(ins, form)

    def readings(self, ins: Instr, forms) -> Step:
        """A spelling that may mean any of ``forms`` (its spec ``reading``): the lanes fork on every
        distinct result they give, as on an approximate instruction's choices (one reading alone,
        or readings that agree, fork nothing); ``--approx reference`` takes the first."""
        steps = [self.model(ins, f) for f in forms]
        if len(steps) == 1:
            return steps[0]
        write, wname = self.writer(ins, ins.operands[0])
        label = f"{ins.opcode} (read as any of {', '.join(f.name for f in forms)})"

        def run(L, s, c):
            if c.approx == "reference":
                steps[0].run(L, s, c)
                return
            results = []
            before = L.regs.get(wname)
            before = None if before is None else before.copy()  # the destination may be a source too
            for st in steps:
                if before is not None:
                    L.regs[wname] = before.copy()
                st.run(L, s, c)
                results.append((L.regs[wname] if s is None else L.regs[wname][s]).copy())
            values = np.stack(results, axis=1)
            valid = np.ones(values.shape, dtype=bool)
            for j in range(1, values.shape[1]):  # each distinct result once
                valid[:, j] = (values[:, :j] != values[:, j:j + 1]).all(axis=1)
            _fork(L, s, c, wname, values, valid, None)
        return self._step(ins, run, steps[0].reads, [wname], approximate=label)

    def _step(self, ins, run, reads, writes, approximate=None, pure=False) -> Step:
        return Step("op", run, ins, reads=frozenset(r for r in reads if r), writes=frozenset(w for w in writes if w),
                    approximate=approximate, pure=pure)

    # -- data movement --------------------------------------------------------------------------

    def op_mov(self, ins, mods):
        if len(mods) != 1 or mods[0] not in TYPES or len(ins.operands) != 2:
            raise self.unsupported(ins)
        width, kind = TYPES[mods[0]]
        d, a = ins.operands
        if isinstance(d, Vec):  # unpack: first element = least significant
            read, reads = self.reader(ins, a, width)
            parts = [self.writer(ins, o) for o in d.items]
            pw = width // len(parts)
            mask = (1 << pw) - 1

            def unpack(L, s, c):
                v = read(L, s, c).astype(np.uint64)
                for j, (w, name) in enumerate(parts):
                    if name is not None and name not in c.live and not c.trace:
                        continue  # read by no later step (a cut-down kernel's other element)
                    w(L, s, (v >> np.uint64(j * pw)) & np.uint64(mask))
            return self._step(ins, unpack, reads, [n for _, n in parts])
        if isinstance(a, Vec):
            pw = width // len(a.items)
            readers = [self.reader(ins, o, pw) for o in a.items]
            write, wname = self.writer(ins, d)

            def pack(L, s, c):
                out = np.zeros(L.size if s is None else s.size, dtype=np.uint64)
                for j, (r, _) in enumerate(readers):
                    out |= r(L, s, c).astype(np.uint64) << np.uint64(j * pw)
                write(L, s, out)
            return self._step(ins, pack, set().union(*[r for _, r in readers]), [wname])
        read, reads = self.reader(ins, a, width, mods[0] if kind == "f" else None)
        write, wname = self.writer(ins, d)
        return self._step(ins, lambda L, s, c: write(L, s, read(L, s, c)), reads, [wname])

    def op_cvta(self, ins, mods):
        if any(m.startswith("shared") for m in mods):
            return shared.compile_cvta(self, ins, mods)
        # generic and global/local addresses are the same numbers here (LOCAL_BASE sets the local
        # window apart), so every conversion between them is the identity
        if mods not in (["to", "global", "u64"], ["global", "u64"], ["to", "local", "u64"], ["local", "u64"]) \
                or len(ins.operands) != 2:
            raise self.unsupported(ins)
        read, reads = self.reader(ins, ins.operands[1], 64)
        write, wname = self.writer(ins, ins.operands[0])
        return self._step(ins, lambda L, s, c: write(L, s, read(L, s, c)), reads, [wname])

    def _mem_type(self, ins, mods, spaces):
        mods = [m for m in mods if m not in ("nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt")]
        space = mods[0] if mods and mods[0] in spaces else None
        rest = mods[1:] if space else mods
        if len(rest) != 1 or rest[0] not in TYPES:
            raise self.unsupported(ins)
        return space, rest[0]

    def _vector(self, mods):
        vec = 1
        for v in ("v2", "v4"):
            if v in mods:
                vec = int(v[1])
        return [m for m in mods if m not in ("v2", "v4")], vec

    def _without_hints(self, ins: Instr) -> Instr:
        """``ins`` as the form it denotes without its performance qualifiers (cache operators,
        eviction priorities, prefetch sizes, ``.L2::cache_hint`` and the cache-policy operand it
        adds: spec/ptx/ld.yaml and st.yaml, ``hints``), which leave the bits moved unchanged;
        ``ins`` itself where it has none. Its text stays what the module says."""
        if self.db.resolve(ins.opcode) is not None:
            return ins
        hinted = self.db.hinted(ins.opcode)
        if hinted is None:
            return ins
        base, hints = hinted
        operands = ins.operands
        if any(h.operand == "cache-policy" for h in hints):
            if len(operands) != 3 or not isinstance(operands[2], Reg):
                raise self.error(ins, f"{ins.opcode}: .L2::cache_hint takes a 64-bit cache-policy register "
                                      "after the operands")
            operands = operands[:2]
        return replace(ins, opcode=base, operands=operands)

    def op_createpolicy(self, ins, mods):
        """``createpolicy.fractional.L2::evict_*{.L2::evict_*}.b64 d, fraction``: a cache policy
        for ``.L2::cache_hint`` accesses, which the simulator reads as the hint it is (the value
        is opaque: :func:`compile_function` refuses a kernel that uses it as data)."""
        if not mods or mods[0] != "fractional" or mods[-1] != "b64" or len(ins.operands) not in (2, 3):
            raise self.unsupported(ins)
        write, wname = self.writer(ins, ins.operands[0])
        return self._step(ins, lambda L, s, c: write(L, s, np.zeros(L.size if s is None else s.size,
                                                                     dtype=np.uint64)), set(), [wname])

    def op_prefetch(self, ins, mods):
        """``prefetch{.global,.local}.{L1,L2}`` and ``prefetch.global.L2::evict_{last,normal}`` [a]:
        a cache line brought closer, no register or memory changed (PTX ISA 9.1, prefetch): a step
        that does nothing. (``prefetch.tensormap`` and ``prefetchu`` are other instructions.)"""
        spaces, levels = ("global", "local"), ("L1", "L2", "L2::evict_last", "L2::evict_normal")
        rest = mods[1:] if mods and mods[0] in spaces else mods
        if len(rest) != 1 or rest[0] not in levels or len(ins.operands) != 1 or not isinstance(ins.operands[0], Addr) \
                or (rest[0].startswith("L2::") and mods[:1] != ["global"]):
            raise self.unsupported(ins)
        return self._step(ins, lambda L, s, c: None, set(), [])

    def _memory_form(self, ins):
        """The spec form (spec/ptx/ld.yaml, st.yaml) an ``ld``/``st`` spelling denotes; a located
        error naming the spelling when the database has none (``ld.shared``, ``ld.param.nc``,
        cache operators): the steps below execute exactly the spec's memory forms."""
        form = self.db.resolve(ins.opcode)
        if form is None or form.kind != "memory":
            try:  # the spec's reason when it records or derives one (ld.param.nc: .nc is global-only)
                reason = self.db.verdict(ins.opcode).reason
            except TilecheckError:  # a token no form uses (.shared, .ca)
                reason = ""
            raise self.error(ins, f"unsupported instruction '{ins.opcode}': not a form of "
                                  f"spec/ptx/{ins.opcode.split('.')[0]}.yaml" + (f" ({reason})" if reason else ""))
        return form

    def _one_element(self, ins, op):
        """A scalar access's register operand: braces around one register (``{ %rs1 }``, a
        one-element vector, as Triton writes its loads and stores) are that register; braces
        around more than one in a scalar ``ld``/``st`` are a located error."""
        if not isinstance(op, Vec):
            return op
        if len(op.items) != 1:
            raise self.error(ins, f"{len(op.items)} registers in braces {op!r} in the scalar access "
                                  f"'{ins.opcode}' (braces around one register only; several need .v2/.v4)",
                             unsupported=False)
        return op.items[0]

    def _st_param(self, ins, addr, readers: list, width: int) -> Step:
        """``st.param{.vN}``: consecutive elements into a parameter's 64-bit words (:func:`param_slot`)."""
        if not isinstance(addr.base, Symbol) or addr.base.name not in self.params:
            raise self.error(ins, f"st.param to unknown parameter {addr.base!r}", unsupported=False)
        slots = [param_slot(addr.base.name, addr.offset + j * width // 8) for j in range(len(readers))]
        mask = (1 << width) - 1

        def stparam(L, s, c):
            for (read, _), (key, shift) in zip(readers, slots):
                v = read(L, s, c).astype(np.uint64) << np.uint64(shift)  # a copy: never the register's own array
                keep = np.uint64(((1 << 64) - 1) ^ (mask << shift))
                cur = L.params.get(key)
                if cur is None and s is None:
                    L.params[key] = v
                    continue
                cur = np.zeros(L.size, dtype=np.uint64) if cur is None else cur.copy()
                if s is None:
                    cur = (cur & keep) | v
                else:
                    cur[s] = (cur[s] & keep) | v
                L.params[key] = cur
        reads = set().union(*[r for _, r in readers]) | {PARAM + key for key, _ in slots}
        return self._step(ins, stparam, reads, [])

    def op_bar(self, ins, mods):
        return shared.compile_barrier(self, ins, mods)

    def op_barrier(self, ins, mods):
        return shared.compile_barrier(self, ins, mods)

    def op_ldmatrix(self, ins, mods):
        return shared.compile_ldmatrix(self, ins, mods)

    def op_stmatrix(self, ins, mods):
        return shared.compile_stmatrix(self, ins, mods, store_global=_store_global)

    def op_ld(self, ins, mods):
        if shared.handles(self, ins, mods):
            return shared.compile_access(self, ins, mods)
        self._memory_form(ins)
        mods, vec = self._vector(mods)
        space, type_ = self._mem_type(ins, mods, ("param", "global", "local"))
        width, kind = TYPES[type_]
        if len(ins.operands) != 2 or not isinstance(ins.operands[1], Addr):
            raise self.unsupported(ins)
        d, addr = ins.operands
        if vec == 1:
            d = self._one_element(ins, d)
        if vec > 1:
            if not isinstance(d, Vec) or len(d.items) != vec:
                raise self.unsupported(ins)
            if space == "param":
                return self._ld_param_vector(ins, d, addr, width, kind, vec)
            return self._ld_vector(ins, d, addr, width, kind, vec, space)
        write, wname = self.writer(ins, d)
        signed = kind == "s"
        if space == "param":
            if not isinstance(addr.base, Symbol) or addr.base.name not in self.params:
                raise self.error(ins, f"ld.param from unknown parameter {addr.base!r}", unsupported=False)
            key, shift = param_slot(addr.base.name, addr.offset)

            reg_type = wname and self.reg_types[wname]
            # the register's own width truncates when it is not wider than the load: no mask then
            mask = np.uint64((1 << width) - 1) if reg_type in TYPES and TYPES[reg_type][0] > width else None

            def ldparam(L, s, c):
                v = _param_word(L, key, s)
                if shift:
                    v = v >> np.uint64(shift)
                if mask is not None:
                    v = v & mask
                write(L, s, _extend(v, width, signed, reg_type))
            return self._step(ins, ldparam, [PARAM + key], [wname])
        if space is None and not isinstance(addr.base, (Reg, Symbol)):
            raise self.unsupported(ins)
        address, reads = self.address(ins, addr)
        nbytes = width // 8
        where = Location(self.path, ins.line, ins.col)
        constants = self.constant_bytes

        def ldmemory(L, s, c):
            a = address(L, s, c)
            v = _load(L, s, c, a, nbytes, 1, space, where, constants)[0]
            write(L, s, _extend(v, width, signed, wname and self.reg_types[wname]))
        return self._step(ins, ldmemory, reads, [wname])

    def _ld_param_vector(self, ins, d, addr, width, kind, vec):
        """``ld.param.vN`` (``float2`` parameters, say): N consecutive elements of a parameter
        (held per lane in 64-bit words, :func:`param_slot`)."""
        if not isinstance(addr.base, Symbol) or addr.base.name not in self.params:
            raise self.error(ins, f"ld.param from unknown parameter {addr.base!r}", unsupported=False)
        slots = [param_slot(addr.base.name, addr.offset + j * width // 8) for j in range(vec)]
        writers = [self.writer(ins, o) for o in d.items]
        mask = np.uint64((1 << width) - 1)

        def ldparamvec(L, s, c):
            for (w, wn), (key, shift) in zip(writers, slots):
                part = (_param_word(L, key, s) >> np.uint64(shift)) & mask
                w(L, s, _extend(part, width, kind == "s", wn and self.reg_types[wn]))
        return self._step(ins, ldparamvec, [PARAM + key for key, _ in slots], [wn for _, wn in writers])

    def _ld_vector(self, ins, d, addr, width, kind, vec, space):
        """``ld.global.vN``: N consecutive elements; recorded as one access of N elements."""
        if not isinstance(addr.base, (Reg, Symbol)):
            raise self.unsupported(ins)
        address, reads = self.address(ins, addr)
        writers = [self.writer(ins, o) for o in d.items]
        nbytes = width // 8
        where = Location(self.path, ins.line, ins.col)
        constants = self.constant_bytes

        def ldvec(L, s, c):
            a = address(L, s, c)
            for (w, wn), v in zip(writers, _load(L, s, c, a, nbytes, vec, space, where, constants)):
                w(L, s, _extend(v, width, kind == "s", wn and self.reg_types[wn]))
        return self._step(ins, ldvec, reads, [wn for _, wn in writers])

    def op_st(self, ins, mods):
        if shared.handles(self, ins, mods):
            return shared.compile_access(self, ins, mods, store_global=_store_global)
        self._memory_form(ins)
        mods, vec = self._vector(mods)
        space, type_ = self._mem_type(ins, mods, ("param", "global", "local"))
        width, _ = TYPES[type_]
        if len(ins.operands) != 2 or not isinstance(ins.operands[0], Addr):
            raise self.unsupported(ins)
        addr, src = ins.operands
        if vec == 1:
            src = self._one_element(ins, src)
        if vec > 1:
            if not isinstance(src, Vec) or len(src.items) != vec:
                raise self.unsupported(ins)
            if space == "param":
                return self._st_param(ins, addr, [self.reader(ins, o, width) for o in src.items], width)
            # a vector store of N elements is one store of their concatenation (first = lowest)
            readers = [self.reader(ins, o, width) for o in src.items]
            address, breads = self.address(ins, addr)
            nbytes = width // 8
            where = Location(self.path, ins.line, ins.col)

            def stvec(L, s, c):
                a = address(L, s, c)
                _store(L, s, c, a, nbytes, [r(L, s, c) for r, _ in readers], space, where)
            return self._step(ins, stvec, set(breads).union(*[r for _, r in readers]), [])
        read, reads = self.reader(ins, src, width, type_ if TYPES[type_][1] == "f" else None)
        if space == "param":
            return self._st_param(ins, addr, [(read, reads)], width)
        if space is None and not isinstance(addr.base, (Reg, Symbol)):
            raise self.unsupported(ins)
        address, breads = self.address(ins, addr)
        nbytes = width // 8
        where = Location(self.path, ins.line, ins.col)

        def stmemory(L, s, c):
            a = address(L, s, c)
            _store(L, s, c, a, nbytes, [read(L, s, c)], space, where)
        return self._step(ins, stmemory, set(reads) | set(breads), [])

    # -- predicates and selection ---------------------------------------------------------------

    def op_setp(self, ins, mods):
        ftz = "ftz" in mods
        mods = [m for m in mods if m != "ftz"]
        boolop = None
        if len(mods) == 3 and mods[1] in ("and", "or", "xor"):
            boolop = mods.pop(1)
        if len(mods) != 2 or mods[1] not in TYPES:
            raise self.unsupported(ins)
        cmp, type_ = mods
        width, kind = TYPES[type_]
        nops = 4 if boolop else 3
        dst = ins.operands[0]
        if kind == "x" or len(ins.operands) != nops or isinstance(dst, Vec) or _pair(dst):
            raise self.unsupported(ins)  # packed and two-destination forms run from their spec
        ra, r1 = self.reader(ins, ins.operands[1], width, type_ if kind == "f" else None)
        rb, r2 = self.reader(ins, ins.operands[2], width, type_ if kind == "f" else None)
        rc, r3 = (self.reader(ins, ins.operands[3], 1) if boolop else (None, set()))
        write, wname = self.writer(ins, dst)
        if kind == "f":
            fn = _float_compare(cmp, type_, ftz, self.db.formats)
        else:
            fn = _int_compare(cmp, kind, width)
        if fn is None:
            raise self.unsupported(ins)
        combine = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)

        def setp(L, s, c):
            t = fn(ra(L, s, c), rb(L, s, c))
            if combine is not None:
                t = combine(t, rc(L, s, c))
            write(L, s, t)
        return self._step(ins, setp, r1 | r2 | r3, [wname])

    def op_selp(self, ins, mods):
        if len(mods) != 1 or mods[0] not in TYPES or len(ins.operands) != 4:
            raise self.unsupported(ins)
        width, kind = TYPES[mods[0]]
        ft = mods[0] if kind == "f" else None
        ra, r1 = self.reader(ins, ins.operands[1], width, ft)
        rb, r2 = self.reader(ins, ins.operands[2], width, ft)
        rc, r3 = self.reader(ins, ins.operands[3], 1)
        write, wname = self.writer(ins, ins.operands[0])
        return self._step(ins, lambda L, s, c: write(L, s, np.where(rc(L, s, c), ra(L, s, c), rb(L, s, c))),
                          r1 | r2 | r3, [wname])

    # -- integer and logic ------------------------------------------------------------------------

    def op_and(self, ins, mods):
        return self._logic(ins, mods, np.bitwise_and)

    def op_or(self, ins, mods):
        return self._logic(ins, mods, np.bitwise_or)

    def op_xor(self, ins, mods):
        return self._logic(ins, mods, np.bitwise_xor)

    def op_not(self, ins, mods):
        return self._logic(ins, mods, None)

    def _logic(self, ins, mods, fn):
        if len(mods) != 1 or mods[0] not in TYPES or TYPES[mods[0]][1] not in ("b", "pred"):
            raise self.unsupported(ins)
        width = TYPES[mods[0]][0]
        readers = [self.reader(ins, o, width) for o in ins.operands[1:]]
        if len(readers) != (1 if fn is None else 2):
            raise self.unsupported(ins)
        write, wname = self.writer(ins, ins.operands[0])
        reads = set().union(*[r for _, r in readers])
        if fn is None:
            inv = np.bool_(True) if width == 1 else _UINT[width].type((1 << width) - 1)
            return self._step(ins, lambda L, s, c: write(L, s, readers[0][0](L, s, c) ^ inv), reads, [wname])
        a, b = readers[0][0], readers[1][0]
        return self._step(ins, lambda L, s, c: write(L, s, fn(a(L, s, c), b(L, s, c))), reads, [wname])

    def op_bfe(self, ins, mods):
        """``bfe.{u,s}{32,64} d, a, pos, len`` (PTX ISA bit-field extract, sign fill for signed types)."""
        if len(mods) != 1 or mods[0] not in ("u32", "u64", "s32", "s64") or len(ins.operands) != 4:
            raise self.unsupported(ins)
        width, kind = TYPES[mods[0]]
        ra, r1 = self.reader(ins, ins.operands[1], width)
        rb, r2 = self.reader(ins, ins.operands[2], 32)
        rc, r3 = self.reader(ins, ins.operands[3], 32)
        write, wname = self.writer(ins, ins.operands[0])
        dt = _UINT[width]

        def bfe(L, s, c):
            a = ra(L, s, c).astype(np.uint64)
            pos = (rb(L, s, c) & np.uint32(0xFF)).astype(np.uint64)
            ln = (rc(L, s, c) & np.uint32(0xFF)).astype(np.uint64)
            out = np.zeros(a.shape, dtype=np.uint64)
            if kind == "s":
                top = np.minimum(pos + ln - np.uint64(1), np.uint64(width - 1))
                sbit = np.where(ln == 0, np.uint64(0), (a >> top) & np.uint64(1))
            else:
                sbit = np.zeros(a.shape, dtype=np.uint64)
            for i in range(width):  # bit by bit, exactly as the ISA defines it
                src = pos + np.uint64(i)
                inside = (np.uint64(i) < ln) & (src < np.uint64(width))
                bit = (a >> np.minimum(src, np.uint64(width - 1))) & np.uint64(1)
                out |= np.where(inside, bit, sbit) << np.uint64(i)
            write(L, s, out.astype(dt))
        return self._step(ins, bfe, r1 | r2 | r3, [wname])

    def op_bfi(self, ins, mods):
        """``bfi.b32/.b64 f, a, b, c, d``: bit-field insert (:mod:`~tilecheck.sim.wide_int`)."""
        if len(mods) != 1 or mods[0] not in ("b32", "b64") or len(ins.operands) != 5:
            raise self.unsupported(ins)
        width = TYPES[mods[0]][0]
        readers = [self.reader(ins, o, w) for o, w in zip(ins.operands[1:], (width, width, 32, 32))]
        write, wname = self.writer(ins, ins.operands[0])
        ra, rb, rc, rd = (r for r, _ in readers)

        def bfi(L, s, c):
            write(L, s, wide_int.bit_field_insert(ra(L, s, c), rb(L, s, c), rc(L, s, c), rd(L, s, c), width))
        return self._step(ins, bfi, set().union(*[r for _, r in readers]), [wname])

    def op_shf(self, ins, mods):
        """``shf.{l,r}.{clamp,wrap}.b32 d, a, b, c``: a funnel shift of ``b:a`` (:mod:`~tilecheck.sim.wide_int`)."""
        if len(mods) != 3 or mods[0] not in ("l", "r") or mods[1] not in ("clamp", "wrap") or mods[2] != "b32" \
                or len(ins.operands) != 4:
            raise self.unsupported(ins)
        readers = [self.reader(ins, o, 32) for o in ins.operands[1:]]
        write, wname = self.writer(ins, ins.operands[0])
        left, clamp = mods[0] == "l", mods[1] == "clamp"
        ra, rb, rc = (r for r, _ in readers)

        def shf(L, s, c):
            write(L, s, wide_int.funnel_shift(ra(L, s, c), rb(L, s, c), rc(L, s, c), left, clamp))
        return self._step(ins, shf, set().union(*[r for _, r in readers]), [wname])

    def op_clz(self, ins, mods):
        """``clz.b32/.b64 d, a``: leading zero bits of ``a`` into the 32-bit ``d``."""
        if len(mods) != 1 or mods[0] not in ("b32", "b64") or len(ins.operands) != 2:
            raise self.unsupported(ins)
        width = TYPES[mods[0]][0]
        ra, reads = self.reader(ins, ins.operands[1], width)
        write, wname = self.writer(ins, ins.operands[0])
        return self._step(ins, lambda L, s, c: write(L, s, wide_int.count_leading_zeros(ra(L, s, c), width)),
                          reads, [wname])

    def op_addc(self, ins, mods):
        return self._carry_arith(ins, mods, "add", carry_in=True)

    def op_subc(self, ins, mods):
        return self._carry_arith(ins, mods, "sub", carry_in=True)

    def op_madc(self, ins, mods):
        return self._carry_arith(ins, mods, "mad", carry_in=True)

    def _carry_arith(self, ins, mods, head, carry_in):
        """The extended-precision forms (PTX ISA §9.7.2): ``add.cc``, ``addc{.cc}``, ``sub.cc``,
        ``subc{.cc}``, ``mad{.lo,.hi}.cc``, ``madc{.lo,.hi}{.cc}`` on .u32/.s32/.u64/.s64, the carry
        flag a register (:data:`~tilecheck.sim.wide_int.CARRY`) read and written like the others."""
        ms = list(mods)
        mode = ms.pop(0) if head == "mad" and ms and ms[0] in ("lo", "hi") else None
        carry_out = bool(ms) and ms[0] == "cc"
        ms = ms[1:] if carry_out else ms
        arity = 3 if head == "mad" else 2
        if (head == "mad") != (mode is not None) or len(ms) != 1 or ms[0] not in ("u32", "s32", "u64", "s64") \
                or len(ins.operands) != arity + 1:
            raise self.unsupported(ins)
        width, kind = TYPES[ms[0]]
        readers = [self.reader(ins, o, width) for o in ins.operands[1:]]
        flag_in = self.reader(ins, Reg(wide_int.CARRY), 1)[0] if carry_in else None
        write, wname = self.writer(ins, ins.operands[0])
        write_flag = self.writer(ins, Reg(wide_int.CARRY))[0] if carry_out else None
        signed = kind == "s"

        def run(L, s, c):
            v = [r(L, s, c) for r, _ in readers]
            cin = flag_in(L, s, c) if flag_in is not None else np.zeros(v[0].shape, dtype=bool)
            if head == "mad":
                lo, hi = wide_int.mul_halves(v[0], v[1], width, signed)
                v = [hi if mode == "hi" else lo, v[2]]
            d, flag = (wide_int.sub_borrow if head == "sub" else wide_int.add_carry)(v[0], v[1], cin, width)
            write(L, s, d)
            if write_flag is not None:
                write_flag(L, s, flag)
        reads = set().union(*[r for _, r in readers]) | ({wide_int.CARRY} if carry_in else set())
        return self._step(ins, run, reads, [wname, wide_int.CARRY if carry_out else None])

    def _check_carry(self) -> None:
        """Refuse a read of the carry flag that no ``.cc`` write before it in the same straight-line
        code sets under the same guard: the ISA keeps CC.CF for such sequences only (it is not
        preserved across branches and calls), so its value there is undefined, not a choice."""
        starts = set(self.labels.values())
        written = None  # the guard of the block's last .cc instruction: () unguarded, None: none yet
        for pos, ins in enumerate(self.instrs):
            if pos in starts:
                written = None
            if wide_int.reads_carry(ins.opcode) and (written is None or written not in ((), ins.guard)):
                raise self.error(ins, f"'{ins.opcode}' reads the carry flag CC.CF, which no .cc instruction before "
                                      "it in the same straight-line code writes (under the same guard): its value "
                                      "is undefined there", unsupported=False)
            if written and ins.operands and written[0] in getattr(ins.operands[0], "name", "").split("|"):
                written = None  # the guard itself rewritten: the same name no longer names the same lanes
            if wide_int.writes_carry(ins.opcode):
                written = ins.guard if ins.guard is not None else ()
            if ins.opcode.split(".", 1)[0] in ("bra", "ret", "exit", "call"):
                written = None

    def op_shl(self, ins, mods):
        return self._shift(ins, mods, "shl")

    def op_shr(self, ins, mods):
        return self._shift(ins, mods, "shr")

    def _shift(self, ins, mods, head):
        if len(mods) != 1 or mods[0] not in TYPES or TYPES[mods[0]][1] not in ("b", "u", "s") or len(ins.operands) != 3:
            raise self.unsupported(ins)
        width, kind = TYPES[mods[0]]
        if width < 16:
            raise self.unsupported(ins)
        ra, r1 = self.reader(ins, ins.operands[1], width)
        rb, r2 = self.reader(ins, ins.operands[2], 32)
        write, wname = self.writer(ins, ins.operands[0])
        dt = _UINT[width]
        arith = head == "shr" and kind == "s"

        def shift(L, s, c):
            a = ra(L, s, c)
            n = np.minimum(rb(L, s, c).astype(np.int64), width)
            if arith:
                v = a.view(_SINT[width]) >> np.minimum(n, width - 1).astype(_SINT[width])
                out = v.view(dt)
            else:
                m = np.minimum(n, width - 1).astype(dt)
                out = (a << m) if head == "shl" else (a >> m)
                out = np.where(n >= width, dt.type(0), out)
            write(L, s, out)
        return self._step(ins, shift, r1 | r2, [wname])

    def _int_arith(self, ins, mods, head):
        mods = list(mods)
        mode = None
        if head in ("mul", "mad") and mods and mods[0] in ("lo", "hi", "wide"):
            mode = mods.pop(0)
        if len(mods) != 1 or mods[0] not in TYPES or TYPES[mods[0]][1] not in ("u", "s"):
            return None
        width, kind = TYPES[mods[0]]
        if head in ("mul", "mad") and mode is None:
            raise self.unsupported(ins)
        signed = kind == "s"
        arity = {"neg": 1, "abs": 1, "mad": 3}.get(head, 2)
        if len(ins.operands) != arity + 1 or width < 16:
            raise self.unsupported(ins)
        if mode == "hi" and width == 64:
            raise self.unsupported(ins)
        out_w = 2 * width if mode == "wide" else width
        if out_w > 64:
            raise self.unsupported(ins)
        readers = [self.reader(ins, o, width) for o in ins.operands[1:1 + min(arity, 2)]]
        addend = self.reader(ins, ins.operands[3], out_w) if head == "mad" else None
        write, wname = self.writer(ins, ins.operands[0])
        reads = set().union(*[r for _, r in readers]) | (addend[1] if addend else set())
        odt = _UINT[out_w]

        def ints(v, w):
            return v.view(_SINT[w]).astype(np.int64) if signed else v.astype(np.uint64)

        def run(L, s, c):
            vals = [r(L, s, c) for r, _ in readers]
            if head in ("add", "sub", "neg") or (head in ("mul", "mad") and mode == "lo"):
                u = [v.astype(np.uint64) for v in vals]
                if head == "add":
                    out = u[0] + u[1]
                elif head == "sub":
                    out = u[0] - u[1]
                elif head == "neg":
                    out = np.uint64(0) - u[0]
                else:
                    out = u[0] * u[1]
            elif head in ("mul", "mad"):
                x, y = ints(vals[0], width), ints(vals[1], width)
                prod = x * y  # width <= 32: exact in 64 bits
                out = (prod >> width) if mode == "hi" else prod
                out = out.astype(np.uint64) if out.dtype != np.uint64 else out
            elif head == "min":
                out = np.minimum(ints(vals[0], width), ints(vals[1], width)).astype(np.uint64)
            elif head == "max":
                out = np.maximum(ints(vals[0], width), ints(vals[1], width)).astype(np.uint64)
            elif head == "abs":
                out = np.abs(ints(vals[0], width)).astype(np.uint64)
            else:
                raise ExecutionError(f"{ins.opcode}: not executable", ins.line)
            if head == "mad":
                out = out + addend[0](L, s, c).astype(np.uint64)
            write(L, s, out.astype(odt))
        return self._step(ins, run, reads, [wname])

    def op_add(self, ins, mods):
        if "cc" in mods:
            return self._carry_arith(ins, mods, "add", carry_in=False)
        return self._int_arith(ins, mods, "add")

    def op_sub(self, ins, mods):
        if "cc" in mods:
            return self._carry_arith(ins, mods, "sub", carry_in=False)
        return self._int_arith(ins, mods, "sub")

    def op_mul(self, ins, mods):
        return self._int_arith(ins, mods, "mul")

    def op_mad(self, ins, mods):
        if "cc" in mods:
            return self._carry_arith(ins, mods, "mad", carry_in=False)
        return self._int_arith(ins, mods, "mad")

    def op_min(self, ins, mods):
        return self._int_arith(ins, mods, "min") if _int_typed(mods) else self._minmax(ins, mods, "min")

    def op_max(self, ins, mods):
        return self._int_arith(ins, mods, "max") if _int_typed(mods) else self._minmax(ins, mods, "max")

    def op_abs(self, ins, mods):
        return self._int_arith(ins, mods, "abs") if _int_typed(mods) else self._absneg(ins, mods, "abs")

    def op_neg(self, ins, mods):
        return self._int_arith(ins, mods, "neg") if _int_typed(mods) else self._absneg(ins, mods, "neg")

    # -- floating-point moves that are not arithmetic -------------------------------------------

    def _absneg(self, ins, mods, head):
        ftz = "ftz" in mods
        mods = [m for m in mods if m != "ftz"]
        if len(mods) != 1 or mods[0] not in _FLOAT_TYPES or len(ins.operands) != 2:
            raise self.unsupported(ins)
        type_ = mods[0]
        fmt = self._format(type_)
        width = fmt.width
        ra, r1 = self.reader(ins, ins.operands[1], TYPES[type_][0], _scalar(type_))
        write, wname = self.writer(ins, ins.operands[0])
        dt = _UINT[width]
        sign = dt.type(fmt.sign_mask)
        canon = dt.type(fmt.canonical_nan)
        keep_nan = type_ == "f64" and head == "abs"  # abs.f64 passes a NaN through (PTX ISA)

        def one(a):
            if ftz:
                a = _flush(a, fmt)
            out = (a & ~sign) if head == "abs" else (a ^ sign)
            return np.where(_isnan(a, fmt), a if keep_nan else canon, out)
        return self._step(ins, lambda L, s, c: write(L, s, _per_element(one, type_, ra(L, s, c))), r1, [wname])

    def _minmax(self, ins, mods, head):
        ftz = "ftz" in mods
        nanmode = "NaN" in mods
        xorsign = "xorsign" in mods
        if xorsign != ("abs" in mods):  # the two come together (ptxas: ".xorsign requires .abs")
            raise self.unsupported(ins)
        mods = [m for m in mods if m not in ("ftz", "NaN", "xorsign", "abs")]
        if len(mods) != 1 or mods[0] not in _FLOAT_TYPES or len(ins.operands) != 3:
            raise self.unsupported(ins)
        type_ = mods[0]
        fmt = self._format(type_)
        width = fmt.width
        ra, r1 = self.reader(ins, ins.operands[1], TYPES[type_][0], _scalar(type_))
        rb, r2 = self.reader(ins, ins.operands[2], TYPES[type_][0], _scalar(type_))
        write, wname = self.writer(ins, ins.operands[0])
        canon = _UINT[width].type(fmt.canonical_nan)
        sign = _UINT[width].type(fmt.sign_mask)

        def one(a, b):
            if ftz:
                a, b = _flush(a, fmt), _flush(b, fmt)
            if xorsign:  # the magnitudes compared; the signs' XOR, taken first, given to a number result
                signs = (a ^ b) & sign
                a, b = a & ~sign, b & ~sign
            oa, ob = _ordinal_bits(a, fmt), _ordinal_bits(b, fmt)  # -0 < +0 (PTX ISA)
            pick_a = (oa <= ob) if head == "min" else (oa >= ob)
            out = np.where(pick_a, a, b)
            na, nb = _isnan(a, fmt), _isnan(b, fmt)
            if nanmode:
                out = np.where(na | nb, canon, out)
            else:
                out = np.where(na & ~nb, b, np.where(nb & ~na, a, out))
                out = np.where(na & nb, canon, out)
            if ftz:
                out = _flush(out, fmt)
            if xorsign:
                out = np.where(_isnan(out, fmt), out, (out & ~sign) | signs)
            return out
        return self._step(ins, lambda L, s, c: write(L, s, _per_element(one, type_, ra(L, s, c), rb(L, s, c))),
                          r1 | r2, [wname])

    def op_copysign(self, ins, mods):
        if len(mods) != 1 or mods[0] not in ("f32", "f64") or len(ins.operands) != 3:
            raise self.unsupported(ins)
        width = TYPES[mods[0]][0]
        ra, r1 = self.reader(ins, ins.operands[1], width, mods[0])
        rb, r2 = self.reader(ins, ins.operands[2], width, mods[0])
        write, wname = self.writer(ins, ins.operands[0])
        sign = _UINT[width].type(1 << (width - 1))
        # sign from a, magnitude from b (PTX ISA: reversed from C's copysign)
        return self._step(ins, lambda L, s, c: write(L, s, (ra(L, s, c) & sign) | (rb(L, s, c) & ~sign)),
                          r1 | r2, [wname])

    def op_testp(self, ins, mods):
        if len(mods) != 2 or mods[1] not in ("f32", "f64") or len(ins.operands) != 2:
            raise self.unsupported(ins)
        test, type_ = mods
        fmt = self._format(type_)
        ra, r1 = self.reader(ins, ins.operands[1], fmt.width, type_)
        write, wname = self.writer(ins, ins.operands[0])
        emask = _UINT[fmt.width].type(fmt.exponent_mask)
        mmask = _UINT[fmt.width].type(fmt.magnitude_mask)

        def run(L, s, c):
            a = ra(L, s, c)
            mag = a & mmask
            exp = a & emask
            table = {"finite": exp != emask, "infinite": mag == emask, "number": mag <= emask,
                     "notanumber": mag > emask, "normal": ((exp != 0) & (exp != emask)) | (mag == 0),
                     "subnormal": (exp == 0) & (mag != 0)}
            write(L, s, table[test])
        if test not in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            raise self.unsupported(ins)
        return self._step(ins, run, r1, [wname])

    def _cvt_pair(self, ins, dst, src, rounding):
        """``cvt.rn.{f16x2,bf16x2}.f32 d, a, b``: d's upper half is cvt(a), its lower half cvt(b)."""
        efmt = self._format(dst)
        sfmt = self._format(src)
        ra, r1 = self.reader(ins, ins.operands[1], 32)
        rb, r2 = self.reader(ins, ins.operands[2], 32)
        write, wname = self.writer(ins, ins.operands[0])
        native = native_convert(src, efmt.name, rounding, False)
        mode = ops.Mode(rounding, False, "after")
        rule = ops.NanRule(False, efmt.canonical_nan, fixed=efmt.canonical_nan)

        def conv(v):
            if native is not None:
                return native(v).astype(np.uint32)
            with np.errstate(all="ignore"):
                return ops.convert(np, sfmt, efmt, v.astype(np.uint64), mode, rule).astype(np.uint32)

        # an immediate half (a cut-down kernel's other element: tilecheck.verify.slicing) is
        # converted once, not per lane
        const = [None if not isinstance(op, Imm) else
                 int(conv(np.array([self.immediate(ins, op, 32, src)], dtype=np.uint32))[0])
                 for op in ins.operands[1:3]]

        def run(L, s, c):
            hi = conv(ra(L, s, c)) << np.uint32(16) if const[0] is None else np.uint32(const[0] << 16)
            lo = conv(rb(L, s, c)) if const[1] is None else np.uint32(const[1])
            out = hi | lo
            if np.ndim(out) == 0:
                out = np.full(L.size if s is None else s.size, out, dtype=np.uint32)
            write(L, s, out)
        return self._step(ins, run, r1 | r2, [wname], pure=_register_sources(ins))

    def op_cvt(self, ins, mods):
        rnd = [m for m in mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")]
        ftz = "ftz" in mods
        sat = "sat" in mods
        rest = [m for m in mods if m not in rnd and m not in ("ftz", "sat")]
        if len(rest) != 2 or any(t not in TYPES for t in rest) or len(rnd) > 1 or len(ins.operands) not in (2, 3):
            return self.by_spec(ins)
        dst, src = rest
        dw, dk = TYPES[dst]
        sw, sk = TYPES[src]
        if dk == "x" and src == "f32" and len(rnd) == 1 and rnd[0] in ROUNDINGS and not (ftz or sat):
            if len(ins.operands) != 3:
                return self.by_spec(ins)
            return self._cvt_pair(ins, dst, src, rnd[0])
        write, wname = self.writer(ins, ins.operands[0])
        if len(ins.operands) != 2:
            return self.by_spec(ins)
        if dk in ("u", "s", "b") and sk in ("u", "s", "b"):
            if rnd or ftz:
                return self.by_spec(ins)
            read, r1 = self.reader(ins, ins.operands[1], sw)

            def icvt(L, s, c):
                v = read(L, s, c)
                wide = v.view(_SINT[sw]).astype(np.int64) if sk == "s" else v.astype(np.int64)
                if sat:
                    lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dk == "s" else (0, (1 << dw) - 1)
                    wide = np.clip(wide, lo, hi)
                out = wide.astype(np.uint64) & np.uint64((1 << dw) - 1)
                write(L, s, _extend(out, dw, dk == "s", self.reg_types.get(wname)))
            return self._step(ins, icvt, r1, [wname], pure=_register_sources(ins))
        if dk == "f" and sk == "f":
            sfmt, dfmt = self._format(src), self._format(dst)
            narrowing = dfmt.precision < sfmt.precision or dfmt.emax < sfmt.emax
            rounding = rnd[0] if rnd else None
            if sat or (narrowing and rounding not in ROUNDINGS) or \
                    (not narrowing and rounding is not None):
                return self.by_spec(ins)
            if src == "bf16" and dst == "f16":
                return self.by_spec(ins)
            read, r1 = self.reader(ins, ins.operands[1], sfmt.width)
            # .ftz acts on the f32 side only (PTX ISA cvt)
            mode = ops.Mode(rounding or "rn", False, "after", ftz_in=ftz and src == "f32",
                            ftz_out=ftz and dst == "f32")
            rule = ops.NanRule(False, dfmt.canonical_nan, fixed=dfmt.canonical_nan) if dst != "f64" else \
                ops.NanRule.ieee(dfmt)
            ddt = _UINT[dfmt.width]

            native = native_convert(src, dst, rounding, ftz)

            def fcvt(L, s, c):
                v = read(L, s, c)
                if native is not None:
                    write(L, s, native(v))
                    return
                with np.errstate(all="ignore"):
                    out = ops.convert(np, sfmt, dfmt, v.astype(np.uint64), mode, rule)
                write(L, s, out.astype(ddt))
            return self._step(ins, fcvt, r1, [wname], pure=_register_sources(ins))
        return self.by_spec(ins)

    # -- the model --------------------------------------------------------------------------------

    def model(self, ins: Instr, form) -> Step:
        if len(ins.operands) != len(form.operands):
            raise self.error(ins, f"{form.name} takes {len(form.operands)} operands, got {len(ins.operands)}",
                             unsupported=False)
        width = form.operands[0].container_bits
        ftype = form.type if form.type in ("f16", "bf16", "f32", "f64") else None
        readers, write, wname, pair = [], None, None, None
        for spec, op in zip(form.operands, ins.operands):
            if spec.role == "dst" and _pair(op):
                # `setp ... p|q`: both destinations (the complement, or the high lane of a packed pair)
                pair = [self.writer(ins, Reg(name)) for name in _pair(op)]
                write, wname = pair[0]
                dst = spec
            elif spec.role == "dst":
                write, wname = self.writer(ins, op)
                dst = spec
            elif form.kind == "function":
                # operands of conversions differ in width and type: each is read as its own
                own = spec.ptx_type if spec.ptx_type in ("f16", "bf16", "f32", "f64") else None
                readers.append(self.reader(ins, op, spec.container_bits, own))
            else:
                readers.append(self.reader(ins, op, width, ftype))
        reads = set().union(*[r for _, r in readers]) if readers else set()
        if form.kind == "function":
            signed = TYPES.get(dst.ptx_type, (0, ""))[1] == "s"
            reg_type = self.reg_types.get(wname)
            dbits = dst.container_bits

            if pair is not None:
                def function_pair(L, s, c):
                    vals = [r(L, s, c) for r, _ in readers]
                    with np.errstate(all="ignore"):
                        outs = api.evaluate(form, *vals, tininess=c.tininess, destinations=2)
                    for (w, _), out in zip(pair, outs):
                        w(L, s, np.asarray(out))
                return self._step(ins, function_pair, reads, [name for _, name in pair])

            if api.leaves_results_open(form):
                return self._left_open(ins, form, readers, reads, write, wname, dbits, signed, reg_type)

            def function(L, s, c):
                vals = [r(L, s, c) for r, _ in readers]
                with np.errstate(all="ignore"):
                    out = np.asarray(api.evaluate(form, *vals, tininess=c.tininess))
                write(L, s, _extend(out, dbits, signed, reg_type))
            return self._step(ins, function, reads, [wname], pure=_register_sources(ins))
        if form.kind == "exact":
            def exact(L, s, c):
                vals = [r(L, s, c) for r, _ in readers]
                with np.errstate(all="ignore"):
                    out = api.evaluate(form, *vals, tininess=c.tininess)
                write(L, s, out)
            return self._step(ins, exact, reads, [wname], pure=_register_sources(ins))
        if form.lanes != 1:
            element = self.db.resolve(form.name[:-len(form.type)] + form.element_format)
            if element is None or element.kind != "contract":
                raise self.error(ins, f"unsupported packed approximate instruction '{ins.opcode}'")
            return self._step(ins, _packed_approximate_runner(form, element, readers, write, wname), reads, [wname],
                              approximate=form.name)
        return self._step(ins, _approximate_runner(form, readers, write, wname), reads, [wname],
                          approximate=form.name)

    def _left_open(self, ins, form, readers, reads, write, wname, dbits, signed, reg_type) -> Step:
        """A form some of whose results the ISA leaves open (``div.s32`` by zero): the model's
        representative is written, and the lanes whose result is open are marked unknown -- no
        result is wrong there, none is verified (:func:`tilecheck.model.api.unspecified`)."""
        def left_open(L, s, c):
            vals = [r(L, s, c) for r, _ in readers]
            with np.errstate(all="ignore"):
                out = np.asarray(api.evaluate(form, *vals, tininess=c.tininess))
                open_ = np.asarray(api.unspecified(form, *vals), dtype=bool)
            if open_.any():
                unk = L.unknown.copy()
                unk[np.flatnonzero(open_) if s is None else s[open_]] = True
                L.unknown = unk
            write(L, s, _extend(out, dbits, signed, reg_type))
        step = self._step(ins, left_open, reads, [wname])
        step.unspecified = lambda operands: api.unspecified_why(form, *operands)
        return step

    def _contractions(self, steps: list[Step]) -> None:
        """Let an unqualified add/sub.f32/f64 fed by an unqualified mul of the same block fork into
        the fused result as well (ptxas may contract them; PTX ISA, add/mul without rounding)."""
        label_at = set(self.labels.values())
        for j, step in enumerate(steps):
            ins = step.instr
            m = re.fullmatch(r"(add|sub)(\.ftz)?\.(f32|f64)", ins.opcode)
            if m is None or step.kind != "op" or len(ins.operands) != 3:
                continue
            for which in (1, 2):
                src = ins.operands[which]
                if not isinstance(src, Reg):
                    continue
                mul = None
                for i in range(j - 1, -1, -1):
                    if i + 1 in label_at or steps[i].kind != "op":
                        break
                    if src.name in steps[i].writes:
                        cand = steps[i].instr
                        if cand.opcode == f"mul{m.group(2) or ''}.{m.group(3)}" and cand.guard is None \
                                and step.guard is None and all(isinstance(o, (Reg, Imm)) for o in cand.operands):
                            mul = (i, cand)
                        break
                if mul is None:
                    continue
                i, cand = mul
                srcs = {o.name for o in cand.operands[1:] if isinstance(o, Reg)}
                if any(srcs & steps[k].writes for k in range(i + 1, j)):
                    continue
                fma_name = f"fma.rn{m.group(2) or ''}.{m.group(3)}"
                fma = self.db.resolve(fma_name)
                if fma is None:
                    continue
                step.run = _contracted_runner(self, ins, step.run, cand, which, m.group(1), fma, m.group(3))
                step.reads = step.reads | srcs
                step.approximate = f"{ins.opcode} (may be contracted with line {cand.line} into {fma_name})"
                break


def _contracted_runner(comp: _Compiler, ins, separate, mul_ins, which, head, fma, type_):
    width = TYPES[type_][0]
    fmt = comp._format(type_)
    ma, _ = comp.reader(mul_ins, mul_ins.operands[1], width, type_)
    mb, _ = comp.reader(mul_ins, mul_ins.operands[2], width, type_)
    other, _ = comp.reader(ins, ins.operands[3 - which], width, type_)
    write, wname = comp.writer(ins, ins.operands[0])
    sign = _UINT[width].type(fmt.sign_mask)

    def run(L, s, c):
        if not c.contraction or c.approx == "reference":
            separate(L, s, c)
            return
        a, b, o = ma(L, s, c), mb(L, s, c), other(L, s, c)
        if head == "sub":
            if which == 1:   # (a*b) - o
                o = o ^ sign
            else:            # o - (a*b)
                a = a ^ sign
        with np.errstate(all="ignore"):
            fused = np.asarray(api.evaluate(fma, a, b, o, tininess=c.tininess))
        separate(L, s, c)
        plain = L.regs[wname] if s is None else L.regs[wname][s]
        values = np.stack([plain, fused.astype(plain.dtype)], axis=1)
        valid = np.stack([np.ones(plain.shape, bool), fused != plain], axis=1)
        _fork(L, s, c, wname, values, valid, None)
    return run


def _operands_or_reference(form, readers, write, L, s, c):
    """The operands of an approximate instruction, or None after writing its representative value
    (``--approx reference``)."""
    vals = [r(L, s, c) for r, _ in readers]
    c.approx_used.add(form.name)
    if c.approx != "reference":
        return vals
    with np.errstate(all="ignore"):
        write(L, s, api.reference(form, *vals, tininess=c.tininess))
    return None


def _approximate_runner(form, readers, write, wname):
    def run(L, s, c):
        vals = _operands_or_reference(form, readers, write, L, s, c)
        if vals is None:
            return
        ch = _choices_dedup(form, vals, c)
        provisional = form.contract is not None and form.contract.provisional and c.approx == "all"
        if ch.uniform and not ch.unbounded[0] and s is None and not c.trace and not provisional:
            if wname is None:
                return
            cols = np.flatnonzero(_collapsed(L, s, c, wname, ch.values, ch.valid)[0])
            dtype = L.dtypes[wname]
            if cols.size == 1:
                L.regs[wname] = np.full(L.size, ch.values[0, cols[0]], dtype=dtype)
            else:
                # every lane allows the same choices (a block with one divisor, say): one contiguous
                # copy of the lanes per choice
                _room(L, c, L.size * cols.size)
                L.take_tiled(cols.size, c.live - {wname}, defer=c.defer_fork)
                L.regs[wname] = np.repeat(ch.values[0, cols].astype(dtype), L.size // cols.size)
            return
        ch = _judgeable(L, s, c, form, ch.per_lane(vals[0].shape[0]))
        _fork(L, s, c, wname, ch.values, ch.valid, ch.reference)
    return run


def _judgeable(L: Lanes, s, c: RunContext, form, ch: Choices) -> Choices:
    """``ch`` with the lanes no bound decides marked unknown and kept to their representative value:
    unbounded lanes, and under a provisional contract (a bound no document states) every lane where
    the bound is all that decides the result (more than one result allowed, no exact special case)."""
    if form.contract is not None and form.contract.provisional and c.approx == "all":
        ch.unbounded = ch.unbounded | (ch.valid.sum(axis=1) > 1)
    if ch.unbounded.any():
        unk = L.unknown.copy()
        unk[np.flatnonzero(ch.unbounded) if s is None else s[ch.unbounded]] = True
        L.unknown = unk
        ch.valid = ch.valid.copy()
        ch.valid[ch.unbounded] = False
        ref_col = np.argmax(ch.values == ch.reference[:, None], axis=1)
        ch.valid[np.flatnonzero(ch.unbounded), ref_col[ch.unbounded]] = True
    return ch


def _packed_approximate_runner(form, element, readers, write, wname):
    """A packed approximate instruction (``ex2.approx.f16x2``): each element's choices from the
    element form's contract, and every combination of them forked (the elements are independent)."""
    fmt = form.format
    dtype = _UINT[form.container_bits]

    def run(L, s, c):
        vals = _operands_or_reference(form, readers, write, L, s, c)
        if vals is None:
            return
        n = vals[0].shape[0]
        per = [api.split_lanes(np, v, fmt, form.lanes) for v in vals]
        values, valid, reference = None, None, None
        for i in range(form.lanes):
            ops_i = [p[i].astype(_UINT[fmt.width]) for p in per]
            ch = _judgeable(L, s, c, element, _choices_dedup(element, ops_i, c).per_lane(n))
            v = ch.values.astype(np.uint64) << np.uint64(i * fmt.width)
            ref = ch.reference.astype(np.uint64) << np.uint64(i * fmt.width)
            if values is None:
                values, valid, reference = v, ch.valid, ref
                continue
            # every (earlier columns, this element's column) pair, row-major
            values = (values[:, :, None] | v[:, None, :]).reshape(n, -1)
            valid = (valid[:, :, None] & ch.valid[:, None, :]).reshape(n, -1)
            reference = reference | ref
        _fork(L, s, c, wname, values.astype(dtype), valid, reference.astype(dtype))
    return run


# keyed by the Form object itself (identity), not its name: two spec databases may define one
# spelling with different formats or contracts
_CHOICE_CACHE: dict = {}
_SCALED: dict = {}  # (form, reading, tininess) -> ScaledChoices or ScaledPairChoices
_CHOICE_CACHE_LIMIT = 1 << 18


def _choices_dedup(form, vals, c):
    """Allowed choices computed once per distinct operand tuple: unary forms whose inputs repeat
    (inputs from 16-bit domains, a fixed divisor per exhaustive block) look them up in a cache;
    binary32 rcp/sqrt/rsqrt and division contracts are remembered per significand (or pair of
    significands) and scaled (:class:`ScaledChoices`, :class:`ScaledPairChoices`)."""
    n = vals[0].shape[0]
    if len(vals) == 2 and n > 64 and ScaledPairChoices.applies(form):
        table_key = (form, c.ulp_reading, c.tininess)
        if table_key not in _SCALED:
            _SCALED[table_key] = ScaledPairChoices(form, c.ulp_reading, c.tininess)
        return _SCALED[table_key].choices(vals[0], vals[1])
    if len(vals) != 1 or n <= 64:
        return allowed_choices(form, vals, ulp_reading=c.ulp_reading, tininess=c.tininess)
    key = vals[0]
    first = key[0]
    uniform = bool((key == first).all())
    if uniform:
        uniq, inv = key[:1], None
    elif ScaledChoices.applies(form):
        table_key = (form, c.ulp_reading, c.tininess)
        if table_key not in _SCALED:
            _SCALED[table_key] = ScaledChoices(form, c.ulp_reading, c.tininess)
        return _SCALED[table_key].choices(key)
    else:
        uniq, inv = np.unique(key, return_inverse=True)
        if uniq.shape[0] * 2 > n:
            return allowed_choices(form, vals, ulp_reading=c.ulp_reading, tininess=c.tininess)
    table = _CHOICE_CACHE.setdefault((form, c.ulp_reading, c.tininess), {})
    if len(table) > _CHOICE_CACHE_LIMIT:
        table.clear()
    rows = [table.get(int(u)) for u in uniq] if uniq.shape[0] <= 4096 else [None] * uniq.shape[0]
    missing = [j for j, r in enumerate(rows) if r is None]
    if missing:
        ch = allowed_choices(form, [uniq[missing]], ulp_reading=c.ulp_reading, tininess=c.tininess)
        for k, j in enumerate(missing):
            rows[j] = (ch.values[k], ch.valid[k], ch.unbounded[k], ch.reference[k])
            if uniq.shape[0] <= 4096:
                table[int(uniq[j])] = rows[j]
    width = max(r[0].shape[0] for r in rows)
    values = np.zeros((len(rows), width), dtype=rows[0][0].dtype)
    valid = np.zeros((len(rows), width), dtype=bool)
    for j, r in enumerate(rows):
        # rows may differ in width only through the scan's depth: align the NaN column last
        values[j, :r[0].shape[0] - 1] = r[0][:-1]
        valid[j, :r[1].shape[0] - 1] = r[1][:-1]
        values[j, -1], valid[j, -1] = r[0][-1], r[1][-1]
    unbounded = np.array([r[2] for r in rows], dtype=bool)
    reference = np.array([r[3] for r in rows], dtype=rows[0][3].dtype)
    if uniform:
        return Choices(values, valid, unbounded, reference, uniform=True)
    return Choices(values[inv], valid[inv], unbounded[inv], reference[inv])


def _collapsed(L: Lanes, s, c: RunContext, wname, values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``valid`` without the choices that the step ``c.collapse`` maps, with the lane's other
    registers, to the value of the valid choice before them in their row (a selected lane): a
    dropped choice leads to the very state of one kept (:func:`_collapse_target`), so every
    result the contract allows is still accounted for. Choices come in order (a run of patterns,
    the NaN last), and the usual use, a conversion, is monotone: equal values are then neighbours,
    found by comparing each with the valid one before it (a duplicate elsewhere is only kept,
    never wrongly dropped)."""
    nxt = c.collapse
    rows, width = values.shape
    if nxt is None or wname is None or width < 2:
        return valid
    if rows != (L.size if s is None else s.size) and nxt.reads != {wname}:
        return valid  # one row for every lane (a uniform fork): the other registers differ by lane
    others = {name: L.reg(name) if s is None else L.reg(name)[s] for name in nxt.reads - {wname}}
    (out,) = nxt.writes
    keep = valid.copy(order="K")  # column by column below: keep the choices' (column-major) layout
    prev = seen = None
    for j in range(width):
        ok = valid[:, j]
        at = np.flatnonzero(ok)
        if at.size == 0:
            continue
        if at.size * 4 > rows:  # most rows: the whole column (gathering would cost more)
            regs, col = dict(others), values[:, j]
        else:  # a few rows (the NaN column, the ends of the widest runs): only theirs
            regs, col = {name: v[at] for name, v in others.items()}, values[at, j]
        regs[wname] = col.astype(L.dtypes[wname])
        size = col.shape[0]
        scratch = Lanes(regs, np.zeros(size, dtype=np.int64), None, np.zeros(size, dtype=bool), dtypes=L.dtypes)
        nxt.run(scratch, None, c)
        mapped = scratch.regs[out]
        if prev is None:
            prev, seen = np.zeros(rows, dtype=mapped.dtype), np.zeros(rows, dtype=bool)
        if size == rows:
            keep[:, j] &= ~(seen & (mapped == prev))
            np.copyto(prev, mapped, where=ok)
            seen |= ok
        else:
            keep[at[seen[at] & (mapped == prev[at])], j] = False
            prev[at] = mapped
            seen[at] = True
    return keep


def _fork(L: Lanes, s, c: RunContext, wname, values: np.ndarray, valid: np.ndarray, reference) -> None:
    """Give each selected lane one copy per valid value (columns of ``values``) and write it; the
    choices the next step maps to one value fork once (:func:`_collapsed`)."""
    valid = _collapsed(L, s, c, wname, values, valid)
    if wname is not None and not c.trace and _fork_appending(L, s, c, wname, values, valid):
        return
    n = L.size
    counts_sub = valid.sum(axis=1)
    idx = np.arange(n) if s is None else s
    if wname is None:
        return
    trace_key = c.step if c.trace else None
    if (counts_sub == 1).all():
        first = np.argmax(valid, axis=1)
        chosen = values[np.arange(values.shape[0]), first]
        arr = L.reg(wname).copy()
        arr[idx] = chosen
        L.regs[wname] = arr
        if trace_key is not None and reference is not None:
            _trace_record(L, trace_key, idx, chosen, reference, values, valid, n)
        return
    if s is None and not c.trace and bool((valid == valid[0]).all()):
        # every lane allows the same choices (a block with one divisor, say): copy the lanes block
        # by block, one contiguous block per choice, instead of gathering
        cols = np.flatnonzero(valid[0])
        _room(L, c, L.size * len(cols))
        L.take_tiled(len(cols), c.live | {wname})
        L.regs[wname] = np.concatenate([values[:, j] for j in cols]).astype(L.dtypes[wname])
        return
    counts = np.ones(n, dtype=np.int64)
    counts[idx] = counts_sub
    _room(L, c, int(counts.sum()))
    rep = np.repeat(np.arange(n), counts)
    L.regs[wname] = L.reg(wname)
    L.take(rep, None if c.trace else (c.live | {wname}))
    starts = np.cumsum(counts) - counts
    total = int(counts_sub.sum())
    pos = np.repeat(starts[idx], counts_sub) + (np.arange(total) - np.repeat(np.cumsum(counts_sub) - counts_sub,
                                                                              counts_sub))
    arr = L.regs[wname]
    arr[pos] = values[valid]
    if trace_key is not None and reference is not None:
        lanes_of = np.repeat(np.arange(values.shape[0]), counts_sub)
        _trace_record(L, trace_key, pos, values[valid], reference[lanes_of], values[lanes_of], valid[lanes_of],
                      L.size)


def _fork_appending(L: Lanes, s, c: RunContext, wname, values: np.ndarray, valid: np.ndarray) -> bool:
    """:func:`_fork` without tracing, column by column: each selected lane keeps its place with its
    first valid value, and the copies for its further valid values are appended after all lanes
    (:meth:`Lanes.append_copies`), instead of every lane being gathered into runs of copies.
    Lanes come out in another order, holding the same (input, choices) combinations: nothing but
    a trace depends on the order (results are judged per lane and gathered per input). False, and
    nothing done, where some selected lane allows no value (:func:`_fork` then drops it)."""
    seen = chosen = None
    rows, extra = [], []
    for j in range(values.shape[1]):
        ok = valid[:, j]
        if not ok.any():
            continue
        col = values[:, j]
        if seen is None:
            chosen, seen = col.copy(), ok.copy()
            continue
        more = np.flatnonzero(ok & seen)
        if more.size:
            rows.append(more)
            extra.append(col[more])
        new = ok & ~seen
        if new.any():
            np.copyto(chosen, col, where=new)
            seen |= new
    if seen is None or not seen.all():
        return False
    dtype = L.dtypes[wname]
    if s is None:
        arr = chosen.astype(dtype, copy=False)
    else:
        arr = L.reg(wname).copy()
        arr[s] = chosen
    if rows:
        more = np.concatenate(rows)
        _room(L, c, L.size + more.size)
        L.append_copies(more if s is None else s[more], c.live - {wname}, defer=c.defer_fork)
        arr = np.concatenate([arr] + [e.astype(dtype, copy=False) for e in extra])
    L.regs[wname] = arr
    return True


def _trace_record(L, key, pos, chosen, reference, values, valid, n):
    """Record, per lane, what an approximate step returned and the bounds its contract allowed."""
    ret = np.zeros(n, dtype=np.uint64)
    ref = np.zeros(n, dtype=np.uint64)
    lo = np.zeros(n, dtype=np.uint64)
    hi = np.zeros(n, dtype=np.uint64)
    has = np.zeros(n, dtype=bool)
    ret[pos] = chosen
    ref[pos] = reference
    first = np.argmax(valid, axis=1)
    # last valid non-NaN column: columns are sorted, NaN last
    finite_valid = valid.copy()
    finite_valid[:, -1] = False
    lastcol = finite_valid.shape[1] - 1 - np.argmax(finite_valid[:, ::-1], axis=1)
    rows = np.arange(values.shape[0])
    lo[pos] = values[rows, first]
    hi[pos] = values[rows, lastcol]
    has[pos] = True
    if key in L.trace:  # the step ran before (a loop): keep the last value per lane
        old = L.trace[key]
        ret = np.where(has, ret, old[0])
        ref = np.where(has, ref, old[1])
        lo = np.where(has, lo, old[2])
        hi = np.where(has, hi, old[3])
        has = has | old[4]
    L.trace[key] = (ret, ref, lo, hi, has)


# ---------------------------------------------------------------------------------------------
# helpers


def _record_store(L: Lanes, s, region: int, nbytes: int, offs, values, key, where: Location) -> None:
    """Record a store per lane (lanes fork after it: stores are lane state, not shared memory).

    A lane's newer store to the same bytes of a region supersedes its older ones (the caller
    reads, per lane, the records left), so a thread may store several elements, each with its own
    record. Each store instruction (``key``: its step, and the 64-bit part of a wider vector store)
    keeps one record that later executions update: a loop's stores take constant space however
    many times it runs -- which is why a lane storing twice from one instruction to other bytes
    (a store in a loop over elements) is refused rather than losing its first element."""
    idx = slice(None) if s is None else s
    pos = L.store_slots.get(key)
    for k, (r, nb, o, v, d) in enumerate(L.stores):
        if r != region or k == pos:
            continue
        dk = d[idx]
        if not dk.any():
            continue
        ok = o[idx]
        overlap = dk & (ok < offs + nbytes) & (offs < ok + nb)
        if not overlap.any():
            continue
        if nb != nbytes or (ok[overlap] != (offs[overlap] if np.ndim(offs) else offs)).any():
            raise UnsupportedPtxError("a store that overwrites part of an earlier store's bytes (stores of "
                                      "different widths to overlapping addresses)", where)
        d = d.copy()
        if s is None:
            d &= ~overlap
        else:
            d[np.asarray(s)[overlap]] = False
        L.stores[k] = (r, nb, o, v, d)
    if pos is None and s is None:
        # every lane's first store of this instruction: the arrays are fresh (never updated in place)
        L.store_slots[key] = len(L.stores)
        L.stores.append((region, nbytes, offs, np.asarray(values), np.ones(L.size, dtype=bool)))
        return
    if pos is None:
        n = L.size
        rec = (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=bool))
        L.store_slots[key] = len(L.stores)
        L.stores.append((region, nbytes) + rec)
        pos = L.store_slots[key]
    r, nb, o, v, d = L.stores[pos]
    if (d[idx] & (o[idx] != offs)).any():
        raise UnsupportedPtxError("a store instruction that writes several elements of one thread (a store in a "
                                  "loop over elements): each element needs its own store instruction", where)
    o, v, d = o.copy(), v.copy(), d.copy()
    o[idx] = offs
    v[idx] = values
    d[idx] = True
    L.stores[pos] = (region, nbytes, o, v, d)


_FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2")


def param_slot(name: str, offset: int) -> tuple[str, int]:
    """Where byte ``offset`` of parameter ``name`` lives: a parameter is held per lane in 64-bit
    words, ``name`` for bytes 0-7, ``name#1`` for bytes 8-15, ...; returns (word key, bit shift).
    An access never straddles two words: PTX aligns every access to its own size."""
    word, byte = divmod(offset, 8)
    return (name if word == 0 else f"{name}#{word}"), 8 * byte


def param_words(param) -> list[str]:
    """The word keys of a parameter (:func:`param_slot`)."""
    return [param.name] + [f"{param.name}#{w}" for w in range(1, (param.nbytes + 7) // 8)]


def _param_word(L: "Lanes", key: str, s) -> np.ndarray:
    """One 64-bit word of a parameter on the lanes ``s`` (a word never written reads as zeros:
    the bytes of a call's parameter that its code did not store)."""
    v = L.params.get(key)
    if v is None:
        return np.zeros(L.size if s is None else len(s), dtype=np.uint64)
    return v if s is None else v[s]


def _register_sources(ins: Instr) -> bool:
    """Whether every source operand of ``ins`` is a register or an immediate (no special register,
    address or symbol): a step computing from such operands alone is pure."""
    return all(isinstance(op, (Reg, Imm)) for op in ins.operands[1:])


def _collapse_target(steps: list, k: int, live_in: list) -> "Step | None":
    """The step through which the choices of approximate step ``k`` may be collapsed, or None.

    It is the first later step that reads ``k``'s result ``r``, reached in straight line (no branch,
    no return before it), pure, unguarded and writing one other register, with ``r`` dead after
    it, forking nothing itself; the steps between neither read nor write ``r`` nor write what it reads. Every choice of
    ``k`` then runs the steps between alike, and the state after the use depends on the choice
    only through the value the use computes from it and the lane's other registers: choices it
    maps to one value lead to one state, and one of them stands for all (:func:`_collapsed`)."""
    step = steps[k]
    if step.kind != "op" or step.approximate is None or len(step.writes) != 1:
        return None
    (r,) = step.writes
    written: set = set()
    for j in range(k + 1, len(steps)):
        use = steps[j]
        if use.kind != "op":
            return None
        if r in use.reads:
            ok = (use.pure and use.approximate is None and use.guard is None and len(use.writes) == 1
                  and r not in use.writes
                  and not (use.reads & written) and r not in live_in[j + 1])
            return use if ok else None
        if r in use.writes:
            return None
        written |= use.writes
    return None


def _pair(op) -> tuple[str, str] | None:
    """The two register names of a ``p|q`` destination, else None."""
    if isinstance(op, Reg) and "|" in op.name:
        names = tuple(op.name.split("|"))
        return names if len(names) == 2 and all(names) else None
    return None


_CROSS_THREAD = {
    "shfl": "a warp shuffle: threads exchange values, as a reduction or a scan (tl.sum, tl.cumsum) does; "
            "such a kernel is not elementwise",
    "vote": "a warp vote: threads combine predicates; such a kernel is not elementwise",
    "redux": "a warp reduction: such a kernel is not elementwise",
    "atom": "an atomic update: threads combine values in memory; such a kernel is not elementwise",
    "red": "a reduction in memory: threads combine values; such a kernel is not elementwise",
    "mma": "a warp's matrix multiply-accumulate on tensor cores (tl.dot): each result combines many "
           "threads' elements; such a kernel is not elementwise",
    "wgmma": "a warpgroup's matrix multiply-accumulate on tensor cores (tl.dot on sm_90): each result combines "
             "many threads' elements; such a kernel is not elementwise",
}
"""Why the instructions that combine values across threads are unsupported (a reduction is no
elementwise kernel), for the refusal's message."""


def _per_element(one, type_: str, *vals: np.ndarray) -> np.ndarray:
    """``one`` applied to each element of packed ``f16x2``/``bf16x2`` operands (element 0 in the low
    half), or to the scalar operands themselves."""
    if type_ not in ("f16x2", "bf16x2"):
        return one(*vals)
    halves = [one(*[((v >> np.uint32(k)) & np.uint32(0xFFFF)).astype(np.uint16) for v in vals]).astype(np.uint32)
              for k in (0, 16)]
    return halves[0] | (halves[1] << np.uint32(16))


def _scalar(type_: str) -> str | None:
    """The type an immediate of this instruction is read as (packed operands: raw bits)."""
    return None if type_ in ("f16x2", "bf16x2") else type_


def _int_typed(mods) -> bool:
    types = [m for m in mods if m in TYPES]
    return bool(types) and TYPES[types[-1]][1] in ("u", "s")


def _extend(v: np.ndarray, width: int, signed: bool, reg_type: str | None) -> np.ndarray:
    """A ``width``-bit value written to a register of ``reg_type``: sign-extended for signed types."""
    if reg_type is None or reg_type not in TYPES:
        return v
    rw = TYPES[reg_type][0]
    if rw > width and signed:
        sv = v.astype(np.uint64)
        top = (sv >> np.uint64(width - 1)) & np.uint64(1)
        ext = np.uint64(((1 << rw) - 1) ^ ((1 << width) - 1))
        return np.where(top == 1, sv | ext, sv)
    return v


def _float_bits(value: float, ftype: str, formats) -> int:
    if ftype == "f64":
        return int(np.array([value], dtype=np.float64).view(np.uint64)[0])
    if ftype == "f32":
        return int(np.array([value], dtype=np.float32).view(np.uint32)[0])
    if ftype == "f16":
        return int(np.array([value], dtype=np.float16).view(np.uint16)[0])
    fmt = formats[ftype]
    return fmt.from_fraction(Fraction(value))


def _isnan(a: np.ndarray, fmt) -> np.ndarray:
    dt = a.dtype.type
    return (a & dt(fmt.magnitude_mask)) > dt(fmt.exponent_mask)


def _flush(a: np.ndarray, fmt) -> np.ndarray:
    dt = a.dtype.type
    sub = ((a & dt(fmt.exponent_mask)) == 0)
    return np.where(sub, a & dt(fmt.sign_mask), a)


def _ordinal_bits(a: np.ndarray, fmt) -> np.ndarray:
    dt = a.dtype.type
    mag = (a & dt(fmt.magnitude_mask)).astype(np.int64)
    return np.where((a & dt(fmt.sign_mask)) != 0, -mag - 1, mag)


def _to_f64(a: np.ndarray, type_: str) -> np.ndarray:
    if type_ == "f64":
        return a.view(np.float64)
    if type_ == "f32":
        return a.view(np.float32).astype(np.float64)
    if type_ == "f16":
        return a.view(np.float16).astype(np.float64)
    return (a.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)  # bf16


def _float_compare(cmp: str, type_: str, ftz: bool, formats):
    if type_ not in ("f16", "bf16", "f32", "f64"):
        return None
    fmt = formats[type_]
    base = cmp[:-1] if cmp.endswith("u") and cmp not in ("nu",) and len(cmp) == 3 else cmp
    unordered = len(cmp) == 3 and cmp.endswith("u")
    fns = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}
    if cmp in ("num", "nan"):
        pass
    elif base not in fns:
        return None

    def compare(a, b):
        if ftz:
            a, b = _flush(a, fmt), _flush(b, fmt)
        with np.errstate(invalid="ignore"):  # widening a signalling NaN quiets it: not an event here
            x, y = _to_f64(a, type_), _to_f64(b, type_)
        nan = np.isnan(x) | np.isnan(y)
        if cmp == "num":
            return ~nan
        if cmp == "nan":
            return nan
        with np.errstate(invalid="ignore"):
            t = fns[base](x, y) & ~nan
        return t | nan if unordered else t
    return compare


def _int_compare(cmp: str, kind: str, width: int):
    fns = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
    if cmp not in fns or (kind == "b" and cmp not in ("eq", "ne")) or (kind == "s" and cmp in ("lo", "ls", "hi", "hs")):
        return None
    fn = fns[cmp]
    if kind == "s":
        st = _SINT[width]
        return lambda a, b: fn(a.view(st), b.view(st))
    return fn


def _special(name: str, L: Lanes, s, c: RunContext) -> np.ndarray:
    gid = (L.origin if s is None else L.origin[s]) + c.thread_base
    base, _, axis = name.partition(".")
    if c.single_cta and base in ("%ctaid", "%nctaid"):
        # one CTA per launch: the launches run side by side as lanes, each with its own pointers
        return np.full(gid.shape, 1 if base == "%nctaid" and axis == "x" else 0, dtype=np.int64)
    if base == "%tid":
        return (gid % c.block) if axis == "x" else np.zeros_like(gid)
    if base == "%ntid":
        return np.full(gid.shape, c.block if axis == "x" else 1, dtype=np.int64)
    if base == "%ctaid":
        return (gid // c.block) if axis == "x" else np.zeros_like(gid)
    if base == "%nctaid":
        # the grid that covers the launched threads: a grid-stride loop then runs once per thread
        # (a fixed large grid would make blockDim * gridDim wrap to 0 in 32 bits: an endless loop)
        grid = -(-c.threads // c.block) if c.threads else 1 << 24
        return np.full(gid.shape, grid if axis == "x" else 1, dtype=np.int64)
    if base == "%laneid":
        return gid % 32
    if base == "%warpid":
        return (gid % c.block) // 32
    if base == "%warpsize":
        return np.full(gid.shape, 32, dtype=np.int64)
    return np.full(gid.shape, -(-c.block // 32), dtype=np.int64)


def _locate(memory: Memory | None, addr: np.ndarray, nbytes: int, where: Location):
    if memory is None:
        raise ExecutionError(f"{where}: global memory access in a function run without memory")
    if addr.size == 0:
        return 0, np.zeros(0, dtype=np.int64)
    addr = addr.astype(np.uint64, copy=False)
    # every address lies in one region iff the lowest and the highest do (regions are intervals)
    lo, hi = int(addr.min()), int(addr.max())
    k = (lo - REGION_BASE) >> REGION_SHIFT
    if lo < REGION_BASE or (hi - REGION_BASE) >> REGION_SHIFT != k or k >= len(memory.regions):
        raise OutsideBuffersError(f"{where}: a load or store outside the kernel's buffers "
                             "(the elementwise ABI reads each pointer at the thread's index)")
    offs = (addr - np.uint64(memory.pointer(k))).view(np.int64)
    size = memory.regions[k][1].size
    # region starts are aligned far beyond any access width: an offset is aligned iff its address is
    if nbytes & (nbytes - 1) == 0:
        misaligned = bool(int(np.bitwise_or.reduce(addr)) & (nbytes - 1))
    else:
        misaligned = bool((offs % nbytes).any())
    if hi - memory.pointer(k) + nbytes > size or misaligned:
        raise OutsideBuffersError(f"{where}: an access outside (or misaligned in) buffer {memory.regions[k][0]}")
    return k, offs


def constant_layout(function: Function) -> tuple[dict, np.ndarray | None]:
    """Where each initialized module variable ``function`` names lies after :data:`CONSTANT_BASE`
    (name -> (byte offset, space)), each aligned as declared, and their bytes together (None when
    it names none)."""
    offsets, blob = {}, bytearray()
    for const in function.constants:
        blob += bytes(-len(blob) % max(1, const.align))
        offsets[const.name] = (len(blob), const.space)
        blob += const.data
    return offsets, (np.frombuffer(bytes(blob), dtype=np.uint8) if offsets else None)


def _load_constants(blob: np.ndarray, a: np.ndarray, nbytes: int, count: int, where: Location) -> list:
    """``count`` elements of ``nbytes`` at addresses ``a`` inside the module's initialized data."""
    offs = a.astype(np.uint64) - np.uint64(CONSTANT_BASE)
    if int(offs.max()) + nbytes * count > blob.size or (offs % np.uint64(nbytes)).any():
        raise OutsideBuffersError(f"{where}: a load outside (or misaligned in) the module's initialized data")
    cols = offs.astype(np.int64)[:, None] + np.arange(nbytes * count, dtype=np.int64)[None, :]
    data = np.ascontiguousarray(blob[cols])
    return [data[:, j * nbytes:(j + 1) * nbytes].copy().view(_UINT[8 * nbytes]).reshape(-1) for j in range(count)]


def frame_layout(function: Function) -> tuple[dict, int]:
    """Where each ``.local`` array of ``function`` starts in a thread's local memory and the bytes
    they take together (:func:`tilecheck.sim.frontend.variable_layout`)."""
    return variable_layout(function.frames)


def _split_local(L: Lanes, s, a: np.ndarray, space: str | None):
    """(lanes, addresses) of the accesses that name local memory and of those that name global
    memory: by the space the instruction names, or, for a generic access, by each address."""
    if space == "global":
        return None, (s, a)
    rows = np.arange(L.size) if s is None else s
    if space == "local":  # a 32-bit local address is an offset in the local window
        return (rows, np.where(a < np.uint64(LOCAL_BASE), a + np.uint64(LOCAL_BASE), a)), None
    local = a >= np.uint64(LOCAL_BASE)
    if not local.any():
        return None, (s, a)
    if local.all():
        return (rows, a), None
    return (rows[local], a[local]), (rows[~local], a[~local])


def _local_columns(L: Lanes, a: np.ndarray, nbytes: int, where: Location) -> np.ndarray:
    """Per access, the byte columns of the lanes' local memory it covers; an execution error for
    an address outside the declared local arrays or misaligned."""
    size = 0 if L.local is None else L.local.shape[1]
    offs = a.astype(np.int64) - np.int64(LOCAL_BASE)  # below the window: negative (or huge) offsets
    if ((a < np.uint64(LOCAL_BASE)).any() or (offs < 0).any() or (offs + nbytes > size).any()
            or (offs % nbytes).any()):
        raise ExecutionError(f"{where}: a local memory access outside (or misaligned in) the function's "
                             f".local arrays ({size} bytes)")
    return offs[:, None] + np.arange(nbytes)


def _local_flow(L: Lanes, c: RunContext, rows: np.ndarray, cols: np.ndarray, where: Location) -> None:
    """Record (discovery) or check (``c.local_flows``) the stores whose bytes the local load at
    ``c.step`` reads in lanes ``rows`` (byte columns ``cols``)."""
    writers = set(np.unique(L.local_writer[rows[:, None], cols]).tolist()) if L.local_writer is not None else {-1}
    if c.record_loads:
        L.local_flows.update((c.step, w) for w in writers)
    if c.local_flows is not None:
        unseen = writers - c.local_flows.get(c.step, frozenset())
        if unseen:
            raise ExecutionError(f"{where}: in this run the load from local memory reads bytes written by a store "
                                 "it never read from in the discovery run, which found the element each value "
                                 "stored through local memory belongs to: refused rather than guessed")


def _load(L: Lanes, s, c: RunContext, a: np.ndarray, nbytes: int, count: int, space: str | None,
          where: Location, constants: np.ndarray | None = None) -> list:
    """``count`` consecutive elements of ``nbytes`` each at addresses ``a`` (per lane: uint64, or
    the element's own unsigned type where every access is global), from local or global memory as
    the space and the addresses say (``constants``: the function's initialized module data, at
    :data:`CONSTANT_BASE`)."""
    if space is None and L.shared is not None and shared.generic(L, a, where):
        return shared.load(L, s, c, shared.to_shared(a), nbytes, count, where)
    if constants is not None and space != "local" and a.size and int(a.min()) >= CONSTANT_BASE \
            and int(a.max()) < LOCAL_BASE:
        return _load_constants(constants, a, nbytes, count, where)
    local, glob = _split_local(L, s, a, space)
    out = [np.zeros(a.shape[0], dtype=np.uint64) for _ in range(count)] if local is not None else [None] * count
    if local is not None:
        rows, addr = local
        cols = _local_columns(L, addr, nbytes * count, where)
        data = np.ascontiguousarray(L.local[rows[:, None], cols])
        if c.tracks_local:
            _local_flow(L, c, rows, cols, where)
        pick = slice(None) if glob is None else (a >= np.uint64(LOCAL_BASE))
        for j in range(count):
            out[j][pick] = data[:, j * nbytes:(j + 1) * nbytes].copy().view(_UINT[8 * nbytes]).reshape(-1)
    if glob is not None:
        addr = glob[1]
        region, offs = _locate(c.memory, addr, nbytes * count, where)
        words = c.memory.regions[region][1].view(_UINT[8 * nbytes])
        if c.record_loads:
            L.loads.append((region, nbytes * count, offs, L.origin if glob[0] is None else L.origin[glob[0]], c.step))
        index = offs >> np.int64(nbytes.bit_length() - 1)  # offsets are aligned and non-negative
        for j in range(count):
            if local is None:  # every access global: the words themselves (callers widen them)
                out[j] = words[index + j if j else index]
            else:
                out[j][a < np.uint64(LOCAL_BASE)] = words[index + j]
    return out


def _store_global(L: Lanes, s, c: RunContext, a: np.ndarray, nbytes: int, value, where: Location,
                  part: int) -> None:
    """A store of one element of ``nbytes`` to global memory at addresses ``a`` (a shared store
    redirected there), recorded as record ``part`` of the step."""
    region, offs = _locate(c.memory, a, nbytes, where)
    _record_store(L, s, region, nbytes, offs, np.asarray(value).astype(_UINT[8 * nbytes], copy=False),
                  (c.step, part), where)


def _store(L: Lanes, s, c: RunContext, a: np.ndarray, nbytes: int, values: list, space: str | None,
           where: Location) -> None:
    """Store ``values`` (consecutive elements of ``nbytes`` each) at addresses ``a``: local memory
    is per-lane state written in place; a global store is recorded per lane (``_record_store``)."""
    if space is None and L.shared is not None and shared.generic(L, a, where):
        return shared.store(L, s, c, shared.to_shared(a), nbytes, values, where)
    local, glob = _split_local(L, s, a, space)
    if local is not None:
        rows, addr = local
        cols = _local_columns(L, addr, nbytes * len(values), where)
        pick = slice(None) if glob is None else (a >= np.uint64(LOCAL_BASE))
        parts = [np.asarray(v)[pick].astype(_UINT[8 * nbytes]).view(np.uint8).reshape(-1, nbytes) for v in values]
        # lanes own their rows (forking copies them), so writing in place touches no other lane
        L.local[rows[:, None], cols] = np.concatenate(parts, axis=1)
        if c.tracks_local:
            if L.local_writer is None:
                L.local_writer = np.full(L.local.shape, -1, dtype=np.int32)
            L.local_writer[rows[:, None], cols] = c.step
    if glob is not None:
        sub, addr = glob
        region, offs = _locate(c.memory, addr, nbytes * len(values), where)
        pick = slice(None) if local is None else (a < np.uint64(LOCAL_BASE))
        if len(values) == 1:
            # the element's own width, without a copy where the register has it: registers are never
            # written in place, and neither are records (updates copy them)
            val = np.asarray(values[0])[pick].astype(_UINT[8 * nbytes], copy=False)
            _record_store(L, sub, region, nbytes, offs, val, (c.step, 0), where)
            return
        # a record holds at most 64 bits per lane: a wider vector store is recorded in 64-bit parts
        per = max(1, 8 // nbytes)
        for part, first in enumerate(range(0, len(values), per)):
            chunk = values[first:first + per]
            val = np.zeros(addr.shape[0], dtype=np.uint64)
            for j, v in enumerate(chunk):
                val |= np.asarray(v)[pick].astype(np.uint64) << np.uint64(j * 8 * nbytes)
            _record_store(L, sub, region, nbytes * len(chunk), offs + np.int64(first * nbytes), val, (c.step, part),
                          where)


_MACHINE_SPECIALS = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%smid", "%nsmid",
                     "%gridid", "%total_smem_size", "%dynamic_smem_size", "%aggr_smem_size", "%reserved_smem_offset_begin",
                     "%current_graph_exec")
"""PTX special registers (PTX ISA 9.1 §10) whose values the hardware supplies at run time; the
simulator models the thread and launch geometry, not these."""


def _policies_only_as_hints(steps: list, path: str) -> None:
    """A ``createpolicy`` result is an opaque cache policy: read as the hint of an access (whose
    cache-policy operand the steps drop) it changes no bits, but read as data its value would be
    the simulator's invention. The first instruction that reads one as data is a located error."""
    policies = {w for st in steps if st.instr.opcode.startswith("createpolicy") for w in st.writes}
    if not policies:
        return
    for st in steps:
        used = policies & set(st.reads)
        if used and not st.instr.opcode.startswith("createpolicy"):
            raise UnsupportedPtxError(f"{st.instr.opcode}: reads the cache policy {sorted(used)[0]} (made by createpolicy) as "
                                      "data; a cache policy is only a hint of ld/st .L2::cache_hint",
                                      Location(path, st.instr.line, st.instr.col))


def compile_function(function: Function, db, path: str) -> Plan:
    """Compile ``function`` once into a :class:`Plan`; unsupported instructions are located errors."""
    comp = _Compiler(function, db, path)
    steps = comp.compile()
    _policies_only_as_hints(steps, path)
    plan = Plan(function, steps, path)
    plan.db = db  # a cut-down copy of the function compiles with the same database
    plan.regions = fused.find_regions(plan, comp)
    return plan
