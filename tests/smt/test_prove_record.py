"""``tilecheck prove --list`` labels each built-in query with the answer recorded for it in
spec/amdgpu/README.md (the table of measured answers), never with a hoped-for one: a query whose
run reached the time limit is listed as unknown. Checked against the table, without running Z3."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tilecheck.cli import main
from tilecheck.smt import prove

ROOT = Path(__file__).resolve().parents[2]
STATUSES = ("proved", "counterexample", "unknown")


def _table() -> dict[str, tuple[str, str]]:
    """``{query name: (status cell, time cell)}`` of the rows of the record's table that start
    with a named query."""
    rows = {}
    for line in (ROOT / prove.RECORD).read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            continue
        m = re.match(r"`([\w.\-]+)`", cells[0])
        if m and m.group(1) in prove.NAMED:
            assert m.group(1) not in rows, f"two rows for {m.group(1)}"
            rows[m.group(1)] = (cells[1], cells[2])
    return rows


def test_every_named_query_has_its_measured_answer_recorded():
    rows = _table()
    assert sorted(rows) == sorted(prove.NAMED), "a named query without a row in " + prove.RECORD
    for name, q in prove.NAMED.items():
        status_cell, time_cell = rows[name]
        status = status_cell.replace("*", "").split()[0].rstrip(":")
        assert status in STATUSES, (name, status_cell)
        assert q.recorded == status, f"{name}: labelled {q.recorded!r}, {prove.RECORD} records {status!r}"
        if status == "unknown":
            limit = re.search(r"at (\d+) s", status_cell)
            assert limit and q.measured == f"{limit.group(1)} s timeout", (name, status_cell, q.measured)
        else:
            assert q.measured == time_cell, (name, time_cell, q.measured)


def test_the_readme_lists_the_recorded_unknowns_as_unknown():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## `prove`"):]
    section = section[:section.index("\n## ", 1)]
    proved_sentence = section[section.index("Proved in"):section.index("Refuted")]
    # the README's "proved" sentence names none of the recorded unknowns' subjects
    for phrase in ("through f32", ".ftz", "fdiv32", "fdiv64"):
        assert phrase not in proved_sentence, phrase
    assert "Unknown at 300 s" in section


def test_list_shows_the_record_and_no_unmeasured_proof(capsys):
    assert main(["prove", "--list", "--json", "-"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["record"] == prove.RECORD
    listed = {q["name"]: q for q in doc["queries"]}
    assert sorted(listed) == sorted(prove.NAMED)
    for name, q in prove.NAMED.items():
        assert listed[name]["recorded"] == q.recorded and listed[name]["measured"] == q.measured
    for name in ("f16.div-via-f32", "ptx.ftz-inputs.f32"):
        assert listed[name]["recorded"] == "unknown"
        block = captured.err[captured.err.index(name + "\n"):]
        assert block.split("\n    recorded: ")[1].startswith("unknown (no answer within 300 s; not a proof)")
