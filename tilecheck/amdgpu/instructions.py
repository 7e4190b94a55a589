"""Evaluate ``spec/amdgpu`` instruction forms with the vectorised numpy backend.

``evaluate("v_div_scale_f64", variant="observed", db=db, S0=..., S1=..., S2=...)`` returns the
destinations by name (``{"D": uint64 array, "VCC": bool array}``). MODE comes from the form's
defaults, overridable per call (``mode={"round": "rz", "denorm": 0}``). Contract forms
(``v_rcp_*``) have no single result: use :mod:`tilecheck.amdgpu.contract`.
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
        arrays[o.name] = value.astype(bool) if o.kind == "lane-bit" else value.astype(np.uint64)
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    arrays = {k: np.broadcast_to(a, shape) for k, a in arrays.items()}
    return run(v.program, NumpyBackend(shape), arrays, mode_params(form, mode))
