"""A wave-level AMDGCN simulator for elementwise kernels: concrete control, symbolic data.

:func:`launch` runs one kernel of a parsed ``.s`` (:mod:`tilecheck.amdgpu.asm`) over some
workgroups, every wave of them side by side: SGPRs are per-wave arrays, VGPRs per-lane arrays
(``waves x wavefront``), EXEC a lane mask, SCC and MODE per wave. Kernel arguments come through
the kernarg segment (``s_load``) and preloaded SGPRs (gfx940's
``.amdhsa_user_sgpr_kernarg_preload_length``); the workgroup id and the workitem id arrive where
the kernel descriptor asks. Branches run per wave: waves that disagree on a branch continue as
separate groups. Waits, nops and scheduling hints do nothing.

Everything read from an input buffer is symbolic: a load yields nodes of a
:class:`~tilecheck.amdgpu.symbolic.Graph`, and any instruction with a symbolic operand yields a
node, so a store records an expression over loads. Data may not reach an address, a branch, EXEC
or a scalar register (that is not an elementwise kernel): each is a located
:class:`UnsupportedAmdgcnError` (exit 2), as is any instruction the simulator does not know.
Approximate instructions always yield nodes (their result is a choice, made later).

The semantics of every step (:class:`Step`) are one function of its source registers
(:meth:`Step.apply`), used here on concrete lanes and by :mod:`tilecheck.verify.amdgcn` on the
inputs: integer and bit operations from :mod:`tilecheck.amdgpu.intops`, floating point from the
``spec/amdgpu`` forms through :mod:`tilecheck.amdgpu.floatops`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tilecheck.amdgpu import intops
from tilecheck.amdgpu.asm_types import FuncOperand, Literal, SReg, Special, SrcMod, SymbolRef, VReg
from tilecheck.amdgpu.steps import (OutsideBuffersError, Step, UnsupportedAmdgcnError, literal_bits, located_error,
                                    prepare_step)
from tilecheck.amdgpu.symbolic import OP, Graph, Node
from tilecheck.errors import UsageError

M32 = np.uint64(0xFFFFFFFF)
SPECIAL_SGPR = {"vcc_lo": 106, "vcc_hi": 107, "m0": 124, "exec_lo": 126, "exec_hi": 127}
NULL = -1
KERNARG_BASE = 0x7F00_0000_0000
BUFFER_BASE = 0x1000_0000_0000
BUFFER_STRIDE = 0x0100_0000_0000
MAX_STEPS = 200_000


# --- the machine ---------------------------------------------------------------------------------

@dataclass
class Buffer:
    """An argument buffer: ``base`` address and size in bytes; ``role`` as the launch assumes."""

    base: int
    size: int
    name: str = "a buffer"


@dataclass
class StoredByte:
    """Who stored one output byte: the lane (wave, lane), the argument stored, and which byte of
    that argument's value it is."""

    lane: tuple
    arg: tuple
    byte: int
    step: object


@dataclass
class Launch:
    """The outcome of :func:`launch`: the graph and, per buffer, the bytes stored (address ->
    :class:`StoredByte`); ``loads`` the (buffer, offset, bytes) the kernel read, ``steps``."""

    graph: Graph
    stored: dict
    loads: set
    steps: list
    lanes_stored: np.ndarray = None


class _State:
    """Register files of ``nw`` waves of ``W`` lanes. A VGPR is a uint64 array (nw, W) of 32-bit
    values and an int64 array of symbolic references (``2 * node + part``, -1 for a concrete value);
    lane-mask SGPRs written with symbolic bits keep them per lane in ``smask`` (int64 (nw, W) of node
    ids, -1 where the bit is concrete: waves that branched apart share the arrays, row by row)."""

    def __init__(self, nw: int, wave: int):
        self.nw, self.W = nw, wave
        self.v: dict = {}
        self.vs: dict = {}
        self.s: dict = {}
        self.smask: dict = {}
        self.scc = np.zeros(nw, bool)
        self.mode = np.zeros(nw, np.uint64)

    def vget(self, i: int):
        if i not in self.v:
            self.v[i] = np.zeros((self.nw, self.W), np.uint64)
            self.vs[i] = np.full((self.nw, self.W), -1, np.int64)
        return self.v[i], self.vs[i]

    def sget(self, i: int) -> np.ndarray:
        if i == NULL:
            return np.zeros(self.nw, np.uint64)
        return self.s.get(i, np.zeros(self.nw, np.uint64))


class Machine:
    """Runs one kernel (:func:`launch` is the entry point)."""

    def __init__(self, fn, steps: list, db, buffers: list, kernarg: bytes, groups: list, group_size: int,
                 variant: str = "observed"):
        self.fn, self.steps, self.db, self.variant = fn, steps, db, variant
        self.W = fn.wavefront_size
        self.buffers = buffers
        self.kernarg = kernarg
        self.graph = Graph()
        self.stored: dict = {}
        self.loads: set = set()
        waves_per_group = -(-group_size // self.W)
        self.nw = waves_per_group * len(groups)
        self.st = _State(self.nw, self.W)
        self.exec_ = np.zeros((self.nw, self.W), bool)
        wave_group = np.repeat(np.asarray(groups, dtype=np.uint64), waves_per_group)
        tid = (np.arange(waves_per_group * self.W) .reshape(waves_per_group, self.W))
        tid = np.tile(tid, (len(groups), 1))
        self.exec_[:] = tid < group_size
        self.tid = tid
        self._waves = np.ones(self.nw, bool)  # the waves of the group running now
        self._init_registers(wave_group, tid)

    # -- setup --
    def _init_registers(self, wave_group, tid) -> None:
        d = self.fn.descriptor or {}
        st = self.st
        k = 0
        if d.get(".amdhsa_user_sgpr_private_segment_buffer"):
            k += 4
        for key, n in ((".amdhsa_user_sgpr_dispatch_ptr", 2), (".amdhsa_user_sgpr_queue_ptr", 2)):
            if d.get(key):
                k += n
        if d.get(".amdhsa_user_sgpr_kernarg_segment_ptr"):
            st.s[k] = np.full(self.nw, np.uint64(KERNARG_BASE & 0xFFFFFFFF))
            st.s[k + 1] = np.full(self.nw, np.uint64(KERNARG_BASE >> 32))
            k += 2
        for key, n in ((".amdhsa_user_sgpr_dispatch_id", 2), (".amdhsa_user_sgpr_flat_scratch_init", 2),
                       (".amdhsa_user_sgpr_private_segment_size", 1)):
            if d.get(key):
                k += n
        preload = int(d.get(".amdhsa_user_sgpr_kernarg_preload_length", 0) or 0)
        poff = int(d.get(".amdhsa_user_sgpr_kernarg_preload_offset", 0) or 0)
        for j in range(preload):
            word = int.from_bytes(self.kernarg[4 * (poff + j): 4 * (poff + j) + 4].ljust(4, b"\0"), "little")
            st.s[k + j] = np.full(self.nw, np.uint64(word))
        user = int(d.get(".amdhsa_user_sgpr_count", k + preload))
        k = user
        if d.get(".amdhsa_system_sgpr_workgroup_id_x", 1):
            st.s[k] = wave_group.copy()
            k += 1
        for key in (".amdhsa_system_sgpr_workgroup_id_y", ".amdhsa_system_sgpr_workgroup_id_z"):
            if d.get(key):
                st.s[k] = np.zeros(self.nw, np.uint64)
                k += 1
        v0, _ = st.vget(0)
        v0[:] = tid.astype(np.uint64)
        mode = (int(d.get(".amdhsa_float_round_mode_32", 0)) | int(d.get(".amdhsa_float_round_mode_16_64", 0)) << 2
                | int(d.get(".amdhsa_float_denorm_mode_32", 3)) << 4 | int(d.get(".amdhsa_float_denorm_mode_16_64", 3)) << 6
                | int(d.get(".amdhsa_dx10_clamp", 1)) << 8 | int(d.get(".amdhsa_ieee_mode", 1)) << 9)
        st.mode[:] = np.uint64(mode)
        self._write_mask(126, self.exec_, np.ones(self.nw, bool))

    # -- lane masks --
    def _has_sym(self, r: int) -> bool:
        """True where a lane-mask SGPR holds data bits in a wave of the group running now."""
        arr = self.st.smask.get(r)
        return arr is not None and bool((arr[self._waves] >= 0).any())

    def _clear_sym(self, r: int, waves) -> None:
        arr = self.st.smask.get(r)
        if arr is not None:
            arr[waves] = -1
            if not (arr >= 0).any():
                del self.st.smask[r]

    def _set_sym(self, r: int, sym: np.ndarray, waves) -> None:
        arr = self.st.smask.setdefault(r, np.full((self.nw, self.W), -1, np.int64))
        arr[waves] = sym[waves]
        if not (arr >= 0).any():
            del self.st.smask[r]

    def _mask_regs(self, index: int) -> list:
        return [index] if self.W == 32 else [index, index + 1]

    def _read_mask(self, index: int) -> np.ndarray:
        """A lane-mask SGPR (pair in wave64) as bools (nw, W)."""
        word = np.zeros(self.nw, np.uint64)
        for j, r in enumerate(self._mask_regs(index)):
            word |= self.st.sget(r) << np.uint64(32 * j)
        lanes = np.arange(self.W, dtype=np.uint64)
        return ((word[:, None] >> lanes[None, :]) & np.uint64(1)).astype(bool)

    def _write_mask(self, index: int, bits: np.ndarray, waves: np.ndarray) -> None:
        lanes = np.arange(self.W, dtype=np.uint64)
        word = (bits.astype(np.uint64) << lanes[None, :]).sum(axis=1, dtype=np.uint64)
        for j, r in enumerate(self._mask_regs(index)):
            if r == NULL:
                continue
            part = (word >> np.uint64(32 * j)) & M32
            self.st.s[r] = np.where(waves, part, self.st.sget(r))
            self._clear_sym(r, waves)

    # -- operand access --
    def _sreg_index(self, op, instr) -> tuple[int, int]:
        if isinstance(op, SReg):
            return op.index, op.count
        if isinstance(op, Special):
            name = op.name
            if name in ("vcc", "exec"):
                return SPECIAL_SGPR[name + "_lo"], (2 if self.W == 64 else 1)
            if name in SPECIAL_SGPR:
                return SPECIAL_SGPR[name], 1
            if name == "null":
                return NULL, 1
        raise located_error(instr, f"operand {op} is not supported here")

    def _scalar(self, op, width: int, instr, is_float: bool = False) -> np.ndarray:
        """A wave-uniform source (SGPR, special, literal) as uint64 per wave."""
        if isinstance(op, SrcMod):
            op = op.operand
            while isinstance(op, SrcMod):
                op = op.operand
        if isinstance(op, Literal):
            return np.full(self.nw, np.uint64(literal_bits(op, width, is_float)))
        if isinstance(op, Special) and op.name == "scc":
            return self.st.scc.astype(np.uint64)
        if isinstance(op, Special) and op.name in ("vccz", "execz"):
            raise located_error(instr, f"{op.name} as an operand is not supported")
        idx, count = self._sreg_index(op, instr)
        if any(self._has_sym(r) for r in range(idx, idx + count) if r != NULL):
            raise located_error(instr, "input data reaches a scalar register here (a lane mask of data used as a scalar)")
        v = self.st.sget(idx)
        if width == 64:
            hi = self.st.sget(idx + 1) if count >= 2 or (isinstance(op, Special) and self.W == 32) else np.zeros(self.nw, np.uint64)
            if isinstance(op, Special) and self.W == 32 and op.name in ("vcc", "exec"):
                hi = np.zeros(self.nw, np.uint64)
            v = v | (hi << np.uint64(32))
        return v

    def _vsource(self, op, width: int, instr, is_float: bool):
        """A per-lane source: values (nw, W) and symbolic arguments (an object array of Arg or
        None per lane) where any lane is symbolic, else None."""
        base = op
        while isinstance(base, SrcMod):
            base = base.operand
        if isinstance(base, VReg):
            v, s = self.st.vget(base.index)
            if width == 64:
                v1, s1 = self.st.vget(base.index + 1)
                val = v | (v1 << np.uint64(32))
                if (s >= 0).any() or (s1 >= 0).any():
                    return val, self._pair_args(v, s, v1, s1)
                return val, None
            if (s >= 0).any():
                return v, self._word_args(v, s)
            return v, None
        if width == 1:
            idx, _ = self._sreg_index(base, instr)
            bits = self._read_mask(idx)
            sym = self.st.smask.get(idx) if self._has_sym(idx) else None
            if sym is not None:
                args = np.empty(bits.shape, object)
                for w, l in zip(*np.nonzero(sym >= 0)):
                    args[w, l] = ("b", int(sym[w, l]))
                for w, l in zip(*np.nonzero(sym < 0)):
                    args[w, l] = ("c", bool(bits[w, l]))
                return bits, args
            return bits, None
        val = self._scalar(op, width, instr, is_float)
        return np.repeat(val[:, None], self.W, axis=1), None

    @staticmethod
    def _word_args(v, s):
        args = np.empty(v.shape, object)
        for (w, l), ref in np.ndenumerate(s):
            args[w, l] = ("c", int(v[w, l])) if ref < 0 else ("r", int(ref) >> 1, int(ref) & 1)
        return args

    def _pair_args(self, v, s, v1, s1):
        args = np.empty(v.shape, object)
        for (w, l), ref in np.ndenumerate(s):
            ref1 = int(s1[w, l])
            if ref >= 0 and ref1 >= 0 and ref >> 1 == ref1 >> 1 and ref & 1 == 0 and ref1 & 1 == 1:
                args[w, l] = ("r64", int(ref) >> 1)
            elif ref < 0 and ref1 < 0:
                args[w, l] = ("c", int(v[w, l]) | int(v1[w, l]) << 32)
            else:
                lo = ("c", int(v[w, l])) if ref < 0 else ("r", int(ref) >> 1, int(ref) & 1)
                hi = ("c", int(v1[w, l])) if ref1 < 0 else ("r", ref1 >> 1, ref1 & 1)
                args[w, l] = ("cat", lo, hi)
        return args

    def _write_v(self, op, width: int, value: np.ndarray, sym: np.ndarray | None, mask: np.ndarray) -> None:
        """Write a per-lane destination (``sym``: per-lane node ids of the value, -1 concrete)."""
        if isinstance(op, Special) and op.name == "null":
            return
        if not isinstance(op, VReg):
            raise UsageError(f"destination {op} is not a VGPR")
        for j in range(2 if width == 64 else 1):
            v, s = self.st.vget(op.index + j)
            part = (value >> np.uint64(32 * j)) & M32 if width == 64 else value & M32
            v[mask] = part[mask]
            if sym is None:
                s[mask] = -1
            else:
                refs = np.where(sym >= 0, sym * 2 + j, -1)
                s[mask] = refs[mask]

    # -- running --
    def run(self, max_steps: int = MAX_STEPS) -> Launch:
        """Run every wave from the first instruction to ``s_endpgm``."""
        work = [(0, np.ones(self.nw, bool))]
        count = 0
        labels = self.fn.labels
        while work:
            pc, waves = work.pop()
            while True:
                if pc >= len(self.steps):
                    raise UsageError(f"{self.fn.name}: execution runs past the last instruction", self.fn.location)
                count += 1
                if count > max_steps:
                    raise located_error(self.steps[pc].instr, f"more than {max_steps} instructions executed: a loop the "
                                                     "simulator does not follow to its end")
                step = self.steps[pc]
                self._waves = waves
                if step.kind == "branch":
                    m = step.instr.mnemonic
                    if m == "s_endpgm":
                        break
                    target = step.instr.operands[0]
                    if not isinstance(target, SymbolRef) or target.name not in labels:
                        raise located_error(step.instr, "branch target is not a label of this function")
                    dest = labels[target.name]
                    if m == "s_branch":
                        pc = dest
                        continue
                    taken = self._condition(step.instr)
                    t, f = waves & taken, waves & ~taken
                    if t.any() and f.any():
                        work.append((dest, t))
                        waves = f
                        pc += 1
                    elif t.any():
                        pc = dest
                    else:
                        pc += 1
                    continue
                self._execute(step, waves)
                pc += 1
        return Launch(self.graph, self.stored, self.loads, self.steps)

    def _condition(self, instr) -> np.ndarray:
        m = instr.mnemonic.removeprefix("s_cbranch_")
        if m in ("scc0", "scc1"):
            return self.st.scc if m == "scc1" else ~self.st.scc
        if m in ("vccz", "vccnz", "execz", "execnz"):
            reg = 106 if m.startswith("vcc") else 126
            if any(self._has_sym(r) for r in self._mask_regs(reg)):
                raise located_error(instr, "a branch on input data (the kernel is not elementwise)")
            bits = self._read_mask(reg)
            nonzero = bits.any(axis=1)
            return ~nonzero if m.endswith("z") and not m.endswith("nz") else nonzero
        raise located_error(instr, "branch condition not supported")

    def _active_lanes(self) -> np.ndarray:
        """EXEC as bools (waves x lanes); data in EXEC is refused."""
        if any(self._has_sym(r) for r in self._mask_regs(126)):
            raise UsageError("EXEC depends on input data")
        return self._read_mask(126)

    def _execute(self, step: Step, waves: np.ndarray) -> None:
        k = step.kind
        if k == "nop":
            return
        if k == "dual":
            for half in step.srcs:
                self._execute(half, waves)
            return
        instr = step.instr
        if k == "sload":
            return self._sload(step, waves)
        if k == "vload":
            return self._vload(step, waves)
        if k == "vstore":
            return self._vstore(step, waves)
        if k == "mode":
            return self._mode(step, waves)
        if k in ("salu", "cselect", "saveexec"):
            return self._salu(step, waves)
        if k == "readfirstlane":
            v, args = self._vsource(step.srcs[0], 32, instr, False)
            ex = self._active_lanes() & waves[:, None]
            first = np.where(ex.any(axis=1), ex.argmax(axis=1), 0)
            one = np.zeros(ex.shape, bool)
            one[np.arange(self.nw)[waves], first[waves]] = True
            if _symbolic_in(args, one):
                raise located_error(instr, "input data reaches a scalar register (v_readfirstlane of data)")
            val = v[np.arange(self.nw), first]
            idx, _ = self._sreg_index(step.dsts[0], instr)
            self.st.s[idx] = np.where(waves, val, self.st.sget(idx))
            return
        self._valu(step, waves)

    def _mode(self, step: Step, waves) -> None:
        instr = step.instr
        m = instr.mnemonic
        st = self.st
        if m == "s_denorm_mode":
            imm = int(instr.operands[0].value)
            new = (st.mode & ~np.uint64(0xF0)) | np.uint64((imm & 0xF) << 4)
        elif m == "s_round_mode":
            imm = int(instr.operands[0].value)
            new = (st.mode & ~np.uint64(0xF)) | np.uint64(imm & 0xF)
        elif m == "s_getreg_b32":
            raise located_error(instr, "s_getreg_b32 is not supported")
        else:
            hw = instr.operands[0] if m == "s_setreg_imm32_b32" else instr.operands[0]
            src = instr.operands[1] if m == "s_setreg_imm32_b32" else instr.operands[1]
            if m == "s_setreg_b32":
                hw, src = instr.operands[0], instr.operands[1]
            if not isinstance(hw, FuncOperand) or hw.name != "hwreg" or hw.args[0] not in ("HW_REG_MODE", 1):
                raise located_error(instr, "only MODE is modelled among the hardware registers")
            off = int(hw.args[1]) if len(hw.args) > 1 else 0
            size = int(hw.args[2]) if len(hw.args) > 2 else 32
            value = self._scalar(src, 32, instr)
            field = np.uint64(((1 << size) - 1) << off)
            new = (st.mode & ~field) | ((value << np.uint64(off)) & field)
        st.mode = np.where(waves, new, st.mode)

    def _salu(self, step: Step, waves) -> None:
        instr = step.instr
        m = instr.mnemonic
        st = self.st
        if step.kind == "cselect":
            width = 64 if m.endswith("64") else 32
            a = self._scalar(instr.operands[1], width, instr)
            b = self._scalar(instr.operands[2], width, instr)
            self._write_s(instr.operands[0], width, np.where(st.scc, a, b), waves, instr)
            return
        if step.kind == "saveexec":
            width = 64 if m.endswith("64") else 32
            exec_word = self._scalar(Special("exec"), width, instr)
            src_op = instr.operands[1]
            base = src_op
            idx = self._sreg_index(base, instr)[0] if not isinstance(base, Literal) else None
            if idx is not None and any(self._has_sym(r) for r in self._mask_regs(idx)):
                raise located_error(instr, "EXEC set from a compare of input data (divergent control flow on data is not "
                                  "supported)")
            src = self._scalar(src_op, width, instr)
            new = intops.saveexec_result(m.rsplit("_b", 1)[0], src, exec_word)
            self._write_s(instr.operands[0], width, exec_word, waves, instr)
            self._write_s(Special("exec"), width, new, waves, instr)
            st.scc = np.where(waves, (new & np.uint64((1 << width) - 1 if width < 64 else 0xFFFFFFFFFFFFFFFF)) != 0, st.scc)
            return
        op = step.int_op
        # a lane mask with data bits combined by SALU (s_and_b64 s[0:1], s[0:1], vcc) stays per lane
        srcs_sym = [self._mask_sym(s, instr) for s in step.srcs]
        if any(x is not None for x in srcs_sym):
            return self._salu_mask(step, waves, srcs_sym)
        srcs = [self._scalar(s, w, instr) if w != 1 else st.scc for s, w in zip(step.srcs, op.sources)]
        if op.reads_carry:
            srcs = srcs[:2] + [st.scc]
        res = op.fn(*srcs)
        res = list(res) if isinstance(res, tuple) else [res]
        k = 0
        for r in op.results:
            if r == "scc":
                st.scc = np.where(waves, np.asarray(res[k], bool), st.scc)
            else:
                width = 64 if r == "u64" else 32
                self._write_s(step.dsts[0], width, np.asarray(res[k], np.uint64), waves, instr)
            k += 1

    def _mask_sym(self, op, instr):
        """The per-lane data bits of a lane-mask source (SGPRs, VCC, EXEC), or None if it holds none."""
        if isinstance(op, SReg) or (isinstance(op, Special) and (op.name in ("vcc", "exec") or op.name in SPECIAL_SGPR)):
            idx, count = self._sreg_index(op, instr)
            regs = [r for r in range(idx, idx + max(count, 1)) if r != NULL]
            if any(self._has_sym(r) for r in regs):
                return self.st.smask[regs[0]]
        return None

    def _salu_mask(self, step: Step, waves, srcs_sym) -> None:
        instr = step.instr
        m = instr.mnemonic
        if not re.match(r"s_(and|or|xor|andn2|orn2|and_not1|or_not1|mov)_b(32|64)$", m):
            raise located_error(instr, "input data reaches a scalar register (a lane mask of data)")
        op = m[2:].rsplit("_b", 1)[0]
        if op == "mov":  # a lane mask moved whole: its bits and their nodes
            b, a = self._vsource(step.srcs[0], 1, instr, False)
            idx, _ = self._sreg_index(step.dsts[0], instr)
            self._write_mask(idx, b, waves)
            sym = self.st.smask.get(self._sreg_index(step.srcs[0], instr)[0])
            for r in self._mask_regs(idx):
                self._set_sym(r, sym.copy(), waves)
            return
        bits, args = [], []
        for s in step.srcs:
            if isinstance(s, Literal):
                word = literal_bits(s, 64, False)
                b = ((np.uint64(word) >> np.arange(self.W, dtype=np.uint64)) & np.uint64(1)).astype(bool)
                bits.append(np.repeat(b[None, :], self.nw, axis=0))
                args.append(None)
            else:
                b, a = self._vsource(s, 1, instr, False)
                bits.append(b)
                args.append(a)
        out_sym = np.full((self.nw, self.W), -1, np.int64)
        exec_ = np.ones((self.nw, self.W), bool)
        for w, l in zip(*np.nonzero(exec_ & waves[:, None])):
            a = [args[k][w, l] if args[k] is not None else ("c", bool(bits[k][w, l])) for k in range(2)]
            if all(x[0] == "c" for x in a):
                continue
            node = Node(OP, (step, int(self.st.mode[w]), tuple(a)), 1)
            out_sym[w, l] = self.graph.add(node)
        fn = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
              "andn2": lambda x, y: x & ~y, "and_not1": lambda x, y: x & ~y, "orn2": lambda x, y: x | ~y,
              "or_not1": lambda x, y: x | ~y}[op]
        new = fn(bits[0], bits[1])
        idx, _ = self._sreg_index(step.dsts[0], instr)
        self._write_mask(idx, new, waves)
        for r in self._mask_regs(idx):
            if r != NULL:
                self._set_sym(r, out_sym, waves)
        self.st.scc = np.where(waves, new.any(axis=1), self.st.scc)

    def _write_s(self, op, width: int, value: np.ndarray, waves, instr) -> None:
        idx, count = self._sreg_index(op, instr)
        if idx == NULL:
            return
        value = np.asarray(value, np.uint64)
        regs = 2 if width == 64 else 1
        if isinstance(op, Special) and op.name in ("vcc", "exec") and self.W == 32:
            regs = 1
        for j in range(regs):
            part = (value >> np.uint64(32 * j)) & M32
            self.st.s[idx + j] = np.where(waves, part, self.st.sget(idx + j))
            self._clear_sym(idx + j, waves)

    # -- memory --
    def _kernarg_read(self, offset: np.ndarray, nbytes: int, instr) -> list:
        out = []
        for j in range(nbytes // 4):
            words = []
            for o in offset:
                o = int(o) + 4 * j
                if o + 4 > len(self.kernarg):
                    words.append(0)  # past the kernarg segment: the hidden arguments the launch does not set
                else:
                    words.append(int.from_bytes(self.kernarg[o:o + 4], "little"))
            out.append(np.asarray(words, np.uint64))
        return out

    def _sload(self, step: Step, waves) -> None:
        instr = step.instr
        m = instr.mnemonic
        n = {"dword": 1, "dwordx2": 2, "dwordx4": 4, "dwordx8": 8, "dwordx16": 16, "b32": 1, "b64": 2, "b128": 4,
             "b256": 8, "b512": 16}.get(m.rsplit("_", 1)[-1])
        if n is None or m.startswith("s_buffer_load"):
            raise located_error(instr, "scalar load not supported")
        dst, base_op, off_op = instr.operands[0], instr.operands[1], instr.operands[2]
        base = self._scalar(base_op, 64, instr)
        off = self._scalar(off_op, 32, instr) if not isinstance(off_op, Literal) else np.full(self.nw, np.uint64(off_op.value))
        addr = base + off + np.uint64(instr.modifiers.get("offset", 0))
        rel = addr.astype(np.int64) - KERNARG_BASE
        live = rel[waves]
        if live.size and ((live < 0).any() or (live > 1 << 20).any()):
            raise located_error(instr, "a scalar load from memory other than the kernel arguments", OutsideBuffersError)
        words = self._kernarg_read(np.where(waves, rel, 0), 4 * n, instr)
        idx, _ = self._sreg_index(dst, instr)
        for j, w in enumerate(words):
            self.st.s[idx + j] = np.where(waves, w, self.st.sget(idx + j))

    def _address(self, step: Step, waves, ex) -> tuple:
        """Per-lane addresses of a global/flat/buffer access: (addresses uint64, active mask)."""
        instr = step.instr
        m = instr.mnemonic
        ops = instr.operands
        imm = int(instr.modifiers.get("offset", 0))
        if m.startswith("buffer_"):
            # buffer_load_dword vdst, vaddr, s[r:r+3], soffset offen offset:N
            vaddr, rsrc, soff = (ops[1], ops[2], ops[3]) if m.startswith("buffer_load") else (ops[1], ops[2], ops[3])
            ridx, _ = self._sreg_index(rsrc, instr)
            base = self.st.sget(ridx) | ((self.st.sget(ridx + 1) & np.uint64(0xFFFF)) << np.uint64(32))
            num = self.st.sget(ridx + 2)
            so = self._scalar(soff, 32, instr) if not isinstance(soff, Literal) else np.full(self.nw, np.uint64(soff.value))
            off = np.zeros((self.nw, self.W), np.uint64)
            if instr.modifiers.get("offen"):
                v, args = self._vsource(vaddr, 32, instr, False)
                if _symbolic_in(args, ex):
                    raise located_error(instr, "input data reaches an address (a gather: not elementwise)")
                off = v
            rel = off + np.uint64(imm)
            inside = rel < num[:, None]  # raw buffers: out-of-range accesses load 0 and store nothing
            return base[:, None] + so[:, None] + rel, ex & inside, ex & ~inside
        vaddr = ops[1] if "load" in m else ops[0]
        saddr = Special("off") if m.startswith("flat_") else ops[2]  # flat: a 64-bit VGPR address only
        if isinstance(saddr, Special) and saddr.name == "off":
            v, args = self._vsource(vaddr, 64, instr, False)
            if _symbolic_in(args, ex):
                raise located_error(instr, "input data reaches an address (a gather: not elementwise)")
            addr = v + np.uint64(imm & 0xFFFFFFFFFFFFFFFF)
        else:
            v, args = self._vsource(vaddr, 32, instr, False)
            if _symbolic_in(args, ex):
                raise located_error(instr, "input data reaches an address (a gather: not elementwise)")
            addr = self._scalar(saddr, 64, instr)[:, None] + v + np.uint64(imm & 0xFFFFFFFFFFFFFFFF)
        return addr, ex, np.zeros_like(ex)

    def _locate(self, addr: int, nbytes: int, instr) -> tuple[int, int]:
        for k, b in enumerate(self.buffers):
            if b.base <= addr and addr + nbytes <= b.base + b.size:
                return k, addr - b.base
        for b in self.buffers:
            if b.base <= addr < b.base + BUFFER_STRIDE:
                where = (f"{addr + nbytes - b.base - b.size} byte(s) past the end" if addr + nbytes > b.base + b.size
                         else "inside")
                raise located_error(instr, f"an access of {nbytes} bytes {where} of {b.name} ({b.size} bytes: the count's "
                                  "elements); the kernel reads or writes outside its elements", OutsideBuffersError)
            if b.base - BUFFER_STRIDE // 2 <= addr < b.base:
                raise located_error(instr, f"an access of {nbytes} bytes {b.base - addr} byte(s) before the start of {b.name}",
                           OutsideBuffersError)
        raise located_error(instr, f"an access of {nbytes} bytes at 0x{addr:x}, outside every buffer of the launch",
                   OutsideBuffersError)

    _SIZES = {"ubyte": (1, False), "sbyte": (1, True), "ushort": (2, False), "sshort": (2, True), "dword": (4, False),
              "dwordx2": (8, False), "dwordx3": (12, False), "dwordx4": (16, False), "short_d16": (2, False),
              "short_d16_hi": (2, False), "ubyte_d16": (1, False), "ubyte_d16_hi": (1, False), "byte": (1, False),
              "short": (2, False), "b32": (4, False), "b64": (8, False), "b96": (12, False), "b128": (16, False),
              "u16": (2, False), "i16": (2, True), "u8": (1, False), "i8": (1, True), "d16_b16": (2, False),
              "d16_hi_b16": (2, False), "byte_d16_hi": (1, False), "b16": (2, False), "b8": (1, False),
              "d16_hi_u8": (1, False)}

    def _vload(self, step: Step, waves) -> None:
        instr = step.instr
        m = instr.mnemonic
        kind = m.split("_load_", 1)[1]
        if kind not in self._SIZES:
            raise located_error(instr, "load width not supported")
        nbytes, signed = self._SIZES[kind]
        ex = self._active_lanes() & waves[:, None]
        addr, live, dead = self._address(step, waves, ex)
        dst = instr.operands[0]
        d16 = "d16" in kind
        regs = max(1, nbytes // 4)
        for w, l in zip(*np.nonzero(live | dead)):
            if dead[w, l]:
                refs = [("c", 0)] * regs
            else:
                k, off = self._locate(int(addr[w, l]), nbytes, instr)
                self.loads.add((k, off, nbytes))
                refs = [("n", self.graph.load(k, off + 4 * j, min(4, nbytes), signed)) for j in range(regs)]
            for j, ref in enumerate(refs):
                v, s = self.st.vget(dst.index + j)
                if d16:
                    old = ("c", int(v[w, l])) if s[w, l] < 0 else ("r", int(s[w, l]) >> 1, int(s[w, l]) & 1)
                    new = ref if ref[0] == "c" else ("r", ref[1], 0)
                    node = Node(OP, (step, 0, (new, old)), 32)
                    s[w, l] = self.graph.add(node) * 2
                elif ref[0] == "c":
                    v[w, l] = ref[1]
                    s[w, l] = -1
                else:
                    s[w, l] = ref[1] * 2

    def _vstore(self, step: Step, waves) -> None:
        instr = step.instr
        m = instr.mnemonic
        kind = m.split("_store_", 1)[1]
        if kind not in self._SIZES:
            raise located_error(instr, "store width not supported")
        nbytes, _ = self._SIZES[kind]
        ex = self._active_lanes() & waves[:, None]
        addr, live, _dead = self._address(step, waves, ex)
        data = instr.operands[1] if not m.startswith("buffer_") else instr.operands[0]
        hi = "hi" in kind
        regs = max(1, nbytes // 4)
        for j in range(regs):
            v, s = self.st.vget(data.index + j)
            for w, l in zip(*np.nonzero(live)):
                base = int(addr[w, l]) + 4 * j
                width = min(4, nbytes)
                k, off = self._locate(base, width, instr)
                ref = int(s[w, l])
                arg = ("c", int(v[w, l])) if ref < 0 else ("r", ref >> 1, ref & 1)
                for b in range(width):
                    key = (k, off + b)
                    rec = StoredByte((int(w), int(l)), arg, b + (2 if hi else 0), step)
                    prev = self.stored.get(key)
                    if prev is not None and prev.lane != rec.lane:
                        rec = StoredByte(prev.lane, prev.arg, prev.byte, prev.step)
                        rec.__dict__["others"] = prev.__dict__.get("others", []) + [(int(w), int(l), arg, b, step)]
                    self.stored[key] = rec

    # -- vector ALU --
    def _valu(self, step: Step, waves) -> None:
        instr = step.instr
        ex = self._active_lanes() & waves[:, None]
        if not ex.any():
            return
        is_float = step.float_op is not None and step.kind != "mix"
        vals, args = [], []
        for src, width in zip(step.srcs, step.widths):
            v, a = self._vsource(src, width, instr, is_float)
            vals.append(v)
            args.append(a)
        old = old_args = None
        if step.reads_old or step.kind in ("float", "int", "mix"):
            if isinstance(step.dsts[0], VReg):
                old, old_args = self._vsource(step.dsts[0], 64 if step.dst_widths[0] == 64 else 32, instr, False)
        symbolic = np.zeros(ex.shape, bool)
        for a in args + ([old_args] if step.takes_old and old_args is not None else []):
            if a is not None:
                symbolic |= np.vectorize(lambda x: x is not None and x[0] != "c", otypes=[bool])(a)
        symbolic &= ex
        if step.approximate:
            symbolic = ex.copy()
        mode_all = self.st.mode
        conc = ex & ~symbolic
        outs_conc = None
        if conc.any():
            modes = np.unique(mode_all[conc.any(axis=1)])
            if len(modes) != 1:
                raise located_error(instr, "waves run under different MODE values")
            outs_conc = step.apply([v[conc] for v in vals], old[conc] if old is not None else None, int(modes[0]),
                                   self.variant)
        node_ids = None
        if symbolic.any():
            node_ids = [np.full(ex.shape, -1, np.int64) for _ in step.dst_widths]
            for w, l in zip(*np.nonzero(symbolic)):
                a = []
                for k, width in enumerate(step.widths):
                    if args[k] is not None and args[k][w, l] is not None:
                        x = args[k][w, l]
                        a.append(("cat", ("r", x[1], 0), ("r", x[1], 1)) if x[0] == "r64" else x)
                    else:
                        a.append(("c", bool(vals[k][w, l]) if width == 1 else int(vals[k][w, l])))
                if old is not None and step.takes_old:
                    x = old_args[w, l] if old_args is not None and old_args[w, l] is not None else ("c", int(old[w, l]))
                    a.append(("cat", ("r", x[1], 0), ("r", x[1], 1)) if x[0] == "r64" else x)
                for slot, dw in enumerate(step.dst_widths):
                    node = Node(OP, (step, int(mode_all[w]), tuple(a)), 64 if dw == 64 else 1 if dw == 1 else 32, slot)
                    node_ids[slot][w, l] = self.graph.add(node)
        for slot, (dst, dw) in enumerate(zip(step.dsts, step.dst_widths)):
            if dw == 1:
                idx, _ = self._sreg_index(dst, instr)
                # inactive lanes of a VALU lane-mask result read 0 (v_cmp "ANDs inactive lanes with
                # 0", LLVM D105709); lanes of other waves keep theirs (_write_mask takes ``waves``)
                newbits = np.zeros(ex.shape, bool)
                if outs_conc is not None:
                    tmp = np.zeros(ex.shape, bool)
                    tmp[conc] = np.asarray(outs_conc[slot], bool)
                    newbits |= tmp
                if idx == NULL:
                    continue
                self._write_mask(idx, newbits, waves)
                if node_ids is not None:
                    sym = np.full(ex.shape, -1, np.int64)
                    sym[symbolic] = node_ids[slot][symbolic]
                    for r in self._mask_regs(idx):
                        self._set_sym(r, sym, waves)
                continue
            value = np.zeros(ex.shape, np.uint64)
            if outs_conc is not None:
                value[conc] = np.asarray(outs_conc[slot], np.uint64)
            sym = None
            if node_ids is not None:
                sym = np.where(symbolic, node_ids[slot], -1)
            if isinstance(dst, Special) and dst.name in ("vcc", "vcc_lo") or isinstance(dst, SReg):
                raise located_error(instr, "a VALU result in a scalar register is not supported")
            self._write_v(dst, dw, value, sym, ex)
            if step.upper_undefined and dw == 16:
                # the high half of the register: unspecified by the manuals of some generations
                _, s = self.st.vget(dst.index)
                v, _ = self.st.vget(dst.index)
                und = self.graph.undef()
                rows = ex
                # a lane's value becomes (low half: result, high half: undefined)
                for w, l in zip(*np.nonzero(rows)):
                    lo = ("c", int(v[w, l])) if s[w, l] < 0 else ("r", int(s[w, l]) >> 1, int(s[w, l]) & 1)
                    node = Node(OP, ("merge16", 0, (lo, ("r", und, 0))), 32)
                    s[w, l] = self.graph.add(node) * 2


def _symbolic_in(args, mask: np.ndarray) -> bool:
    """True where a source's symbolic arguments (``_vsource``) hold data in a lane of ``mask``."""
    if args is None:
        return False
    return any(a is not None and a[0] != "c" for a in args[mask])


def prepare_function(fn, db) -> list[Step]:
    """Every instruction of ``fn`` prepared (:func:`prepare_step`); the first one the simulator
    cannot run raises its located error."""
    return [prepare_step(i, ins, db) for i, ins in enumerate(fn.instructions)]


def launch(fn, steps: list, db, *, buffers: list, kernarg: bytes, groups: list, group_size: int,
           variant: str = "observed") -> Launch:
    """Run ``fn`` for the workgroups ``groups`` (their ids) of ``group_size`` work-items."""
    m = Machine(fn, steps, db, buffers, kernarg, groups, group_size, variant)
    return m.run()
