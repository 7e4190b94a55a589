"""How each floating-point VALU instruction reaches its ``spec/amdgpu`` form.

:func:`float_semantics` maps a mnemonic (``v_fmac_f32``, ``v_cvt_f16_f32``, ``v_cmp_lt_f64``,
``v_rcp_f32``) to a :class:`FloatOp`: the form that computes it, the width of every source, which
destination receives what, and whether the form is a precision contract (then
:meth:`FloatOp.choices` enumerates what it may return; :meth:`FloatOp.compute` is for the exact
ones). The spec's bodies are the semantics; this module only routes operands (``v_fmac_X`` is
``v_fma_X`` with the destination as addend, ``v_subrev_X`` swaps its sources) and picks the MODE
fields that apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tilecheck.amdgpu.instructions import evaluate
from tilecheck.spec.amdgpu import amdgpu_forms

WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i32": 32, "u32": 32, "b32": 32, "i16": 16, "u16": 16}
APPROXIMATE_FAMILIES = ("v_rcp", "v_rsq", "v_sqrt", "v_exp", "v_log", "v_sin", "v_cos", "v_rcp_iflag")
_ROUND = {0: "rn", 1: "rp", 2: "rm", 3: "rz"}
"""MODE.FP_ROUND encodings (AMD ISA guides, MODE register: 0 nearest even, 1 +inf, 2 -inf, 3 zero)."""


@dataclass(frozen=True)
class FloatOp:
    """A float instruction as the simulator runs it: ``form`` computes it from ``sources`` (widths in
    bits, 1 for a lane bit); ``dests`` are the form's destination names in instruction order, each
    with its width; ``addend_is_dst``: the old destination value is the last source (``v_fmac``);
    ``swap``: the first two sources are exchanged (``v_subrev``)."""

    mnemonic: str
    form: object
    sources: tuple
    dests: tuple
    addend_is_dst: bool = False
    swap: bool = False

    @property
    def approximate(self) -> bool:
        """True for a precision contract (many results allowed)."""
        return any(v.program is None for v in self.form.variants.values())

    def mode(self, mode_register: int) -> dict:
        """The ``mode=`` of :func:`evaluate` for a MODE register value: the round and denormal
        fields of this form's format (FP32 bits [1:0]/[5:4]; FP16 and FP64 [3:2]/[7:6])."""
        f32 = self.form.type == "f32"
        rnd = (mode_register >> (0 if f32 else 2)) & 3
        den = (mode_register >> (4 if f32 else 6)) & 3
        return {"round": _ROUND[rnd], "denorm": den}

    def compute(self, sources: list, mode_register: int, variant: str) -> list:
        """The destination values (uint64 arrays; lane bits as bool arrays) of an exact form."""
        names = [o.name for o in self.form.sources]
        srcs = list(sources)
        if self.swap:
            srcs[0], srcs[1] = srcs[1], srcs[0]
        out = evaluate(self.form, variant, self.mode(mode_register),
                       **{n: (np.asarray(s).astype(bool) if w == 1 else s) for n, s, w in zip(names, srcs, self.sources)})
        return [out[name] for name, _ in self.dests]

    def choices(self, sources: list, mode_register: int, variant: str):
        """Every result the contract allows, per lane: ``(values, valid, complete)`` as
        :func:`tilecheck.amdgpu.contract.enumerate_allowed` returns them."""
        from tilecheck.amdgpu.contract import enumerate_allowed
        return enumerate_allowed(self.form, variant, np.asarray(sources[0], dtype=np.uint64))


class UnknownFloatInstruction(KeyError):
    """No spec form computes this mnemonic."""


def _types(mnemonic: str) -> list[str]:
    return re.findall(r"_(f16|bf16|f32|f64|i32|u32|b32|i16|u16)(?=_|$)", mnemonic)


def _float_semantics(mnemonic: str, db) -> FloatOp:
    forms = amdgpu_forms(db)
    name, addend, swap = mnemonic, False, False
    if re.match(r"v_fmac_(f16|f32|f64)$", mnemonic):
        name, addend = mnemonic.replace("v_fmac_", "v_fma_"), True
    elif re.match(r"v_subrev_(f16|f32|f64)$", mnemonic):
        name, swap = mnemonic.replace("v_subrev_", "v_sub_"), True
    if name not in forms:
        raise UnknownFloatInstruction(mnemonic)
    form = forms[name]
    types = _types(name)
    widths = []
    for o in form.sources:
        if o.kind == "lane-bit":
            widths.append(1)
        elif o.kind == "float":
            widths.append(WIDTH[form.type] if not getattr(o, "format", None) else WIDTH.get(o.format, WIDTH[form.type]))
        else:  # an integer operand (v_ldexp's exponent, v_cmp_class's mask)
            widths.append(32)
    # conversions name their source type last (v_cvt_f32_f16: an f16 source)
    if name.startswith("v_cvt_") and len(types) == 2:
        widths = [WIDTH[types[1]]] + widths[1:]
    dests = []
    for o in form.destinations:
        if o.kind == "lane-bit":
            dests.append((o.name, 1))
        elif name.startswith("v_cvt_") and len(types) == 2:
            dests.append((o.name, WIDTH[types[0]]))
        elif o.kind == "float":
            dests.append((o.name, WIDTH[form.type]))
        else:
            dests.append((o.name, 32))
    return FloatOp(mnemonic, form, tuple(widths), tuple(dests), addend, swap)


def float_semantics(mnemonic: str, db) -> FloatOp:
    """The :class:`FloatOp` of ``mnemonic`` (encoding suffix removed); raises
    :class:`UnknownFloatInstruction` when no spec form computes it."""
    key = (mnemonic, id(db))
    if key not in _CACHE:
        _CACHE[key] = _float_semantics(mnemonic, db)
    return _CACHE[key]


_CACHE: dict = {}


def is_float_mnemonic(mnemonic: str) -> bool:
    """True for a VALU mnemonic whose operation is floating point (its semantics live in a spec form)."""
    return mnemonic.startswith("v_") and bool(re.search(r"_(f16|bf16|f32|f64)(_|$)", mnemonic)) \
        and not mnemonic.startswith(("v_cndmask", "v_mov", "v_pack_b32_f16"))
