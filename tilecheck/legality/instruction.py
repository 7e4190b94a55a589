"""The instruction, scope and parameters of a call: TC001-TC003, TC005-TC007, TC103.

The spelling resolves through the spec database (qualifier order free): unknown spellings get the
database's message (with close matches), illegal ones the spec's recorded reason and ptxas's
message, and a form the target lacks the gate. Only ``scope``, ``pred`` and ``preserve_dst`` are
instruction parameters ("Opcode qualifiers are written in T.ptx[opcode]").
"""

from __future__ import annotations

from tilecheck.errors import UnknownFormError
from tilecheck.legality.context import CallContext
from tilecheck.tile.coords import SCOPES, group_axes
from tilecheck.tile.ir import Instruction

PARAMETERS = ("scope", "pred", "preserve_dst")


def resolve_form(ctx: CallContext, db, target: str) -> None:
    """Set ``ctx.form`` from the call's instruction, reporting TC005/TC001/TC002/TC003."""
    instruction = ctx.call.instruction
    if not isinstance(instruction, Instruction):
        ctx.add("TC005", "the first argument of T.cuda.tile.apply must be T.ptx[\"<opcode>\"] or an opcode string",
                subject="instruction", expected="T.ptx[...]", found=f"{instruction!r} ({instruction.type_name})")
        return
    try:
        verdict = db.verdict(instruction.spelling, target)
    except UnknownFormError as exc:
        ctx.add("TC001", exc.message, subject=f"T.ptx[{instruction.spelling!r}]")
        return
    if verdict.legal:
        ctx.form = verdict.form
        return
    if verdict.form is not None:
        ctx.form = verdict.form  # keep checking the operands against the form the target lacks
        ctx.add("TC003", f"{verdict.form.name} is not available on {target}", subject=f"T.ptx[{instruction.spelling!r}]",
                expected=f"sm_{verdict.form.target.sm} or newer", found=target,
                hint=f"check with --target sm_{verdict.form.target.sm} (PTX ISA {verdict.form.target.ptx_text})")
        return
    hint = f"ptxas: {verdict.ptxas}" if verdict.ptxas else None
    ctx.add("TC002", verdict.reason, subject=f"T.ptx[{instruction.spelling!r}]", hint=hint)


def check_scope(ctx: CallContext) -> None:
    """Set ``ctx.scope``/``ctx.axes`` from the call's scope, reporting TC007 and TC103."""
    scope = ctx.call.scope
    if not isinstance(scope, str) or scope not in SCOPES:
        shown = scope if isinstance(scope, str) else f"{scope!r} ({scope.type_name})"
        message = "scope must be a static string naming an execution scope"
        if scope == "cluster":
            message = "scope 'cluster' needs a cluster launch, which tilecheck does not model yet"
        ctx.add("TC007", message, subject="scope", expected=" | ".join(SCOPES), found=repr(shown))
        return
    ctx.scope = scope
    axes, problem = group_axes(scope, ctx.program.launch)
    ctx.axes = axes
    if problem:
        ctx.add("TC103", problem, subject="scope",
                hint="the scope does not launch threads: the block must cover its group exactly")


def check_parameters(ctx: CallContext) -> None:
    """Report every keyword that is not an instruction parameter (TC006)."""
    for name, value in ctx.call.parameters:
        ctx.add("TC006", f"{name}={value!r} is not an instruction parameter", subject=name,
                expected=", ".join(PARAMETERS), found=name,
                hint="qualifiers such as rounding or .ftz are written in T.ptx[opcode]")
