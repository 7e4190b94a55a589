"""``tilecheck spec list|show|check``: browse and validate the spec database.

* ``spec list [--isa ptx|amdgpu] [--family div] [--target sm_90]``: one form per line (PTX forms,
  then AMD instructions); an unknown family is an error naming the nearest ones.
* ``spec show FORM [--target sm_XX] [--json FILE|-]``: everything the database says about a spelling
  (a PTX form or an AMD instruction such as ``v_div_scale_f64``); exit 0 when legal, 1 when illegal
  (with the reason and ptxas's message), 2 when unknown.
* ``spec check [DIR]``: load and validate a spec folder; exit 0 valid, 2 with every problem located.
"""

from __future__ import annotations

import difflib
import sys

from tilecheck.commands.output import add_json_option, check_writable, human_stream, write_json
from tilecheck.errors import Location, UnknownFormError, UsageError, echo
from tilecheck.legality.ptx_module import judge_spelling
from tilecheck.model.api import _contract_text
from tilecheck.ptxas import SPEC_PTXAS
from tilecheck.spec.amdgpu import amdgpu_forms
from tilecheck.spec.database import load_database


def add_parser(sub):
    """Register the ``spec`` subcommand and its actions."""
    p = sub.add_parser("spec", help="list, show and validate instruction specs", description=__doc__.split("\n\n")[0])
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    lst = actions.add_parser("list", help="one form per line")
    lst.add_argument("--isa", choices=("ptx", "amdgpu"), help="only this instruction set")
    lst.add_argument("--family", help="only this family (div, rcp, v_div_scale, ...)")
    lst.add_argument("--target", help="only PTX forms legal on this target")
    lst.add_argument("--long", action="store_true", help="also print kind, gate and semantics")
    show = actions.add_parser("show", help="details of one spelling (PTX form or AMD instruction); exit 1 if illegal")
    show.add_argument("form")
    show.add_argument("--target", help="judge the target gate for this target")
    add_json_option(show, "also write the details as JSON to FILE ('-': stdout, the human text then goes to stderr)")
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
    raise UsageError("spec needs an action: list, show or check")


def _list(args) -> int:
    db = load_database()
    tinfo = db.target(args.target) if args.target else None
    amd = amdgpu_forms(db)
    if args.family:
        families = {*db.families, *db.extras.get("amdgpu", {}).get("families", {})}
        if args.family not in families:
            close = difflib.get_close_matches(args.family, sorted(families), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; families: {', '.join(sorted(families))}"
            raise UnknownFormError(f"unknown family {echo(args.family)}{hint}")
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
    if args.isa in (None, "amdgpu") and tinfo is None:  # PTX targets gate no AMD instruction
        for form in amd.values():
            if args.family and form.family != args.family:
                continue
            if args.long:
                kinds = ", ".join(f"{n}: {'contract' if v.program is None else 'semantics'}" for n, v in form.variants.items())
                out.write(f"{form.name:<28} {'amdgpu':<8} {form.type:<26} {kinds}\n")
            else:
                out.write(form.name + "\n")
    return 0


def _show(args) -> int:
    check_writable(args.json)
    db = load_database()
    amd = amdgpu_forms(db).get(args.form.strip().lower())
    if amd is not None:
        return _show_amd(args, db, amd)
    try:
        verdict = db.verdict(args.form, args.target)
    except UnknownFormError as exc:
        close = difflib.get_close_matches(args.form.strip().lower(), list(amdgpu_forms(db)), n=3, cutoff=0.6)
        if close and "did you mean" not in exc.message:
            raise UnknownFormError(f"unknown instruction {echo(args.form)}; did you mean {', '.join(close)}?") from None
        raise
    out = human_stream(args)
    record = {"spelling": args.form.strip(), "isa": "ptx", "legal": verdict.legal, "target": verdict.target}
    unmodelled = None if verdict.legal else judge_spelling(db, args.form.strip(), Location("<spec show>"))
    if unmodelled is not None and unmodelled.code == "PX102":
        # a modifier the ISA defines that the family's forms do not model (fma.rn.relu.f16): not
        # illegal, as `tilecheck check` says too -- unknown
        out.write(f"{args.form}: not modelled\n  reason: {unmodelled.message}\n")
        record.update(legal=None, reason=unmodelled.message)
        write_json(args.json, record)
        return 4
    if not verdict.legal:
        out.write(f"{args.form}: illegal{' on ' + verdict.target if verdict.target else ''}\n")
        out.write(f"  reason: {verdict.reason}\n")
        if verdict.ptxas:
            out.write(f"  ptxas:  {verdict.ptxas} (recorded with ptxas {SPEC_PTXAS})\n")
        record.update(reason=verdict.reason, ptxas=verdict.ptxas)
        write_json(args.json, record)
        return 1
    form = verdict.form
    alias = "" if form.name == args.form.strip() else f" (written {args.form.strip()})"
    out.write(f"{form.name}{alias}: legal{' on ' + verdict.target if verdict.target else ''}\n")
    out.write(f"  family:    {form.family} ({form.location})\n")
    out.write(f"  kind:      {form.kind}\n")
    out.write(f"  gate:      {form.target}\n")
    record.update(name=form.name, family=form.family, location=str(form.location), kind=form.kind,
                  gate={"sm": form.target.sm, "ptx": ".".join(map(str, form.target.ptx)), "text": str(form.target)})
    if verdict.target:
        v = db.min_version(form, verdict.target)
        out.write(f"  .version:  {v[0]}.{v[1]} (lowest for {verdict.target})\n")
        record["min_version"] = f"{v[0]}.{v[1]}"
    params = ", ".join(f"{k}={v}" for k, v in form.semantics.items)
    out.write(f"  semantics: {form.semantics.key}({params})\n")
    record["semantics"] = {"key": form.semantics.key, "params": {k: v for k, v in form.semantics.items}}
    nan = form.nan
    out.write(f"  NaN:       {nan.policy}" + (f" (bits 0x{nan.bits:x})" if nan.bits is not None else "") + "\n")
    record["nan"] = {"policy": nan.policy, "bits": nan.bits}
    record["operands"] = []
    for op in form.operands:
        doc = f" -- {op.doc}" if op.doc else ""
        regs = f" x{op.registers}" if op.registers > 1 else ""
        out.write(f"  operand {op.name}: {op.role} .{op.ptx_type} in .{op.register_type}{regs}{doc}\n")
        record["operands"].append({"name": op.name, "role": op.role, "type": op.ptx_type,
                                   "register_type": op.register_type, "registers": op.registers, "doc": op.doc})
    if form.contract is not None:
        c = form.contract
        out.write(f"  contract:  {_contract_text(form)}{' (provisional)' if c.provisional else ''}\n")
        out.write(f"             source: {c.source}\n")
        rules = []
        for r in c.rules:
            when = ", ".join(f"{form.sources[i].name}: {_condition_text(cond)}" for i, cond in r.when)
            out.write(f"             rule: {when} -> {r.result}\n")
            rules.append({"when": when, "result": r.result, "source": r.source})
        for sp in c.specials:
            out.write(f"             {', '.join(sp.operands)} -> {sp.result}\n")
        record["contract"] = {"text": _contract_text(form), "provisional": c.provisional, "source": c.source,
                              "bound": {"kind": c.bound.kind, "size": c.bound.size, "readings": list(c.readings)},
                              "rules": rules,
                              "specials": [{"operands": list(sp.operands), "result": sp.result} for sp in c.specials]}
    out.write(f"  reference: {form.reference}\n")
    record["reference"] = str(form.reference)
    record["examples"] = []
    for ex in form.examples:
        ops = " ".join(f"0x{v:x}" for v in ex.operands)
        out.write(f"  example:   {ops} -> 0x{ex.result:x}  ({ex.variant}: {ex.source})\n")
        record["examples"].append({"operands": list(ex.operands), "result": ex.result, "variant": ex.variant,
                                   "source": ex.source})
    if form.notes:
        out.write(f"  notes:     {form.notes}\n")
    record["notes"] = form.notes
    write_json(args.json, record)
    return 0


def _show_amd(args, db, form) -> int:
    """An AMD instruction: operands, opcodes, constants, MODE and every semantics variant."""
    if args.target:
        raise UsageError(f"--target names PTX targets; {form.name} is an AMD instruction")
    out = human_stream(args)
    family = db.extras["amdgpu"]["families"].get(form.family)
    out.write(f"{form.name}: AMD GPU instruction\n")
    out.write(f"  family:    {form.family} ({form.location})\n")
    out.write(f"  type:      {form.type}\n")
    for op in form.operands:
        doc = f" -- {op.doc}" if op.doc else ""
        # the operand's own format or int width where the form's types: gives one (v_cvt_f32_f16's D)
        typed = dict(form.operand_types).get(op.name)
        kind = f"{op.kind} {typed}" if typed else op.kind
        out.write(f"  operand {op.name}: {op.role} {kind}{' (implicit)' if op.implicit else ''}{doc}\n")
    out.write("  opcodes:   " + ", ".join(f"{k} {v}" for k, v in form.opcodes) + "\n")
    if form.constants:
        out.write("  constants: " + ", ".join(f"{k}={v}" for k, v in form.constants) + "\n")
    out.write("  MODE:      " + ", ".join(f"{k}={v}" for k, v in form.mode) + "\n")
    for v in form.variants.values():
        kind = "contract" if v.program is None else "semantics"
        out.write(f"  variant {v.name}: {kind}; source: {v.source}\n")
    if family is not None:
        out.write(f"  reference: {family.reference}\n")
    if form.notes:
        out.write(f"  notes:     {form.notes}\n")
    write_json(args.json, {
        "spelling": args.form.strip(), "isa": "amdgpu", "legal": True, "name": form.name, "family": form.family,
        "location": str(form.location), "type": form.type,
        "operands": [{"name": o.name, "role": o.role, "kind": o.kind, "implicit": o.implicit, "doc": o.doc}
                     for o in form.operands],
        "opcodes": dict(form.opcodes), "constants": dict(form.constants), "mode": dict(form.mode),
        "variants": [{"name": v.name, "kind": "contract" if v.program is None else "semantics", "source": v.source,
                      "notes": v.notes} for v in form.variants.values()],
        "reference": str(family.reference) if family is not None else None, "notes": form.notes})
    return 0


def _check(args) -> int:
    db = load_database(args.root) if args.root else load_database()
    n_amd = len(amdgpu_forms(db))
    n_seq = len(db.extras.get("sequences", {}))
    sys.stdout.write(f"spec OK: {len(db.families)} PTX families, {len(db.forms)} forms, "
                     f"{n_amd} AMD instructions, {n_seq} sequences, {len(db.targets)} targets\n")
    return 0


def _condition_text(cond) -> str:
    """A rule's operand condition in words (``finite, |x| > 2^126``)."""
    parts = [" or ".join(cond.classes)] if cond.classes else []
    if cond.above_log2 is not None:
        parts.append(f"|x| > 2^{cond.above_log2}")
    if cond.below_log2 is not None:
        parts.append(f"|x| < 2^{cond.below_log2}")
    return ", ".join(parts)
