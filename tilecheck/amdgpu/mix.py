"""``v_fma_mix_f32`` / ``v_fma_mixlo_f16`` / ``v_fma_mixhi_f16``: operand routing for a wave simulator.

The VOP3P mix instructions read each source either as an f32 register value or as one f16 half
of it, and the f16 forms write one half of the destination. The spec forms
(``spec/amdgpu/v_fma_mix*.yaml``) compute on three f32 operands; :func:`fma_mix` does the routing
around them, so a simulator passes raw registers:

* ``s0``, ``s1``, ``s2``: the 32-bit values the instruction reads (VGPR contents, or the 32-bit
  value of an SGPR or constant operand as the simulator resolves it), uint64 arrays or ints.
* ``op_sel_hi[i]`` set: source i is f16, taken from bits [31:16] when ``op_sel[i]`` is set and from
  bits [15:0] otherwise; ``op_sel_hi[i]`` clear: source i is the f32 value of the whole register
  (``op_sel[i]`` is then ignored). The f16 value is widened to f32 exactly (``v_cvt_f32_f16``'s
  conversion with denormals kept: every f16 value is a normal f32; a NaN keeps its sign and payload
  and becomes quiet).
* ``abs[i]`` then ``neg[i]``: clear, then flip, the sign bit of the widened source (the order the
  VOP3P modifiers apply in; the same as applying them to the f16 value).
* ``old`` (mixlo/mixhi only): the destination register's previous value. ``v_fma_mixlo_f16``
  returns ``(old & 0xffff0000) | f16``, ``v_fma_mixhi_f16`` returns ``(old & 0xffff) | f16 << 16``
  (LLVM ties the destination as an input of both); ``v_fma_mix_f32`` returns the f32 result.

``op_sel``, ``op_sel_hi``, ``neg`` and ``abs`` are three flags each: a sequence of three bools/ints
or an int bit mask (bit i = source i). ``mode`` is :func:`tilecheck.amdgpu.instructions.evaluate`'s
(for example :func:`~tilecheck.amdgpu.instructions.mode_for` of the MODE register). Clamp is not
handled (the simulator refuses it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tilecheck.amdgpu.instructions import evaluate, lookup
from tilecheck.errors import UsageError
from tilecheck.model.semantics import convert_bits

__all__ = ["fma_mix", "MIX_FORMS"]

MIX_FORMS = ("v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16")
_F32_SIGN = np.uint64(0x80000000)


def _flags(value, what: str) -> tuple[bool, bool, bool]:
    """Three per-source flags from a sequence of three or an int bit mask."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if not 0 <= int(value) < 8:
            raise UsageError(f"{what} as a bit mask must be 0..7, got {value}")
        return tuple(bool((int(value) >> i) & 1) for i in range(3))  # type: ignore[return-value]
    if isinstance(value, Sequence) and len(value) == 3:
        return tuple(bool(v) for v in value)  # type: ignore[return-value]
    raise UsageError(f"{what} must be three flags or a 0..7 bit mask, got {value!r}")


def fma_mix(name: str, variant: str, mode: dict | None, s0, s1, s2, op_sel=0, op_sel_hi=0, neg=0, abs=0,
            *, db, old=None) -> np.ndarray:
    """The destination register value (uint64 array of 32-bit patterns) of one mix instruction.

    ``name`` is one of :data:`MIX_FORMS`; see the module docstring for the operands. ``old`` is
    required for the f16 forms (the half that is not written keeps its bits)."""
    if name not in MIX_FORMS:
        raise UsageError(f"fma_mix runs {', '.join(MIX_FORMS)}; got {name!r}")
    form = lookup(name, db=db)
    f16, f32 = form.formats["f16"], form.formats["f32"]
    sel, sel_hi = _flags(op_sel, "op_sel"), _flags(op_sel_hi, "op_sel_hi")
    negs, abss = _flags(neg, "neg"), _flags(abs, "abs")
    regs = np.broadcast_arrays(*(np.asarray(s, dtype=np.uint64) & np.uint64(0xFFFFFFFF) for s in (s0, s1, s2)))
    sources = {}
    for i, reg in enumerate(regs):
        if sel_hi[i]:
            half = (reg >> np.uint64(16)) if sel[i] else reg
            value = convert_bits(f16, f32, "rn", half & np.uint64(0xFFFF))
        else:
            value = reg
        if abss[i]:
            value = value & ~_F32_SIGN
        if negs[i]:
            value = value ^ _F32_SIGN
        sources[f"S{i}"] = value
    d = evaluate(form, variant, mode, **sources)["D"]
    if name == "v_fma_mix_f32":
        return d
    if old is None:
        raise UsageError(f"{name} writes one half of D: pass old= (the destination's previous value)")
    old = np.asarray(old, dtype=np.uint64) & np.uint64(0xFFFFFFFF)
    if name == "v_fma_mixlo_f16":
        return (old & np.uint64(0xFFFF0000)) | d
    return (old & np.uint64(0xFFFF)) | (d << np.uint64(16))
