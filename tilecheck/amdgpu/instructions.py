"""Evaluate ``spec/amdgpu`` instruction forms with the vectorised numpy backend.

``evaluate("v_div_scale_f64", variant="observed", db=db, S0=..., S1=..., S2=...)`` returns the
destinations by name (``{"D": uint64 array, "VCC": bool array}``). MODE comes from the form's
defaults, overridable per call (``mode={"round": "rz", "denorm": 0}``). Contract forms
(``v_rcp_*``) have no single result: use :mod:`tilecheck.amdgpu.contract`.

Operands and destinations are register bit patterns: floats as uint64 arrays of their format's
patterns, ``int`` operands (``v_ldexp``'s exponent, ``v_cmp_class``'s mask) as uint64 arrays of
32-bit two's complement patterns (``int`` results likewise), lane bits as bool arrays.
:func:`mode_for` turns a hardware MODE register value into the ``mode=`` dict.
"""

from __future__ import annotations

import difflib

import numpy as np

from tilecheck.errors import ApproximateFormError, UnknownFormError, UsageError
from tilecheck.model.semantics import NumpyBackend
from tilecheck.semantics import run
from tilecheck.spec.amdgpu import AmdForm, amdgpu_forms
from tilecheck.spec.sequence import mode_params


def lookup(name: str, *, db) -> AmdForm:
    """The AMD form called ``name`` (``v_div_fmas_f64``)."""
    forms = amdgpu_forms(db)
    try:
        return forms[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(forms), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(sorted(forms))}"
        raise UnknownFormError(f"unknown AMD instruction {name!r}{hint}") from None


def evaluate(name: str | AmdForm, variant: str = "observed", mode: dict | None = None, *, db=None,
             **operands) -> dict[str, np.ndarray]:
    """Run one form's body on operand arrays (floats as bit patterns, lane bits as bools).

    ``name`` is an :class:`AmdForm` or a form name looked up in ``db`` (needed only for a name)."""
    if isinstance(name, AmdForm):
        form = name
    elif db is None:
        raise UsageError(f"evaluate({name!r}): pass db= to look the name up (or pass the AmdForm)")
    else:
        form = lookup(name, db=db)
    v = form.variant(variant)
    if v.program is None:
        raise ApproximateFormError(f"{form.name} ({variant}) is a precision contract: many results are allowed; "
                                   "use tilecheck.amdgpu.contract.allowed")
    expected = {o.name for o in form.sources}
    if set(operands) != expected:
        raise UsageError(f"{form.name} takes operands {', '.join(sorted(expected))}; got {', '.join(sorted(operands))}")
    arrays = {}
    for o in form.sources:
        value = np.asarray(operands[o.name])
        if o.kind == "lane-bit":
            arrays[o.name] = value.astype(bool)
        elif o.kind == "int":
            arrays[o.name] = signed_int(value, form.int_bits(o.name))
        else:
            arrays[o.name] = value.astype(np.uint64)
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    arrays = {k: np.broadcast_to(a, shape) for k, a in arrays.items()}
    out = run(v.program, NumpyBackend(shape), arrays, mode_params(form, mode))
    for o in form.destinations:
        if o.kind == "int":  # back to the 32-bit register pattern
            out[o.name] = np.broadcast_to(np.asarray(out[o.name], dtype=np.int64), shape).astype(np.uint64) \
                & np.uint64(0xFFFFFFFF)
    return out


def signed_int(pattern, bits: int = 32) -> np.ndarray:
    """The low ``bits`` of register patterns read as two's complement (int64 array): what a body
    sees of an ``int`` operand."""
    top = np.int64(1 << (bits - 1))
    low = np.asarray(pattern).astype(np.uint64) & np.uint64((1 << bits) - 1)
    return (low.astype(np.int64) ^ top) - top


# MODE.FP_ROUND (bits [3:0]) encodings: LLVM SIDefines.h FP_ROUND_ROUND_TO_NEAREST = 0,
# FP_ROUND_ROUND_TO_INF = 1 (toward +inf), FP_ROUND_ROUND_TO_NEGINF = 2, FP_ROUND_ROUND_TO_ZERO = 3
_FP_ROUND = ("rn", "rp", "rm", "rz")


def mode_for(form: AmdForm | str, mode_register: int, *, db=None) -> dict:
    """The ``mode=`` dict of :func:`evaluate` for the hardware MODE register value ``mode_register``.

    MODE bits (reference/amd-division.md §1.6, LLVM SIDefines.h): FP_ROUND [1:0] FP32 and [3:2]
    FP64/FP16, each 0 nearest-even, 1 toward +inf, 2 toward -inf, 3 toward zero; FP_DENORM [5:4]
    FP32 and [7:6] FP64/FP16, each 0 flush inputs and outputs, 1 keep inputs (flush outputs),
    2 keep outputs (flush inputs), 3 keep both. Other bits (DX10_CLAMP, IEEE, ...) are ignored.

    The dict names all four fields (``round_f32``, ``round_f64``, ``denorm_f32``, ``denorm_f64``;
    ``f64`` is the field FP64 and FP16 share), so it is valid for every form: a single-format form
    reads its own fields; a form mixing formats reads ``denorm_in`` from the field of its float
    sources' format and the rounding and ``denorm_out`` from its destination's
    (:func:`tilecheck.spec.sequence.mode_params`). ``form`` (or its name with ``db=``) is checked to
    exist; the result does not depend on it otherwise.
    """
    if not isinstance(form, AmdForm):
        if db is None:
            raise UsageError(f"mode_for({form!r}): pass db= to look the name up (or pass the AmdForm)")
        lookup(form, db=db)
    value = int(mode_register)
    if value < 0:
        raise UsageError(f"MODE register value must be non-negative, got {value}")
    return {"round_f32": _FP_ROUND[value & 3], "round_f64": _FP_ROUND[(value >> 2) & 3],
            "denorm_f32": (value >> 4) & 3, "denorm_f64": (value >> 6) & 3}
