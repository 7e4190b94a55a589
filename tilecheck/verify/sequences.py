"""``tilecheck verify amdgpu.fdiv64`` (and every sequence of the spec database): run its campaign.

The ``sequence`` handler of :data:`tilecheck.verify.runner.ITEM_HANDLERS`: it hands
each sequence to the verifier of its ISA: ``amdgpu.*`` sequences to
:func:`tilecheck.verify.amdgpu.handle_item` (a campaign of generated divisions through the
sequence with the reciprocal anywhere inside its contract, compared with correctly rounded
division). The context carries its options: ``semantics`` (observed | documented), ``rcp``
(contract | nearest; ``tilecheck verify`` defaults to nearest: the sequence's claim that it divides
correctly with the correctly rounded reciprocal) and ``sequence_cases``.
"""

from __future__ import annotations

from tilecheck.verify.amdgpu import handle_item
from tilecheck.verify.report import CheckResult

__all__ = ["sequence_checks"]


def sequence_checks(item, ctx) -> list[CheckResult]:
    """The campaign of one sequence as check rows."""
    isa = item.name.split(".", 1)[0]
    if isa == "amdgpu":
        results = handle_item(item, ctx)
        if ctx.rcp == "nearest" and results:
            results[0].details.insert(0, "reciprocal step correctly rounded; --rcp contract explores its whole "
                                         "contract (known counterexamples: the Markstein exception)")
        return results
    return [CheckResult("sequence", skipped=f"no verifier for {isa} sequences")]

