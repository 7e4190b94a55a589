"""``tilecheck doc``: the reference site built from spec/ -- structure, agreement of the legality
matrix with ``db.verdict`` and ``tilecheck spec show``, agreement of the special-value cells with
``tilecheck eval``, the missing-extra and unwritable-folder errors, and the pages in headless
Chromium (no console error, every internal link resolves, the rendered matrix, a screenshot).

The site is built once per module. Families and cells are sampled with seeded RNGs, never picked
by hand; the build time is printed (``-s``), not asserted.
"""

from __future__ import annotations

import json
import random
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from support.browser import browser, console_errors, open_file
from tilecheck.cli import main
from tilecheck.model import api
from tilecheck.report import render
from tilecheck.report.provenance import spec_digest
from tilecheck.report.site import build_site
from tilecheck.spec.amdgpu import amdgpu_forms

SEED = 20261202


class _Page(HTMLParser):
    """Links, ids, and the attributes, classes and text of data-form cells of one page."""

    def __init__(self):
        super().__init__()
        self.links, self.ids, self.cells = [], set(), []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "td" and "data-form" in a:
            self._cell = dict(a, text="")
            self.cells.append(self._cell)

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(db, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    start = time.perf_counter()
    pages = build_site(db, out)
    sys.stderr.write(f"\nsite: {len(pages)} pages in {time.perf_counter() - start:.1f} s\n")
    return out, pages


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _sampled_families(db, n=3):
    return random.Random(SEED).sample(sorted(db.families), n)


# ---- structure ------------------------------------------------------------------------------

def test_every_family_and_amd_form_has_a_page(db, site):
    out, pages = site
    assert pages[0] == out / "index.html"
    for name in db.families:
        assert (out / "ptx" / f"{name}.html") in pages
    for name in amdgpu_forms(db):
        assert (out / "amd" / f"{name}.html") in pages
    assert len(pages) == len(db.families) + len(amdgpu_forms(db)) + 2  # index, corpus


def test_index_lists_everything_and_its_links_resolve(db, site):
    out, _ = site
    page = parse(out / "index.html")
    for name in db.families:
        assert f"ptx/{name}.html" in page.links
    for name in amdgpu_forms(db):
        assert f"amd/{name}.html" in page.links
    for name in db.formats:
        assert f"format-{name}" in page.ids
    for name in db.targets:
        assert f"target-{name}" in page.ids
    for href in page.links:
        assert (out / href.split("#")[0]).is_file(), href


def test_every_page_states_the_spec_digest_and_ptxas(db, site):
    _, pages = site
    digest = spec_digest(db)
    for path in pages:
        footer = path.read_text(encoding="utf-8").split("<footer>", 1)[1]
        assert digest in footer and "ptxas" in footer, path


def test_legality_cells_agree_with_verdict_and_spec_show(db, site, capsys):
    out, _ = site
    rng = random.Random(SEED + 1)
    for family in _sampled_families(db):
        cells = [c for c in parse(out / "ptx" / f"{family}.html").cells if "data-target" in c]
        forms = {f.name for f in db.families[family].forms}
        assert {c["data-form"] for c in cells} == forms
        assert {"sm_75", "sm_80", "sm_90", "sm_100", "sm_120"} <= {c["data-target"] for c in cells}
        for c in cells:
            legal = db.verdict(c["data-form"], c["data-target"]).legal
            assert c["class"] == ("legal" if legal else "illegal"), c
            if legal:
                v = db.min_version(db.forms[c["data-form"]], c["data-target"])
                assert c["text"].strip() == f"{v[0]}.{v[1]}", c
        # the CLI on a sample of each family's cells (every cell would be thousands of runs for cvt)
        for c in rng.sample(cells, min(25, len(cells))):
            code, stdout, err = _cli(capsys, "spec", "show", c["data-form"], "--target", c["data-target"], "--json", "-")
            record = json.loads(stdout)
            assert record["legal"] == (c["class"] == "legal") and code == (0 if record["legal"] else 1), (c, err)
            if record["legal"]:
                assert record["min_version"] == c["text"].strip()


def _value_cells(out: Path, db) -> list[dict]:
    cells = []
    for family in sorted(db.families):
        cells += [c for c in parse(out / "ptx" / f"{family}.html").cells if "data-operands" in c]
    return cells


def test_special_value_cells_agree_with_eval(db, site, capsys):
    out, _ = site
    cells = _value_cells(out, db)
    exact = [c for c in cells if "data-bits" in c and db.forms[c["data-form"]].kind == "exact"]
    approx = [c for c in cells if "data-lo" in c]
    function = [c for c in cells if "data-bits" in c and db.forms[c["data-form"]].kind == "function"]
    assert exact and approx and function
    rng = random.Random(SEED + 2)
    for c in rng.sample(exact, 40) + rng.sample(approx, 20):
        code, stdout, err = _cli(capsys, "eval", c["data-form"], *c["data-operands"].split(), "--json", "-")
        assert code == 0, err
        got = json.loads(stdout)["result"]["hex"]
        assert got == c.get("data-bits", c.get("data-reference")), c
        if "data-lo" in c and c["data-lo"] != c["data-hi"] and "any" not in c["text"]:
            ops = [int(x, 16) for x in c["data-operands"].split()]
            assert api.allowed(c["data-form"], int(c["data-lo"], 16), *ops)
            assert api.allowed(c["data-form"], int(c["data-hi"], 16), *ops)
    # function forms (cvt, setp, min, ...): `eval` refuses them, the model's evaluate is the reference
    for c in rng.sample(function, 30):
        form = db.forms[c["data-form"]]
        value = api.evaluate(form, *(int(x, 16) for x in c["data-operands"].split()))
        dst = form.destinations[0]
        want = ("true" if value else "false") if dst.ptx_type == "pred" else f"0x{int(value):0{dst.container_bits // 4}x}"
        assert c["data-bits"] == want, c


def test_tile_pages_carry_the_emitted_example(site):
    out, _ = site
    for family in ("div", "rcp", "sqrt"):
        text = (out / "ptx" / f"{family}.html").read_text(encoding="utf-8")
        assert "T.cuda.tile.apply" in text and "TC101" in text and "TC205" in text
        assert ".target sm_90" in text and "div.rn.f32 %f1, %f1, 0f40800000;" in text


# ---- the command ----------------------------------------------------------------------------

def test_doc_command_builds_and_prints_the_index(tmp_path, capsys, db):
    code, out, err = _cli(capsys, "doc", "--out", str(tmp_path / "site"))
    assert code == 0, err
    assert str(tmp_path / "site" / "index.html") in out
    assert f"{len(db.families) + len(amdgpu_forms(db)) + 2} pages" in out


@pytest.mark.parametrize("module", ["jinja2", "matplotlib"])
def test_doc_without_the_extra_exits_2_naming_it(tmp_path, capsys, monkeypatch, module):
    if module == "jinja2":
        monkeypatch.setattr(render, "_ENV", None)  # a fresh environment must import jinja2
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError
    code, out, err = _cli(capsys, "doc", "--out", str(tmp_path / "site"))
    assert code == 2
    assert module in err and "pip install 'tilecheck[report]'" in err
    assert not (tmp_path / "site").exists()


def test_pages_show_the_model_agreeing_with_the_spec_examples_and_vectors(site):
    out, pages = site
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert '<span class="verdict-bad">no</span>' not in text, path
    div = (out / "amd" / "v_div_scale_f64.html").read_text(encoding="utf-8")
    assert '<span class="verdict-ok">yes</span>' in div and "amd-body" in div


@pytest.mark.parametrize("make", ["file", "below-a-file"])
def test_doc_unwritable_out_is_a_located_usage_error(tmp_path, capsys, make):
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    target = blocker if make == "file" else blocker / "site"
    code, out, err = _cli(capsys, "doc", "--out", str(target))
    assert code == 2
    assert f"--out '{target}': " in err, err
    assert ("is a file" if make == "file" else "cannot create the folder") in err


# ---- in a browser ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def driver():
    with browser() as d:
        yield d


_HREFS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"


def test_every_page_loads_without_console_errors_and_links_resolve(site, driver):
    _, pages = site
    ids: dict[Path, set] = {}
    for path in pages:
        open_file(driver, path)
        assert driver.execute_script("return document.readyState") == "complete"
        assert console_errors(driver) == [], path
        for href in driver.execute_script(_HREFS):
            url = urlparse(href)
            assert url.scheme == "file", (path, href)  # nothing leaves the site
            target = Path(unquote(url.path))
            assert target.is_file(), (path, href)
            if url.fragment:
                if target not in ids:
                    ids[target] = parse(target).ids
                assert unquote(url.fragment) in ids[target], (path, href)


def test_rendered_legality_matrix_matches_verdict(db, site, driver):
    out, _ = site
    family = random.Random(SEED + 3).choice(sorted(db.families))
    open_file(driver, out / "ptx" / f"{family}.html")
    cells = driver.execute_script(
        "return Array.from(document.querySelectorAll('table.legality td[data-form]'))"
        ".map(td => [td.dataset.form, td.dataset.target, td.className, td.textContent.trim()]);")
    assert len(cells) == len(db.families[family].forms) * len({c[1] for c in cells})
    for form, target, cls, text in cells:
        assert cls == ("legal" if db.verdict(form, target).legal else "illegal"), (form, target)


def test_screenshot_of_the_div_page(site, driver, tmp_path):
    out, _ = site
    open_file(driver, out / "ptx" / "div.html")
    shot = tmp_path / "div.png"
    assert driver.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
