"""Per-form checks of ``tilecheck verify``.

``FORM_CHECKS`` is an ordered registry of ``(name, function)``; each function takes the form and a
:class:`Context` and returns a :class:`~tilecheck.verify.report.CheckResult`. Components add
their checks here (legality against ptxas, emission, CPU simulation, GPU runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tilecheck.spec.forms import Form
from tilecheck.verify.report import CheckResult


@dataclass
class Context:
    """Options shared by all checks of one verify run."""

    db: object
    cases: int = 2000
    seed: int = 0
    backend: str = "auto"
    target: str | None = None
    extra: dict = field(default_factory=dict)


def check_examples(form: Form, ctx: Context) -> CheckResult:
    """Every example of the form, through the model: bit-exact (NaN per policy) for exact forms,
    within the contract for approximate ones."""
    from tilecheck.model import api

    result = CheckResult("examples")
    if form.kind == "memory":
        result.skipped = "moves bits"
        return result
    for ex in form.examples:
        result.cases += 1
        ok = bool(api.allowed(form, ex.result, *ex.operands))
        if not ok:
            result.mismatches += 1
            got = api.reference(form, *ex.operands)
            ops = " ".join(f"0x{v:x}" for v in ex.operands)
            result.details.append(f"{ex.location}: {form.name} {ops}: spec says 0x{ex.result:x} "
                                  f"({ex.variant}: {ex.source}), model gives 0x{int(got):x}")
    return result


def check_contract_reference(form: Form, ctx: Context) -> CheckResult:
    """Approximate forms: the model's representative value is allowed by the contract on
    edge-biased inputs (a contract that rejects its own reference is broken)."""
    from tilecheck.model import api
    from tilecheck.verify.inputs import operands_for

    result = CheckResult("contract")
    if form.kind != "contract":
        result.skipped = "exact form"
        return result
    rng = np.random.default_rng(ctx.seed)
    ops = operands_for(form, min(ctx.cases, 2000), rng)
    ref = api.reference(form, *ops)
    ok = api.allowed(form, ref, *ops)
    result.cases = int(ok.size)
    bad = np.nonzero(~ok)[0]
    result.mismatches = int(bad.size)
    for i in bad[:5]:
        args = " ".join(f"0x{int(o[i]):x}" for o in ops)
        result.details.append(f"{form.name} {args}: reference 0x{int(ref[i]):x} rejected by the contract")
    return result


FORM_CHECKS: list[tuple[str, Callable[[Form, Context], CheckResult]]] = [
    ("examples", check_examples),
    ("contract", check_contract_reference),
]
