"""The program corpus: every illegal program yields exactly its expected diagnostics; every legal
program (and every example) checks clean.

Header format of ``tests/programs/illegal/*.py`` (comment lines before the code)::

    # <what the program breaks, in words>
    # target: sm_100                                  (optional; default: the database's)
    # expect: TC204 line 13 operand 2 axis 0          (one line per expected diagnostic)
    # expect: TC501 line 13                           (no operand: the diagnostic has none)

A diagnostic matches an ``expect`` line when code and line are equal, its operand equals the
given one (None when the line gives none), and its axis equals the given one when one is given.
The expected and found diagnostics must match one to one (a multiset), nothing more.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tilecheck.tile.codes import CODES
from tilecheck.tile.loader import load_programs

ROOT = Path(__file__).resolve().parents[2]
ILLEGAL = sorted((ROOT / "tests" / "programs" / "illegal").glob("*.py"))
LEGAL = sorted((ROOT / "tests" / "programs" / "legal").glob("*.py"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

_EXPECT = re.compile(r"^# expect: (TC\d{3}) line (\d+)(?: operand (\d+))?(?: axis (\d+))?\s*$")
_TARGET = re.compile(r"^# target: (sm_\d+)\s*$")


def parse_header(path: Path) -> tuple[list[tuple], str | None]:
    """The ``expect`` tuples (code, line, operand, axis) and the target of a corpus file."""
    expects, target = [], None
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.startswith("#"):
            break
        if text.startswith("# expect:"):
            match = _EXPECT.match(text)
            assert match, f"{path.name}: malformed header line {text!r}"
            code, line, operand, axis = match.groups()
            expects.append((code, int(line), None if operand is None else int(operand),
                            None if axis is None else int(axis)))
        elif text.startswith("# target:"):
            match = _TARGET.match(text)
            assert match, f"{path.name}: malformed header line {text!r}"
            target = match.group(1)
    return expects, target


def found_diagnostics(path: Path, target: str | None, db) -> list:
    """Every diagnostic of every program in the file."""
    diagnostics = []
    for program in load_programs(path):
        diagnostics.extend(program.check(target=target, db=db))
    return diagnostics


def _matches(expect: tuple, diag) -> bool:
    code, line, operand, axis = expect
    return (diag.code == code and diag.line == line and diag.operand == operand
            and (axis is None or diag.axis == axis))


def test_corpus_size_and_coverage():
    """Guard the guard: at least 40 illegal programs, and every documented code is exercised."""
    assert len(ILLEGAL) >= 40
    assert len(LEGAL) >= 8
    assert len(EXAMPLES) >= 6
    covered = {e[0] for path in ILLEGAL for e in parse_header(path)[0]}
    assert covered == set(CODES), f"codes without an illegal program: {sorted(set(CODES) - covered)}"


@pytest.mark.parametrize("path", ILLEGAL, ids=lambda p: p.stem)
def test_illegal_program(path: Path, ptx_db):
    expects, target = parse_header(path)
    assert expects, f"{path.name} states no expected diagnostic"
    diagnostics = found_diagnostics(path, target, ptx_db)
    unmatched = list(diagnostics)
    missing = []
    for expect in expects:
        hit = next((d for d in unmatched if _matches(expect, d)), None)
        if hit is None:
            missing.append(expect)
        else:
            unmatched.remove(hit)
    shown = "\n".join(str(d) for d in diagnostics)
    assert not missing and not unmatched, (
        f"{path.name}: missing {missing}, unexpected {[(d.code, d.line, d.operand, d.axis) for d in unmatched]}\n{shown}")
    for diag in diagnostics:
        assert diag.location is not None and Path(diag.location.path).resolve() == path.resolve()
        assert diag.severity == "error"


@pytest.mark.parametrize("path", LEGAL + EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_legal_program(path: Path, ptx_db):
    expects, target = parse_header(path)
    assert not expects, f"{path.name} is a legal program and must not expect diagnostics"
    diagnostics = found_diagnostics(path, target, ptx_db)
    assert diagnostics == [], "\n".join(str(d) for d in diagnostics)


def test_each_illegal_program_states_its_condition():
    """Every corpus file starts with a description line and names its expected codes in the header."""
    for path in ILLEGAL:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# ") and not first.startswith("# expect:"), path.name


def test_corpus_header_counts_are_distinct_conditions():
    """The corpus is not padded: no two illegal programs expect exactly the same codes and source."""
    bodies = Counter(path.read_text(encoding="utf-8").split("\n\n", 1)[1] for path in ILLEGAL)
    assert max(bodies.values()) == 1
