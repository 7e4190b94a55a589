"""Helpers shared by the emitter tests (imported by name; pytest puts this folder on sys.path)."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

from tilecheck.tile.coords import group_axes
from tilecheck.tile.views import View

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("sm_80", "sm_90", "sm_100")
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
CORPUS = sorted((ROOT / "tests" / "programs" / "legal").glob("*.py")) + sorted(
    (ROOT / "tests" / "emit" / "programs").glob("*.py"))


def legal_on(programs, target, db) -> bool:
    """True when every program of a file checks clean for ``target``."""
    return not any(d.severity == "error" for p in programs for d in p.check(target=target, db=db))


def expected_counts(program, target, db) -> tuple[Counter, int]:
    """(instructions per form a thread executes, how many of them are guarded), from the seed's rule:
    per call, the product of the repeat extents."""
    counts, guarded = Counter(), 0
    launch = program.launch
    for call in program.calls:
        form = db.form(call.spelling, target)
        axes, _ = group_axes(call.scope, launch)
        tensor = next(op for op in call.operands if isinstance(op, View))
        n = math.prod(tensor.shape[len(axes):-1])
        counts[form.name] += n
        if call.pred is not None:
            guarded += n
    return counts, guarded


_ENTRY = re.compile(r"\.entry\s+(\w+)\(")


def entry_bodies(ptx: str) -> dict[str, list[str]]:
    """Kernel name -> its instruction lines (stripped; no declarations, comments, labels)."""
    out, name, inside = {}, None, False
    for raw in ptx.splitlines():
        line = raw.strip()
        m = _ENTRY.search(line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        if line == "{":
            inside = True
            continue
        if line == "}":
            inside = False
            continue
        if inside and line and not line.startswith(("//", ".reg")) and not line.endswith(":"):
            out[name].append(line)
    return out


def opcode_of(line: str) -> tuple[str | None, str, list[str]]:
    """(guard, opcode, operand texts) of an instruction line."""
    guard = None
    if line.startswith("@"):
        guard, line = line.split(None, 1)
    opcode, _, rest = line.rstrip(";").partition(" ")
    depth, cur, ops = 0, "", []
    for c in rest:
        if c in "{[":
            depth += 1
        if c in "}]":
            depth -= 1
        if c == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        ops.append(cur.strip())
    return guard, opcode, ops


def declared_targets(path: Path) -> tuple[str, ...]:
    """Targets a corpus file is meant for: its ``# target: sm_XX`` line, else all three."""
    m = re.search(r"^# target: (sm_\d+)", path.read_text(encoding="utf-8"), re.M)
    return (m.group(1),) if m else TARGETS
