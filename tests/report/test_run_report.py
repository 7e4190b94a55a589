"""``tilecheck verify ... --html FILE``: the report of a run, from the data its ``--json`` writes.

Each run happens once per module (a sampled binary FILE.ptx run, an exhaustive unary one, the main
job on a small target); the tests read the JSON and the HTML it wrote, and load the HTML in
headless Chromium (:mod:`tests.support.browser`)."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.verify import compiled

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
HALF = str(ROOT / "examples" / "cuda" / "half.ptx")
RUNS = {
    "div": [HALF, "--entry", "k_hdiv_f16", "--against", "div.rn.f16", "--cases", "4000"],
    "sqrt": [HALF, "--entry", "k_hsqrt_f16", "--against", "sqrt.rn.f16", "--exhaustive"],
    "main": ["rcp", "--cases", "200"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each run of :data:`RUNS` with ``--json`` and ``--html``: name -> (exit code, JSON, HTML text, path)."""
    out = tmp_path_factory.mktemp("runs")
    done = {}
    for name, argv in RUNS.items():
        js, html = out / f"{name}.json", out / f"{name}.html"
        code = main(["verify", *argv, "--json", str(js), "--html", str(html)])
        done[name] = (code, json.loads(js.read_text()), html.read_text(encoding="utf-8"), html)
    return done


class Figures(HTMLParser):
    """The ``<figure>`` elements of a page: id, data-total, and what their ``<svg>`` holds."""

    def __init__(self):
        super().__init__()
        self.figures: list[dict] = []
        self.current = None
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):  # a self-contained page fetches nothing
            if key in a and re.match(r"(https?:)?//", a[key] or ""):
                self.external.append(a[key])
        if tag == "link" or (tag == "script" and "src" in a):
            self.external.append(tag)
        if tag == "figure":
            self.current = {"id": a.get("id"), "total": a.get("data-total"), "svg": 0, "marks": 0}
            self.figures.append(self.current)
        elif self.current is not None:
            if tag == "svg":
                self.current["svg"] += 1
            elif tag in ("path", "rect", "image", "use"):
                self.current["marks"] += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.current = None


def figures(html: str) -> Figures:
    parser = Figures()
    parser.feed(html)
    return parser


@pytest.mark.parametrize("name", ["div", "sqrt"])
def test_ptx_report_picture_totals_equal_the_json_count(runs, name):
    code, data, html, _ = runs[name]
    assert code == 1 and data["misrounded_count"] > 0  # both kernels misround (the README's findings)
    page = figures(html)
    assert not page.external
    by_id = {f["id"]: f for f in page.figures}
    assert int(by_id["misrounded-map"]["total"]) == data["misrounded_count"] == data["misrounded_map"]["total"]
    assert data["misrounded_map"]["shape"] == ([256, 256] if name == "div" else [256])
    assert f'id="misrounded-count">{data["misrounded_count"]}' in html
    assert data["verdict"] in html and data["headline"]["text"] in html


@pytest.mark.parametrize("name", ["div", "sqrt"])
def test_ptx_report_shows_traces_ranges_and_the_listing(runs, name):
    _, data, html, _ = runs[name]
    assert data["counterexamples"]
    for c in data["counterexamples"]:
        assert c["repro"] in html
        for r in c["register_path"]:
            assert f'<td class="mono">{r["register"]}</td><td class="mono">{r["value"]}</td>' in html
        for ch in c["approximate_choices"]:
            assert f'<td class="mono">{ch["allowed"]}</td>' in html
    for site in data["approximate_sites"]:  # each approximate instruction marked in the listing
        assert f'<tr id="L{site["line"]}" class="approx">' in html
    # the positions of the misrounding choices: the traced re-run of the first misrounded inputs
    pos = data["misround_positions"]
    assert pos["inputs"] == min(compiled.POSITION_TRACE, data["misrounded_count"]) and pos["lanes"] >= pos["inputs"]
    assert set(pos["instructions"][0]["positions"]) <= {"RN-2ulp", "RN-1ulp", "RN", "RN+1ulp", "RN+2ulp"}


def test_listing_marks_an_approximate_instruction_of_a_called_function(tmp_path):
    """examples/cuda/calls.ptx: the sqrt.approx is in the .func the kernel calls, listed too."""
    js, html = tmp_path / "c.json", tmp_path / "c.html"
    argv = [str(ROOT / "examples" / "cuda" / "calls.ptx"), "--entry", "k_hsqrt_call", "--against", "sqrt.rn.f16"]
    assert main(["verify", *argv, "--json", str(js), "--html", str(html)]) == 1
    (site,) = json.loads(js.read_text())["approximate_sites"]
    text = html.read_text(encoding="utf-8")
    assert f'<tr id="L{site["line"]}" class="approx">' in text and 'class="gap"' in text


def test_the_map_counts_every_misrounded_input_past_the_cap(monkeypatch):
    """The map is tallied as the run goes, so its total is the misrounded count even when the
    listed inputs are capped."""
    monkeypatch.setattr(compiled, "MISROUNDED_CAP", 4)
    tally = compiled.Tally()
    ops = [np.arange(1000, dtype=np.uint16), np.full(1000, 0x3C00, dtype=np.uint16)]
    bad = np.zeros(1000, bool)
    bad[::3] = True
    res = compiled.BlockResult(bad, np.zeros(1000, bool), 1000, None, bad.copy(), np.zeros(1000, bool))
    tally.add(ops, res)
    tally.merge(compiled.Tally.from_json(json.loads(json.dumps(tally.to_json()))))  # via a checkpoint
    assert len(tally.inputs) == 4 and tally.misrounded == 2 * bad.sum() == tally.map.sum()
    assert tally.map.reshape(256, 256)[:, 0x3C].sum() == tally.misrounded  # b = 1.0: its high byte
    old = {k: v for k, v in tally.to_json().items() if k not in ("map", "map_lost")}
    assert compiled.Tally.from_json(old).map_lost  # a checkpoint from before maps: said, not drawn


def test_exhaustive_binary_blocks_in_worker_processes_map_every_misrounded_pair():
    """Whole blocks of the exhaustive 16-bit division (one divisor per block), run in worker
    processes and merged: the map's total is the misrounded count, bin for bin the serial run's."""
    from tilecheck.spec.database import load_database

    p = compiled.prepare(HALF, "k_hdiv_f16", "div.rn.f16", db=load_database())
    block = compiled.EXHAUSTIVE_BLOCK
    ranges = [(b * block, (b + 2) * block) for b in (0x3C00, 0x7000, 0xC001)]  # divisors 1, 2^13, -2
    merged = compiled.run_ranges(p, ranges, workers=2, method="fork")
    serial = compiled.Tally()
    for s, e in ranges:
        serial.merge(compiled.run_range(p, s, e))
    assert merged.misrounded > 0 and merged.map.sum() == merged.misrounded
    assert np.array_equal(merged.map, serial.map)
    rows = merged.map.reshape(256, 256)  # [high byte of a, high byte of b]
    assert set(np.flatnonzero(rows.sum(axis=0))) <= {0x3C, 0x70, 0xC0}


def test_main_job_report_lists_every_item(runs):
    code, data, html, _ = runs["main"]
    assert code == 0 and data["items"]
    for item in data["items"]:
        assert f'data-item="{item["name"]}"' in html
    assert data["summary"] in html
    assert not figures(html).external


def test_without_the_extra_html_exits_2_naming_it(monkeypatch, capsys, tmp_path):
    from tilecheck.report import render

    def missing(module):
        raise render.ReportExtraMissing(f"pages and HTML reports need {module}: {render.EXTRA_HINT}")

    monkeypatch.setattr(render, "require", missing)
    for argv in (RUNS["main"], RUNS["sqrt"]):
        assert main(["verify", *argv, "--html", str(tmp_path / "r.html")]) == 2
        assert "tilecheck[report]" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_unwritable_html_is_refused_before_the_run(capsys, tmp_path):
    started = time.monotonic()
    assert main(["verify", *RUNS["sqrt"], "--html", str(tmp_path / "no" / "r.html")]) == 2
    assert "--html" in capsys.readouterr().err and time.monotonic() - started < 5


@pytest.mark.parametrize("name", ["div", "sqrt", "main"])
def test_reports_load_in_chromium(runs, name, tmp_path):
    from selenium.webdriver.common.by import By

    from tests.support.browser import browser, console_errors, open_file

    _, _, html, path = runs[name]
    with browser() as driver:
        open_file(driver, path)
        assert console_errors(driver) == []
        svgs = driver.find_elements(By.CSS_SELECTOR, "figure svg")
        assert len(svgs) == len(figures(html).figures) and (name == "main" or svgs)
        for s in svgs:
            assert s.find_elements(By.CSS_SELECTOR, "path, rect")  # drawn, not an empty element
            assert s.size["width"] > 100 and s.size["height"] > 100
        shot = tmp_path / f"{name}.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000


def test_findings_page_draws_each_misrounding_run(tmp_path, capsys):
    """tools/findings.py --html: the page of the runs it made, from the data verify --json writes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("findings_tool", ROOT / "tools" / "findings.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    page = tmp_path / "findings.html"
    assert tool.main(["--only", "k_hsqrt_f16", "--table", "compiled", "--html", str(page)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    html = page.read_text(encoding="utf-8")
    found = figures(html)
    assert rows and len(found.figures) == len(rows) and not found.external  # every one of them misrounds
    assert all(f["total"] == "15" and f["svg"] == 1 and f["marks"] for f in found.figures)


def test_main_report_shows_a_failing_item_first_with_its_findings(tmp_path):
    from tilecheck.report import run_report
    from tilecheck.spec.database import load_database
    from tilecheck.verify.report import CheckResult, Row, json_data

    rows = [Row("add.rn.f32", "form", [CheckResult("schema", cases=1)]),
            Row("div.rn.f32", "form", [CheckResult("schema", cases=1),
                                       CheckResult("differential", cases=5, mismatches=2,
                                                   details=[f"case {k}: <0x{k:x}>" for k in range(12)]),
                                       CheckResult("ptxas", skipped="no ptxas")])]
    meta = {"seed": 0, "cases": 5, "backend": "model", "targets": ["add", "div"], "vectors": [], "ptxas": None,
            "ulp_reading": "either", "sign_rule": None, "started": 0, "seconds": 1.0}
    html = run_report.write_main_report(tmp_path / "m.html", json_data(rows, meta), load_database()).read_text()
    assert html.index('data-item="div.rn.f32"') < html.index('data-item="add.rn.f32"')
    assert "case 9: &lt;0x9&gt;" in html and "case 10:" not in html and "... 2 more in the JSON" in html
    assert '<span title="ptxas: skipped: no ptxas">p</span>' in html
