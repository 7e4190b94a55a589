"""The computed parts of an AMD instruction page: the spec's vectors with the model's results per
semantics variant, and a special-value table per variant computed by the model at build time."""

from __future__ import annotations

import numpy as np
import yaml

from tilecheck.amdgpu.instructions import evaluate
from tilecheck.report.site_tables import special_values

# Which sources take the row's value; the others are 1.0 (lane bits false, ints INT_FIXED). v_div_scale
# is called with S0 equal to S1 (the denominator call), so the row value goes to both.
ROW_SOURCES = {"v_div_scale": ("S0", "S1")}
# int sources of the table: v_cmp_class tests LLVM's +-0/+inf mask, v_ldexp scales by 2^1
INT_FIXED = {"v_cmp_class": 0x260}


def _hex(fmt, bits) -> str:
    return fmt.hex(int(bits))


def _value(form, name: str, value) -> str:
    """Text of one destination or operand value: bits and decimal for floats, true/false for lane bits."""
    op = next(o for o in form.operands if o.name == name)
    if op.kind == "lane-bit":
        return "true" if bool(value) else "false"
    if op.kind == "int":  # a register pattern of form.int_bits(name) bits, shown with its signed value
        bits = form.int_bits(name)
        v = int(value) & ((1 << bits) - 1)
        return f"{v:#x} ({v - (1 << bits) if v >> (bits - 1) else v})"
    fmt = form.operand_format(name)  # mixed-format forms (v_cvt_f32_f16: D is f32)
    return f"{_hex(fmt, value)} ({fmt.describe(int(value))[0]})"


def vectors(form, family) -> list[dict]:
    """The family's vectors of ``form``, each with the model's result for every variant it names."""
    out = []
    for v in family.vectors:
        if v.form != form.name:
            continue
        operands = dict(v.operands)
        expected = dict(v.results)
        for variant in v.variants:
            row = {"variant": variant, "source": v.source, "mode": ", ".join(f"{k}={x}" for k, x in v.mode),
                   "operands": ", ".join(f"{k} = {_value(form, k, x)}" for k, x in operands.items()),
                   "expected": ", ".join(f"{k} = {_value(form, k, x)}" for k, x in expected.items())}
            if form.variant(variant).program is None:
                row.update(model="a contract (many results allowed)", agrees=None)
            else:
                got = evaluate(form, variant, dict(v.mode) or None, **operands)
                row["model"] = ", ".join(f"{k} = {_value(form, k, got[k][()])}" for k in expected)
                row["agrees"] = all(int(got[k][()]) == int(x) for k, x in expected.items())
            out.append(row)
    return out


def value_table(form) -> dict | None:
    """Rows of special values for the row sources (others 1.0, lane bits false), one column per
    semantics variant with a body; None when every variant is a contract (v_rcp)."""
    variants = [v for v in form.variants.values() if v.program is not None]
    if not variants:
        return None
    fmt = form.input_format
    rows_in = special_values(fmt)
    row_sources = ROW_SOURCES.get(form.family, ("S0",))
    one = fmt.power_bits(0)
    n = len(rows_in)
    operands = {}
    for o in form.sources:
        if o.kind == "lane-bit":
            operands[o.name] = np.zeros(n, dtype=bool)
        elif o.kind == "int":
            operands[o.name] = np.full(n, INT_FIXED.get(form.family, 1), dtype=np.uint64)
        elif o.name in row_sources:
            operands[o.name] = np.array([b for _, b in rows_in], dtype=np.uint64)
        else:
            operands[o.name] = np.full(n, one, dtype=np.uint64)
    results = {v.name: evaluate(form, v.name, None, **operands) for v in variants}
    dests = [o.name for o in form.destinations]
    rows = []
    for i, (label, bits) in enumerate(rows_in):
        cells = []
        for v in variants:
            got = results[v.name]
            cells.append({"variant": v.name, "results": [_value(form, d, got[d][i]) for d in dests]})
        differ = len({tuple(c["results"]) for c in cells}) > 1
        rows.append({"label": label, "bits": _hex(fmt, bits), "cells": cells, "differ": differ})
    fixed = [o.name for o in form.sources if o.name not in row_sources]
    fixed_text = ", ".join(f"{name} = {_value(form, name, INT_FIXED.get(form.family, 1))}"
                           if form.operand_format(name) is None and next(o for o in form.sources if o.name == name).kind == "int"
                           else f"{name} = {'false' if form.operand_format(name) is None else '1.0'}" for name in fixed)
    return {"row_sources": row_sources, "fixed": fixed, "fixed_text": fixed_text, "variants": [v.name for v in variants],
            "dests": dests, "rows": rows}


def encodings(form, family) -> list:
    """The family's encodings whose assembler line is this form (``v_rcp_f64_e32`` counts)."""
    return [e for e in family.encodings if e.asm.split(None, 1)[0] in (form.name, form.name + "_e32", form.name + "_e64")]


def bodies(db, family) -> dict[str, str]:
    """variant name -> its semantics body as written in the spec file (the compiled program keeps
    no source text)."""
    data = yaml.safe_load((db.root / "amdgpu" / f"{family.name}.yaml").read_text(encoding="utf-8"))
    return {name: v.get("body", "") for name, v in data.get("semantics", {}).items() if isinstance(v, dict)}


def related(db, form) -> dict:
    """The other forms of the family and the sequences (spec/sequences) whose steps use ``form``,
    with their position in the sequence, and the targets its encodings were assembled for."""
    family = db.extras["amdgpu"]["families"][form.family]
    uses = []
    for seq in db.extras.get("sequences", {}).values():
        steps = [i + 1 for i, s in enumerate(seq.steps) if s.op == form.name]
        if steps:
            uses.append({"name": seq.name, "summary": seq.summary, "steps": steps, "count": len(seq.steps)})
    return {"siblings": [f.name for f in family.forms if f.name != form.name], "sequences": uses,
            "targets": sorted({e.mcpu for e in encodings(form, family)})}
