"""``tilecheck verify amdgpu.fdiv64`` (and every other AMD ``spec/sequences`` sequence).

``run(target_name, args)`` runs :func:`tilecheck.amdgpu.campaign.verify_sequence` and prints the
campaign: the seed and case count (everything printed is reproducible from them), mismatches per
case category and per reciprocal choice, and minimal counterexample reports (inputs, every
intermediate, expected vs got). Exit code 0 when no result was incorrectly rounded, 1 otherwise.
``args`` needs ``semantics`` (documented | observed), ``cases``, ``seed`` and may carry ``rcp``
(contract | nearest) and ``quiet``. ``handle_item(item, ctx)`` returns the same campaign as
:class:`tilecheck.verify.report.CheckResult` rows for the ``verify`` table.
"""

from __future__ import annotations

import sys

from tilecheck.amdgpu.campaign import DEFAULT_CASES, format_report, verify_sequence
from tilecheck.spec.amdgpu import amdgpu_forms
from tilecheck.spec.sequence import lookup_sequence
from tilecheck.verify.report import CheckResult


def _contract_text(seq, semantics: str, *, db) -> str:
    forms = amdgpu_forms(db)
    parts = []
    for step in seq.steps:
        if step.op is None:
            continue
        c = forms[step.op].variant(semantics).contract
        if c is None:
            continue
        parts.append(f"{step.op}: {c.describe()}{', denormals flushed' if c.flush_inputs else ''}")
    return "; ".join(parts) or "none"


def reproduce_command(name: str, semantics: str, rcp: str, seed: int, cases: int) -> str:
    """The ``tilecheck verify`` command line that repeats a campaign exactly."""
    return (f"tilecheck verify {name} --semantics {semantics} --rcp {rcp} --seed {seed} "
            f"--sequence-cases {cases}")


def run(target_name: str, args, db) -> int:
    """Verify one sequence and print the campaign; returns the exit code (0 ok, 1 mismatches)."""
    semantics = getattr(args, "semantics", "observed")
    cases = getattr(args, "cases", None) or DEFAULT_CASES
    seed = getattr(args, "seed", 0) or 0
    rcp = getattr(args, "rcp", "contract") or "contract"
    quiet = getattr(args, "quiet", False)
    seq = lookup_sequence(target_name, db=db)
    out = sys.stdout
    out.write(f"{seq.name}: {seq.summary}\n")
    out.write(f"  semantics {semantics}; reciprocal {'anywhere inside its contract' if rcp == 'contract' else 'correctly rounded'}"
              f" ({_contract_text(seq, semantics, db=db)}); reference {seq.operation}.{seq.rounding}"
              f"{'.ftz' if seq.ftz else ''}.{seq.type}; NaNs compared by {seq.nan}\n")

    def progress(done: int, total: int, mismatches: int) -> None:
        if not quiet:
            sys.stderr.write(f"\r  {done}/{total} cases, {mismatches} mismatches")
            sys.stderr.flush()

    result = verify_sequence(target_name, semantics, cases, seed, rcp=rcp, progress=progress, db=db)
    if not quiet:
        sys.stderr.write("\n")
    rate = result.cases / result.seconds if result.seconds > 0 else 0.0
    out.write(f"  seed {result.seed}: {result.cases} cases, {result.mismatches} incorrectly rounded "
              f"({result.seconds:.1f} s, {rate / 1000:.0f}k cases/s)\n")
    out.write("  by category (cases/mismatches): " + ", ".join(
        f"{k} {v[0]}/{v[1]}" for k, v in result.by_category.items()) + "\n")
    out.write("  by reciprocal choice (cases/mismatches): " + ", ".join(
        f"{k} {v[0]}/{v[1]}" for k, v in result.by_rcp_choice.items()) + "\n")
    if result.mismatches:
        out.write(f"  {result.mismatches_with_nearest_rcp} of the {result.mismatches} mismatching cases also fail "
                  "with the correctly rounded reciprocal\n")
        for report in result.reports:
            out.write("\n".join(format_report(seq, result, report)) + "\n")
    out.write(f"  reproduce: {reproduce_command(seq.name, semantics, rcp, result.seed, result.cases)}\n")
    out.write(f"{result.cases} cases, {result.mismatches} mismatches, 0 failures\n")
    return 0 if result.ok else 1


def handle_item(item, ctx) -> list:
    """Runner hook: the campaign of one sequence item as ``CheckResult`` rows."""
    semantics, cases, rcp = ctx.semantics, ctx.sequence_cases, ctx.rcp
    result = verify_sequence(item.name, semantics, cases, ctx.seed, rcp=rcp, db=ctx.db)
    seq = lookup_sequence(item.name, db=ctx.db)
    details = [f"seed {result.seed}: {result.cases} cases, {result.mismatches} incorrectly rounded; "
               f"{result.mismatches_with_nearest_rcp} also with the correctly rounded reciprocal",
               "reproduce: " + reproduce_command(item.name, semantics, rcp, result.seed, result.cases)]
    for report in result.reports:
        details.extend(format_report(seq, result, report))
    return [CheckResult(f"campaign({semantics})", cases=result.cases, mismatches=result.mismatches,
                        details=details)]
