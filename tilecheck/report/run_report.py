"""``tilecheck verify ... --html FILE``: one self-contained HTML file for a run, built from the same
data dict its ``--json`` writes (so the two cannot disagree), rendered by ``report_*.html.j2``.

* :func:`write_ptx_report`: a ``verify FILE.ptx`` run -- verdict and settings, the entry's PTX
  listing with its approximate instructions marked (and their ``.loc`` lines), every kept
  counterexample with its register trace and each approximate result's allowed range, and the
  pictures of :mod:`tilecheck.report.charts`.
* :func:`write_main_report`: the main job -- settings, totals and every item with its checks.
* :func:`write_findings_report`: ``tools/findings.py --html`` -- one section per corpus run.
"""

from __future__ import annotations

from pathlib import Path

from tilecheck.report import charts
from tilecheck.report.provenance import built_from
from tilecheck.report.render import write_page
from tilecheck.spec.database import load_database
from tilecheck.verify.report import CHECK_LETTERS

COUNTEREXAMPLES_SHOWN = 20
DETAILS_SHOWN = 10  # per check of a failing item, as the table on the terminal


def write_ptx_report(path, data: dict, prepared=None) -> Path:
    """Write the report of a compiled-PTX run (``data``: :func:`verify_ptx.to_json`)."""
    db = prepared.db if prepared is not None else load_database()
    return write_page(Path(path), "report_ptx.html.j2", built=built_from(db), **ptx_context(data, prepared))


def ptx_context(data: dict, prepared=None) -> dict:
    """The template context of a compiled-PTX report."""
    figures = [f for f in [map_figure(data)] if f is not None]
    pos = data.get("misround_positions")
    if pos and pos["instructions"]:
        picture, total = charts.position_bars(pos)
        figures.append({"id": "positions", "svg": picture, "total": total,
                        "caption": f"Where in each approximate instruction's allowed range the lanes that misround "
                                   f"chose their result: the first {pos['inputs']} misrounded inputs run again with "
                                   f"a trace (the run itself records no choice per lane)."})
    return {"d": data, "how": _how(data), "listing": listing(data, prepared), "figures": figures,
            "counterexamples": data["counterexamples"][:COUNTEREXAMPLES_SHOWN],
            "more_counterexamples": max(0, len(data["counterexamples"]) - COUNTEREXAMPLES_SHOWN),
            "verdict_ok": data["verdict"] in ("verified", "no-counterexample")}


def _how(data: dict) -> str:
    """Exhaustive or sampled, in words."""
    sampling = data["sampling"]
    if data["exhaustive"]:
        return "exhaustive"
    if "exhaustive" in sampling:
        return "the first inputs of the exhaustive enumeration"
    if "given" in sampling:
        return "one given input"
    return "sampled: " + " + ".join(f"{k} {v}" for k, v in sampling.items())


def listing(data: dict, prepared=None) -> list[dict]:
    """The entry's PTX lines ``{"line", "text", "site"}`` (``site``: the approximate instruction
    on that line, with its source, or None), from its header to its closing brace, and the
    functions it calls that hold approximate instructions (a row ``{"gap": True}`` between)."""
    fn = prepared.plan.function if prepared is not None else None
    if fn is None or not fn.line:
        return []
    try:
        lines = Path(data["file"]).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    sites = {s["line"]: s for s in data.get("approximate_sites", [])}
    body = [getattr(i, "line", 0) for i in fn.body if getattr(i, "line", 0)]
    spans = [(fn.line, _closing(lines, max(body, default=fn.line)))]
    for line in sites:  # an approximate instruction of a called .func: its whole function too
        if not any(a <= line <= b for a, b in spans):
            spans.append((_header(lines, line), _closing(lines, line)))
    rows: list[dict] = []
    for a, b in sorted(spans):
        if rows and a > rows[-1]["line"] + 1:
            rows.append({"gap": True})
        start = rows[-1]["line"] + 1 if rows and not rows[-1].get("gap") else a
        rows.extend({"line": k, "text": lines[k - 1], "site": sites.get(k), "gap": False}
                    for k in range(max(a, start), b + 1))
    return rows


def _closing(lines: list, line: int) -> int:
    """The line of the brace that closes the function holding ``line`` (a line of its own)."""
    while line < len(lines) and not lines[line - 1].startswith("}"):
        line += 1
    return min(line, len(lines))


def _header(lines: list, line: int) -> int:
    """The first line of the ``.func``/``.entry`` header above ``line``."""
    while line > 1 and not any(w in lines[line - 1].split() for w in (".func", ".entry")):
        line -= 1
    return line


def map_figure(data: dict) -> dict | None:
    """The misrounded picture of a compiled-PTX run's data (None without a map)."""
    m = data.get("misrounded_map")
    if m is None:
        return None
    if len(m["shape"]) == 2:
        picture, total = charts.binary_map(m, names=("a", "b"))
        caption = ("Misrounded inputs by the exponent fields of the first two operands (every misrounded "
                   "input of the run, counted as it ran).")
    else:
        picture, total = charts.unary_histogram(m)
        caption = "Misrounded inputs along the input axis (every misrounded input of the run)."
    return {"id": "misrounded-map", "svg": picture, "total": total, "caption": caption}


def write_findings_report(path, runs: list, db) -> Path:
    """Write ``tools/findings.py --html``: one section per run ``{"function", "data"}`` (``data``:
    :func:`verify_ptx.to_json`, or None for a kernel tilecheck refused, with ``"refused"``), its
    verdict, its picture where inputs misround, its first counterexample's repro."""
    sections = []
    for k, r in enumerate(runs):
        d = r.get("data")
        fig = map_figure(d) if d is not None and d["misrounded_count"] else None
        if fig is not None:
            fig["id"] = f"map-{k}"
        sections.append(dict(r, anchor=f"run-{k}", figure=fig, how=_how(d) if d is not None else "",
                             verdict_ok=d is not None and d["verdict"] in ("verified", "no-counterexample")))
    return write_page(Path(path), "report_findings.html.j2", built=built_from(db), runs=sections)


def write_main_report(path, data: dict, db) -> Path:
    """Write the report of the main job (``data``: :func:`tilecheck.verify.report.json_data`)."""
    return write_page(Path(path), "report_main.html.j2", built=built_from(db), **main_context(data))


def main_context(data: dict) -> dict:
    """The template context of a main-job report: failing items first, each with its checks."""
    items = [dict(item, shown_checks=[dict(c, letter=CHECK_LETTERS.get(c["name"].split("(", 1)[0], ""),
                                            shown=c["details"][:DETAILS_SHOWN],
                                            more=max(0, len(c["details"]) - DETAILS_SHOWN))
                                       for c in item["checks"]])
             for item in sorted(data["items"], key=lambda r: r["ok"])]  # stable: the run's order in each group
    return {"d": data, "meta": data["meta"], "totals": data["totals"], "items": items,
            "verdict_ok": data["totals"]["failed"] == 0}
