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

from tilecheck.amdgpu import contract
from tilecheck.amdgpu.instructions import evaluate, mode_for
from tilecheck.spec.amdgpu import amdgpu_forms

APPROXIMATE_FAMILIES = ("v_rcp", "v_rsq", "v_sqrt", "v_exp", "v_log", "v_sin", "v_cos", "v_rcp_iflag")


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
        """The ``mode=`` of :func:`evaluate` for a MODE register value (:func:`mode_for`)."""
        return mode_for(self.form, mode_register)

    def compute(self, sources: list, mode_register: int, variant: str) -> list:
        """The destination values (uint64 arrays; lane bits as bool arrays) of an exact form."""
        names = [o.name for o in self.form.sources]
        srcs = list(sources)
        if self.swap:
            srcs[0], srcs[1] = srcs[1], srcs[0]
        out = evaluate(self.form, variant, self.mode(mode_register),
                       **{n: (np.asarray(s).astype(bool) if w == 1 else s) for n, s, w in zip(names, srcs, self.sources)})
        return [out[name] for name, _ in self.dests]

    def choices(self, sources: list, mode_register: int, variant: str, reading: str = "either"):
        """Every result the contract allows, per lane, under the ulp ``reading`` (``either``,
        ``exact``, ``correctly-rounded``): ``(values, valid, complete)`` as
        :func:`tilecheck.amdgpu.contract.enumerate_allowed` returns them."""
        return contract.enumerate_allowed(self.form, variant, np.asarray(sources[0], dtype=np.uint64),
                                          reading=reading)


class UnknownFloatInstruction(KeyError):
    """No spec form computes this mnemonic."""


def _width(form, operand) -> int:
    """Bits of a register operand: 1 for a lane bit, the int's width, the float's format width."""
    if operand.kind == "lane-bit":
        return 1
    if operand.kind == "int":
        return form.int_bits(operand.name)
    return form.operand_format(operand.name).width


def _float_semantics(mnemonic: str, db) -> FloatOp:
    forms = amdgpu_forms(db)
    name, addend, swap = mnemonic, False, False
    if re.match(r"v_fmac_(f16|f32|f64)$", mnemonic):
        name, addend = mnemonic.replace("v_fmac_", "v_fma_"), True
    elif re.match(r"v_subrev_(f16|f32|f64)$", mnemonic) and mnemonic not in forms:
        name, swap = mnemonic.replace("v_subrev_", "v_sub_"), True
    if name not in forms:
        raise UnknownFloatInstruction(mnemonic)
    form = forms[name]
    widths = [_width(form, o) for o in form.sources]
    dests = [(o.name, _width(form, o)) for o in form.destinations]
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
