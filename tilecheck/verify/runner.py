"""Run the checks of ``tilecheck verify`` over work items and collect rows.

Forms run every check in :data:`tilecheck.verify.checks.FORM_CHECKS`; other item kinds run the
handler registered for them in :data:`ITEM_HANDLERS` (programs, sequences). An exception inside
a check becomes a failure of that check with its message, so one broken item never hides the
results of the others.
"""

from __future__ import annotations

import time
from typing import Callable

from tilecheck.errors import TilecheckError
from tilecheck.verify.checks import FORM_CHECKS, Context
from tilecheck.verify.report import CheckResult, Row
from tilecheck.verify.targets import Item

# kind -> function(item, ctx) -> list[CheckResult]
ITEM_HANDLERS: dict[str, Callable] = {}


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
        handler = ITEM_HANDLERS.get(item.kind)
        if handler is None:
            _load_handlers()
            handler = ITEM_HANDLERS.get(item.kind)
        if handler is None:
            row.checks.append(CheckResult(item.kind, skipped=f"no verifier for {item.kind}s is installed"))
        else:
            try:
                row.checks.extend(handler(item, ctx))
            except TilecheckError as exc:
                row.checks.append(CheckResult(item.kind, failures=1, details=[str(exc)]))
    row.seconds = time.perf_counter() - start
    return row


def _load_handlers() -> None:
    """Import the modules that register handlers for programs and sequences (when present)."""
    import importlib

    for module in ("tilecheck.verify.programs", "tilecheck.verify.sequences"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def run(items: list[Item], ctx: Context, on_row: Callable[[Row], None] | None = None) -> list[Row]:
    """Run every item; ``on_row`` sees each row as soon as it is done (for streaming output)."""
    rows = []
    for item in items:
        row = run_item(item, ctx)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows
