"""Verification results: one row per form, program or sequence; table and JSON output."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class CheckResult:
    """Outcome of one check on one item.

    ``cases`` counts the inputs compared, ``mismatches`` the cases whose result disagreed with the
    reference, ``failures`` the checks that could not pass for another reason (an example that does
    not hold, ptxas rejecting emitted code, a crash). ``details`` are human-readable findings.
    ``skipped`` is None for a check that ran, else the reason it did not (e.g. no ptxas), which is
    not a failure.
    """

    name: str
    cases: int = 0
    mismatches: int = 0
    failures: int = 0
    details: list[str] = field(default_factory=list)
    skipped: str | None = None


@dataclass
class Row:
    """One line of the verify table."""

    name: str
    kind: str  # form | program | sequence | amdgpu-form | vectors
    checks: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def cases(self) -> int:
        return sum(c.cases for c in self.checks)

    @property
    def mismatches(self) -> int:
        return sum(c.mismatches for c in self.checks)

    @property
    def failures(self) -> int:
        return sum(c.failures for c in self.checks)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and self.failures == 0

    def to_json(self) -> dict:
        data = {"name": self.name, "kind": self.kind, "ok": self.ok, "cases": self.cases,
                "mismatches": self.mismatches, "failures": self.failures, "seconds": round(self.seconds, 4),
                "checks": [asdict(c) for c in self.checks]}
        return data


def summary_line(rows: list[Row]) -> str:
    """The last line of ``tilecheck verify``: ``N cases, M mismatches, F failures``."""
    cases = sum(r.cases for r in rows)
    mism = sum(r.mismatches for r in rows)
    fail = sum(r.failures for r in rows)
    return f"{cases} cases, {mism} mismatches, {fail} failures"


CHECK_LETTERS = {"schema": "S", "legality": "L", "examples": "E", "contract": "C", "oracle": "O", "emission": "M",
                 "ptxas": "P", "differential": "D", "encoding": "N"}
"""One-letter names of the per-form checks in the table (lower case: skipped)."""


def checks_legend() -> str:
    """The line explaining the one-letter check names of form rows."""
    names = {"S": "schema", "L": "legality (spec vs ptxas)", "E": "examples", "C": "contract",
             "O": "oracle (the model vs an independent reading of the ISA text or AMD manual)", "M": "emission",
             "P": "ptxas", "D": "differential", "N": "encoding (llvm-mc)"}
    return "checks: " + ", ".join(f"{k} {v}" for k, v in names.items()) + "; lower case = skipped (reason in --json)"


def _checks_text(row: Row) -> str:
    if row.kind == "vectors":
        forms = [c for c in row.checks if c.name not in ("header", "cases")]
        return f"{len(forms)} form(s)"
    letters = []
    for c in row.checks:
        base = c.name.split("(", 1)[0]
        if base not in CHECK_LETTERS:
            return ",".join(c.name + ("(skipped)" if c.skipped is not None else "") for c in row.checks)
        letter = CHECK_LETTERS[base]
        letters.append(letter.lower() if c.skipped is not None else letter)
    return "".join(letters)


def format_table(rows: list[Row], width: int = 0) -> list[str]:
    """Fixed-width table lines (header, rule, one line per row): item, checks run, cases,
    mismatches, failures, time. ``width`` fixes the item column (for streamed rows). Form rows
    name their checks by letter (:func:`checks_legend`)."""
    width = width or max([len(r.name) for r in rows] + [4])
    head = f"{'item':<{width}}  {'checks':<24} {'cases':>9} {'mism':>5} {'fail':>5} {'time':>7}"
    lines = [head, "-" * len(head)]
    for r in rows:
        ran = _checks_text(r)
        status = "" if r.ok else "  <-- FAILED"
        lines.append(f"{r.name:<{width}}  {ran:<24} {r.cases:>9} {r.mismatches:>5} {r.failures:>5} "
                     f"{r.seconds:>6.2f}s{status}")
    return lines


def plural(n: int, noun: str) -> str:
    """``1 item``, ``2 items``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


KIND_NOUNS = {"form": "PTX form", "program": "program", "sequence": "sequence", "amdgpu-form": "AMD form",
              "vectors": "vector file"}


def kind_counts(rows: list[Row]) -> dict[str, int]:
    """How many rows of each kind, in first-seen order."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.kind] = counts.get(r.kind, 0) + 1
    return counts


def kinds_text(rows: list[Row]) -> str:
    """``2288 PTX forms, 13 AMD forms, 3 sequences``: the items by kind, for the summary."""
    return ", ".join(plural(n, KIND_NOUNS.get(k, k)) for k, n in kind_counts(rows).items())


def totals(rows: list[Row]) -> dict:
    """The summary as numbers: items, failed items, cases, mismatches, failures, items by kind."""
    return {"items": len(rows), "failed": sum(1 for r in rows if not r.ok), "cases": sum(r.cases for r in rows),
            "mismatches": sum(r.mismatches for r in rows), "failures": sum(r.failures for r in rows),
            "kinds": kind_counts(rows)}


def json_data(rows: list[Row], meta: dict) -> dict:
    """The JSON report: metadata, the totals as numbers, the summary line, one entry per item."""
    return {"meta": meta, "totals": totals(rows), "summary": summary_line(rows), "items": [r.to_json() for r in rows]}
