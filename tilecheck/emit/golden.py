"""Golden emitted outputs under the top-level ``emit/`` folder of a checkout.

* ``emit/programs/<example>.<target>.ptx`` and ``.cu`` -- every program file in ``examples/``
  (all its programs in one module), for each of :data:`GOLDEN_TARGETS` on which it is legal;
* ``emit/forms/<target>/<form>.ptx`` -- one single-instruction kernel per family and type legal on
  that target (:func:`representative_forms`; :func:`tilecheck.emit.single_instruction_kernel`,
  unpredicated). Every other form's kernel differs from its representative in the instruction
  line only; the tests check those by property instead (ptxas accepts every kernel of every form
  on every target, the simulator runs each and agrees with the model), so adding a form of an
  existing family and type touches no golden.

Regenerate with ``python -m tilecheck.emit.golden`` (``--check`` compares without writing and
exits 1 on a difference). ``tests/golden`` compares fresh emission with the files, so an emitter
change shows up in review as a diff of these files.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from tilecheck.emit import emit_programs, single_instruction_kernel
from tilecheck.legality.checker import check_program
from tilecheck.spec.database import load_database
from tilecheck.tile.loader import load_programs

GOLDEN_TARGETS = ("sm_80", "sm_90", "sm_100")


def repo_root() -> Path:
    """The checkout holding ``tilecheck/`` (the goldens and examples live next to it)."""
    return Path(__file__).resolve().parents[2]


def example_files(root: Path) -> list[Path]:
    """The example program files, sorted."""
    return sorted((root / "examples").glob("*.py"))


def representative_forms(db, target: str) -> list:
    """The first form (in spec order) of each PTX family and type legal on ``target``."""
    chosen: dict[tuple[str, str], object] = {}
    for form in db.kernel_forms():
        if db.verdict(form.name, target).legal:
            chosen.setdefault((form.family, form.type), form)
    return list(chosen.values())


def golden_outputs(root: Path | None = None, *, db) -> dict[str, str]:
    """Every golden file's expected text, keyed by its path relative to ``root`` (posix)."""
    root = root or repo_root()
    out: dict[str, str] = {}
    for path in example_files(root):
        programs = load_programs(path)
        for target in GOLDEN_TARGETS:
            if any(d.severity == "error" for p in programs for d in check_program(p, target=target, db=db)):
                continue  # e.g. an sm_100-only form: no golden for older targets
            for fmt, ext in (("ptx", "ptx"), ("cuda", "cu")):
                out[f"emit/programs/{path.stem}.{target}.{ext}"] = emit_programs(programs, target, fmt, db=db)
    for target in GOLDEN_TARGETS:
        for form in representative_forms(db, target):
            out[f"emit/forms/{target}/{form.name}.ptx"] = single_instruction_kernel(form, target, db=db).ptx
    return out


def existing_goldens(root: Path) -> dict[str, Path]:
    """The golden files present on disk (``emit/programs/*`` and ``emit/forms/*/*``)."""
    emit = root / "emit"
    found = {}
    for pattern in ("programs/*.ptx", "programs/*.cu", "forms/*/*.ptx"):
        for path in sorted(emit.glob(pattern)):
            found[path.relative_to(root).as_posix()] = path
    return found


def compare_goldens(root: Path | None = None, *, db, expected: dict[str, str] | None = None
                    ) -> list[tuple[str, str]]:
    """``(path, problem)`` for every golden that differs (a unified diff), is missing or is stale.

    ``expected`` is :func:`golden_outputs`'s result when the caller already has it.
    """
    root = root or repo_root()
    expected = golden_outputs(root, db=db) if expected is None else expected
    present = existing_goldens(root)
    problems = []
    for rel, text in expected.items():
        path = root / rel
        if rel not in present:
            problems.append((rel, "missing (run python -m tilecheck.emit.golden)"))
            continue
        old = path.read_text(encoding="utf-8")
        if old != text:
            diff = "".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                fromfile=f"{rel} (golden)", tofile=f"{rel} (emitted now)"))
            problems.append((rel, diff))
    for rel in present:
        if rel not in expected:
            problems.append((rel, "stale: no example program or form produces it any more"))
    return problems


def write_goldens(root: Path | None = None, *, db) -> tuple[list[str], list[str]]:
    """Write every golden file (only those whose text changed) and delete stale ones.

    Returns ``(written, removed)`` relative paths.
    """
    root = root or repo_root()
    expected = golden_outputs(root, db=db)
    written, removed = [], []
    for rel, text in expected.items():
        path = root / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(rel)
    for rel, path in existing_goldens(root).items():
        if rel not in expected:
            path.unlink()
            removed.append(rel)
    return written, removed


def main(argv: list[str] | None = None) -> int:
    """``python -m tilecheck.emit.golden [--check] [--root DIR]``: regenerate (or check) the goldens."""
    parser = argparse.ArgumentParser(prog="python -m tilecheck.emit.golden",
                                     description="Regenerate the golden emitted PTX/CUDA files under emit/.")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a golden differs")
    parser.add_argument("--root", default=None, help="checkout root (default: the one holding this tilecheck)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    root = Path(args.root) if args.root else repo_root()
    if not (root / "examples").is_dir():
        sys.stderr.write(f"error: {root} has no examples/ folder; run from a checkout (or pass --root)\n")
        return 2
    db = load_database()
    if args.check:
        problems = compare_goldens(root, db=db)
        for rel, problem in problems:
            sys.stdout.write((problem if problem.startswith("---") else f"{rel}: {problem}") + "\n")
        sys.stdout.write(f"{len(problems)} golden file(s) differ\n" if problems else "goldens are up to date\n")
        return 1 if problems else 0
    written, removed = write_goldens(root, db=db)
    for rel in written:
        sys.stdout.write(f"wrote {rel}\n")
    for rel in removed:
        sys.stdout.write(f"removed {rel}\n")
    total = len(existing_goldens(root))
    sys.stdout.write(f"{len(written)} written, {len(removed)} removed, {total} golden file(s) in {root / 'emit'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
