"""``tilecheck check FILE.ptx`` on a 10,000-line module against ptxas's own parse-only check.

    python bench/bench_check_ptx.py [--lines 10000] [--repeat 5]

The module is ``examples/cuda/half.ptx`` with its functions repeated (renamed) up to ``--lines``
lines. Prints the best time of the check after start-up (the spec database loaded once), the same
for ``ptxas -arch=compute_90`` (parse-only: it checks the module and writes no code; its process
start-up included, as a user runs it) when ptxas is present, and their ratio.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from benchkit import best_time, machine_line  # noqa: E402


def big_module(lines: int) -> str:
    """``half.ptx`` with its functions repeated under new names until the module has ``lines`` lines."""
    text = (HERE.parent / "examples" / "cuda" / "half.ptx").read_text()
    head, body = text.split(".address_size 64", 1)
    names = set(re.findall(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", body))
    parts, k = [], 0
    while (head + "".join(parts)).count("\n") < lines:
        copy = body
        for name in sorted(names, key=len, reverse=True):
            copy = re.sub(rf"\b{re.escape(name)}\b", f"{name}_{k}", copy)
        parts.append(copy)
        k += 1
    return head + ".address_size 64" + "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from tilecheck import ptxas
    from tilecheck.commands.check_ptx import check_ptx_text
    from tilecheck.errors import TilecheckError
    from tilecheck.spec.database import load_database

    db = load_database()
    text = big_module(args.lines)
    report = check_ptx_text(text, "big.ptx", db)
    print(machine_line())
    print(f"module: {text.count(chr(10))} lines, {report.instructions} instructions, {report.judged} judged, "
          f"{len(report.errors)} errors")
    ours = best_time(lambda: check_ptx_text(text, "big.ptx", db), args.repeat)
    print(f"tilecheck check (after start-up): {ours * 1000:.1f} ms")
    try:
        ptxas.find_ptxas()
    except TilecheckError as exc:
        print(f"ptxas: not available ({exc.message}); no ratio")
        return
    theirs = best_time(lambda: ptxas.assemble(text, "compute_90", parse_only=True), args.repeat)
    print(f"ptxas -arch=compute_90 (parse-only, process included): {theirs * 1000:.1f} ms")
    print(f"ratio tilecheck/ptxas: {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
