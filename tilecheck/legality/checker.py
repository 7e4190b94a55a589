"""Check a traced program: every legality condition of every apply call, all violations collected.

Order per call: instruction (resolve the form through the spec database, target gate), scope
and parameters, operand binding (count and kind), shapes, dtypes, ownership, memory atoms,
destination overlap, pred/preserve_dst. Initialisation state is carried across calls in
program order. Frontend diagnostics recorded while tracing come first in line order.
"""

from __future__ import annotations

from tilecheck.errors import IllegalTileOpError
from tilecheck.legality.binding import bind_operands
from tilecheck.legality.context import CallContext
from tilecheck.tile.diagnostics import Diagnostic
from tilecheck.legality.dtypes import check_dtypes
from tilecheck.legality.instruction import check_parameters, check_scope, resolve_form
from tilecheck.legality.memory import check_memory
from tilecheck.legality.overlap import check_overlap
from tilecheck.legality.ownership import check_ownership
from tilecheck.legality.predication import InitState, check_predication, record_writes
from tilecheck.legality.shapes import check_shapes
from tilecheck.tile.expand import ExpandedCall, expand


def check_program(program, target: str | None = None, *, db) -> list[Diagnostic]:
    """Every diagnostic of ``program`` for ``target`` (default: the database's), sorted by line.

    ``db`` is a :class:`~tilecheck.spec.database.SpecDatabase` (default: :func:`load_database`).
    An unknown target name raises :class:`~tilecheck.errors.UnknownFormError`.
    """
    target_name = db.target(target).name
    diagnostics = list(program.frontend_diagnostics)
    state = InitState()
    for call in program.calls:
        diagnostics.extend(check_call(program, call, db, target_name, state))
    return sorted(diagnostics, key=lambda d: (d.location.path if d.location else "", d.line))


def validate_program(program, target: str | None = None, *, db) -> None:
    """Raise :class:`~tilecheck.errors.IllegalTileOpError` (a ValueError) listing every violation."""
    errors = [d for d in check_program(program, target, db=db) if d.severity == "error"]
    if errors:
        raise IllegalTileOpError(errors)


def expand_program(program, target: str | None = None, *, db) -> list[ExpandedCall]:
    """Validate ``program`` (raising :class:`~tilecheck.errors.IllegalTileOpError`), then expand every call.

    Returns one :class:`~tilecheck.tile.expand.ExpandedCall` per apply call, in program order, each
    with the spec form its spelling resolves to for ``target``.
    """
    validate_program(program, target=target, db=db)
    return [ExpandedCall(call, db.form(call.spelling, target), tuple(expand(call, program.launch)))
            for call in program.calls]


def check_call(program, call, db, target: str, state: InitState) -> list[Diagnostic]:
    """The diagnostics of one call; updates ``state`` with the call's destination writes."""
    ctx = CallContext(call, program)
    resolve_form(ctx, db, target)
    check_scope(ctx)
    check_parameters(ctx)
    if ctx.form is not None and bind_operands(ctx):
        # without a valid scope the operand axes cannot be split into group/repeat/atom, but the
        # operand types can still be judged
        if ctx.scope is not None:
            check_shapes(ctx)
        check_dtypes(ctx)
        if ctx.scope is not None:
            check_ownership(ctx)
            check_memory(ctx)
            check_overlap(ctx)
    check_predication(ctx, state)
    record_writes(ctx, state)
    return ctx.diagnostics
