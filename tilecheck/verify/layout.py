"""Which thread computes which elements of a whole elementwise kernel, found by running it.

Triton's kernels and CUDA written for speed compute several elements per thread (unrolled, or
through 64- and 128-bit vector accesses), bound them by a count parameter, and cover the elements
with ``ceil(n / elements per CTA)`` CTAs; kernels written for one CTA index by ``%tid`` alone and
are launched once per slice. :func:`discover` runs the kernel on distinct buffers (every
approximate instruction returning its reference result) and finds:

- the elements each thread stores (an *atom*: a store instruction, its 64-bit part, the element
  within it) and where: the element index of atom ``a`` in thread ``t`` of CTA ``c`` is
  ``c * per_cta + local[a][t]``, for every thread storing every atom once and the CTAs' elements
  following each other (checked on two CTAs); or, for a grid-stride loop unrolled into several
  stores (``#pragma unroll`` on ``for (i = tid; i < n; i += blockDim.x * gridDim.x)``), the element
  of atom ``a`` in thread ``t`` is ``u x (t + k[a] x threads) + j[a]`` for vectors of ``u``
  elements, the launch's threads (its CTAs times their threads) setting the stride
  (``grid_stride``; every run checks it again, each with its own launch);
- the elements per thread: the smallest count ``k`` at which every thread of two CTAs stores and
  the stored elements are exactly ``0 .. count - 1`` each once (a count parameter set to
  ``2 x block x k``); kernels whose CTAs overlap run with one CTA per launch (``single_cta``:
  pointers offset per CTA, ``%ctaid`` 0);
- threads that store nothing (:func:`_idle`): a Triton BLOCK smaller than its CTA's threads
  replicates the elements over the extra threads and masks off their stores. Such a CTA is a
  layout when the same threads store nothing in every CTA, the others store every one of their
  ``k`` elements, and the elements the storing threads cover are still ``0 .. count - 1`` each
  once (the count now ``2 x storing threads x k``). The threads that store nothing are no lanes of
  any verdict: they are never judged, and a run in which one of them stores, or a judged thread
  does not, is refused (:func:`tilecheck.verify.compiled.run_layout`);
- the width of each buffer's elements: the result's, or, where the reference's operands have other
  widths, each operand buffer its operand's (:func:`_region_bytes`); and the dynamic shared memory
  (``.extern .shared``) later runs provide: what the discovery launch touched
  (:func:`fit_dynamic_shared`);
- which buffers are operands: each atom's bits are followed back (:mod:`tilecheck.verify.slicing`)
  to the global loads they come from, and every such load must read, in every thread, the element
  the atom stores (so that ``out[i] = f(in0[i], in1[i], ...)``); the buffers read are the operands
  in parameter order, the one written the result, the others unused. A load that reads another
  element is refused, with a run that shows the dependence where one does
  (:func:`_dependence_witness`: only that input element changed, the stored element with it).
  A value that passes through per-thread local memory (libdevice's sinf keeps its argument
  reduction in a local array) is followed through the stores the discovery run saw each local load
  read (``Layout.local_flows``); every later run is checked against them, and one whose local load
  reads another store is refused;
- the bounds: with counts that end inside a CTA the kernel must store exactly the elements below
  the count (or, with no bound at all, every element: reported);
- groups of atoms to run together: the function is cut down to each atom's slice; atoms whose
  slices hold the same approximate instructions share a group (so that the choices of different
  elements never multiply; in a kernel with none each atom is a group of its own); groups whose atoms compute equal expressions (slicing.Signatures)
  form a class, whose first group stands for the others in exhaustive runs.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

import numpy as np

from tilecheck.errors import Location, UsageError
from tilecheck.sim.errors import ExecutionError, StepLimitError, UnsupportedPtxError
from tilecheck.sim.frontend import Instr
from tilecheck.sim.parser import Addr, Reg, Special, Vec
from tilecheck.sim.plan import TYPES, Memory, Plan, RunContext, compile_function
from tilecheck.sim import shared as shared_memory
from tilecheck.verify import slicing

MAX_PER_THREAD = 64
"""Elements per thread tried when the stores do not say (a thread storing more is refused)."""
DISCOVERY_CTAS = 2


MULTI_DIMENSIONAL = frozenset(f"{r}.{axis}" for r in ("%tid", "%ntid", "%ctaid", "%nctaid") for axis in "yz")
"""Special registers only a multi-dimensional block or grid gives values other than 0 and 1."""


def _specials(op):
    if isinstance(op, Special):
        yield op
    elif isinstance(op, Vec):
        for item in op.items:
            yield from _specials(item)
    elif isinstance(op, Addr):
        yield from _specials(op.base)


def require_one_dimensional(fn, path: str) -> None:
    """Refuse, located, a kernel that reads a y or z index or size of its block or grid (Triton's
    ``tl.program_id(1)``, CUDA's ``blockIdx.y``): the simulator launches 1-D grids of 1-D blocks,
    where those are 0 and 1, so only the first row of a 2-D launch would be run, and a verdict
    would claim the rows it never ran."""
    for ins in fn.body:
        if not isinstance(ins, Instr):
            continue
        for sp in (s for op in ins.operands for s in _specials(op)):
            if sp.name in MULTI_DIMENSIONAL:
                raise UnsupportedPtxError(
                    f".entry {fn.name} reads {sp.name} (line {ins.line}: {ins.text.strip()}): a multi-dimensional "
                    "grid or block (tl.program_id(1), blockIdx.y); tilecheck launches 1-D grids of 1-D blocks, where "
                    "only the first row would run, so such a kernel is not verified",
                    Location(path, ins.line, ins.col))


def launch_block(fn, here: Location) -> int:
    """Threads per CTA to run ``fn`` with: the x dimension ``.reqntid`` requires (Triton's
    ``.reqntid 128``: its element offsets are ``%ctaid.x * BLOCK + f(%tid.x)``), else 256 at most
    ``.maxntid``'s thread count. Blocks of more than one dimension are refused: the simulator
    launches 1-D blocks (``%tid.y`` is 0)."""
    launch = getattr(fn, "launch", None) or {}
    req = launch.get(".reqntid")
    if req is not None:
        if req[1] * req[2] != 1:
            raise UnsupportedPtxError(f".entry {fn.name}: .reqntid {', '.join(map(str, req))} requires a "
                                      "multi-dimensional block (1-D blocks only)", here)
        return req[0]
    most = launch.get(".maxntid")
    return min(256, most[0] * most[1] * most[2]) if most is not None else 256


@dataclass(frozen=True)
class Atom:
    """One element each thread stores: store instruction, 64-bit part of it, element in the part;
    the register holding it and its bits there."""

    store: Instr
    part: int
    sub: int
    register: str
    bits: int

    def where(self) -> str:
        """Which store, for messages."""
        return f"the store at line {self.store.line} ({self.register})"


@dataclass
class Group:
    """Atoms run together, in the function cut down to their slices."""

    atoms: list               # indices into Layout.atoms
    plan: Plan
    keys: list                # per atom: (its store record's key in ``plan``, the element's place in the record)
    signature: tuple = ()
    represents: int = -1      # the index of the group that runs this class's every input (-1: itself)
    # Layout.local_flows in ``plan``'s own steps (a cut-down function numbers its steps anew)
    local_flows: dict | None = None

    @property
    def representative(self) -> bool:
        """True for the group that runs every input of its class."""
        return self.represents < 0


@dataclass
class Layout:
    """The element layout of a kernel (see the module doc)."""

    block: int
    per_thread: int
    single_cta: bool
    element_bytes: int
    pointers: list            # every pointer parameter, in order
    scalars: list             # the other parameters: set to the launch's element count
    input_regions: list       # indices into ``pointers``: the operands, in parameter order
    output_region: int
    atoms: list
    local: np.ndarray         # atoms x block: the element index within the CTA
    groups: list = field(default_factory=list)
    zeroed: list = field(default_factory=list)  # parameters stated unused (--params): 0, a null pointer
    bounded: int = 1          # the bound's granularity (_bounded): 1 exact, g whole multiples of g, 0 none
    count_unit: int = 1       # elements per unit of the count parameter (_bounded)
    active: np.ndarray | None = None  # per thread of a CTA: True where it stores (None: every thread does)
    region_bytes: dict | None = None  # pointer index -> bytes per element, where operands' widths differ
    # the atoms are st.shared stores (sinks): each element is computed before a layout conversion
    # passes it, unchanged, through shared memory to its global store (:func:`_sinks`)
    sinks: bool = False
    # ld.shared instruction (id) -> the operand buffer its bytes come from, where operands pass
    # through shared memory before the arithmetic (:func:`_through_shared`; None: several)
    shared_regions: dict = field(default_factory=dict)
    # a grid-stride loop over vectors of u elements (u 1 for scalars): (u, per atom (k, j)), the
    # element being u x (thread + k x the launch's threads) + j; None: the CTAs' elements follow
    # each other
    grid_stride: tuple | None = None
    # ld.local step -> the st.local steps (-1: none) whose bytes it read in the discovery run: how
    # values passing through local memory (libdevice's sinf) were followed; every run is checked
    # against it (RunContext.local_flows; a local load missing never ran, and any run of it is
    # refused). None: the function has no local memory
    local_flows: dict | None = None
    values: list = field(default_factory=list)    # operands given by value (value_params), in order
    operands: list = field(default_factory=list)  # every operand's parameter name, in parameter order
    # (threads, atom) -> positions(): every block of an exhaustive run launches the same few shapes
    _positions: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def bytes_of(self, region: int) -> int:
        """Bytes per element of buffer ``region`` (the result's, unless an operand's differs)."""
        return (self.region_bytes or {}).get(region, self.element_bytes)

    @property
    def workers(self) -> int:
        """Threads per CTA that store (and are judged): all of them unless some store nothing."""
        return self.block if self.active is None else int(self.active.sum())

    @property
    def per_cta(self) -> int:
        """Elements per CTA."""
        return self.workers * self.per_thread

    def judged(self, threads: int) -> np.ndarray:
        """Per thread of a launch of ``threads`` threads: True where it stores, so is judged."""
        if self.active is None:
            return np.ones(threads, dtype=bool)
        return self.active[np.arange(threads) % self.block]

    def threads_for(self, count: int) -> int:
        """The threads a launch needs (from thread 0) for ``count`` of them to store: ``count``
        itself unless some threads of a CTA store nothing."""
        if self.active is None or count <= 0:
            return max(count, 0)
        full, rest = divmod(count - 1, self.workers)
        return full * self.block + int(np.flatnonzero(self.active)[rest]) + 1

    @property
    def unused(self) -> list:
        """Pointer parameters the kernel neither reads nor writes (Triton's scratch pointers)."""
        used = set(self.input_regions) | {self.output_region}
        return [p for k, p in enumerate(self.pointers) if k not in used]

    def describe(self) -> str:
        """The layout in a report."""
        classes = sum(1 for g in self.groups if g.representative)
        text = (f"{self.per_thread} element{'s' if self.per_thread > 1 else ''} per thread, {self.block} threads per CTA"
                + (f" ({self.workers} of them store, the others store nothing)" if self.active is not None else "")
                + (", one CTA per launch" if self.single_cta else
                   ", a grid-stride loop (element = u x (thread + k x the launch's threads) + j)"
                   if self.grid_stride is not None
                   else f", {self.per_cta} elements per CTA"))
        unit = f" (counting vectors of {self.count_unit})" if self.count_unit > 1 else ""
        if self.scalars and self.bounded == 1:
            text += f"; bounded by {', '.join(self.scalars)}{unit}"
        elif self.scalars and self.bounded:
            text += (f"; bounded by {', '.join(self.scalars)}{unit} rounded up to a multiple of {self.bounded} (the kernel "
                     f"assumes a count divisible by {self.bounded})")
        elif self.scalars:
            text += f"; NOT bounded by {', '.join(self.scalars)} (elements past the count are written too)"
        if self.values:
            text += f"; by value: {', '.join(self.values)}"
        if self.unused or self.zeroed:
            text += f"; unused: {', '.join(self.unused + self.zeroed)}"
        if len(self.groups) > 1:
            text += (f"; {len(self.groups)} runs of elements, {classes} class{'es' if classes > 1 else ''} of equal "
                     "expressions")
        return text

    def positions(self, threads: int, atom: int) -> np.ndarray:
        """The element index of ``atom`` in each of ``threads`` threads (int64; -1 in a thread
        that stores nothing)."""
        known = self._positions.get((threads, atom))
        if known is not None:
            return known
        t = np.arange(threads, dtype=np.int64)
        if self.grid_stride is not None:  # the stride is the launch's every thread, a partial last CTA's too
            unit, places = self.grid_stride
            k, j = places[atom]
            pos = unit * (t + k * (-(-threads // self.block) * self.block)) + j
        else:
            pos = (t // self.block) * self.per_cta + self.local[atom][t % self.block]
        pos = pos if self.active is None else np.where(self.judged(threads), pos, -1)
        pos.setflags(write=False)  # shared by every run of this shape
        if len(self._positions) < 64:
            self._positions[(threads, atom)] = pos
        return pos


    def record_offsets(self, threads: int, atom: int, sub: int) -> np.ndarray:
        """The byte offset, in the result buffer, of the store record holding ``atom`` (its element
        ``sub`` elements into the record) in each of ``threads`` threads: where a run must find it."""
        key = (threads, atom, "record", sub)
        known = self._positions.get(key)
        if known is not None:
            return known
        at = (self.positions(threads, atom) - sub) * self.element_bytes
        at.setflags(write=False)
        if len(self._positions) < 64:
            self._positions[key] = at
        return at


def _fail(fn, here: Location, text: str) -> UnsupportedPtxError:
    return UnsupportedPtxError(f".entry {fn.name}: {text}", here)


def is_store(ins: Instr) -> bool:
    """Whether ``ins`` stores to memory (``st``, or the warp's ``stmatrix`` to shared memory)."""
    return ins.opcode.split(".", 1)[0] in slicing.STORES


def stores(fn) -> list[Instr]:
    """The function's store instructions outside ``.param`` space, in program order."""
    return [i for i in fn.body if isinstance(i, Instr) and is_store(i) and ".param" not in i.opcode]


def store_bits(ins: Instr) -> tuple[int, int]:
    """(bits per register, registers) of a store (``stmatrix``: 32-bit registers of two elements)."""
    t = [p for p in ins.opcode.split(".")[1:] if p in TYPES]
    width = 32 if ins.opcode.startswith("stmatrix.") else TYPES[t[-1]][0] if t else 64
    src = ins.operands[1]
    return width, len(src.items) if isinstance(src, Vec) else 1


def wants_layout(fn, element_bits: int) -> bool:
    """True for kernels whose threads store more than one element or pair: more than one store
    instruction to global memory, or one wider than two elements. (A debug build's stack frames
    make every generic store a possible local one: it runs as "thread i computes element i".)"""
    kept = [i for i in stores(fn) if ".global" in i.opcode or (not fn.frames and ".local" not in i.opcode
                                                               and ".shared" not in i.opcode)]
    if len(kept) > 1:
        return True
    return any(w * n > 2 * element_bits for w, n in map(store_bits, kept))


def _atoms(fn, eb: int, here: Location) -> list[Atom]:
    """Every element the store instructions write, in program order (stores to ``.shared`` and
    ``.local`` memory stage values within a CTA or a thread: they store no element)."""
    out = []
    for ins in stores(fn):
        if ".shared" in ins.opcode or ".local" in ins.opcode:
            continue
        out.extend(atom for atom, _ in _store_atoms(fn, ins, eb, here))
    return out


def _store_atoms(fn, ins: Instr, eb: int, here: Location) -> list[tuple[Atom, int]]:
    """The elements one store instruction writes, each with its first byte in the stored vector."""
    out = []
    width, count = store_bits(ins)
    nbytes = width // 8
    if nbytes % eb and eb % nbytes:
        raise _fail(fn, here, f"line {ins.line}: stores of {width} bits do not hold {8 * eb}-bit elements")
    if eb > nbytes:
        raise _fail(fn, here, f"line {ins.line}: stores {width}-bit values ({ins.opcode}), narrower than one "
                              f"{8 * eb}-bit element of the reference: a reference whose result has the stored "
                              "width fits (an element split over several stores is not supported)")
    src = ins.operands[1]
    regs = list(src.items) if isinstance(src, Vec) else [src]
    per = max(1, 8 // nbytes)  # registers per 64-bit record part
    for byte in range(0, nbytes * count, eb):
        j, lo = divmod(byte, nbytes)
        reg = regs[j]
        if not isinstance(reg, Reg):
            continue  # a constant stored: no element computed
        part = j // per
        sub = (byte - part * per * nbytes) // eb
        bits = ((1 << (8 * eb)) - 1) << (8 * lo)
        out.append((Atom(ins, part, sub, reg.name, bits), byte))
    return out


@dataclass
class _Run:
    lanes: object
    memory: Memory
    relaunch: object = None  # poke -> _Run: the same launch with some input bytes changed (a witness)


def _launch(plan: Plan, lay_pointers: list, scalars: list, block: int, per_thread: int, single: bool, eb: int,
            count: int | None = None, ctas: int = DISCOVERY_CTAS, zeroed: tuple = (),
            per_cta: int | None = None, region_bytes: dict | None = None, poke: dict | None = None,
            setting: tuple = ()) -> _Run:
    # per_cta: the elements of a CTA (fewer than block x per_thread where some threads store nothing);
    # region_bytes: bytes per element of the buffers whose elements are not eb bytes (one CTA per
    # launch moves each buffer's pointer by its own elements); poke: {(region, byte offset): bytes}
    # written over the buffers' (seeded, so otherwise identical) contents; setting: (name, value)
    # pairs given to those parameters instead
    args = (plan, lay_pointers, scalars, block, per_thread, single, eb)
    kwargs = dict(count=count, ctas=ctas, zeroed=zeroed, per_cta=per_cta, region_bytes=region_bytes, setting=setting)
    per_cta = block * per_thread if per_cta is None else per_cta
    threads = ctas * block
    # bytes per CTA: room for any element count tried (the stores' own count may pass MAX_PER_THREAD:
    # Triton's BLOCK 65536 on 4 warps stores 512 per thread), vectors too
    span = block * max(MAX_PER_THREAD, per_thread) * 16
    rng = np.random.default_rng(0)
    memory = Memory([(name, rng.integers(0, 256, ctas * span, dtype=np.uint8)) for name in lay_pointers])
    for (region, offset), data in (poke or {}).items():
        memory.regions[region][1][offset:offset + len(data)] = np.frombuffer(data, dtype=np.uint8)
    lanes = plan.new_lanes(threads)
    cta = np.arange(threads, dtype=np.uint64) // np.uint64(block)
    for k, name in enumerate(lay_pointers):
        base = np.full(threads, memory.pointer(k), dtype=np.uint64)
        if single:
            base += cta * np.uint64(per_cta * (region_bytes or {}).get(k, eb))
        lanes.params[name] = base
    full = per_cta * (1 if single else ctas)
    for name in scalars:
        lanes.params[name] = np.full(threads, full if count is None else count, dtype=np.uint64)
    for name in zeroed:
        lanes.params[name] = np.zeros(threads, dtype=np.uint64)
    for name, value in setting:
        lanes.params[name] = np.full(threads, value, dtype=np.uint64)
    ctx = RunContext(approx="reference", memory=memory, block=block, threads=threads, record_loads=True,
                     single_cta=single)
    plan.run(lanes, ctx)
    return _Run(lanes, memory, lambda change: _launch(*args, **kwargs, poke=change))


def _written(run: _Run, eb: int) -> dict:
    """Per store record key: (region, element index per lane or -1 where not stored, elements per record)."""
    out = {}
    for key, pos in run.lanes.store_slots.items():
        region, nbytes, offs, vals, done = run.lanes.stores[pos]
        out[key] = (region, np.where(done, np.asarray(offs) // eb, -1), nbytes // eb)
    return out


ROLES = {"in": "an operand (a buffer, or a floating-point value)", "out": "the result buffer",
         "n": "the element count", "-": "unused (0; one the kernel reads is refused)"}
"""What ``--params`` may say of each kernel parameter, in order."""

POINTER_TYPES = ("u64", "b64", "s64")
VALUE_TYPES = ("f16", "bf16", "f32", "f64")
"""Parameter types of an operand given by value: one value for every element of a launch
(``.param .f32 alpha``: Triton's fp32 scalar argument, CUDA's ``float alpha``)."""


def _value_type(p) -> bool:
    """Whether parameter ``p`` holds floating-point operand bits: a type of :data:`VALUE_TYPES`, or
    an aggregate of two bytes aligned to two (nvcc's ``__half``/``__nv_bfloat16`` argument,
    ``.align 2 .b8 a[2]``) or four aligned to four (``__half2``/``__nv_bfloat162``: a packed pair,
    where the elements are packed pairs too; the ABI checks the width)."""
    return p.ptx_type in VALUE_TYPES or (p.array is not None and (p.nbytes, p.align) in ((2, 2), (4, 4)))


def counts_in_64_bits(fn) -> set[str]:
    """The 64-bit parameters that are counts, not pointers: their value (through the registers
    computed from it) is compared (``setp``) and never reaches an address (``cvta``, or the base of
    a load or store). ``for (long long i = ...; i < n; ...)`` and ``size_t n`` pass the count in a
    ``.u64`` parameter, the type of a pointer; taken for one, it would be filled with an address
    and the loop would run that far. A parameter the kernel never reads stays a pointer (unused)."""
    body = [ins for ins in fn.body if isinstance(ins, Instr)]
    flows = [(ins, set(slicing.registers_read(ins)), set(slicing.registers_written(ins))) for ins in body]
    counts = set()
    for p in fn.params:
        if p.ptx_type not in POINTER_TYPES or p.array is not None:
            continue
        derived = {ins.operands[0].name for ins in body
                   if ins.opcode.startswith("ld.param") and len(ins.operands) == 2 and isinstance(ins.operands[1], Addr)
                   and getattr(ins.operands[1].base, "name", None) == p.name and isinstance(ins.operands[0], Reg)}
        if not derived:
            continue
        changed = True
        while changed:  # every register computed from the parameter's value (not through memory)
            changed = False
            for ins, reads, writes in flows:
                if reads & derived and not writes <= derived and not ins.opcode.startswith(("ld", "st")):
                    derived |= writes
                    changed = True
        addresses = any(
            (ins.opcode.startswith("cvta") and reads & derived)
            or any(isinstance(o, Addr) and getattr(o.base, "name", None) in derived for o in ins.operands)
            for ins, reads, _ in flows)
        compared = any(ins.opcode.startswith("setp") and reads & derived for ins, reads, _ in flows)
        if compared and not addresses:
            counts.add(p.name)
    return counts


def loaded_params(fn) -> dict:
    """The parameters the kernel reads (``ld.param``), each with its first read."""
    out: dict = {}
    for ins in fn.body:
        if isinstance(ins, Instr) and ins.opcode.startswith("ld.param") and len(ins.operands) == 2 \
                and isinstance(ins.operands[1], Addr) and hasattr(ins.operands[1].base, "name"):
            out.setdefault(ins.operands[1].base.name, ins)
    return out


def value_params(fn, roles: list | None = None) -> list[str]:
    """The parameters that are operands given by value, in order: holding one floating-point value
    (:func:`_value_type`) and read by the kernel (one it never loads is unused, as a pointer it
    never follows); with ``roles`` (--params), those stated ``in``."""
    loaded = loaded_params(fn)
    return [p.name for k, p in enumerate(fn.params) if _value_type(p) and
            (roles[k] == "in" if roles is not None else p.name in loaded)]


def operand_order(fn, buffers: list[str], values: list[str]) -> list[str]:
    """The operands' parameter names in parameter order: the buffers read and the values."""
    chosen = set(buffers) | set(values)
    return [p.name for p in fn.params if p.name in chosen]


def parse_roles(text: str, fn, here: Location) -> list[str]:
    """``--params`` (``in,in,out,n,-,-``: one role per parameter, in order; see :data:`ROLES`),
    checked against the kernel's parameters; a usage error naming what does not fit."""
    roles = [r.strip() for r in text.split(",")]
    names = [p.name for p in fn.params]
    def bad(why: str) -> UsageError:
        return UsageError(f"--params {text}: {why} (roles: {', '.join(f'{k} {v}' for k, v in ROLES.items())})", here)
    if len(roles) != len(names):
        raise bad(f"{len(roles)} role(s) for the {len(names)} parameter(s) of {fn.name} ({', '.join(names)})")
    for role, p in zip(roles, fn.params):
        if role not in ROLES:
            raise bad(f"{role!r} is not a role")
        if role == "out" and p.ptx_type not in POINTER_TYPES:
            raise bad(f"{p.name} is .{p.ptx_type}, not a 64-bit pointer, so it cannot be {role!r}")
        if role == "in" and p.ptx_type not in POINTER_TYPES and not _value_type(p):
            raise bad(f"{p.name} is .{p.ptx_type}, neither a 64-bit pointer nor a floating-point value, so it "
                      f"cannot be {role!r}")
        if role == "n" and p.ptx_type not in ("u32", "s32", "b32", "u64", "s64", "b64"):
            raise bad(f"{p.name} is .{p.ptx_type}, not an integer, so it cannot be the count")
    if roles.count("out") != 1:
        raise bad(f"{roles.count('out')} result buffers stated: exactly one parameter is 'out'")
    return roles


def discover(plan: Plan, element_bits: int, arity: int, path: str, roles: list | None = None,
             operand_bits: list | None = None) -> Layout:
    """The layout of the ``.entry`` kernel ``plan`` for ``element_bits``-bit elements and
    ``arity`` operands (see the module doc); a located error saying what was found otherwise.
    ``roles`` (:func:`parse_roles`): the user's statement of each parameter's role; unused ones
    are 0, and what the run finds must agree with the rest. ``operand_bits``: each operand's
    element bits where they differ from the result's ``element_bits`` (operand ``j`` is the
    ``j``-th buffer read, in parameter order; :func:`_region_bytes`)."""
    fn = plan.function
    here = Location(path, fn.line, fn.col)
    eb = element_bits // 8
    params = [(p.name, p.ptx_type) for p in fn.params]
    values = value_params(fn, roles)
    loaded = loaded_params(fn)
    if roles is None:
        counts = counts_in_64_bits(fn)
        pointers = [n for n, t in params if t in POINTER_TYPES and n not in counts]
        # the other parameters are counts, where the kernel reads them (one it never reads is unused)
        scalars = [n for n, t in params if n not in pointers and n not in values and n in loaded]
        unused = [n for n, t in params if n not in pointers and n not in values and n not in loaded]
    else:
        pointers = [n for (n, _), r in zip(params, roles) if r in ("in", "out") and n not in values]
        scalars = [n for (n, _), r in zip(params, roles) if r == "n"]
        unused = [n for (n, _), r in zip(params, roles) if r == "-"]
        read = next((n for n in unused if n in loaded), None)
        if read is not None:
            ins = loaded[read]
            raise UsageError(f"--params states {read} unused, but the kernel reads it (line {ins.line}: "
                             f"{ins.text.strip()}): a verdict would hold only where it is 0", here)
    # value operands are 0.0 while the layout is found (each run after gives every thread its
    # input's value, and checks that the elements are stored where they were found)
    zeroed = unused + values
    block = launch_block(fn, here)
    atoms = _atoms(fn, eb, here)
    if not atoms:
        raise _fail(fn, here, "stores no element to global memory")
    static = len(atoms)
    _one_result_buffer(fn, here, plan, pointers, scalars, block, static, eb, zeroed)
    rb = None if operand_bits is None else _region_bytes(fn, here, plan, pointers, scalars, block, static, eb,
                                                         zeroed, operand_bits, values)
    tries = [static] + [k for k in range(1, MAX_PER_THREAD + 1) if k != static]
    found, first_error = None, None
    modes = (False, True)
    for single in modes:
        if single and not _overlapping(plan, pointers, scalars, block, static, eb, zeroed):
            # one CTA per launch is the reading of kernels whose CTAs overlap (indexed by %tid
            # alone); one whose CTAs store different elements is read with its %ctaid, or one
            # that skips an element in CTA 1 only would pass as launched once per CTA
            modes = (False,)
            break
        for k in tries:
            # the count in elements, or in vectors of u elements (a grid-stride loop over bfloat162
            # counts pairs: told the elements, it would go round twice)
            for unit in [u for u in COUNT_UNITS if k % u == 0 and (u == 1 or not single)]:
                count = None if unit == 1 else k * block * DISCOVERY_CTAS // unit
                try:
                    run = _launch(plan, pointers, scalars, block, k, single, eb, count=count, zeroed=tuple(zeroed),
                                  region_bytes=rb)
                except (ExecutionError, StepLimitError, UnsupportedPtxError) as exc:
                    first_error = first_error or exc
                    continue
                if _covers(run, eb, k * block * DISCOVERY_CTAS, len(atoms)):
                    found = (single, k, run, None)
                    break
            if found:
                break
        if found:
            break
    if found is None:
        # not every thread stores: a CTA some of whose threads store nothing, if it is one
        idle = _idle(plan, pointers, scalars, block, static, eb, zeroed, len(atoms), modes, rb)
        if isinstance(idle, str):
            raise _fail(fn, here, idle)
        found = idle
    if found is None:
        shape = _diagnose(plan, pointers, scalars, block, static, eb, zeroed)
        if shape:
            raise _fail(fn, here, shape)
        why = f" (at {static} per thread: {first_error})" if first_error is not None else ""
        raise _fail(fn, here, "no elementwise layout found: at no count of elements per thread up to "
                              f"{MAX_PER_THREAD} does every thread of {DISCOVERY_CTAS} CTAs of {block} store, the "
                              f"stored elements being 0 .. count-1 each once{why}")
    single, k, run, active = found
    written = _written(run, eb)
    regions = {r for r, _, _ in written.values()}
    if len(regions) != 1:
        raise _fail(fn, here, f"writes {len(regions)} buffers ({', '.join(pointers[r] for r in sorted(regions))}); an "
                              "elementwise kernel writes one")
    out_region = regions.pop()
    steps_of = {id(st.instr): i for i, st in enumerate(plan.steps)}
    threads = DISCOVERY_CTAS * block
    # the threads that store (all of them unless _idle found some storing nothing): only they
    # have elements, and only they are judged
    judged = np.ones(threads, dtype=bool) if active is None else np.tile(active, DISCOVERY_CTAS)
    per_cta = k * (block if active is None else int(active.sum()))
    # the element index of every atom in every thread (-1 in one that stores nothing), and its
    # position within the CTA
    element = np.zeros((len(atoms), threads), dtype=np.int64)
    for a, atom in enumerate(atoms):
        key = (steps_of[id(atom.store)], atom.part)
        if key not in written:
            raise _fail(fn, here, f"{atom.where()}: the store did not run")
        if (written[key][1][judged] < 0).any():
            raise _fail(fn, here, f"{atom.where()}: the store did not run in thread "
                                  f"{int(np.flatnonzero(judged & (written[key][1] < 0))[0])}")
        element[a] = np.where(judged, written[key][1] + atom.sub, -1)
    t = np.arange(threads)
    local = element[:, :block]
    grid_stride = None
    if not (element == np.where(judged, (t // block) * per_cta + local[:, t % block], -1)).all():
        grid_stride = _grid_stride(element, threads) if active is None and not single else None
        if grid_stride is None:
            raise _fail(fn, here, "the elements of CTA 1 do not follow those of CTA 0 (element = ctaid x elements per "
                                  "CTA + an index within the CTA), nor are they a grid-stride loop's (element = "
                                  "u x (thread + k x threads) + j)")
    sinks = _sinks(fn, here, plan, run, atoms, element, eb, judged, active, steps_of)
    if sinks is not None and grid_stride is not None:
        raise _fail(fn, here, "a grid-stride loop whose elements pass through shared memory (not followed)")
    if sinks is not None:
        atoms, element = sinks
        local = element[:, :block]
        if not (element == (t // block) * per_cta + local[:, t % block]).all():
            raise _fail(fn, here, "the elements computed before shared memory in CTA 1 do not follow those of CTA 0")
    shared_regions: dict = {}
    local_flows = _local_flows(fn, run)
    input_regions = _operands(fn, here, plan, run, atoms, element, eb, out_region, pointers, arity, steps_of, judged,
                              rb, shared_regions, local_flows, values)
    layout = Layout(block, k, single, eb, pointers, scalars, input_regions, out_region, atoms, local.copy(),
                    zeroed=unused, active=active, region_bytes=rb, sinks=sinks is not None,
                    shared_regions=shared_regions, grid_stride=grid_stride, local_flows=local_flows,
                    values=values, operands=operand_order(fn, [pointers[k] for k in input_regions], values))
    if roles is not None:
        stated_in = [n for (n, _), r in zip(params, roles) if r == "in" and n not in values]
        stated_out = next(n for (n, _), r in zip(params, roles) if r == "out")
        found_in = [pointers[k] for k in input_regions]
        if found_in != stated_in or pointers[out_region] != stated_out:
            raise _fail(fn, here, f"--params states operands {', '.join(stated_in) or 'none'} and result {stated_out}; "
                                  f"running the kernel, it reads {', '.join(found_in) or 'none'} and writes "
                                  f"{pointers[out_region]}")
    fit_dynamic_shared(plan, run.lanes)
    layout.bounded, layout.count_unit = _bounded(fn, here, plan, layout)
    _counts_only_bound(fn, here, plan, layout, loaded)
    layout.groups = _groups(fn, plan, layout, run, steps_of, path)
    together = next((g for g in layout.groups if len(g.atoms) > 1), None)
    if values and together is not None:
        # every run gives each thread its own input's value: one value cannot serve the several
        # inputs a thread's elements hold when they run together
        atom = atoms[together.atoms[0]]
        raise UnsupportedPtxError(f".entry {fn.name}: {len(together.atoms)} elements of a thread run together "
                                  f"({atom.where()} and others: the kernel cannot be cut down to one element), and "
                                  f"{', '.join(values)} is one value for all of them: operands by value are supported "
                                  "where each element runs alone", Location(path, atom.store.line, atom.store.col))
    for group in layout.groups:
        group.plan.dynamic_shared = plan.dynamic_shared
    return layout


COUNT_UNITS = (1, 2, 4, 8)
"""Elements per unit of a count parameter that discovery tries (CUDA's vector types count pairs,
quads: ``n2`` of ``__nv_bfloat162``, ``n4`` of ``float4``)."""


def _grid_stride(element: np.ndarray, threads: int) -> tuple | None:
    """Per atom, ``(k, j)`` where atom ``a`` of every thread ``t`` stores element
    ``u x (t + k x threads) + j`` (a grid-stride loop over vectors of ``u`` elements, unrolled
    into one store per iteration; ``u`` is 1 for scalars), as ``(u, ((k, j), ...))``; None where
    the elements are not so."""
    if threads < 2:
        return None
    u = int(element[0, 1] - element[0, 0])
    if u < 1:
        return None
    offset = element - u * np.arange(threads)[None, :]
    if not (offset == offset[:, :1]).all():
        return None
    k, j = offset[:, 0] // (u * threads), offset[:, 0] % (u * threads)
    if (j >= u).any():
        return None
    return u, tuple((int(a), int(b)) for a, b in zip(k, j))


def _one_result_buffer(fn, here, plan, pointers, scalars, block, per_thread, eb, zeroed) -> None:
    """Refuse, before any layout is searched, a kernel that writes more than one buffer (two
    results per element: their element indices would otherwise read as threads storing one element
    twice); nothing where the launch does not run (the search reports why)."""
    try:
        run = _launch(plan, pointers, scalars, block, per_thread, False, eb, zeroed=tuple(zeroed))
    except (ExecutionError, StepLimitError, UnsupportedPtxError):
        return
    regions = sorted({r for r, _, _ in _written(run, eb).values()})
    if len(regions) > 1:
        raise _fail(fn, here, f"writes {len(regions)} buffers ({', '.join(pointers[r] for r in regions)}); an "
                              "elementwise kernel writes one")


def fit_dynamic_shared(plan: Plan, lanes) -> None:
    """Give ``plan``'s later runs the dynamic shared memory (``.extern .shared``) its run on
    ``lanes`` touched, in 16-byte units, instead of the most a CTA may have: the launch's size is
    not in the module, and a kernel reaches the same bytes in every CTA (its shared addresses come
    from %tid); a later access past it is refused, never guessed. Nothing for a plan without."""
    if plan.dynamic_shared:
        high = shared_memory.touched(lanes)
        plan.dynamic_shared = max(16, -(-max(0, high - plan.shared_bytes) // 16) * 16)


def _region_bytes(fn, here, plan, pointers, scalars, block, per_thread, eb, zeroed, operand_bits,
                  values: list = ()) -> dict:
    """Bytes per element of each buffer of a kernel whose operands' widths differ from the
    result's: the buffers it reads (the one it writes too, where it reads it: a kernel in place),
    and the values it takes, in parameter order, are the operands, each of its own width
    (``operand_bits``); found by one launch, every approximate
    instruction returning its reference result. The element checks that follow (each stored
    element computed from element i of each of these buffers) hold the reading to account."""
    try:
        run = _launch(plan, pointers, scalars, block, per_thread, False, eb, zeroed=tuple(zeroed))
    except (ExecutionError, StepLimitError, UnsupportedPtxError):
        return {}  # the layout search reports what keeps the kernel from running
    # (a buffer both read and written is an operand too: the kernel works in place)
    read = sorted({region for region, *_ in run.lanes.loads})
    if len(read) + len(values) != len(operand_bits):
        raise _fail(fn, here, f"reads {len(read)} buffer(s) ({', '.join(pointers[r] for r in read) or 'none'})"
                              f"{values_text(values)}; the reference takes {len(operand_bits)} operand(s)")
    bits = dict(zip(operand_order(fn, [pointers[r] for r in read], values), operand_bits))
    return {r: bits[pointers[r]] // 8 for r in read}


def values_text(values: list) -> str:
    """`` and takes N by value (NAMES)``, where a kernel takes operands by value, for a message."""
    return f" and takes {len(values)} by value ({', '.join(values)})" if values else ""


def _diagnose(plan, pointers, scalars, block, per_thread, eb, zeroed) -> str | None:
    """What keeps a launch from being a layout, where it is one of the two shapes Triton makes of
    a BLOCK smaller than its CTA's threads: some threads storing nothing, or several threads
    storing one element. None otherwise."""
    try:
        run = _launch(plan, pointers, scalars, block, per_thread, False, eb, zeroed=tuple(zeroed))
    except (ExecutionError, StepLimitError, UnsupportedPtxError):
        return None
    parts, stored = [], np.zeros(DISCOVERY_CTAS * block, dtype=bool)
    for region, el, per in _written(run, eb).values():
        stored |= el >= 0
        parts.extend((el[el >= 0] + j) for j in range(per))
    if not parts:
        return None
    values, counts = np.unique(np.concatenate(parts), return_counts=True)
    if counts.max() > 1:
        return (f"element {int(values[np.argmax(counts)])} is stored by {int(counts.max())} threads: the CTA's "
                "threads replicate its elements (a Triton BLOCK smaller than the CTA's threads?), which is not "
                "supported")
    if stored.any() and not stored.all():
        # (_idle accepts such CTAs where the others' stores are a layout: here they are not one)
        idle = np.flatnonzero(~stored[:block])
        return (f"{idle.size} of the {block} threads of a CTA store nothing (from thread {int(idle[0])}; a Triton "
                "BLOCK smaller than the CTA's threads?), and the stores of the others are no layout: each of them "
                "must run in every thread that stores")
    count = DISCOVERY_CTAS * block * per_thread
    if not np.array_equal(values, np.arange(count)):
        ran = {step for step, _ in run.lanes.store_slots}
        idle = [st.instr for step, st in enumerate(plan.steps)
                if st.instr in stores(plan.function) and ".global" in st.instr.opcode and step not in ran]
        tail = (f"; the store at line {idle[0].line} never ran, so the threads store different numbers of "
                "elements (a vector body with a scalar tail near the count?), which is not followed") if idle else ""
        return (f"with the count at {count}, its {DISCOVERY_CTAS} CTAs of {block} threads store elements "
                f"{int(values[0])} .. {int(values[-1])} ({values.size} of them), not 0 .. {count - 1}{tail}")
    return None


def _overlapping(plan, pointers, scalars, block, per_thread, eb, zeroed) -> bool:
    """True unless a launch of two CTAs runs and its CTAs store different elements, each at
    least one (the kernel then reads its %ctaid, and no launch of one CTA at a time is its reading)."""
    try:
        run = _launch(plan, pointers, scalars, block, per_thread, False, eb, zeroed=tuple(zeroed))
    except (ExecutionError, StepLimitError, UnsupportedPtxError):
        return True
    mine = [[] for _ in range(DISCOVERY_CTAS)]
    for _, el, per in _written(run, eb).values():
        for c in range(DISCOVERY_CTAS):
            part = el[c * block:(c + 1) * block]
            mine[c].extend(part[part >= 0] + j for j in range(per))
    sets = [np.unique(np.concatenate(m)) if m else np.zeros(0, dtype=np.int64) for m in mine]
    if any(x.size == 0 for x in sets):
        return True
    return any(np.intersect1d(sets[0], x).size for x in sets[1:])


def _idle(plan, pointers, scalars, block, per_thread, eb, zeroed, atoms, modes=(False, True), region_bytes=None):
    """The layout of a CTA some of whose threads store nothing (a Triton BLOCK smaller than the
    CTA's threads: the elements replicated over the extra threads, their stores masked off), as
    ``(single, per_thread, run, active)``; a refusal's text where the launch has that shape but
    is no such layout; None where it does not have that shape (every thread stores, none does,
    a store runs in no thread, or threads of a CTA store one element: _diagnose says which).
    ``modes``: the readings to try (``single``: one CTA per launch; see :func:`_overlapping`).

    Sound only with every condition: the threads storing nothing are the same in both CTAs (else
    one layout cannot say which threads are judged), each other thread stores every one of its
    ``atoms`` elements (a thread storing some of them would be judged on elements it did not
    store), each CTA's stored elements run without a gap with each element stored once, and
    with the count at exactly the storing threads' elements the same threads store and the
    elements are ``0 .. count - 1`` each once (a count counting other units fails here)."""
    refusal = None
    for single in modes:
        try:
            # a count of block x per_thread elements per CTA, more than the storing threads
            # hold: no store is masked by the bound, so the threads storing nothing are the idle ones
            wide = _launch(plan, pointers, scalars, block, per_thread, single, eb, zeroed=tuple(zeroed),
                           region_bytes=region_bytes)
        except (ExecutionError, StepLimitError, UnsupportedPtxError):
            continue
        written = _written(wide, eb)
        if not written or sum(per for _, _, per in written.values()) != atoms:
            continue
        did = np.stack([el >= 0 for _, el, _ in written.values()])  # store records x threads
        stored = did.any(axis=0)
        if stored.all() or not stored.any():
            continue
        by_cta = stored.reshape(DISCOVERY_CTAS, block)
        active = by_cta[0]
        odd = np.flatnonzero((by_cta != active).any(axis=0))
        if odd.size:
            t = int(odd[0])
            c = int(np.flatnonzero(by_cta[:, t] != active[t])[0])
            refusal = refusal or (
                f"thread {t} of a CTA stores {'elements' if active[t] else 'nothing'} in CTA 0 and "
                f"{'nothing' if active[t] else 'elements'} in CTA {c}: the threads that store nothing must be the "
                "same in every CTA (its count parameter may count other units than elements: --params states the "
                "roles)")
            continue
        # the same threads in every CTA, some storing nothing (stored is not all True)
        idle = int((~active).sum())
        shape = (f"{idle} of the {block} threads of a CTA store nothing (from thread "
                 f"{int(np.flatnonzero(~active)[0])}; a Triton BLOCK smaller than the CTA's threads?)")
        partial = np.flatnonzero(stored & ~did.all(axis=0))
        if partial.size:
            refusal = refusal or (f"{shape}; thread {int(partial[0])} stores some of its elements and not others: "
                                  "a thread that stores must store every one of its elements")
            continue
        element = np.concatenate([np.stack([el + j for j in range(per)]) for _, el, per in written.values()])
        gap = None
        for c in range(DISCOVERY_CTAS):
            mine = element[:, c * block:(c + 1) * block][:, active].ravel()
            values, counts = np.unique(mine, return_counts=True)
            if counts.max() > 1:
                return None  # threads replicating an element (_diagnose)
            missing = np.setdiff1d(np.arange(values[0], values[-1] + 1), values)
            if missing.size and gap is None:
                gap = (f"{shape}, and no thread stores element {int(missing[0])} of CTA {c}'s range "
                       f"({int(values[0])} .. {int(values[-1])}): every element of a CTA must be stored")
        if gap is not None:
            refusal = refusal or gap
            continue
        workers = block - idle
        count = DISCOVERY_CTAS * workers * per_thread
        try:
            run = _launch(plan, pointers, scalars, block, per_thread, single, eb, zeroed=tuple(zeroed),
                          per_cta=workers * per_thread, region_bytes=region_bytes)
        except (ExecutionError, StepLimitError, UnsupportedPtxError):
            continue
        exact = _written(run, eb)
        now = np.zeros(DISCOVERY_CTAS * block, dtype=bool)
        parts = []
        for _, el, per in exact.values():
            now |= el >= 0
            parts.extend(el[el >= 0] + j for j in range(per))
        got = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        if exact.keys() == written.keys() and np.array_equal(now, stored) and np.array_equal(got, np.arange(count)):
            return single, per_thread, run, active.copy()
        refusal = refusal or (
            f"{shape}; with the count at {count} (the {workers} threads that store, {per_thread} element"
            f"{'s' if per_thread > 1 else ''} each, in {DISCOVERY_CTAS} CTAs) they store "
            + (f"elements {int(got[0])} .. {int(got[-1])} ({got.size} of them)" if got.size else "nothing")
            + f", not 0 .. {count - 1} (its count parameter may count other units than elements: --params states "
            "the roles)")
    return refusal


def _covers(run: _Run, eb: int, count: int, atoms: int) -> bool:
    """Every thread stores every one of its ``atoms`` elements, and together they are the
    elements ``0 .. count-1`` each once."""
    written = _written(run, eb)
    parts = []
    for region, el, per in written.values():
        if (el < 0).any():
            return False
        parts.extend(el + j for j in range(per))
    if not parts or sum(per for _, _, per in written.values()) != atoms:
        return False
    every = np.concatenate(parts)
    return every.size == count and np.array_equal(np.sort(every), np.arange(count))


def _local_flows(fn, run: _Run) -> dict | None:
    """Per local load step, the local store steps (-1: none) whose bytes the run saw it read; empty
    where none ran. None for a function with no local memory (nothing to follow or check)."""
    if not fn.frames:
        return None
    flows: dict = {}
    for load, store in run.lanes.local_flows:
        flows.setdefault(load, set()).add(store)
    return {k: frozenset(v) for k, v in flows.items()}


def _flows_by_instruction(fn, plan: Plan, local_flows: dict | None) -> dict | None:
    """``local_flows`` (plan steps) as the slicer numbers instructions (``fn``'s, in order)."""
    if local_flows is None:
        return None
    index = {id(ins): i for i, ins in enumerate(ins for ins in fn.body if isinstance(ins, Instr))}
    return {index[id(plan.steps[load].instr)]: frozenset(index[id(plan.steps[w].instr)] if w >= 0 else -1
                                                         for w in writers)
            for load, writers in local_flows.items()}


def _store_between(sl, kept: set) -> bool:
    """True where cutting the function down to ``kept`` could change what a kept local load reads:
    a local store left out that some path runs after one of the stores the load was seen to read
    (or after the entry, where it read bytes nothing wrote) and before the load. In the whole
    function such a store could overwrite those bytes in some run; in the cut-down one it never
    runs, and the load would read the earlier bytes unchecked. (No such store: the bytes the load
    reads are those the whole function's load reads, which every run checks.) Paths are the control
    flow's, loops and blocks laid out out of order included."""
    dropped = {i for i, ins in enumerate(sl.instrs) if id(ins) not in kept and ins.opcode.startswith("st")
               and ".local" in ins.opcode}
    return bool(dropped) and any(dropped & sl.local_stores_between(load) for load in (sl.local_flows or {})
                                 if id(sl.instrs[load]) in kept)


def _flows_in(sub: Plan, plan: Plan, local_flows: dict | None, changed: dict) -> dict | None:
    """``local_flows`` (``plan``'s steps) in the steps of ``sub``, a cut-down function of it
    (``changed``: original instruction id -> its rewritten copy); the stores a load's slice kept."""
    if local_flows is None:
        return None
    steps = {id(st.instr): i for i, st in enumerate(sub.steps)}

    def step(k: int) -> int | None:
        ins = plan.steps[k].instr
        return steps.get(id(changed.get(id(ins), ins)))
    out = {}
    for load, writers in local_flows.items():
        if step(load) is not None:
            out[step(load)] = frozenset(-1 if w < 0 else step(w) for w in writers if w < 0 or step(w) is not None)
    return out


def _operands(fn, here, plan, run, atoms, element, eb, out_region, pointers, arity, steps_of, judged,
              region_bytes: dict | None = None, shared_regions: dict | None = None,
              local_flows: dict | None = None, values: list = ()) -> list:
    """The operand buffers (region indices in parameter order), checking that every atom's bits
    come from loads of the element it stores, in every thread that stores (``judged``; a thread
    that stores nothing may load anything: Triton's replicas load their twin's element). Values
    stored to and loaded from local memory are followed through the stores ``local_flows`` (step
    to steps) says each load read."""
    sl = slicing.Slicer(fn, _flows_by_instruction(fn, plan, local_flows))
    loads: dict = {}
    for region, nbytes, offs, origins, step in run.lanes.loads:
        if step in loads:
            raise _fail(fn, here, f"line {plan.steps[step].instr.line}: a load that runs more than once per thread "
                                  "(a loop over elements)")
        loads[step] = (region, offs, origins)
    threads = element.shape[1]
    shared_loads: dict = {}
    for rec in run.lanes.shared_loads:
        if rec[0] in shared_loads:
            raise _fail(fn, here, f"line {plan.steps[rec[0]].instr.line}: a shared-memory load that runs more than "
                                  "once per thread (a loop over elements)")
        shared_loads[rec[0]] = rec
    writers: dict = {}  # (store step, register, byte) -> the writer's slice of that byte
    found = None
    for a, atom in enumerate(atoms):
        sc = slicing.element_slice(sl, [(atom.register, atom.bits)], [atom.store])
        read = set()
        # a guard, branch or address on data must read the element too (out[i] = b[i] > 0 ? a[i] : 0
        # reads both): a signature names its loads as it names the value's
        steering = [(leaf, " (deciding a guard, branch or address of it)") for leaf in sc.steering - sc.leaves]
        for leaf, role in [(leaf, "") for leaf in sc.leaves] + steering:
            step = steps_of[id(leaf.load)]
            if ".shared" in leaf.load.opcode:
                region, lo, hi = _through_shared(fn, here, plan, sl, atom, leaf, shared_loads.get(step), loads,
                                                 steps_of, threads, judged, region_bytes or {}, eb, writers)
                if shared_regions is not None:  # one operand per ld.shared, or None
                    known = shared_regions.setdefault(id(leaf.load), region)
                    shared_regions[id(leaf.load)] = region if known == region else None
                via = f", passed to it through shared memory (the load at line {leaf.load.line}){role}"
            else:
                region, lo, hi = _from_global(fn, here, atom, leaf, loads.get(step), threads, judged,
                                              region_bytes or {}, eb)
                via = f" (the load at line {leaf.load.line}){role}"
            wrong = judged & ((lo != element[a]) | (hi != element[a]))
            if wrong.any():
                bad = int(np.flatnonzero(wrong)[0])
                source = int(lo[bad] if lo[bad] != element[a][bad] else hi[bad])
                witness = _dependence_witness(run, (steps_of[id(atom.store)], atom.part), atom.sub, eb, bad,
                                              region, source, int(element[a][bad]),
                                              (region_bytes or {}).get(region, eb))
                widths = ""
                if region_bytes and region_bytes.get(region, eb) != eb:
                    # element indices of a buffer come from the reference's operand width there
                    widths = (f" (element sizes as the reference's operands give them: {8 * region_bytes[region]}-bit "
                              f"elements of {pointers[region]}, {8 * eb}-bit results; a reference whose operand is "
                              "wider or narrower than the buffer's elements reads them as other elements)")
                raise _fail(fn, here, f"not elementwise: thread {bad} stores element {int(element[a][bad])} of "
                                      f"{pointers[out_region]} ({atom.where()}) from element {source} of "
                                      f"{pointers[region]}{via}{witness}; an elementwise kernel computes out[i] "
                                      f"from in0[i], in1[i], ... (a reduction or a gather is not){widths}")
            read.add(region)
        if found is None:
            found = read
        elif read != found:
            raise _fail(fn, here, f"{atom.where()} reads {', '.join(pointers[r] for r in sorted(read)) or 'no buffer'}, "
                                  f"another element {', '.join(pointers[r] for r in sorted(found)) or 'no buffer'}")
    regions = sorted(found or ())
    if len(regions) + len(values) != arity:
        raise _fail(fn, here, f"reads {len(regions)} buffer(s) ({', '.join(pointers[r] for r in regions) or 'none'})"
                              f"{values_text(values)}; the reference takes {arity} operand(s)")
    if region_bytes is not None and regions != sorted(region_bytes):
        raise _fail(fn, here, f"its elements come from {', '.join(pointers[r] for r in regions)}, but it reads "
                              f"{', '.join(pointers[r] for r in sorted(region_bytes))}: with operands of different "
                              "widths each buffer read must be an operand")
    return regions


WITNESS_TRIES = 48
"""Values of the other element tried before a dependence found in the data flow is reported
without a run that shows it."""


def _stored(run: _Run, key: tuple, sub: int, eb: int, thread: int) -> int | None:
    """The element ``sub`` of store record ``key`` that ``thread`` wrote in ``run`` (None if it did not)."""
    pos = run.lanes.store_slots.get(key)
    if pos is None:
        return None
    _, _, _, vals, done = run.lanes.stores[pos]
    if not np.broadcast_to(done, (thread + 1,) if np.ndim(done) == 0 else np.shape(done))[thread]:
        return None
    value = int(np.asarray(vals)[thread]) if np.ndim(vals) else int(vals)
    return (value >> (8 * eb * sub)) & ((1 << (8 * eb)) - 1)


def _witness_values(nbytes: int) -> list[bytes]:
    """Values tried for an input element of ``nbytes`` bytes: zero, all ones, a sweep of the top
    byte over the other bytes' zeros (for floats: magnitudes from tiny to huge, both signs, NaN),
    then seeded random bit patterns."""
    tops = (0x00, 0x3C, 0x3F, 0x40, 0x43, 0x44, 0x47, 0x4B, 0x4F, 0x5F, 0x7F, 0x80, 0xC4, 0xFF)
    values = [bytes(nbytes), b"\xff" * nbytes] + [bytes(nbytes - 1) + bytes([t]) for t in tops]
    rng = np.random.default_rng(1)
    while len(values) < WITNESS_TRIES:
        values.append(rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes())
    return list(dict.fromkeys(values))[:WITNESS_TRIES]


def _dependence_witness(run: _Run, key: tuple, sub: int, eb: int, thread: int, region: int, source: int,
                        own: int, nbytes: int) -> str:
    """A clause for the refusal of a kernel whose stored element ``own`` (store record ``key``,
    element ``sub``, in ``thread``) the data flow says comes from input element ``source`` of
    ``region`` (``nbytes`` bytes): the kernel run again with only that input element changed, and
    the stored element changing with it -- a dependence shown, not only inferred. The element's
    own input is tried as the launch left it and as zero (its bits may hide the other's: an or of
    the two). Empty when the stored element cannot be read back; a clause saying so when no tried
    value changes it."""
    if _stored(run, key, sub, eb, thread) is None or run.relaunch is None:
        return ""
    data = run.memory.regions[region][1]
    offset, mine = source * nbytes, own * nbytes
    had = data[offset:offset + nbytes].tobytes()
    hexed = lambda raw: "0x" + raw[::-1].hex()  # noqa: E731 -- little-endian bytes as a number
    tried = 0
    for own_value in (data[mine:mine + nbytes].tobytes(), bytes(nbytes)):
        base = run if own_value == data[mine:mine + nbytes].tobytes() else None
        try:
            base = base or run.relaunch({(region, mine): own_value})
        except (ExecutionError, StepLimitError, UnsupportedPtxError):
            continue
        before = _stored(base, key, sub, eb, thread)
        for value in _witness_values(nbytes):
            if value == had or before is None:
                continue
            tried += 1
            try:
                after = _stored(run.relaunch({(region, mine): own_value, (region, offset): value}), key, sub, eb,
                                thread)
            except (ExecutionError, StepLimitError, UnsupportedPtxError):
                continue
            if after is not None and after != before:
                return (f", as a run shows: with element {own} of that buffer at {hexed(own_value)}, changing only "
                        f"element {source} from {hexed(had)} to {hexed(value)} changes the element stored from "
                        f"0x{before:0{2 * eb}x} to 0x{after:0{2 * eb}x}")
    return (f" (a dependence in the data flow: {tried} runs with only that element changed left the element stored "
            "as it was)")


def _from_global(fn, here, atom, leaf, load, threads, judged, region_bytes, eb) -> tuple[int, np.ndarray, np.ndarray]:
    """``(region, first, last)``: the operand buffer a global-load leaf reads and, per thread, the
    first and last element its bytes fall in (an operand's elements may be wider or narrower than
    the result's ``eb`` bytes: ``region_bytes``); the load must run once in every thread that
    stores."""
    if load is None and ".local" in leaf.load.opcode:
        raise _fail(fn, here, f"{atom.where()}: its value passes through local memory (the load at line "
                              f"{leaf.load.line}) outside the function's .local arrays, which is not followed (a "
                              "kernel whose thread i computes element i runs whole)")
    if load is None:
        raise _fail(fn, here, f"{atom.where()}: its value comes from the load at line {leaf.load.line}, which "
                              "did not run")
    region, offs, origins = load
    ran = np.zeros(threads, dtype=bool)
    ran[origins] = True
    if origins.shape[0] != np.unique(origins).shape[0] or not ran[judged].all():
        raise _fail(fn, here, f"{atom.where()}: the load at line {leaf.load.line} it comes from does not run in "
                              "every thread" + (" that stores" if not judged.all() else ""))
    off = np.zeros(threads, dtype=np.int64)
    off[origins] = offs
    rb = region_bytes.get(region, eb)
    return region, (off + leaf.lo) // rb, (off + leaf.hi - 1) // rb


_INT_NARROWING = re.compile(r"cvt\.[usb](8|16|32|64)\.[usb](8|16|32|64)")


def _moves_bits(ins: Instr) -> bool:
    """Whether ``ins`` only moves bits: a ``mov``, a load, or an integer conversion to a type no
    wider than its source (``cvt.u16.u32``: the low bits, whatever the signedness; no ``.sat``),
    as Triton unpacks a 16-bit element after a layout conversion through shared memory."""
    head = ins.opcode.split(".", 1)[0]
    if head in ("mov", *slicing.LOADS):
        return True
    m = _INT_NARROWING.fullmatch(ins.opcode)
    return m is not None and int(m.group(1)) <= int(m.group(2))


def _moves_only(fn, sc) -> Instr | None:
    """The first instruction on a slice's value path that computes (:func:`_moves_bits` says it
    does not only move bits), or None: the slice then only moves bits."""
    return next((ins for ins in fn.body if isinstance(ins, Instr) and id(ins) in sc.values
                 and not _moves_bits(ins)), None)


def _sinks(fn, here, plan, run, atoms, element, eb, judged, active, steps_of):
    """``(atoms, element)`` of the ``st.shared`` items where a kernel computes its elements, where
    every stored element travels from there unchanged: its global store's value comes through moves
    from one ``ld.shared``, whose bytes one store of computed values wrote (Triton's layout
    conversion after the arithmetic of a vectorised kernel whose elements change width). The item
    that thread ``w`` stores stands for the element the reading thread stores, so that the usual
    checks (:func:`_operands`: the item's bits come from the loads of that very element) and runs
    (the item recorded as a store of that element: ``RunContext.store_redirect``) apply to it.
    None where elements do not pass through shared memory, or only their operands do (then
    :func:`_through_shared` follows them); a located error where the hop does more than move."""
    if not run.lanes.shared_loads:
        return None
    sl = slicing.Slicer(fn)
    records = {rec[0]: rec for rec in run.lanes.shared_loads}
    reads = []
    for a, atom in enumerate(atoms):
        sc = slicing.element_slice(sl, [(atom.register, atom.bits)], [atom.store])
        leaves = [lf for lf in sc.leaves if ".shared" in lf.load.opcode]
        if not leaves or len(sc.leaves) != 1 or _moves_only(fn, sc) is not None:
            return None  # no shared hop, or arithmetic after it: _operands follows or refuses
        leaf = leaves[0]
        record = records.get(steps_of[id(leaf.load)])
        if record is None or leaf.hi - leaf.lo != eb:
            return None
        reads.append((a, atom, leaf, record))
    # does the first element's writer compute it? (else only operands pass: _through_shared)
    _, atom, leaf, record = reads[0]
    t0 = int(np.flatnonzero(judged)[0])
    row0 = np.flatnonzero(record[1] == t0)
    if row0.size == 0 or int(record[4][row0[0], leaf.lo]) < 0:
        return None  # (_operands says what did not run)
    store = plan.steps[int(record[4][row0[0], leaf.lo])].instr
    items = [at for at, _ in _store_atoms(fn, store, eb, here)] if is_store(store) else []
    if not items or _moves_only(fn, slicing.element_slice(sl, [(items[0].register, items[0].bits)], [store])) is None:
        return None
    if active is not None:
        raise _fail(fn, here, f"{atom.where()}: computed before shared memory, with threads that store nothing: "
                              "not followed")
    threads = element.shape[1]
    sinks: dict = {}    # (store step, first byte) -> index into out_atoms
    out_atoms: list = []
    rows: list = []     # per sink: the element it stands for in each thread (-1: none)
    for a, atom, leaf, record in reads:
        _, origins, _, writer, wstep, wbyte = record
        row = np.full(threads, -1, dtype=np.int64)
        row[origins] = np.arange(origins.shape[0])
        for t in np.flatnonzero(judged):
            r = row[t]
            w, s, b = writer[r, leaf.lo:leaf.hi], wstep[r, leaf.lo:leaf.hi], wbyte[r, leaf.lo:leaf.hi]
            if r < 0 or (w != w[0]).any() or (s != s[0]).any() or (b != b[0] + np.arange(eb)).any():
                raise _fail(fn, here, f"{atom.where()}: its bytes in shared memory (the load at line {leaf.load.line}) "
                                      "are not one element that one thread stored")
            key = (int(s[0]), int(b[0]))
            if key not in sinks:
                st_ins = plan.steps[key[0]].instr
                found = [at for at, first in _store_atoms(fn, st_ins, eb, here) if first == key[1]]
                if not is_store(st_ins) or not found:
                    raise _fail(fn, here, f"{atom.where()}: the bytes it reads from shared memory are not an element "
                                          f"of a store (line {st_ins.line})")
                sinks[key] = len(out_atoms)
                out_atoms.append(found[0])
                rows.append(np.full(threads, -1, dtype=np.int64))
            target = rows[sinks[key]]
            if target[w[0]] >= 0:
                raise _fail(fn, here, f"{atom.where()}: an element computed before shared memory is read by two "
                                      "threads")
            target[w[0]] = element[a][t]
    element_sink = np.stack(rows)
    missing = judged[None, :] & (element_sink < 0)
    if missing.any():
        s, t = np.argwhere(missing)[0]
        raise _fail(fn, here, f"{out_atoms[s].where()}: thread {t} stores to shared memory an element no thread "
                              "passes on to the result")
    for sink in out_atoms:
        sc = slicing.element_slice(sl, [(sink.register, sink.bits)], [sink.store])
        if any(".shared" in ins.opcode for ins in fn.body if isinstance(ins, Instr) and id(ins) in sc.kept
               and ins is not sink.store and ins.opcode.split(".", 1)[0] in (*slicing.STORES, *slicing.LOADS)):
            raise _fail(fn, here, f"{sink.where()}: the value stored to shared memory itself depends on shared "
                                  "memory: not followed")
    return out_atoms, element_sink


def _through_shared(fn, here, plan, sl, atom, leaf, record, loads, steps_of, threads, judged, region_bytes, eb,
                    writers) -> tuple[int, np.ndarray, np.ndarray]:
    """``(region, first, last)``: the operand buffer and, per thread, the elements whose bytes an
    element's ``ld.shared`` leaf reads, following each byte back through the thread and the
    ``st.shared`` that wrote it in the discovery run to the global load it came from.

    Shared memory is followed here only where it moves an operand's bits: between that global load
    and the ``st.shared``, the writer's value path may hold moves only (``mov``: registers, packing,
    Triton's masked default), so that whatever the inputs, the byte read is the operand's byte.
    Elements computed before shared memory and only moved after it are :func:`_sinks`'; arithmetic
    on both sides is refused here, located. Every byte must come from the same byte of its element."""
    first_line = f"{atom.where()}: its value comes from shared memory (the load at line {leaf.load.line})"
    if record is None:
        raise _fail(fn, here, f"{first_line}, which did not run")
    _, origins, _, writer, wstep, wbyte = record
    row = np.full(threads, -1, dtype=np.int64)
    row[origins] = np.arange(origins.shape[0])
    if origins.shape[0] != np.unique(origins).shape[0] or (row[judged] < 0).any():
        raise _fail(fn, here, f"{first_line}, which does not run once in every thread that stores")
    idx = np.flatnonzero(judged)
    region = None
    nbytes = leaf.hi - leaf.lo
    elements = np.full((nbytes, threads), -1, dtype=np.int64)
    for i in range(leaf.lo, leaf.hi):
        w, s, b = writer[row[idx], i], wstep[row[idx], i], wbyte[row[idx], i]
        for key in sorted(set(zip(s.tolist(), b.tolist()))):
            pick = (s == key[0]) & (b == key[1])
            store = plan.steps[key[0]].instr
            if not is_store(store):
                raise _fail(fn, here, f"{first_line}: line {store.line} ({store.opcode}) writes shared memory in a way "
                                      "not followed (only st.shared and stmatrix stores are)")
            width, _ = store_bits(store)
            k, byte = divmod(key[1], width // 8)
            src = store.operands[1]
            reg = src.items[k] if isinstance(src, Vec) else src
            if not isinstance(reg, Reg):
                raise _fail(fn, here, f"{first_line}: the byte it reads was stored as a constant (line {store.line})")
            wkey = (key[0], reg.name, byte)
            if wkey not in writers:
                writers[wkey] = slicing.element_slice(sl, [(reg.name, 0xFF << (8 * byte))], [store])
            wsl = writers[wkey]
            ins = _moves_only(fn, wsl)
            if ins is not None:
                raise _fail(fn, here, f"{first_line}, where line {store.line} stored it after computing it (line "
                                      f"{ins.line}: {ins.opcode}), and the element is not passed on unchanged from "
                                      "there: shared memory is followed where one side of it only moves bits (a layout "
                                      "conversion before or after the arithmetic); arithmetic on both sides is not "
                                      "followed")
            if len(wsl.leaves) != 1 or ".shared" in next(iter(wsl.leaves)).load.opcode:
                raise _fail(fn, here, f"{first_line}: the bytes stored at line {store.line} do not come from one global "
                                      "load")
            glob = next(iter(wsl.leaves))
            gstep = steps_of[id(glob.load)]
            if gstep not in loads:
                raise _fail(fn, here, f"{first_line}: the load at line {glob.load.line} it comes from did not run")
            greg, goffs, gorigins = loads[gstep]
            if region is not None and greg != region:
                raise _fail(fn, here, f"{first_line}: its bytes come from two buffers")
            region = greg
            off = np.full(threads, -1, dtype=np.int64)
            off[gorigins] = goffs
            at = off[w[pick]] + glob.lo
            rb = region_bytes.get(greg, eb)
            if (off[w[pick]] < 0).any() or ((at % rb) != (i - leaf.lo) % rb).any():
                raise _fail(fn, here, f"{first_line}: its bytes are not the bytes of one operand element in order")
            elements[i - leaf.lo, idx[pick]] = at // rb
    return region, elements.min(axis=0), elements.max(axis=0)


def _bounded(fn, here, plan: Plan, layout: Layout) -> tuple[int, int]:
    """``(granularity, unit)`` of the kernel's bound: a count ``c`` stores the elements below
    ``c x unit`` (the count in elements, unit 1, or in vectors, a float4 kernel's 4), rounded up
    to a multiple of the granularity (1: exactly; g: a kernel that assumes the count divisible by
    g, as Triton's ``tt.divisibility`` lets it, its masks covering whole vectors); granularity 0
    when every element is stored whatever the count (no bound); an error for anything else."""
    if not layout.scalars:
        return 0, 1
    per = layout.per_cta
    counts = [1, 3, 5, per - 1, per + 1, 2 * per - 1] if not layout.single_cta else [1, 3, 5, per - 1]
    every = per * (1 if layout.single_cta else DISCOVERY_CTAS)
    reached = []
    for count in sorted({c for c in counts if 0 < c < every}):
        try:
            run = _launch(plan, layout.pointers, layout.scalars, layout.block, layout.per_thread, layout.single_cta,
                          layout.element_bytes, count=count, zeroed=tuple(layout.zeroed + layout.values),
                          per_cta=layout.per_cta, region_bytes=layout.region_bytes)
        except UnsupportedPtxError:
            if layout.grid_stride is None:
                raise
            continue  # a count in vectors past the launch's one pass: the loop goes round again

        stored = []
        for region, el, n in _written(run, layout.element_bytes).values():
            ok = el >= 0
            if layout.single_cta:  # each launch's own elements
                el = el - (np.arange(el.shape[0]) // layout.block) * per
            stored.extend((el[ok] + j) for j in range(n))
        got = np.unique(np.concatenate(stored)) if stored else np.zeros(0, dtype=np.int64)
        if np.array_equal(got, np.arange(got.size)) and got.size >= count:
            reached.append((count, got.size))
        else:
            below = np.arange(count)
            missing = np.setdiff1d(below, got)
            what = (f"does not store element {int(missing[0])} below it" if missing.size
                    else f"stores element {int(np.setdiff1d(got, below)[0])} past the count")
            raise _fail(fn, here, f"with {', '.join(layout.scalars)} = {count} the kernel {what}")
    if all(r == every for _, r in reached):
        return 0, 1
    # the count may be in elements or in vectors of ``unit`` (a float4 kernel's `n`), and the masks
    # may cover ``g`` elements at a time
    unit = 1
    while unit <= layout.per_thread:
        g = 1
        while g <= per:
            if all(r == min(every, -(-c * unit // g) * g) for c, r in reached):
                return g, unit
            g *= 2
        unit *= 2
    raise _fail(fn, here, "stores elements past the count in no regular way: " +
                ", ".join(f"count {c}: {r} stored" for c, r in reached))


def _stored_bytes(run: _Run, region: int) -> tuple[np.ndarray, np.ndarray]:
    """``(written, contents)`` of buffer ``region`` as ``run``'s stores left it: which bytes a store
    wrote, and those bytes (0 elsewhere)."""
    size = run.memory.regions[region][1].size
    written = np.zeros(size, dtype=bool)
    contents = np.zeros(size, dtype=np.uint8)
    for r, nbytes, offs, values, done in run.lanes.stores:
        if r != region:
            continue
        ok = np.asarray(done, dtype=bool)
        starts = np.broadcast_to(np.asarray(offs, dtype=np.int64), ok.shape)[ok]
        vals = np.broadcast_to(np.asarray(values).astype(np.uint64), ok.shape)[ok]
        for b in range(nbytes):  # a record holds at most 64 bits, little-endian
            at = starts + b
            inside = (at >= 0) & (at < size)
            written[at[inside]] = True
            contents[at[inside]] = ((vals[inside] >> np.uint64(8 * b)) & np.uint64(0xFF)).astype(np.uint8)
    return written, contents


def _counts_only_bound(fn, here, plan: Plan, layout: Layout, loaded: dict) -> None:
    """:func:`check_counts` for the count parameters of a kernel whose layout was found."""
    if not layout.scalars:
        return
    every = layout.per_cta * (1 if layout.single_cta else DISCOVERY_CTAS)
    count = -(-every // layout.count_unit)
    fixed = tuple(layout.zeroed + layout.values)

    def launch(setting=()):
        return _launch(plan, layout.pointers, layout.scalars, layout.block, layout.per_thread, layout.single_cta,
                       layout.element_bytes, count=count, zeroed=fixed, per_cta=layout.per_cta,
                       region_bytes=layout.region_bytes, setting=setting)

    check_counts(fn, here, layout.scalars, loaded, launch, layout.output_region,
                 layout.pointers[layout.output_region], count)


def check_counts(fn, here, counts: list, loaded: dict, launch, region: int, buffer: str, count: int) -> None:
    """Refuse, located, a count parameter whose value reaches the elements stored rather than only
    which elements are stored: every run sets each count to the launch's elements, so a verdict
    would hold for that value alone (and a report would call it a bound). ``launch(setting)`` runs
    the kernel with every count at ``count`` but the ``(name, value)`` pairs of ``setting``, and
    returns a run with its ``lanes`` and ``memory``; ``region`` is the result buffer (``buffer``
    its parameter). Each count is run at a larger value (the stored elements' bytes must not
    change; a grid-stride loop may store more) and at 0 (a count then bounds every element, or
    every load of a kernel whose stores it does not guard, away; where neither goes, the parameter
    is no count, and the stored bytes must not change either: else it is read into them, as an
    ``int`` flag, an iteration count or an offset added to the values is)."""
    def loads_done(run) -> int:  # element loads done: a count that masks the loads bounds them
        return sum(np.size(offs) for _, _, offs, *_ in run.lanes.loads)

    try:
        first = launch()
    except (ExecutionError, StepLimitError, UnsupportedPtxError):
        return  # what keeps the kernel from running is reported by the runs after
    written, base = _stored_bytes(first, region)
    advice = ("; a verdict would hold for one value of it. Make it a compile-time constant (tl.constexpr, a "
              "template argument) to verify the kernel for that value")
    for name in (n for n in counts if n in loaded):
        ins = loaded[name]
        where = f"{name} (line {ins.line}: {ins.text.strip()})"
        for value in (2 * count + 7, 0):
            try:
                run = launch(((name, value),))
            except (ExecutionError, StepLimitError, UnsupportedPtxError):
                continue  # (a larger count may send a grid-stride loop past the buffers)
            w, got = _stored_bytes(run, region)
            changed = np.flatnonzero(got[written] != base[written])
            if value and changed.size:
                raise _fail(fn, here, f"{where} is taken for the element count, but its value reaches the elements "
                                      f"stored: with it at {value} instead of {count} the stored bytes change (the "
                                      f"first at byte {int(np.flatnonzero(written)[changed[0]])} of {buffer})"
                                      + advice)
            if not value and changed.size and np.array_equal(w, written) and loads_done(run) == loads_done(first):
                raise _fail(fn, here, f"{where} is no element count: at 0 it bounds no element or load away, yet the "
                                      "stored values change with it (an integer flag or setting read into the "
                                      "arithmetic)" + advice)


def _staging(fn, sl, layout: Layout, forking: set) -> set | None:
    """What every cut-down function keeps besides its elements' slices where operands pass between
    threads through shared memory before the arithmetic: every ``st.shared`` and the moves that
    feed it (so that each element's ``ld.shared`` reads what the whole CTA staged). An empty set
    where nothing is staged (sinks are stores of their own slices); None where the staging cannot
    be kept apart (an ld.shared of several operands, an approximate instruction before a staging
    store): the function then runs whole."""
    if layout.sinks or not layout.shared_regions:
        return set() if layout.sinks else None
    if any(r is None for r in layout.shared_regions.values()):
        return None
    kept: set = set()
    for ins in stores(fn):
        if ".shared" not in ins.opcode:
            continue
        src = ins.operands[1]
        regs = [r for r in (src.items if isinstance(src, Vec) else [src]) if isinstance(r, Reg)]
        sc = slicing.element_slice(sl, [(r.name, (1 << sl.width(r.name)) - 1) for r in regs], [ins])
        kept |= sc.kept
    return None if kept & forking else kept


def _key(atom: Atom, store: Instr, steps: dict, eb: int) -> tuple:
    """``((step, part), sub)``: where ``atom``'s element is among the store records of a cut-down
    function whose store instruction is ``store``: the atom's own, the same vector with the other
    elements' slots zeroed (the records of the original), or the scalar store it became."""
    if store is atom.store or store_bits(store) == store_bits(atom.store):
        return (steps[id(store)], atom.part), atom.sub
    nbytes = store_bits(atom.store)[0] // 8
    byte = atom.part * max(1, 8 // nbytes) * nbytes + atom.sub * eb  # the element's byte in the vector
    return (steps[id(store)], 0), (byte % nbytes) // eb


def sink_key(key: tuple, eb: int) -> tuple:
    """The store record of a sink's element (an ``st.shared`` whose elements are recorded where
    the kernel stores them, each alone): ``((step, SINK_PART + its first byte in the stored
    vector), 0)`` for its ``((step, 64-bit part), element in the part)``."""
    (step, part), sub = key
    return (step, shared_memory.SINK_PART + part * 8 + sub * eb), 0


def _groups(fn, plan: Plan, layout: Layout, run: _Run, steps_of: dict, path: str) -> list[Group]:
    """The runs of atoms (see the module doc), each with its sliced plan and expression signature
    (a sink's element with a record of its own: :func:`sink_key`)."""
    groups = _unkeyed_groups(fn, plan, layout, run, steps_of, path)
    if layout.sinks:
        for group in groups:
            group.keys = [sink_key(key, layout.element_bytes) for key in group.keys]
    return groups


def _unkeyed_groups(fn, plan: Plan, layout: Layout, run: _Run, steps_of: dict, path: str) -> list[Group]:
    """:func:`_groups` with each atom keyed by its store record as the plan writes it."""
    atoms = layout.atoms
    forking = {id(st.instr) for st in plan.steps if st.approximate}
    sl = slicing.Slicer(fn, _flows_by_instruction(fn, plan, layout.local_flows))
    staging = _staging(fn, sl, layout, forking)
    # local memory is followed where every load that read it names the space (a generic load's
    # bytes are followed by nothing: then the function runs whole)
    local = layout.local_flows is not None and all(".local" in plan.steps[k].instr.opcode for k in layout.local_flows)
    whole_keys = [((steps_of[id(a.store)], a.part), a.sub) for a in atoms]
    whole = [Group(list(range(len(atoms))), plan, whole_keys, (), local_flows=layout.local_flows)]
    if not slicing.sliceable(fn, local=local) and (staging is None or not slicing.sliceable(fn, shared=True,
                                                                                           local=local)):
        return whole
    region_of = {}
    for region, nbytes, offs, origins, step in run.lanes.loads:
        region_of[id(plan.steps[step].instr)] = region
    region_of.update(layout.shared_regions)  # operands read back from shared memory
    sigs = slicing.Signatures(sl, region_of, layout.element_bytes, layout.region_bytes)
    by_forks: dict = {}
    # with no approximate instruction on any element's path there are no choices to share: each
    # element alone is a group, which its class's representative stands for (the others' inputs
    # sampled) instead of every input running once per element
    alone = not any(st.approximate for st in plan.steps)
    for a, atom in enumerate(atoms):
        sc = slicing.element_slice(sl, [(atom.register, atom.bits)], [atom.store])
        forks = frozenset(sc.kept & forking)
        entry = by_forks.setdefault(("alone", a) if alone else forks, ([], set()))
        entry[0].append(a)
        entry[1].update(sc.kept)
    if local and any(_store_between(sl, kept) for _, kept in by_forks.values()):
        return whole
    groups = []
    for members, kept in by_forks.values():
        cut, changed = slicing.sliced_function(fn, kept | (staging or set()))
        sub = compile_function(cut, plan.db, path)
        sub_steps = {id(st.instr): i for i, st in enumerate(sub.steps)}
        keys = [_key(atoms[a], changed.get(id(atoms[a].store), atoms[a].store), sub_steps, layout.element_bytes)
                for a in members]
        signature = tuple(sigs.element(atoms[a].register, atoms[a].bits, atoms[a].store) for a in members)
        groups.append(Group(members, sub, keys, signature,
                            local_flows=_flows_in(sub, plan, layout.local_flows, changed)))
    first: dict = {}
    for g, group in enumerate(groups):
        rep = first.setdefault(group.signature, g)
        group.represents = -1 if rep == g else rep
    return groups
