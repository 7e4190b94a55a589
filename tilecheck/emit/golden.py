"""Golden emitted outputs under the top-level ``emit/`` folder of a checkout.

* ``emit/programs/<example>.<target>.ptx`` and ``.cu`` -- every program file in ``examples/``
  (all its programs in one module), for each of :data:`GOLDEN_TARGETS` on which it is legal;
* ``emit/forms/<target>/<form>.ptx`` -- the single-instruction kernel of every form legal on
  that target (:func:`tilecheck.emit.single_instruction_kernel`, unpredicated).

Regenerate with ``python -m tilecheck.emit.golden`` (``--check`` compares without writing and
exits 1 on a difference). ``tests/golden`` compares fresh emission with the files, so an emitter
change shows up in review as a diff of these files.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

GOLDEN_TARGETS = ("sm_80", "sm_90", "sm_100")


def repo_root() -> Path:
    """The checkout holding ``tilecheck/`` (the goldens and examples live next to it)."""
    return Path(__file__).resolve().parents[2]


def example_files(root: Path) -> list[Path]:
    """The example program files, sorted."""
    return sorted((root / "examples").glob("*.py"))


def golden_outputs(root: Path | None = None, db=None) -> dict[str, str]:
    """Every golden file's expected text, keyed by its path relative to ``root`` (posix)."""
    from tilecheck.emit import emit_programs, single_instruction_kernel
    from tilecheck.spec.database import load_database
    from tilecheck.tile.loader import load_programs

    root = root or repo_root()
    db = db or load_database()
    out: dict[str, str] = {}
    for path in example_files(root):
        programs = load_programs(path)
        for target in GOLDEN_TARGETS:
            if any(d.severity == "error" for p in programs for d in p.check(target=target, db=db)):
                continue  # e.g. an sm_100-only form: no golden for older targets
            for fmt, ext in (("ptx", "ptx"), ("cuda", "cu")):
                out[f"emit/programs/{path.stem}.{target}.{ext}"] = emit_programs(programs, target, fmt, db=db)
    for target in GOLDEN_TARGETS:
        for form in db.kernel_forms():
            if db.verdict(form.name, target).legal:
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


def compare_goldens(root: Path | None = None, db=None, expected: dict[str, str] | None = None
                    ) -> list[tuple[str, str]]:
    """``(path, problem)`` for every golden that differs (a unified diff), is missing or is stale.

    ``expected`` is :func:`golden_outputs`'s result when the caller already has it.
    """
    root = root or repo_root()
    expected = golden_outputs(root, db) if expected is None else expected
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


def write_goldens(root: Path | None = None, db=None) -> tuple[list[str], list[str]]:
    """Write every golden file (only those whose text changed) and delete stale ones.

    Returns ``(written, removed)`` relative paths.
    """
    root = root or repo_root()
    expected = golden_outputs(root, db)
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
    """``python -m tilecheck.emit.golden [--check] [--root DIR]`` (see the module docstring)."""
    from tilecheck.commands.emit import run_golden

    return run_golden(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
