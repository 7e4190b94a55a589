"""Run a ``spec/sequences`` instruction sequence with any semantics backend.

It sits in the spec layer, below both the numpy evaluation (:mod:`tilecheck.amdgpu`) and the Z3
encoding (:mod:`tilecheck.smt.amdgpu`), which each supply their own backend.

:func:`run_sequence` walks the steps in order: a MODE step changes the MODE fields; an instruction
step applies the NEG source modifiers (a sign-bit flip, also of NaNs, before the instruction reads
the operand), runs the form's body for the chosen variant with the current MODE, and binds the
destinations. Instructions whose semantics is a precision contract (``v_rcp_*``) do not compute:
their result comes from ``choose(step, form, args)``, which the numpy campaign answers with a value
inside the contract and the Z3 encoding with a fresh constrained variable. The returned trace keeps
every intermediate value for reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from tilecheck.errors import UnknownFormError, UsageError
from tilecheck.semantics import run
from tilecheck.spec.amdgpu import AmdForm, Sequence, Step, amdgpu_forms, sequences
from tilecheck.spec.registry import ROUNDINGS


@dataclass
class Trace:
    """Values of a sequence run: ``values`` by name (inputs, every destination) and the order the
    steps produced them in (``(step, names)`` pairs)."""

    values: dict = field(default_factory=dict)
    order: list = field(default_factory=list)
    result: object = None


def lookup_sequence(name: str, *, db) -> Sequence:
    """The sequence called ``name`` (``amdgpu.fdiv64``)."""
    seqs = sequences(db)
    try:
        return seqs[name]
    except KeyError:
        raise UnknownFormError(f"unknown sequence {name!r}; known: {', '.join(sorted(seqs)) or 'none'}") from None


def _field(fmt) -> str:
    """The MODE field suffix of a format: FP32 has its own fields, FP16 shares FP64's."""
    return "f32" if fmt.name == "f32" else "f64"


def mode_params(form: AmdForm, mode: dict | None = None) -> dict:
    """Body parameters (``rm``, ``denorm_in``, ``denorm_out``) from MODE values.

    ``mode`` may give ``round`` and ``denorm`` (the form's own fields), or the per-format MODE
    fields ``round_f32`` / ``round_f64`` / ``denorm_f32`` / ``denorm_f64`` (``f64`` naming the
    field FP64 and FP16 share; :func:`tilecheck.amdgpu.instructions.mode_for` returns all four);
    ``round`` and ``denorm`` win over the per-format fields. Missing values come from the form's
    defaults. A form mixing formats (``v_cvt_f32_f16``, ``v_fma_mixlo_f16``) reads
    ``denorm_in`` from the field of its float sources' format and ``rm`` and ``denorm_out`` from
    the field of its float destination's format; for a single-format form both are its own field.
    """
    values = dict(form.mode)
    src, dst = _field(form.input_format), _field(form.output_format)
    din = dout = int(values["denorm"])
    rounding = values["round"]
    if mode:
        din = mode.get("denorm_" + src, din)
        dout = mode.get("denorm_" + dst, dout)
        rounding = mode.get("round_" + dst, rounding)
        if "denorm" in mode:
            din = dout = mode["denorm"]
        rounding = mode.get("round", rounding)
    din, dout = int(din), int(dout)
    for value in (din, dout):
        if not 0 <= value <= 3:
            raise UsageError(f"MODE denorm field must be 0..3, got {value}")
    if rounding not in ROUNDINGS:
        raise UsageError(f"MODE round must be rn, rz, rm or rp, got {rounding!r}")
    return {"rm": rounding, "denorm_in": bool(din & 1), "denorm_out": bool(dout & 2)}


def step_params(form: AmdForm, mode: dict) -> dict:
    """Body parameters for ``form`` under the sequence-level MODE dict."""
    return mode_params(form, {"round": mode["round"], form.denorm_field: mode[form.denorm_field]})


def run_sequence(seq: Sequence, variant: str, backend, inputs: dict, choose: Callable,
                 *, db, mode: dict | None = None) -> Trace:
    """Run ``seq`` with semantics ``variant`` on ``backend``; ``inputs`` maps input names to payloads.

    ``choose(step, form, args)`` supplies the result of a contract instruction (``args`` are the
    source payloads after modifiers). ``mode`` overrides the sequence's entry MODE fields.
    """
    forms = amdgpu_forms(db)
    current = dict(seq.mode)
    current.update(mode or {})
    trace = Trace()
    for name in seq.inputs:
        trace.values[name] = inputs[name]
    for step in seq.steps:
        if step.op is None:
            current.update(dict(step.mode))
            trace.order.append((step, ()))
            continue
        form = forms[step.op]
        args = _sources(step, form, trace.values, backend)
        v = form.variant(variant)
        if v.program is None:
            outs = {form.destinations[0].name: choose(step, form, args)}
        else:
            named = {o.name: a for o, a in zip(form.sources, args)}
            outs = run(v.program, backend, named, step_params(form, current))
        names = []
        for dst_name, operand in zip(step.dst, form.destinations):
            if dst_name is not None:
                trace.values[dst_name] = outs[operand.name]
                names.append(dst_name)
        trace.order.append((step, tuple(names)))
    trace.result = trace.values[seq.result]
    return trace


def _sources(step: Step, form: AmdForm, values: dict, backend) -> list:
    fmt = form.fmt
    out = []
    for src, operand in zip(step.src, form.sources):
        if src.name is None:
            bits = fmt.from_fraction(src.constant)
            payload = backend.float_const(fmt, bits)
        else:
            payload = values[src.name]
        if src.neg:
            payload = backend.float_neg(fmt, payload)
        out.append(payload)
    return out
