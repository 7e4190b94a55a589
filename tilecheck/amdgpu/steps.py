"""The instructions of an AMDGCN kernel, prepared for the simulator: operands and semantics.

:func:`prepare_step` splits each instruction's operands into destinations and sources, says how
many bits each source is read as, and finds its semantics: integer, bit and scalar operations in
:mod:`tilecheck.amdgpu.intops`, floating point in the ``spec/amdgpu`` forms through
:mod:`tilecheck.amdgpu.floatops`. :meth:`Step.apply` is the one function from source register values
to destination register values (source selection and modifiers, the operation, the placing of a
16-bit result), used by the simulator on concrete lanes and by the evaluation of stored elements.
An instruction the simulator cannot run is a located :class:`UnsupportedAmdgcnError` (exit 2).
"""

from __future__ import annotations

import dataclasses
import re
import struct
from dataclasses import dataclass

import numpy as np

from tilecheck.amdgpu import intops
from tilecheck.amdgpu.asm_types import Literal, Special, SrcMod
from tilecheck.amdgpu.floatops import UnknownFloatInstruction, float_semantics, is_float_mnemonic
from tilecheck.amdgpu.instructions import mode_for
from tilecheck.amdgpu.mix import fma_mix
from tilecheck.errors import UsageError

M32 = np.uint64(0xFFFFFFFF)
M16 = np.uint64(0xFFFF)
NOPS = ("s_waitcnt", "s_nop", "s_delay_alu", "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt",
        "s_waitcnt_expcnt", "s_waitcnt_depctr", "s_sleep", "s_sethalt", "s_setprio", "s_clause", "s_inst_prefetch",
        "s_code_end", "s_dcache_inv", "s_icache_inv", "buffer_wbl2", "buffer_inv", "s_sendmsg", "s_trap",
        "s_ttracedata", "s_barrier")


class UnsupportedAmdgcnError(UsageError):
    """AMDGCN that the simulator cannot run, located at its instruction.

    Cause: an instruction it does not know (no spec form, no integer semantics), input data that
    reaches an address, a branch, EXEC or a scalar register (the kernel is not elementwise), LDS or
    scratch memory, a loop that does not end. Fix: nothing in the kernel; report the instruction.
    """

    exit_code = 2


class OutsideBuffersError(UnsupportedAmdgcnError):
    """An access outside every buffer the launch provides (a parameter is not what was assumed)."""


def located_error(instr, message: str, cls=UnsupportedAmdgcnError) -> UsageError:
    """An error located at ``instr``, quoting its text."""
    return cls(f"{instr.name}: {message} (`{instr.text.strip()}`)", instr.location)


# --- operands ------------------------------------------------------------------------------------

_FLOAT_BITS = {16: lambda v: struct.unpack("<H", struct.pack("<e", v))[0],
               32: lambda v: struct.unpack("<I", struct.pack("<f", v))[0],
               64: lambda v: struct.unpack("<Q", struct.pack("<d", v))[0]}
_INV_2PI = {16: 0x3118, 32: 0x3E22F983, 64: 0x3FC45F306DC9C882}


def literal_bits(lit: Literal, width: int, is_float: bool) -> int:
    """The bits a literal stands for as a ``width``-bit operand: floats in the operand's format
    (``1.0`` is 0x3c00 as f16; 0.15915494 is 1/(2 pi)); integers as two's complement (a 32-bit
    literal of a 64-bit float operand is its high word, as the hardware extends it)."""
    if lit.is_float:
        if lit.value == 0.15915494:
            return _INV_2PI[width if width in _INV_2PI else 32]
        return _FLOAT_BITS[width if width in _FLOAT_BITS else 32](lit.value)
    v = int(lit.value)
    if width == 64 and is_float and not (-16 <= v <= 64):
        return (v & 0xFFFFFFFF) << 32
    return v & ((1 << max(width, 32)) - 1) if width != 64 else v & ((1 << 64) - 1)


# --- steps ---------------------------------------------------------------------------------------

_SEL = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8), "WORD_0": (0, 16),
        "WORD_1": (16, 16), "DWORD": (0, 32)}


@dataclass(eq=False)
class Step:
    """One instruction, prepared: ``dsts`` / ``srcs`` its register operands in order, ``widths``
    the bits each source is read as, ``float_op`` or ``int_op`` its semantics. ``index`` is its
    place in the function (signatures and reports name it)."""

    index: int
    instr: object
    kind: str
    dsts: tuple = ()
    srcs: tuple = ()
    widths: tuple = ()
    dst_widths: tuple = ()
    float_op: object = None
    int_op: object = None
    approximate: bool = False
    reads_old: bool = False
    db: object = None

    def __hash__(self) -> int:
        return self.index

    @property
    def mods(self) -> dict:
        return self.instr.modifiers

    def _select(self, k: int, v: np.ndarray) -> np.ndarray:
        """Source ``k``'s value as the operation reads it: SDWA/op_sel half selection, then the
        neg/abs modifiers on a float operand (sign bit of the width it is read as)."""
        width = self.widths[k]
        src = self.srcs[k]
        v = np.asarray(v, dtype=np.uint64)
        sel_name = {0: "src0_sel", 1: "src1_sel"}.get(k)
        if sel_name and sel_name in self.mods:
            off, n = _SEL[self.mods[sel_name]]
            v = (v >> np.uint64(off)) & np.uint64((1 << n) - 1)
            if isinstance(src, SrcMod) and src.sext and n < 32:
                sign = (v >> np.uint64(n - 1)) & np.uint64(1)
                v = np.where(sign == 1, v | (M32 ^ np.uint64((1 << n) - 1)), v)
        elif width == 16:
            op_sel = self.mods.get("op_sel")
            if op_sel and k < len(op_sel) and op_sel[k] and self.kind != "mix":
                v = v >> np.uint64(16)
            v = v & M16
        if self.float_op is not None and width in (16, 32, 64) and isinstance(src, SrcMod) and self.kind != "mix":
            sign = np.uint64(1 << (width - 1))
            if src.abs:
                v = v & ~sign
            if src.neg:
                v = v ^ sign
        return v

    def apply(self, sources: list, old: np.ndarray | None, mode: int, variant: str) -> list:
        """The destination register values (uint64; lane bits as bool) from the raw source
        register values (``sources``, in operand order; 64-bit ones whole) and the old value of
        the first destination (instructions that keep part of it)."""
        srcs = [self._select(k, s) if self.widths[k] != 1 else np.asarray(s, bool) for k, s in enumerate(sources)]
        if self.kind == "mix":
            src_ops = self.srcs
            return [fma_mix(self.instr.mnemonic, variant, mode_for(self.instr.mnemonic, mode, db=self.db),
                            *(np.asarray(s, np.uint64) for s in sources), old=old,
                            op_sel=tuple(self.mods.get("op_sel", (0, 0, 0))),
                            op_sel_hi=tuple(self.mods.get("op_sel_hi", (0, 0, 0))),
                            neg=tuple(bool(getattr(s, "neg", False)) for s in src_ops),
                            abs=tuple(bool(getattr(s, "abs", False)) for s in src_ops), db=self.db)]
        if self.float_op is not None:
            if self.float_op.addend_is_dst:
                srcs = srcs + [np.asarray(old, dtype=np.uint64)]
            outs = self.float_op.compute(srcs, mode, variant)
        elif self.kind == "cndmask":
            outs = [np.where(srcs[2], srcs[1], srcs[0]).astype(np.uint64)]
        elif self.kind == "pack":
            outs = [(srcs[0] & M16) | ((srcs[1] & M16) << np.uint64(16))]
        else:
            res = self.int_op.fn(*srcs)
            outs = list(res) if isinstance(res, tuple) else [res]
        return [self._place(k, o, old) for k, o in enumerate(outs)]

    def _place(self, k: int, value, old):
        """A result as its destination register receives it: a 16-bit result in the half op_sel
        or dst_sel names, the rest of the register kept where the encoding says so."""
        if k != 0 or self.dst_widths[0] == 1:
            return value
        value = np.asarray(value)
        if value.dtype == bool:
            return value
        value = value.astype(np.uint64)
        if "dst_sel" in self.mods:
            off, n = _SEL[self.mods["dst_sel"]]
            mask = np.uint64(((1 << n) - 1) << off)
            placed = (value << np.uint64(off)) & mask
            unused = self.mods.get("dst_unused", "UNUSED_PAD")
            if unused == "UNUSED_PRESERVE":
                return placed | (np.asarray(old, dtype=np.uint64) & ~mask & M32)
            if unused == "UNUSED_SEXT" and n < 32:
                sign = (value >> np.uint64(n - 1)) & np.uint64(1)
                return np.where(sign == 1, placed | (M32 ^ mask) & ~np.uint64((1 << off) - 1), placed)
            return placed
        if self.dst_widths[0] == 16:
            op_sel = self.mods.get("op_sel")
            if op_sel and len(op_sel) >= 4 and op_sel[3]:
                return ((value & M16) << np.uint64(16)) | (np.asarray(old, dtype=np.uint64) & M16)
            return value & M16
        return value

    @property
    def keeps_old(self) -> bool:
        """True where the destination keeps part of its old value (a half written through op_sel
        or SDWA with UNUSED_PRESERVE, mixlo/mixhi)."""
        m = self.mods
        if self.kind == "mix":
            return self.reads_old
        if m.get("dst_unused") == "UNUSED_PRESERVE":
            return True
        return bool(self.dst_widths and self.dst_widths[0] == 16 and m.get("op_sel") and len(m["op_sel"]) >= 4
                    and m["op_sel"][3])

    @property
    def takes_old(self) -> bool:
        """True where a node of this step has its destination's old value as last argument."""
        return bool(self.reads_old or self.keeps_old)

    @property
    def upper_undefined(self) -> bool:
        """True where the result leaves the high half of its register unspecified: a 16-bit
        result without dst_sel or op_sel (the manuals differ by generation on whether it is zeroed
        or kept, so no stored element may depend on it)."""
        return (self.kind in ("float", "int") and self.dst_widths and self.dst_widths[0] == 16
                and "dst_sel" not in self.mods and not (self.mods.get("op_sel") and len(self.mods["op_sel"]) >= 4))


def _width_of(mnemonic: str, k: int, nsrc: int) -> int:
    types = re.findall(r"_(b|u|i|f)(16|32|64)", mnemonic)
    if not types:
        return 32
    return int(types[-1][1])


def prepare_step(index: int, instr, db) -> Step:
    """The :class:`Step` of ``instr``: its operands split into destinations and sources and its
    semantics found (raises :class:`UnsupportedAmdgcnError` for an instruction it cannot run)."""
    m = instr.mnemonic
    ops = instr.operands
    if m in NOPS or m.startswith("s_waitcnt"):
        return Step(index, instr, "nop")
    if m in ("s_endpgm", "s_branch") or m.startswith("s_cbranch_"):
        return Step(index, instr, "branch")
    if m.startswith(("s_load_", "s_buffer_load_")):
        return Step(index, instr, "sload")
    if m.startswith(("global_load_", "flat_load_", "buffer_load_")):
        return Step(index, instr, "vload")
    if m.startswith(("global_store_", "flat_store_", "buffer_store_")):
        return Step(index, instr, "vstore")
    if m in ("s_setreg_imm32_b32", "s_setreg_b32", "s_denorm_mode", "s_round_mode", "s_getreg_b32"):
        return Step(index, instr, "mode")
    if m.startswith("s_cselect_"):
        return Step(index, instr, "cselect")
    if any(m.startswith(p) for p in intops.SALU_SAVEEXEC):
        return Step(index, instr, "saveexec")
    if m == "v_readfirstlane_b32":
        return Step(index, instr, "readfirstlane", dsts=(ops[0],), srcs=(ops[1],), widths=(32,), dst_widths=(32,))
    if m in intops.SALU:
        op = intops.SALU[m]
        ndst = 1 if op.results[0] != "scc" else 0
        return Step(index, instr, "salu", dsts=ops[:ndst], srcs=ops[ndst:], widths=op.sources,
                    dst_widths=tuple(64 if r == "u64" else 32 for r in op.results if r not in ("scc",)), int_op=op)
    if instr.dual is not None:
        # VOPD: two VALU operations issued together, each reading its sources before either writes;
        # LLVM pairs only independent operations, so running them in order is the same (checked)
        halves = []
        for k, part in enumerate((instr, instr.dual)):
            single = dataclasses.replace(part, mnemonic="v_" + part.mnemonic.removeprefix("v_dual_"), dual=None)
            halves.append(prepare_step(index if k == 0 else -(index + 1), single, db))
        written = {str(d) for d in halves[0].dsts}
        if any(str(getattr(src, "base", src)) in written for src in halves[1].srcs):
            raise located_error(instr, "a VOPD pair whose second half reads the first half's result")
        return Step(index, instr, "dual", srcs=tuple(halves))
    if m.startswith("v_cndmask_b32"):
        srcs = ops[1:] if len(ops) == 4 else (*ops[1:], Special("vcc"))
        return Step(index, instr, "cndmask", dsts=ops[:1], srcs=tuple(srcs), widths=(32, 32, 1), dst_widths=(32,))
    if m == "v_pack_b32_f16":
        return Step(index, instr, "pack", dsts=ops[:1], srcs=ops[1:3], widths=(16, 16), dst_widths=(32,))
    if m in ("v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16", "v_mad_mix_f32", "v_mad_mixlo_f16",
             "v_mad_mixhi_f16"):
        if not m.startswith("v_fma_"):
            raise located_error(instr, "v_mad_mix (unfused) is not supported")
        return Step(index, instr, "mix", dsts=ops[:1], srcs=ops[1:4], widths=(32, 32, 32),
                    dst_widths=(32,), reads_old=m != "v_fma_mix_f32", db=db)
    if m in intops.VALU_INT:
        op = intops.VALU_INT[m]
        ndst = len(op.results)
        nsrc = len(op.sources)
        dsts, srcs = list(ops[:ndst]), list(ops[ndst:])
        if op.results == ("carry",) and len(ops) == nsrc:  # a compare writing VCC implicitly
            dsts, srcs = [Special("vcc")], list(ops)
        if op.reads_carry and len(srcs) == nsrc - 1:
            srcs.append(Special("vcc"))  # the carry in, VCC implicitly
        if len(srcs) != nsrc:
            raise located_error(instr, f"expected {nsrc} source operands, found {len(srcs)}")
        widths = op.sources
        dst_widths = tuple(64 if r == "u64" else 16 if r == "u16" else 1 if r == "carry" else 32 for r in op.results)
        return Step(index, instr, "int", dsts=tuple(dsts), srcs=tuple(srcs), widths=widths, dst_widths=dst_widths,
                    int_op=op)
    if is_float_mnemonic(m):
        try:
            fop = float_semantics(m, db)
        except UnknownFloatInstruction:
            raise located_error(instr, "no spec/amdgpu form computes this instruction") from None
        ndst = len(fop.dests)
        nsrc = len(fop.sources) - (1 if fop.addend_is_dst else 0)
        dsts, srcs = list(ops[:ndst]), list(ops[ndst:])
        if len(fop.dests) == 1 and fop.dests[0][1] == 1 and len(ops) == nsrc:
            dsts, srcs = [Special("vcc")], list(ops)  # a compare writing VCC implicitly
        if len(srcs) == nsrc - 1 and fop.sources[nsrc - 1] == 1:
            srcs.append(Special("vcc"))  # v_div_fmas reads VCC implicitly
        if len(srcs) != nsrc:
            raise located_error(instr, f"expected {nsrc} source operands for {fop.form.name}, found {len(srcs)}")
        if any(k in instr.modifiers for k in ("clamp", "mul", "div")):
            raise located_error(instr, "output modifiers (clamp, mul:N, div:N) are not supported")
        return Step(index, instr, "float", dsts=tuple(dsts), srcs=tuple(srcs),
                    widths=fop.sources[:nsrc], dst_widths=tuple(w for _, w in fop.dests), float_op=fop,
                    approximate=fop.approximate, reads_old=fop.addend_is_dst)
    if m.startswith(("ds_", "scratch_", "buffer_atomic", "global_atomic", "flat_atomic", "image_", "v_mfma", "v_dot",
                     "s_store", "v_permlane", "v_readlane", "v_writelane", "v_mov_b32_dpp")) or instr.encoding in ("_dpp", "_dpp8"):
        raise located_error(instr, "not supported: elementwise kernels need no LDS, scratch, atomics, cross-lane or matrix "
                          "instructions")
    raise located_error(instr, "instruction not supported by the AMDGCN simulator")


