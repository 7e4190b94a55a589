"""``tilecheck verify --vectors FILE``: check every recorded case of a vector file against the model.

Each line's result is judged by :func:`tilecheck.allowed` (bit-exact for exact forms with NaNs per
the form's policy, the contract for approximate ones). Every disagreement is reported with its
location, ``FILE:LINE: FORM OPERANDS: recorded R, model ...``. A malformed file is an error
(exit 2) listing every bad line; see :mod:`tilecheck.diff.vectors` for the format.
"""

from __future__ import annotations

import time

import numpy as np

from tilecheck.diff.vectors import read_vectors
from tilecheck.formats import UINT_DTYPES
from tilecheck.model import api
from tilecheck.verify.report import CheckResult, Row

__all__ = ["verify_file", "mismatch_text"]


def _value(form, bits: int) -> str:
    if form.element_format is None:
        return f"0x{bits:x}"
    fmt = form.format
    width = fmt.width
    parts = []
    for lane in range(form.lanes):
        value, cls = fmt.describe((bits >> (lane * width)) & ((1 << width) - 1))
        parts.append(f"{value} {cls}")
    return " | ".join(parts)


def mismatch_text(form, operands, recorded: int, where: str = "") -> str:
    """One line describing a rejected recorded result: operands, recorded and expected values."""
    digits = int(form.operands[0].container_bits) // 4
    ops = " ".join(f"0x{int(v):0{digits}x}" for v in operands)
    expected = int(api.reference(form, *[int(v) for v in operands]))
    head = f"{where}: " if where else ""
    if form.kind == "exact":
        want = f"model 0x{expected:0{digits}x} ({_value(form, expected)})"
    else:
        want = f"outside the contract ({api._contract_text(form)}); model's reference 0x{expected:0{digits}x} " \
               f"({_value(form, expected)})"
    return f"{head}{form.name} {ops}: recorded 0x{int(recorded):0{digits}x} ({_value(form, int(recorded))}), {want}"


def verify_file(path: str, ctx) -> Row:
    """Judge every case of the vector file at ``path``; one check per form in the file."""
    start = time.perf_counter()
    vf = read_vectors(path, db=ctx.db)
    row = Row(path, "vectors")
    by_form: dict[str, list] = {}
    for case in vf.cases:
        by_form.setdefault(case.form, []).append(case)
    origin = CheckResult("header", details=[f"{path}: recorded on {vf.origin()}"])
    row.checks.append(origin)
    for name, cases in by_form.items():
        form = ctx.db.form(name)
        check = CheckResult(name, cases=len(cases))
        dtype = UINT_DTYPES[form.operands[0].container_bits]
        ops = [np.array([c.operands[i] for c in cases], dtype=dtype) for i in range(len(form.sources))]
        results = np.array([c.result for c in cases], dtype=dtype)
        ok = np.asarray(api.allowed(form, results, *ops, ulp_reading=ctx.ulp_reading))
        for i in np.nonzero(~ok)[0]:
            c = cases[int(i)]
            check.mismatches += 1
            check.details.append(mismatch_text(form, c.operands, c.result, f"{path}:{c.line}"))
        row.checks.append(check)
    if not vf.cases:
        row.checks.append(CheckResult("cases", failures=1, details=[f"{path}: no case lines"]))
    row.seconds = time.perf_counter() - start
    return row
