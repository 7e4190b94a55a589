"""``tilecheck check FILE.ptx|FILE.cu|- [--target sm_XX] [--version X.Y]``: judge PTX against the spec.

Every instruction of every function of each module (or of each inline ``asm`` statement of CUDA
C++) is judged for the module's ``.target`` and ``.version`` (``--target``/``--version`` override
them; CUDA C++ has neither, so ``--target`` decides, default the spec's) by
:mod:`tilecheck.legality.ptx_module`. Findings print compiler-style
(``k.ptx:12:5: error[PX003] target-gate: fma.rn.bf16 requires sm_90 or newer (target sm_75) [...]``),
then one summary line per file naming what was not judged. Exit 0 clean, 1 an illegal
instruction, 2 a file that cannot be read or parsed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tilecheck.commands.output import human_stream, write_json
from tilecheck.errors import Location, UsageError, echo
from tilecheck.legality.inline_asm import extract
from tilecheck.sources import read_source
from tilecheck.legality.ptx_module import ModuleReport, PtxFinding, check_module, module_target
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.sim.frontend import Instr, parse_module

CUDA_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx")


def is_ptx_target(path: str) -> bool:
    """Whether ``check`` reads ``path`` as PTX or CUDA C++ (else: a tile program)."""
    return path == "-" or path.endswith(".ptx") or path.endswith(CUDA_SUFFIXES)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return read_source(path, "a PTX module or CUDA source")


def check_ptx_text(text: str, path: str, db, target: str | None = None, version: str | None = None) -> ModuleReport:
    """The report on one PTX module's text (a located UsageError when it does not parse)."""
    try:
        module = parse_module(text, path)
    except UnsupportedPtxError as exc:
        raise UsageError(f"cannot read the module: {exc.message}", exc.location) from None
    instructions = [(ins.opcode, ins.line, ins.col) for fn in module.functions.values() for ins in fn.body
                    if isinstance(ins, Instr)]
    return check_module(instructions, module.path, db, target=target or module.target,
                        version=version or module.version, directives=_gated_directives(text))


_LOC_INLINED = re.compile(r"^([ \t]*)\.loc\b[^\n]*?\b(?:function_name|inlined_at)\b", re.M)


def _gated_directives(text: str) -> list:
    """The directive forms a version gates (:data:`tilecheck.legality.ptx_module.DIRECTIVE_GATES`),
    as ``(form, line, col)``: ``.loc`` lines with ``function_name``/``inlined_at`` before any comment."""
    out = []
    for m in _LOC_INLINED.finditer(text):
        if "//" in m.group(0):
            continue  # the words are in a comment
        line = text.count("\n", 0, m.start()) + 1
        out.append(("loc-inlined", line, len(m.group(1)) + 1))
    return out


def check_cuda_text(text: str, path: str, db, target: str | None = None) -> ModuleReport:
    """The report on the inline ``asm`` statements of CUDA C++, for ``target`` (C++ names no
    ``.target`` or ``.version``: the target decides, and no version gate is judged)."""
    statements = extract(text, path)
    # a statement with a problem still lists what it could read (none when its template was unreadable)
    instructions = [(ins.opcode, ins.line, ins.col) for st in statements for ins in st.instructions]
    report = check_module(instructions, path, db, target=db.target(target).name)
    report.findings += [_note_unreadable(path, st) for st in statements if getattr(st, "problem", None)]
    return report


def _note_unreadable(path: str, statement):
    return PtxFinding("PX104", "note", Location(path, statement.line, statement.col), "asm",
                      f"an asm statement not read whole ({statement.problem}); what it could not read is not judged")


def summary_line(report: ModuleReport) -> str:
    """``FILE: target sm_90, .version 8.7: 120 instructions, 100 judged, 0 errors; not judged: bra (12), ...``"""
    head = f"{report.path}: target {report.target or '(none)'}"
    if report.version:
        head += f", .version {report.version}"
    text = (f"{head}: {report.instructions} instruction(s), {report.judged} judged, "
            f"{len(report.errors)} error(s)")
    skipped = [f"{op} ({n})" for op, n in sorted(report.not_covered.items())]
    notes = sum(1 for f in report.findings if f.code == "PX102")
    if skipped:
        text += f"; not covered: {', '.join(skipped)}"
    if notes:
        text += f"; {notes} not modeled (PX102)"
    return text


def run(args, db) -> int:
    """Check every PTX / CUDA file of ``args.programs``; returns the exit code."""
    if args.version is not None and not args.version.replace(".", "", 1).isdigit():
        raise UsageError(f"--version {echo(args.version)}: expected MAJOR.MINOR (8.7)")
    if args.target is not None:
        db.target(args.target)  # unknown target: exit 2 before any output
    texts = [(path, _read(path)) for path in args.programs]  # every file reads before any output
    reports = []
    for path, text in texts:
        shown = "<stdin>" if path == "-" else path
        if path.endswith(CUDA_SUFFIXES):
            reports.append(check_cuda_text(text, shown, db, args.target))
        else:
            reports.append(check_ptx_text(text, shown, db, args.target, args.version))
    out = human_stream(args)
    for report in reports:
        for finding in report.findings:
            out.write(f"{finding}\n")
        out.write(summary_line(report) + "\n")
    illegal = any(r.errors for r in reports)
    write_json(args.json, {"legal": not illegal, "files": [{
        "path": r.path, "target": r.target, "version": r.version, "instructions": r.instructions,
        "judged": r.judged, "errors": len(r.errors), "not_covered": r.not_covered,
        "findings": [f.to_json() for f in r.findings]} for r in reports]})
    return 1 if illegal else 0


__all__ = ["is_ptx_target", "check_ptx_text", "check_cuda_text", "run", "summary_line", "module_target"]
