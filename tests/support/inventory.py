"""What the spec data itself says the database must hold, read from the raw YAML.

Tests compare the loaded database with these numbers instead of numbers copied into the tests, so
adding a form (one YAML edit) changes both sides together. The raw reading here is independent of
the loader: a group of forms expands to the product of its axes' lengths (the schema has no
exclusions), examples and illegal spellings are the lists in each file.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

SPEC = Path(__file__).resolve().parents[2] / "spec"


def _families(spec: Path = SPEC) -> dict[str, dict]:
    out = {}
    for path in sorted((spec / "ptx").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out[data["name"]] = data
    return out


def ptx_form_counts(spec: Path = SPEC) -> dict[str, int]:
    """Forms per PTX family: the sum over its form groups of the product of the axes' lengths."""
    return {name: sum(math.prod(len(v) for v in group.get("axes", {}).values()) for group in data["forms"])
            for name, data in _families(spec).items()}


def ptx_example_count(spec: Path = SPEC) -> int:
    """Examples listed in the PTX family files."""
    return sum(len(data.get("examples", ())) for data in _families(spec).values())


def ptx_illegal_count(spec: Path = SPEC) -> int:
    """Illegal spellings recorded in the PTX family files."""
    return sum(len(data.get("illegal", ())) for data in _families(spec).values())


def ptx_lenient_spellings(spec: Path = SPEC) -> set[str]:
    """Illegal spellings recorded with ``ptxas_accepts: true`` (ptxas assembles them anyway)."""
    return {ill["spelling"] for data in _families(spec).values() for ill in data.get("illegal", ())
            if ill.get("ptxas_accepts")}
