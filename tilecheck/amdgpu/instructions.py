"""Evaluate ``spec/amdgpu`` instruction forms with the vectorised numpy backend.

``evaluate("v_div_scale_f64", variant="observed", S0=..., S1=..., S2=...)`` returns the
destinations by name (``{"D": uint64 array, "VCC": bool array}``). MODE comes from the form's
defaults, overridable per call (``mode={"round": "rz", "denorm": 0}``). Contract forms
(``v_rcp_*``) have no single result: use :mod:`tilecheck.amdgpu.contract`.
"""

from __future__ import annotations

import numpy as np

from tilecheck.errors import ApproximateFormError, UnknownFormError, UsageError
from tilecheck.semantics import run
from tilecheck.semantics.numpy_backend import NumpyBackend
from tilecheck.spec.amdgpu import AmdForm, amdgpu_forms


def lookup(name: str, db=None) -> AmdForm:
    """The AMD form called ``name`` (``v_div_fmas_f64``)."""
    from tilecheck.spec.database import load_database

    forms = amdgpu_forms(db or load_database())
    try:
        return forms[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(forms), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(sorted(forms))}"
        raise UnknownFormError(f"unknown AMD instruction {name!r}{hint}") from None


def mode_params(form: AmdForm, mode: dict | None = None) -> dict:
    """Body parameters (``rm``, ``denorm_in``, ``denorm_out``) from MODE values.

    ``mode`` may give ``round`` and ``denorm`` (this form's field) or the sequence-level
    ``denorm_f32`` / ``denorm_f64`` fields; missing values come from the form's defaults.
    """
    values = dict(form.mode)
    if mode:
        if form.denorm_field in mode:
            values["denorm"] = mode[form.denorm_field]
        for key in ("round", "denorm"):
            if key in mode:
                values[key] = mode[key]
    denorm = int(values["denorm"])
    if not 0 <= denorm <= 3:
        raise UsageError(f"MODE denorm field must be 0..3, got {denorm}")
    if values["round"] not in ("rn", "rz", "rm", "rp"):
        raise UsageError(f"MODE round must be rn, rz, rm or rp, got {values['round']!r}")
    return {"rm": values["round"], "denorm_in": bool(denorm & 1), "denorm_out": bool(denorm & 2)}


def evaluate(name: str | AmdForm, variant: str = "observed", mode: dict | None = None, db=None,
             **operands) -> dict[str, np.ndarray]:
    """Run one form's body on operand arrays (floats as bit patterns, lane bits as bools)."""
    form = name if isinstance(name, AmdForm) else lookup(name, db)
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
        arrays[o.name] = value.astype(bool) if o.kind == "lane-bit" else value.astype(np.uint64)
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    arrays = {k: np.broadcast_to(a, shape) for k, a in arrays.items()}
    return run(v.program, NumpyBackend(shape), arrays, mode_params(form, mode))
