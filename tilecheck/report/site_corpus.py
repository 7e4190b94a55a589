"""The compiled-code corpus on the pages: which kernels of ``examples/cuda`` and ``examples/triton``
use a form, their manifest rows, and the verdicts of the README's findings tables.

A kernel uses a form when one of its instruction lines has an opcode token that the spec database
resolves to the form (qualifier order is free, as for ptxas). Verdicts are read from the README
tables between the ``<!-- findings:begin -->`` / ``<!-- triton-findings:begin -->`` markers: a
CUDA row is matched to its manifest entry by function and documented result, Triton rows by order
(one row per entry and reference, as ``tools/findings.py`` writes them); rows that match nothing
are left out and the corpus page says how many entries have no verdict.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

CORPORA = ("cuda", "triton")
_KERNEL = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_GUARD = re.compile(r"^@!?%\w+\s+")


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def anchor(corpus: str, file: str, entry: str) -> str:
    """The id of a manifest row on the corpus page."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{corpus}-{Path(file).stem}-{entry}")


def kernel_forms(db, path: Path) -> dict[str, set[str]]:
    """kernel name -> the form names its instructions denote, for one PTX file."""
    kernels: dict[str, set[str]] = {}
    current = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _KERNEL.match(line)
        if m:
            current = m.group(2)
            kernels.setdefault(current, set())
            continue
        # inline asm wraps instructions in braces: "{  cvt.f32.f16 %f5, %rs5;}"
        text = line.split("//", 1)[0].strip().lstrip("{").rstrip("}").strip()
        if current is None or not text or text[0] == "." or text.endswith(":"):
            continue
        token = _GUARD.sub("", text).split(None, 1)[0].rstrip(";")
        if "." not in token:
            continue
        form = db.resolve(token)
        if form is not None:
            kernels[current].add(form.name)
    return kernels


def _table(readme: str, name: str) -> list[list[str]]:
    """The body rows (cells stripped) of the markdown table between the ``name`` markers."""
    begin, end = _markers(name)
    if begin not in readme or end not in readme:
        return []
    body = readme.split(begin, 1)[1].split(end, 1)[0]
    rows = [line.strip().strip("|").split(" | ") for line in body.splitlines() if line.startswith("|")]
    return [[c.strip() for c in r] for r in rows[2:]]  # header and rule


def _verdict(cell: str) -> tuple[str, bool]:
    """(verdict text without markdown emphasis, whether it reports a problem)."""
    return cell.replace("**", ""), "**" in cell


def load_corpus(db, repo: Path) -> list[dict]:
    """Every manifest entry of both corpora with its kernel's forms, anchor and verdicts (a list of
    ``{"against", "verdict", "bad"}``; empty when the README has no row for it)."""
    readme = (repo / "README.md").read_text(encoding="utf-8") if (repo / "README.md").exists() else ""
    entries = []
    for corpus in CORPORA:
        manifest = repo / "examples" / corpus / "manifest.yaml"
        if not manifest.exists():
            continue
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        forms_of: dict[str, dict] = {}
        for e in data["entries"]:
            path = repo / e["file"]
            if e["file"] not in forms_of:
                forms_of[e["file"]] = kernel_forms(db, path) if path.exists() else {}
            against = e["against"] if isinstance(e["against"], list) else [e["against"]]
            entries.append({"corpus": corpus, "file": e["file"], "entry": e["entry"],
                            "function": e.get("function") or e.get("source", ""), "against": against,
                            "claim": e.get("claim") or e.get("documented", ""),
                            "forms": sorted(forms_of[e["file"]].get(e["entry"], ())),
                            "anchor": anchor(corpus, e["file"], e["entry"]), "verdicts": []})
    seen: dict[str, int] = {}
    for e in entries:  # one kernel listed twice (two claims) keeps two distinct rows
        n = seen.get(e["anchor"], 0)
        seen[e["anchor"]] = n + 1
        if n:
            e["anchor"] += f"-{n + 1}"
    _attach_verdicts(entries, readme)
    return entries


def _attach_verdicts(entries: list[dict], readme: str) -> None:
    cuda = [e for e in entries if e["corpus"] == "cuda"]
    by_key = {}
    for e in cuda:
        for ref in e["against"]:
            by_key.setdefault((e["function"], ref), e)
    for row in _table(readme, "findings"):
        if len(row) >= 5 and (row[0], row[1]) in by_key:
            text, bad = _verdict(row[4])
            by_key[(row[0], row[1])]["verdicts"].append({"against": row[1], "verdict": text, "bad": bad})
    triton = [(e, ref) for e in entries if e["corpus"] == "triton" for ref in e["against"]]
    rows = _table(readme, "triton-findings")
    if len(rows) == len(triton) and all(len(r) >= 5 and r[1] == ref for r, (_, ref) in zip(rows, triton)):
        for row, (e, ref) in zip(rows, triton):
            text, bad = _verdict(row[4])
            e["verdicts"].append({"against": ref, "verdict": text, "bad": bad})


def users(corpus: list[dict]) -> dict[str, list[dict]]:
    """form name -> the corpus entries whose kernel uses it."""
    out: dict[str, list[dict]] = {}
    for e in corpus:
        for name in e["forms"]:
            out.setdefault(name, []).append(e)
    return out
