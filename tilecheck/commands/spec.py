"""``tilecheck spec list|show|check``: browse and validate the spec database.

* ``spec list [--isa ptx] [--family div] [--target sm_90]``: one form per line.
* ``spec show FORM [--target sm_XX]``: everything the database says about a spelling; exit 0 when
  legal, 1 when illegal (with the reason and ptxas's message), 2 when unknown.
* ``spec check [DIR]``: load and validate a spec folder; exit 0 valid, 2 with every problem located.
"""

from __future__ import annotations

import sys

from tilecheck.spec.database import load_database


def add_parser(sub):
    """Register the ``spec`` subcommand and its actions."""
    p = sub.add_parser("spec", help="list, show and validate instruction specs", description=__doc__.split("\n\n")[0])
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    lst = actions.add_parser("list", help="one form per line")
    lst.add_argument("--isa", help="only this instruction set (ptx, amdgpu)")
    lst.add_argument("--family", help="only this family (div, rcp, ...)")
    lst.add_argument("--target", help="only forms legal on this target")
    lst.add_argument("--long", action="store_true", help="also print kind, gate and semantics")
    show = actions.add_parser("show", help="details of one spelling; exit 1 if illegal")
    show.add_argument("form")
    show.add_argument("--target", help="judge the target gate for this target")
    check = actions.add_parser("check", help="validate a spec folder")
    check.add_argument("root", nargs="?", help="spec folder (default: the built-in one)")
    return p


def run(args) -> int:
    """Dispatch to the action; returns the exit code."""
    if args.action == "list":
        return _list(args)
    if args.action == "show":
        return _show(args)
    if args.action == "check":
        return _check(args)
    from tilecheck.errors import UsageError

    raise UsageError("spec needs an action: list, show or check")


def _list(args) -> int:
    db = load_database()
    tinfo = db.target(args.target) if args.target else None
    out = sys.stdout
    for form in db.forms.values():
        if args.isa and form.isa != args.isa:
            continue
        if args.family and form.family != args.family:
            continue
        if tinfo and tinfo.sm < form.target.sm:
            continue
        if args.long:
            out.write(f"{form.name:<28} {form.kind:<8} {str(form.target):<26} {form.semantics.key}\n")
        else:
            out.write(form.name + "\n")
    amd = db.extras.get("amdgpu", {})
    if not args.family and args.isa in (None, "amdgpu"):
        for name in amd:
            out.write(f"{name}\n")
    return 0


def _show(args) -> int:
    db = load_database()
    verdict = db.verdict(args.form, args.target)
    out = sys.stdout
    if not verdict.legal:
        out.write(f"{args.form}: illegal{' on ' + verdict.target if verdict.target else ''}\n")
        out.write(f"  reason: {verdict.reason}\n")
        if verdict.ptxas:
            from tilecheck.ptxas import SPEC_PTXAS

            out.write(f"  ptxas:  {verdict.ptxas} (recorded with ptxas {SPEC_PTXAS})\n")
        return 1
    form = verdict.form
    alias = "" if form.name == args.form.strip() else f" (written {args.form.strip()})"
    out.write(f"{form.name}{alias}: legal{' on ' + verdict.target if verdict.target else ''}\n")
    out.write(f"  family:    {form.family} ({form.location})\n")
    out.write(f"  kind:      {form.kind}\n")
    out.write(f"  gate:      {form.target}\n")
    if verdict.target:
        v = db.min_version(form, verdict.target)
        out.write(f"  .version:  {v[0]}.{v[1]} (lowest for {verdict.target})\n")
    params = ", ".join(f"{k}={v}" for k, v in form.semantics.items)
    out.write(f"  semantics: {form.semantics.key}({params})\n")
    nan = form.nan
    out.write(f"  NaN:       {nan.policy}" + (f" (bits 0x{nan.bits:x})" if nan.bits is not None else "") + "\n")
    for op in form.operands:
        doc = f" -- {op.doc}" if op.doc else ""
        regs = f" x{op.registers}" if op.registers > 1 else ""
        out.write(f"  operand {op.name}: {op.role} .{op.ptx_type} in .{op.register_type}{regs}{doc}\n")
    if form.contract is not None:
        from tilecheck.model.api import _contract_text

        c = form.contract
        out.write(f"  contract:  {_contract_text(form)}{' (provisional)' if c.provisional else ''}\n")
        out.write(f"             source: {c.source}\n")
        for s in c.specials:
            out.write(f"             {', '.join(s.operands)} -> {s.result}\n")
    out.write(f"  reference: {form.reference}\n")
    for ex in form.examples:
        ops = " ".join(f"0x{v:x}" for v in ex.operands)
        out.write(f"  example:   {ops} -> 0x{ex.result:x}  ({ex.variant}: {ex.source})\n")
    if form.notes:
        out.write(f"  notes:     {form.notes}\n")
    return 0


def _check(args) -> int:
    db = load_database(args.root) if args.root else load_database()
    n_amd = len(db.extras.get("amdgpu", {}))
    n_seq = len(db.extras.get("sequences", {}))
    sys.stdout.write(f"spec OK: {len(db.families)} PTX families, {len(db.forms)} forms, "
                     f"{n_amd} AMD instructions, {n_seq} sequences, {len(db.targets)} targets\n")
    return 0
