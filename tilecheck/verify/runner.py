"""Run the checks of ``tilecheck verify`` over work items and collect rows.

Forms run every check in :data:`tilecheck.verify.checks.FORM_CHECKS`; other item kinds run the
handler :data:`ITEM_HANDLERS` names for them (programs, sequences, AMD instruction forms). An
exception inside a check becomes a failure of that check with its message, so one broken item never hides the
results of the others.
"""

from __future__ import annotations

import time
from typing import Callable

from tilecheck.errors import TilecheckError
from tilecheck.verify.amdgpu_forms import amdgpu_form_checks
from tilecheck.verify.checks import FORM_CHECKS, Context
from tilecheck.verify.programs import verify_program
from tilecheck.verify.report import CheckResult, Row
from tilecheck.verify.sequences import sequence_checks
from tilecheck.verify.targets import Item

# kind -> function(item, ctx) -> list[CheckResult]
ITEM_HANDLERS: dict[str, Callable] = {"program": verify_program, "sequence": sequence_checks,
                                      "amdgpu-form": amdgpu_form_checks}


def _guard(name: str, fn, *args) -> CheckResult:
    try:
        return fn(*args)
    except TilecheckError as exc:
        return CheckResult(name, failures=1, details=[str(exc)])


def run_item(item: Item, ctx: Context) -> Row:
    """All checks of one item."""
    start = time.perf_counter()
    row = Row(item.name, item.kind)
    if item.kind == "form":
        for name, fn in FORM_CHECKS:
            row.checks.append(_guard(name, fn, item.payload, ctx))
    else:
        try:
            row.checks.extend(ITEM_HANDLERS[item.kind](item, ctx))
        except TilecheckError as exc:
            row.checks.append(CheckResult(item.kind, failures=1, details=[str(exc)]))
    row.seconds = time.perf_counter() - start
    return row


def run(items: list[Item], ctx: Context, on_row: Callable[[Row], None] | None = None) -> list[Row]:
    """Run every item; ``on_row`` sees each row as soon as it is done (for streaming output)."""
    rows = []
    for item in items:
        row = run_item(item, ctx)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows
