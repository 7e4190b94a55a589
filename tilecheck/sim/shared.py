"""Shared memory (``.shared``), CTA barriers (``bar.sync``/``barrier.sync``, ``bar.warp.sync`` in
one-warp CTAs) and the warp's matrix load and store (``ldmatrix``, ``stmatrix``) for compiled plans.

Shared memory belongs to a CTA, not to a lane: :class:`SharedMemory` holds one row of bytes per
CTA of a run (a lane's CTA is its thread's: thread index = origin + ``thread_base``, CTA = index //
``block``, as :func:`tilecheck.sim.plan._special` computes them), kept on the run's
:class:`~tilecheck.sim.plan.Lanes` and left alone when lanes fork.

Addresses: a variable's shared state-space address (``mov.u32 %r, sym``, ``mov.u64``, the
``[sym+off]`` operand) is ``SHARED_START`` plus its offset in :func:`layout` (module variables
first, each aligned as declared); the generic address of shared address ``x`` is
``SHARED_BASE + x`` (``cvta.shared`` adds, ``cvta.to.shared`` subtracts), a window that no global
buffer and no local frame reaches, so a generic ``ld``/``st`` says by its address that it hits
shared memory.

What the ISA leaves open is an error here, never a guess:

- Shared memory starts undefined: each byte records whether (and by which thread, since which
  barrier) it was written; a load of a byte no thread wrote is an :class:`ExecutionError`.
- Two threads of a CTA touching one byte between two barriers, at least one of them writing, is
  a data race: an :class:`ExecutionError` naming the line, the threads and the address.
- The executor runs the lowest pc first, so when every thread of a CTA executes a barrier step
  together, every thread has finished the steps before it. A barrier step executed while some
  lane of the CTA is elsewhere (another path, already exited) is refused (UnsupportedPtxError),
  as is a counted barrier (``bar.sync a, b``) with fewer threads than the CTA.
- Lanes that are copies of one thread (forked at an approximate instruction) share the CTA's
  memory: a shared store is exact only where every copy of the thread stores the same bytes at
  the same address at that step; otherwise UnsupportedPtxError (the lane model holds one shared
  memory per CTA, not one per combination of choices).
"""

from __future__ import annotations

import numpy as np

from tilecheck.errors import Location
from tilecheck.formats import UINT_DTYPES
from tilecheck.sim.errors import ExecutionError, UnsupportedPtxError
from tilecheck.sim.frontend import variable_layout
from tilecheck.sim.parser import Addr, Imm, Reg, Symbol, Vec
from tilecheck.spec.types import PTX_TYPES

TYPES = {t.name: (t.bits, t.kind) for t in PTX_TYPES.values()}

SHARED_START = 1 << 12
"""Shared state-space address of the first shared variable: zero (an unset register) is outside."""
SHARED_BASE = 1 << 61
"""Generic address of shared state-space address 0 (below the local window, above global buffers)."""
SHARED_WINDOW = 1 << 32
"""Generic addresses ``SHARED_BASE .. SHARED_BASE + SHARED_WINDOW`` name shared memory."""

_UINT = UINT_DTYPES

DYNAMIC_SHARED_MOST = 227 * 1024
"""Bytes of dynamic shared memory (``.extern .shared``) a run provides until it is told less: the
most a CTA of sm_90 may have (227 KiB). The size is a launch argument the module does not hold;
a verifier that found what a kernel touches runs it with that (:func:`touched`), and an access
past it is then an error, never a guess."""


def touched(lanes) -> int:
    """The bytes of shared memory a run's accesses reached (from the first variable's start;
    0 where the run touched none)."""
    sm = getattr(lanes, "shared", None)
    return getattr(sm, "high", 0) if sm is not None else 0


def layout(function) -> tuple[dict, int]:
    """Where each ``.shared`` variable of ``function`` starts and the bytes they take together
    (:func:`tilecheck.sim.frontend.variable_layout`)."""
    return variable_layout(function.shared)


class SharedMemory:
    """The shared memory of every CTA of one run, with what each byte's writes and reads were.

    Rows are CTAs (from the run's lowest thread's CTA on), columns bytes. Per byte: its value, the
    barrier interval (``epoch``) of its last write and the writing thread (-1: never written), the
    interval of its last reads and the reading thread (-2: several threads)."""

    def __init__(self, size: int, names: dict):
        self.size = size
        self.names = names  # variable -> offset (messages name the variable an address falls in)
        self.ready = False
        self.high = 0  # one past the highest byte any access reached

    def setup(self, L, c) -> None:
        """Allocate the rows for the CTAs of ``L``'s threads (first access of the run)."""
        gid = L.origin + c.thread_base
        self.block = c.block
        self.first = int(gid.min()) // c.block if gid.size else 0
        ncta = (int(gid.max()) // c.block - self.first + 1) if gid.size else 1
        shape = (ncta, self.size)
        # a fixed pattern, never observed: a load of a byte never written is an error first
        self.data = np.full(shape, 0xA5, dtype=np.uint8)
        self.wepoch = np.full(shape, -1, dtype=np.int32)
        self.writer = np.full(shape, -1, dtype=np.int32)
        self.wstep = np.full(shape, -1, dtype=np.int32)  # the step of the last write (ABI discovery reads it)
        self.wbyte = np.full(shape, -1, dtype=np.int32)  # ... and which byte of its stored vector it was
        self.repoch = np.full(shape, -1, dtype=np.int32)
        self.reader = np.full(shape, -1, dtype=np.int32)
        self.epoch = np.zeros(ncta, dtype=np.int32)
        self.ready = True

    def describe(self, offset: int) -> str:
        """``0x1004 (name+4)``: a shared address and the variable it falls in."""
        best = max(((o, n) for n, o in self.names.items() if o <= offset), default=None)
        where = f" ({best[1]}+{offset - best[0]})" if best is not None else ""
        return f"shared address {SHARED_START + offset:#x}{where}"


def _state(L, c) -> SharedMemory:
    sm = L.shared
    if not sm.ready:
        sm.setup(L, c)
    return sm


def _positions(L, s, c, a: np.ndarray, total: int, where: Location):
    """(rows, byte offsets, CTA rows, thread indices in the CTA, global thread indices) of the
    accesses of ``total`` bytes at shared addresses ``a``; an error outside the variables or
    misaligned (PTX requires an access aligned to its size, vectors to the whole vector)."""
    sm = _state(L, c)
    rows = np.arange(L.size) if s is None else s
    offs = a.astype(np.int64) - np.int64(SHARED_START)
    bad = (offs < 0) | (offs + total > sm.size) | (offs % total != 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise ExecutionError(f"{where}: thread {int(L.origin[rows[k]]) + c.thread_base} accesses shared address "
                             f"{int(a[k]):#x}, outside (or misaligned in) the .shared variables ({sm.size} bytes "
                             f"from {SHARED_START:#x})")
    if offs.size:
        sm.high = max(sm.high, int(offs.max()) + total)
    gid = L.origin[rows] + c.thread_base
    return rows, offs, gid // sm.block - sm.first, gid % sm.block, gid


def load(L, s, c, a: np.ndarray, nbytes: int, count: int, where: Location) -> list:
    """``count`` consecutive elements of ``nbytes`` each at shared addresses ``a`` (one per
    selected lane), as unsigned arrays of the element's width."""
    return load_pieces(L, s, c, [a], nbytes * count, nbytes, where)


def load_pieces(L, s, c, pieces: list, piece_bytes: int, nbytes: int, where: Location) -> list:
    """The bytes of ``piece_bytes`` each at the shared addresses of every array in ``pieces`` (one
    address per selected lane, each piece aligned to its size), read as one access: the elements
    of ``nbytes`` each of the pieces in order, as unsigned arrays of the element's width (a
    ``ld.shared`` is one piece; ``ldmatrix`` gathers several rows' words)."""
    sm = _state(L, c)
    total = piece_bytes * len(pieces)
    count = total // nbytes
    cells = []
    for a in pieces:
        rows, offs, cta, tid, gid = _positions(L, s, c, a, piece_bytes, where)
        cells.append((cta * sm.size + offs)[:, None] + np.arange(piece_bytes))
    cells = np.concatenate(cells, axis=1)
    offs = cells[:, 0] - cta * sm.size
    wep = sm.wepoch.flat[cells]
    if (wep < 0).any():
        k, j = np.argwhere(wep < 0)[0]
        raise ExecutionError(f"{where}: thread {int(gid[k])} (CTA {int(cta[k]) + sm.first}) reads shared memory no "
                             f"thread wrote: {sm.describe(int(cells[k, j]) - int(cta[k]) * sm.size)}")
    cur = sm.epoch[cta][:, None]
    other = (wep == cur) & (sm.writer.flat[cells] != tid[:, None])
    if other.any():
        k, j = np.argwhere(other)[0]
        raise ExecutionError(f"{where}: a data race on shared memory: thread {int(gid[k])} reads "
                             f"{sm.describe(int(cells[k, j]) - int(cta[k]) * sm.size)}, which thread "
                             f"{int(sm.writer.flat[cells[k, j]]) + (int(cta[k]) + sm.first) * sm.block} of its CTA "
                             "wrote with no barrier between")
    _note_reads(sm, cells.ravel(), np.repeat(tid, total).astype(np.int32), np.repeat(sm.epoch[cta], total))
    if c.record_loads:
        # ABI discovery follows elements through shared memory: who wrote each byte read, in which
        # store and at which byte of its vector (threads numbered as lanes' origins)
        writer = sm.writer.flat[cells] + ((cta + sm.first) * sm.block - c.thread_base)[:, None]
        L.shared_loads.append((c.step, L.origin[rows], offs, writer, sm.wstep.flat[cells], sm.wbyte.flat[cells]))
    data = np.ascontiguousarray(sm.data.flat[cells].reshape(-1, total))
    return [data[:, j * nbytes:(j + 1) * nbytes].copy().view(_UINT[8 * nbytes]).reshape(-1) for j in range(count)]


def _note_reads(sm: SharedMemory, cells: np.ndarray, tids: np.ndarray, epochs: np.ndarray) -> None:
    """Record that threads ``tids`` read ``cells`` in barrier intervals ``epochs`` (a later write
    by another thread in the same interval is a race)."""
    uniq, inv = np.unique(cells, return_inverse=True)
    lo = np.full(uniq.shape[0], np.iinfo(np.int32).max, dtype=np.int32)
    hi = np.full(uniq.shape[0], -1, dtype=np.int32)
    np.minimum.at(lo, inv, tids)
    np.maximum.at(hi, inv, tids)
    ep = np.zeros(uniq.shape[0], dtype=np.int32)
    ep[inv] = epochs
    old_r, old_e = sm.reader.flat[uniq], sm.repoch.flat[uniq]
    alone = (lo == hi) & ((old_e != ep) | (old_r == lo))
    sm.reader.flat[uniq] = np.where(alone, lo, -2)
    sm.repoch.flat[uniq] = ep


def store(L, s, c, a: np.ndarray, nbytes: int, values: list, where: Location) -> None:
    """Store ``values`` (consecutive elements of ``nbytes`` each, one per selected lane) at shared
    addresses ``a``: into the CTA's memory, once per thread (see the module notes on copies)."""
    store_pieces(L, s, c, [a], nbytes * len(values), nbytes, values, where)


def store_pieces(L, s, c, pieces: list, piece_bytes: int, nbytes: int, values: list, where: Location) -> None:
    """Store the bytes of ``values`` (elements of ``nbytes`` each, one per selected lane, in order)
    as pieces of ``piece_bytes`` each at the shared addresses of every array in ``pieces`` (one
    address per selected lane, each piece aligned to its size): one access, as :func:`load_pieces`
    reads one (``st.shared`` is one piece; ``stmatrix`` scatters each thread's words to the rows
    other threads address). A byte's record names its place in ``values`` (``wbyte``)."""
    sm = _state(L, c)
    total = piece_bytes * len(pieces)
    placed = [_positions(L, s, c, a, piece_bytes, where) for a in pieces]
    rows, _, cta, tid, gid = placed[0]
    offs = np.stack([p[1] for p in placed], axis=1)  # lanes x pieces
    data = np.concatenate([np.asarray(v).astype(_UINT[8 * nbytes]).view(np.uint8).reshape(-1, nbytes)
                           for v in values], axis=1)
    origin_all = L.origin
    base = int(origin_all.min()) if origin_all.size else 0
    every = np.bincount(origin_all - base)
    here = np.bincount(L.origin[rows] - base, minlength=every.shape[0])
    if (every > 1).any():
        # some thread has several lanes (copies forked at an approximate instruction)
        torn = (here > 0) & (here != every)
        if torn.any():
            t = int(np.argmax(torn)) + base + c.thread_base
            raise UnsupportedPtxError(f"thread {t} stores to shared memory in some of its copies (lanes for other "
                                      "allowed results of an approximate instruction) and not in others: where "
                                      "control flow depends on an approximate choice, the lane model (one shared "
                                      "memory per CTA) cannot hold the stores", where)
        order = np.argsort(gid, kind="stable")
        g = gid[order]
        dup = g[1:] == g[:-1]
        if dup.any():
            o1, o0 = order[1:][dup], order[:-1][dup]
            differ = (offs[o1] != offs[o0]).any(axis=1) | (data[o1] != data[o0]).any(axis=1)
            if differ.any():
                k = int(o1[np.argmax(differ)])
                raise UnsupportedPtxError(f"copies of thread {int(gid[k])} (lanes for different allowed results of "
                                          "an approximate instruction) store different values to "
                                          f"{sm.describe(int(offs[k, 0]))}: other threads would read them, and the lane "
                                          "model holds one shared memory per CTA", where)
            keep = np.ones(rows.shape[0], dtype=bool)
            keep[o1] = False
            offs, cta, tid, gid, data = offs[keep], cta[keep], tid[keep], gid[keep], data[keep]
    cells = ((cta * sm.size)[:, None, None] + offs[:, :, None] + np.arange(piece_bytes)).reshape(-1, total)
    flat = cells.ravel()
    uniq, first, counts = np.unique(flat, return_index=True, return_counts=True)
    if (counts > 1).any():
        cell = uniq[np.argmax(counts > 1)]
        who = np.flatnonzero(flat == cell) // total
        _race(sm, where, "write", int(gid[who[0]]), int(gid[who[1]]), int(cell))
    cur = sm.epoch[cta][:, None]
    tcol = tid[:, None]
    ww = (sm.wepoch.flat[cells] == cur) & (sm.writer.flat[cells] != tcol)
    if ww.any():
        k, j = np.argwhere(ww)[0]
        _race(sm, where, "write", int(gid[k]), int(sm.writer.flat[cells[k, j]]) + (int(cta[k]) + sm.first) * sm.block,
              int(cells[k, j]))
    rw = (sm.repoch.flat[cells] == cur) & (sm.reader.flat[cells] != tcol) & (sm.reader.flat[cells] != -1)
    if rw.any():
        k, j = np.argwhere(rw)[0]
        r = int(sm.reader.flat[cells[k, j]])
        _race(sm, where, "read", int(gid[k]), None if r == -2 else r + (int(cta[k]) + sm.first) * sm.block,
              int(cells[k, j]))
    sm.data.flat[flat] = data.ravel()
    sm.wepoch.flat[flat] = np.repeat(sm.epoch[cta], total)
    sm.writer.flat[flat] = np.repeat(tid, total)
    sm.wstep.flat[flat] = c.step
    sm.wbyte.flat[flat] = np.tile(np.arange(total, dtype=np.int32), tid.shape[0])


def _race(sm: SharedMemory, where: Location, other: str, writer: int, them: int | None, cell: int):
    offset = cell % sm.size
    them_text = "other threads" if them is None else f"thread {them}"
    verb = "wrote" if other == "write" else "read"
    raise ExecutionError(f"{where}: a data race on shared memory: thread {writer} writes {sm.describe(offset)}, "
                         f"which {them_text} of its CTA {verb} with no barrier between")


def generic(L, a: np.ndarray, where: Location) -> bool:
    """Whether a generic access at addresses ``a`` names shared memory (all of them); an error
    where some lanes' addresses do and others' do not."""
    if a.size == 0:
        return False
    inside = (a >= np.uint64(SHARED_BASE)) & (a < np.uint64(SHARED_BASE + SHARED_WINDOW))
    if not inside.any():
        return False
    if not inside.all():
        raise UnsupportedPtxError("a generic access whose addresses name shared memory in some threads and other "
                                  "memory in others", where)
    return True


def to_shared(a: np.ndarray) -> np.ndarray:
    """Shared state-space addresses of generic addresses ``a`` (known to be in the window)."""
    return a - np.uint64(SHARED_BASE)


def barrier(L, s, c, where: Location) -> None:
    """A CTA-wide barrier executed by lanes ``s``: every lane of their CTAs must be here (see the
    module notes); then their CTAs enter a new barrier interval."""
    rows = np.arange(L.size) if s is None else s
    if s is not None:
        gid = L.origin + c.thread_base
        cta = gid // c.block
        at = np.zeros(L.size, dtype=bool)
        at[rows] = True
        missing = ~at & np.isin(cta, np.unique(cta[rows]))
        if missing.any():
            k = int(np.argmax(missing))
            copy = bool(np.isin(L.origin[k], L.origin[rows]))
            state = "has exited" if L.pcs is not None and L.pcs[k] >= (1 << 30) else "is on another path"
            if copy:
                raise UnsupportedPtxError(f"a copy of thread {int(gid[k])} (a lane for another allowed result of an "
                                          f"approximate instruction) {state} while the others reach this barrier: "
                                          "control flow around a barrier that depends on an approximate choice is "
                                          "not supported", where)
            raise UnsupportedPtxError(f"thread {int(gid[k])} of CTA {int(cta[k])} {state} while other threads of its "
                                      "CTA reach this barrier (a barrier in divergent code, or after some threads "
                                      "returned): not supported", where)
    sm = L.shared
    if sm is not None and sm.ready and rows.size:
        sm.epoch[np.unique((L.origin[rows] + c.thread_base) // sm.block - sm.first)] += 1


# ---------------------------------------------------------------------------------------------
# compilation (called from tilecheck.sim.plan._Compiler)


def _space(mods: list) -> tuple[list, bool]:
    """``mods`` without the shared space (``.shared``, ``.shared::cta``) and whether it was there."""
    rest = [m for m in mods if m not in ("shared", "shared::cta")]
    return rest, len(rest) != len(mods)


def handles(comp, ins, mods) -> bool:
    """Whether this ``ld``/``st`` is an access this module compiles: ``.shared`` (or
    ``.shared::cta``), or a generic access naming a shared variable (refused there)."""
    if any(m in ("shared", "shared::cta", "shared::cluster") for m in mods):
        return True
    addr = ins.operands[1] if ins.opcode.startswith("ld") and len(ins.operands) == 2 else \
        ins.operands[0] if ins.operands else None
    return isinstance(addr, Addr) and isinstance(addr.base, Symbol) and addr.base.name in comp.shared_vars


def compile_access(comp, ins, mods, store_global=None):
    """The step of ``ld.shared``/``st.shared`` (any width, ``.v2``/``.v4``; ``.volatile``: the
    simulator has no caches, so it reads like a plain access). ``store_global``: how a store
    redirected to global memory is recorded (``RunContext.store_redirect``; the plan's global
    store)."""
    head = ins.opcode.split(".")[0]
    if "shared::cluster" in mods:
        raise comp.error(ins, f"unsupported instruction '{ins.opcode}' (distributed shared memory of a cluster)")
    rest, shared = _space(mods)
    if not shared:
        raise comp.error(ins, f"unsupported generic access '{ins.opcode}' naming the shared variable "
                              f"{(ins.operands[1] if head == 'ld' else ins.operands[0]).base.name!r} "
                              "(a generic address comes from cvta.shared)")
    rest = [m for m in rest if m != "volatile"]
    vec = 1
    for v in ("v2", "v4"):
        if v in rest:
            vec = int(v[1])
            rest.remove(v)
    if len(rest) != 1 or rest[0] not in TYPES or TYPES[rest[0]][0] not in (8, 16, 32, 64) or len(ins.operands) != 2:
        raise comp.unsupported(ins)
    type_ = rest[0]
    width, kind = TYPES[type_]
    addr, regs = (ins.operands[1], ins.operands[0]) if head == "ld" else ins.operands
    if not isinstance(addr, Addr) or not isinstance(addr.base, (Reg, Symbol)):
        raise comp.unsupported(ins)
    items = list(regs.items) if isinstance(regs, Vec) else [regs]
    if len(items) != vec:
        raise comp.error(ins, f"{len(items)} register(s) for the {vec}-element access '{ins.opcode}'",
                         unsupported=False)
    addresses, breads = comp.address(ins, addr)
    nbytes = width // 8
    where = Location(comp.path, ins.line, ins.col)
    if head == "ld":
        writers = [comp.writer(ins, o) for o in items]

        def ld_shared(L, s, c):
            a = addresses(L, s, c)
            for (w, wn), v in zip(writers, load(L, s, c, a, nbytes, vec, where)):
                w(L, s, _extend(v, width, kind == "s", wn and comp.reg_types[wn]))
        return comp._step(ins, ld_shared, breads, [wn for _, wn in writers])
    readers = [comp.reader(ins, o, width, type_ if kind == "f" else None) for o in items]

    def st_shared(L, s, c):
        values = [r(L, s, c) for r, _ in readers]
        if not _redirected(L, s, c, values, nbytes, store_global, where):
            store(L, s, c, addresses(L, s, c), nbytes, values, where)
    return comp._step(ins, st_shared, set(breads).union(*[r for _, r in readers]), [])


def _redirected(L, s, c, values: list, nbytes: int, store_global, where: Location) -> bool:
    """Whether this shared store is redirected (``RunContext.store_redirect``), after recording each
    element's computed value alone where the kernel will store it (the rest of its way, through
    shared memory to the global store, only moves it: verify/layout.py). The redirect is {the
    element's first byte in the stored registers (``values``, ``nbytes`` each): (element bytes,
    address per thread)}; a layout conversion may send a vector's elements anywhere in the result."""
    redirect = c.store_redirect.get(c.step) if c.store_redirect else None
    if redirect is None:
        return False
    origin = L.origin if s is None else L.origin[s]
    for byte, (eb, address) in redirect.items():
        j, lo = divmod(byte, nbytes)
        v = np.asarray(values[j]).astype(np.uint64)
        if eb < nbytes:
            v = (v >> np.uint64(8 * lo)) & np.uint64((1 << (8 * eb)) - 1)
        store_global(L, s, c, address[origin], eb, v, where, SINK_PART + byte)
    return True


def _extend(v: np.ndarray, width: int, signed: bool, reg_type) -> np.ndarray:
    """A ``width``-bit loaded value for a register of ``reg_type``: sign-extended for signed loads
    into wider registers (``ld.shared.s8`` into ``.s32``), else the bits (the writer widens)."""
    rw = TYPES.get(reg_type, (width, "b"))[0]
    if not signed or rw <= width:
        return v
    sv = v.astype(np.uint64)
    top = (sv >> np.uint64(width - 1)) & np.uint64(1)
    return np.where(top == 1, sv | np.uint64(((1 << rw) - 1) ^ ((1 << width) - 1)), sv)


def compile_cvta(comp, ins, mods):
    """``cvta.shared.u64`` (shared -> generic) and ``cvta.to.shared.{u64,u32}`` (generic ->
    shared; an execution error for an address outside shared memory)."""
    rest, _ = _space(mods)
    if len(ins.operands) != 2 or rest not in (["u64"], ["to", "u64"], ["to", "u32"]):
        raise comp.error(ins, f"unsupported instruction '{ins.opcode}' (cvta.shared.u64, cvta.to.shared.u64 and "
                              "cvta.to.shared.u32 only: 32-bit generic addresses need .address_size 32)")
    read, reads = comp.reader(ins, ins.operands[1], 64)
    write, wname = comp.writer(ins, ins.operands[0])
    where = Location(comp.path, ins.line, ins.col)
    if rest == ["u64"]:
        def cvta_shared(L, s, c):
            write(L, s, read(L, s, c) + np.uint64(SHARED_BASE))
        return comp._step(ins, cvta_shared, reads, [wname])

    def cvta_to_shared(L, s, c):
        a = read(L, s, c)
        if a.size and not generic(L, a, where):
            raise ExecutionError(f"{where}: cvta.to.shared of a generic address {int(a[0]):#x} outside shared memory")
        write(L, s, to_shared(a))
    return comp._step(ins, cvta_to_shared, reads, [wname])


def compile_barrier(comp, ins, mods):
    """``bar{.cta}.sync a{, b}``, ``barrier{.cta}.sync{.aligned} a{, b}``: a barrier of the whole
    CTA (any barrier number ``a``; a thread count ``b``, immediate or register, must be the CTA's
    thread count: with fewer, which warps take part depends on their arrival order)."""
    if mods == ["warp", "sync"]:
        return _compile_warp_barrier(comp, ins)
    rest = [m for m in mods if m not in ("cta", "aligned")]
    if rest != ["sync"] or not 1 <= len(ins.operands) <= 2:
        raise comp.error(ins, f"unsupported instruction '{ins.opcode}' (bar.sync, barrier.sync and bar.warp.sync "
                              "only: arrive/red are not supported)")
    if ins.guard is not None:
        raise comp.error(ins, f"unsupported predicated barrier '{ins.text}' (the threads that skip it would "
                              "not take part)")
    for op in ins.operands:
        if not isinstance(op, (Imm, Reg)):
            raise comp.error(ins, f"unsupported barrier operand {op!r}")
    count = None
    if len(ins.operands) == 2:
        count, creads = comp.reader(ins, ins.operands[1], 32)
    reads = set() if count is None else creads
    where = Location(comp.path, ins.line, ins.col)

    def bar_sync(L, s, c):
        if count is not None:
            n = count(L, s, c)
            if n.size and (n != np.uint32(c.block)).any():
                raise UnsupportedPtxError(f"a barrier for {int(n[np.argmax(n != np.uint32(c.block))])} threads in a "
                                          f"CTA of {c.block}: which threads take part depends on the order warps "
                                          "arrive in (only a count equal to the CTA's threads is supported)", where)
        barrier(L, s, c, where)
    return comp._step(ins, bar_sync, reads, [])


SINK_PART = 1 << 20
"""Store-record parts from ``SINK_PART`` on are the elements of a redirected ``st.shared``, one
record each (part ``SINK_PART`` + the element's first byte in the stored vector)."""


LDMATRIX_COUNTS = {"x1": 1, "x2": 2, "x4": 4}
"""``ldmatrix``'s matrix counts: each 8x8 matrix of 16-bit elements is one destination register."""


def _warp_rows(L, s, c, a: np.ndarray, where: Location):
    """``(lane, warp's first thread, addresses by thread)`` of an instruction every thread of a
    warp executes together (``.sync.aligned``): per selected lane its lane in the warp and the
    thread index its warp starts at; and a lookup from a thread index to the address ``a`` that
    thread gave. An error where a warp's thread is not here, or copies of one thread (lanes
    forked at an approximate instruction) gave different addresses."""
    rows = np.arange(L.size) if s is None else s
    gid = (L.origin[rows] + c.thread_base).astype(np.int64)
    if c.block % 32:
        raise UnsupportedPtxError(f"a warp-wide instruction in a CTA of {c.block} threads (not whole warps)", where)
    lane = gid % c.block % 32
    first = gid - lane
    threads, at = np.unique(gid, return_index=True)
    by_thread = a[at]
    same = by_thread[np.searchsorted(threads, gid)] == a
    if not same.all():
        k = int(np.argmax(~same))
        raise UnsupportedPtxError(f"copies of thread {int(gid[k])} (lanes for other allowed results of an approximate "
                                  "instruction) give a warp-wide load different addresses: not supported", where)
    warps = np.unique(first)
    whole = np.isin(warps[:, None] + np.arange(32), threads)
    if not whole.all():
        w, j = np.argwhere(~whole)[0]
        raise UnsupportedPtxError(f"thread {int(warps[w]) + int(j)} is not with the other threads of its warp at this "
                                  "warp-wide instruction (it exited, or took another path): not supported", where)

    def address_of(thread: np.ndarray) -> np.ndarray:
        return by_thread[np.searchsorted(threads, thread)]
    return lane, first, address_of


def compile_ldmatrix(comp, ins, mods):
    """``ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}.shared{::cta}.b16 {d0, ...}, [a]`` (PTX ISA
    "ldmatrix"): the warp loads one to four 8x8 matrices of 16-bit elements; thread ``8 * j + r``
    gives the shared address of row ``r`` of matrix ``j`` (16 bytes), and thread ``t`` receives in
    ``d_j`` the 32-bit word ``t % 4`` of row ``t // 4`` of matrix ``j``. Each thread's result is
    thus the words at addresses other threads gave: one gathered shared load per thread, followed
    by the discovery like any ``ld.shared``. With ``.trans`` each matrix is read transposed: the
    element thread ``t`` receives in half ``h`` of ``d_j`` is element ``t // 4`` of row
    ``2 * (t % 4) + h`` (:func:`_matrix_pieces`). The 8-bit shapes of sm_100 are refused, not guessed."""
    count, trans, items, addr = _matrix_form(comp, ins, mods, "ldmatrix")
    for item in items:
        name = comp.reg(ins, item)
        if TYPES.get(comp.reg_types[name], (0, ""))[0] != 32:
            raise comp.error(ins, f"{name} is not a 32-bit register ('{ins.opcode}' gives each thread 32 bits per "
                                  "matrix)", unsupported=False)
    addresses, breads = comp.address(ins, addr)
    writers = [comp.writer(ins, o) for o in items]
    where = Location(comp.path, ins.line, ins.col)

    def ldmatrix(L, s, c):
        a = addresses(L, s, c)
        _row_aligned(L, s, c, a, "ldmatrix", where)
        pieces, piece_bytes = _matrix_pieces(L, s, c, a, count, trans, where)
        for (w, _), v in zip(writers, load_pieces(L, s, c, pieces, piece_bytes, 4, where)):
            w(L, s, v)
    return comp._step(ins, ldmatrix, breads, [wn for _, wn in writers])


def _matrix_form(comp, ins, mods, name: str) -> tuple[int, bool, list, Addr]:
    """``(matrices, .trans, registers, address)`` of ``ldmatrix`` (registers first) or ``stmatrix``
    (address first): ``.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared{::cta}.b16``, unpredicated, one
    register per matrix; a located error for anything else."""
    rest = [m for m in mods if m not in ("sync", "aligned", "shared", "shared::cta", "trans")]
    spaces = [m for m in mods if m in ("shared", "shared::cta")]
    counts = [m for m in rest if m in LDMATRIX_COUNTS]
    if (not {"sync", "aligned"} <= set(mods) or len(spaces) != 1 or len(counts) != 1
            or sorted(set(rest) - set(counts)) != ["b16", "m8n8"] or len(rest) != 3 or len(ins.operands) != 2):
        raise comp.error(ins, f"unsupported instruction '{ins.opcode}' ({name}.sync.aligned.m8n8.x1/.x2/.x4"
                              "{.trans}.shared.b16 only)")
    if ins.guard is not None:
        raise comp.error(ins, f"unsupported predicated warp-wide instruction '{ins.text}'")
    count = LDMATRIX_COUNTS[counts[0]]
    regs, addr = ins.operands if name == "ldmatrix" else ins.operands[::-1]
    items = list(regs.items) if isinstance(regs, Vec) else [regs]
    if len(items) != count:
        raise comp.error(ins, f"{len(items)} register(s) for '{ins.opcode}', which "
                              f"{'loads' if name == 'ldmatrix' else 'stores'} {count} matrices", unsupported=False)
    if not isinstance(addr, Addr) or not isinstance(addr.base, (Reg, Symbol)):
        raise comp.unsupported(ins)
    return count, "trans" in mods, items, addr


def _row_aligned(L, s, c, a: np.ndarray, what: str, where: Location) -> None:
    if a.size and (a % np.uint64(16) != 0).any():
        k = int(np.argmax(a % np.uint64(16) != 0))
        raise ExecutionError(f"{where}: thread {int(L.origin[k if s is None else s[k]]) + c.thread_base} gives "
                             f"{what} the row address {int(a[k]):#x}, not 16-byte aligned")


def _matrix_pieces(L, s, c, a: np.ndarray, count: int, trans: bool, where: Location) -> tuple[list, int]:
    """Where each thread's part of ``count`` 8x8 matrices of 16-bit elements lies in shared
    memory (``ldmatrix``/``stmatrix``, row ``r`` of matrix ``j`` at the address thread ``8 * j + r``
    of the warp gives): ``(pieces, piece_bytes)``, the addresses per selected lane in the order of
    the thread's registers. Thread ``t`` holds in its register ``j`` the 32-bit word ``t % 4`` of
    row ``t // 4`` (one 4-byte piece per matrix); ``trans``: the matrix transposed, half ``h`` of
    that register being element ``t // 4`` of row ``2 * (t % 4) + h`` (two 2-byte pieces)."""
    lane, first, address_of = _warp_rows(L, s, c, a, where)
    if not trans:
        word = (lane % 4).astype(np.uint64) * np.uint64(4)
        return [address_of(first + 8 * j + lane // 4) + word for j in range(count)], 4
    column = (lane // 4).astype(np.uint64) * np.uint64(2)
    return [address_of(first + 8 * j + 2 * (lane % 4) + h) + column for j in range(count) for h in (0, 1)], 2


def compile_stmatrix(comp, ins, mods, store_global=None):
    """``stmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}.shared{::cta}.b16 [a], {r0, ...}`` (PTX ISA
    "stmatrix", sm_90): ``ldmatrix`` the other way, the warp storing one to four 8x8 matrices of
    16-bit elements, thread ``t``'s register ``j`` going where ``ldmatrix`` would load it from
    (:func:`_matrix_pieces`). One scattered shared store per thread, recorded byte by byte like
    ``st.shared.v4.b32 [a], {r0, ...}``'s so that discovery follows elements through it (and
    redirected like it: ``store_global``, as :func:`compile_access`)."""
    count, trans, items, addr = _matrix_form(comp, ins, mods, "stmatrix")
    readers = [comp.reader(ins, o, 32) for o in items]
    addresses, breads = comp.address(ins, addr)
    where = Location(comp.path, ins.line, ins.col)

    def stmatrix(L, s, c):
        values = [r(L, s, c) for r, _ in readers]
        if _redirected(L, s, c, values, 4, store_global, where):
            return
        a = addresses(L, s, c)
        _row_aligned(L, s, c, a, "stmatrix", where)
        pieces, piece_bytes = _matrix_pieces(L, s, c, a, count, trans, where)
        store_pieces(L, s, c, pieces, piece_bytes, 4, values, where)
    return comp._step(ins, stmatrix, set(breads).union(*[r for _, r in readers]), [])


def _compile_warp_barrier(comp, ins):
    """``bar.warp.sync membermask``: the threads of ``membermask`` wait for each other, and their
    memory accesses before it are ordered before those after it (PTX ISA "bar.warp.sync").
    Shared memory's barrier intervals here are a CTA's, so a warp barrier is one only where the CTA
    is that one warp and the mask names all 32 threads (Triton's layout conversions with
    ``stmatrix`` in one-warp CTAs); in a CTA of several warps it would order one warp's accesses
    and not the others', which the interval of a CTA cannot hold: refused, located."""
    if ins.guard is not None:
        raise comp.error(ins, f"unsupported predicated barrier '{ins.text}'")
    if len(ins.operands) != 1 or not isinstance(ins.operands[0], Imm) or \
            int(ins.operands[0].value) & 0xFFFFFFFF != 0xFFFFFFFF:
        raise comp.error(ins, f"unsupported instruction '{ins.text}' (bar.warp.sync of the whole warp only: "
                              "membermask -1 or 0xffffffff)")
    where = Location(comp.path, ins.line, ins.col)

    def bar_warp_sync(L, s, c):
        if c.block != 32:
            raise UnsupportedPtxError(f"bar.warp.sync in a CTA of {c.block} threads: it orders the shared-memory "
                                      "accesses of one warp, and the simulator keeps barrier intervals per CTA (a "
                                      "warp barrier is followed in one-warp CTAs only)", where)
        barrier(L, s, c, where)
    return comp._step(ins, bar_warp_sync, set(), [])
