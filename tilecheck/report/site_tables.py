"""The computed tables of a PTX family page: legality matrix, special values, evaluated examples.

Everything here is data for the ``site_*.html.j2`` templates (no markup): the legality matrix
comes from :meth:`SpecDatabase.verdict` and :meth:`SpecDatabase.min_version`, the special-value
tables and the examples' results from the reference model (:mod:`tilecheck.model.api`) at build
time, so a page says what ``tilecheck spec show`` and ``tilecheck eval`` say.
"""

from __future__ import annotations

import numpy as np

from tilecheck.model import api

TABLE_LIMIT = 16
"""Most special-value tables per family: cvt (792 forms) or setp (720) would be thousands; a
representative subset (first form of each form group, evenly spread) is shown and the page says so."""

_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def base_targets(db) -> list:
    """The targets of the matrix columns: every base target (no ``a``/``f`` variant), by sm."""
    return sorted((t for t in db.targets.values() if not t.variant), key=lambda t: t.sm)


def legality_matrix(db, family) -> list[dict]:
    """One row per form: ``{"form", "cells": [{"target", "legal", "version", "reason"}]}``."""
    targets = base_targets(db)
    rows = []
    for form in family.forms:
        cells = []
        for t in targets:
            v = db.verdict(form.name, t.name)
            version = db.min_version(form, t.name) if v.legal else None
            cells.append({"target": t.name, "legal": v.legal, "reason": v.reason,
                          "version": f"{version[0]}.{version[1]}" if version else ""})
        rows.append({"form": form.name, "cells": cells})
    return rows


def special_values(fmt) -> list[tuple[str, int]]:
    """(label, bits) of the rows: +-0, +-min subnormal, +-min normal, +-1, +-max, +-inf, NaN."""
    s = fmt.sign_mask
    rows = [("+0", 0), ("-0", s), ("+min subnormal", fmt.min_subnormal), ("-min subnormal", s | fmt.min_subnormal),
            ("+min normal", fmt.min_normal), ("-min normal", s | fmt.min_normal),
            ("+1", fmt.power_bits(0)), ("-1", s | fmt.power_bits(0)),
            ("+max", fmt.max_finite), ("-max", s | fmt.max_finite)]
    if fmt.specials == "ieee":  # e4m3 ("fn") has no infinity
        rows += [("+inf", fmt.inf), ("-inf", s | fmt.inf)]
    return rows + [("NaN", fmt.default_nan)]


def _columns(fmt) -> list[tuple[str, int]]:
    """A few second operands: +0, +1, +inf (+max without infinity), NaN."""
    big = ("+inf", fmt.inf) if fmt.specials == "ieee" else ("+max", fmt.max_finite)
    return [("+0", 0), ("+1", fmt.power_bits(0)), big, ("NaN", fmt.default_nan)]


def tabulated(form) -> bool:
    """Whether ``form`` gets a special-value table: a scalar floating-point operand list (every
    source has a number format, the destination one lane) of an arithmetic or function form."""
    return (form.kind in ("exact", "contract", "function") and bool(form.sources) and form.lanes == 1
            and all(o.element_format is not None and o.lanes == 1 for o in form.operands if o.role != "dst")
            and all(o.lanes == 1 for o in form.destinations)  # a packed result (cvt ... f16x2.f32): lane by lane
            and (form.kind != "contract" or form.format is not None))


def table_subset(family) -> tuple[list, int]:
    """The forms of ``family`` that get a table, and how many could have one."""
    candidates = [f for f in family.forms if tabulated(f)]
    if len(candidates) <= TABLE_LIMIT:
        return candidates, len(candidates)
    firsts, seen = [], set()
    for f in candidates:
        if f.group not in seen:
            seen.add(f.group)
            firsts.append(f)
    if len(firsts) > TABLE_LIMIT:  # spread over the whole family, not its first groups
        step = len(firsts) / TABLE_LIMIT
        firsts = [firsts[int(i * step)] for i in range(TABLE_LIMIT)]
    return firsts, len(candidates)


def _hex(bits: int, width: int) -> str:
    return f"0x{int(bits):0{width // 4}x}"


def _result_text(op, bits) -> tuple[str, str]:
    """(bits text, value text) of one destination value."""
    if op.ptx_type == "pred":
        return ("true" if bool(bits) else "false", "")
    if op.format is None:
        return (_hex(bits, op.container_bits), str(int(bits)))
    value, cls = op.format.describe(int(bits))
    return (_hex(bits, op.container_bits), f"{value} ({cls})")


def value_table(form) -> dict:
    """The special-value table of ``form``: rows of the first operand's special values, columns of
    a few second operands (binary forms), further operands +0; exact and function forms show the
    model's result, approximate forms the allowed range lo..hi (and the model's representative)."""
    src = form.sources
    row_vals = special_values(src[0].format)
    col_vals = _columns(src[1].format) if len(src) > 1 else [("", None)]
    fixed = [0] * max(0, len(src) - 2)
    ops = [[], []]
    for _, r in row_vals:
        for _, c in col_vals:
            ops[0].append(r)
            ops[1].append(c)
    arrays = [np.array(ops[0], dtype=_UINT[src[0].container_bits])]
    if len(src) > 1:
        arrays.append(np.array(ops[1], dtype=_UINT[src[1].container_bits]))
    arrays += [np.zeros(len(ops[0]), dtype=_UINT[o.container_bits]) for o in src[2:]]
    dst = form.destinations[0]
    if form.kind == "contract":
        got = api.allowed_results(form, *arrays)
        ref = np.asarray(api.reference(form, *arrays))
    else:
        res = np.asarray(api.evaluate(form, *arrays))
    rows, i = [], 0
    for label, r in row_vals:
        cells = []
        for _, c in col_vals:
            operands = " ".join(_hex(v, o.container_bits) for v, o in zip([r, c][:len(src)] + fixed, src))
            if form.kind == "contract":
                cells.append(_range_cell(form, got, ref, i, operands))
            else:
                bits, value = _result_text(dst, res[i])
                cells.append({"operands": operands, "bits": bits, "value": value, "range": False})
            i += 1
        rows.append({"label": label, "bits": _hex(r, src[0].container_bits), "cells": cells})
    return {"form": form.name, "kind": form.kind, "columns": [(lbl, _hex(v, src[1].container_bits)) for lbl, v in col_vals]
            if len(src) > 1 else [], "rows": rows,
            "fixed": [o.name for o in src[2:]], "operands": [o.name for o in src]}


def _range_cell(form, got, ref, i: int, operands: str) -> dict:
    """One cell of an approximate form: the allowed range, NaN, extra values, or 'any'."""
    fmt, width = form.format, form.container_bits
    lo, hi = int(got.lo[i]), int(got.hi[i])
    cell = {"operands": operands, "range": True, "unbounded": bool(got.unbounded[i]), "nan": bool(got.nan[i]),
            "empty": bool(got.empty[i]), "lo": _hex(lo, width), "hi": _hex(hi, width),
            "lo_value": fmt.describe(lo)[0], "hi_value": fmt.describe(hi)[0],
            "extra": [_hex(int(x), width) for x, used in zip(got.extra[i], got.extra_used[i]) if used],
            "reference": _hex(int(ref[i]), width)}
    return cell


def evaluated_examples(db, family) -> list[dict]:
    """The family's spec examples with the model's result and whether the two agree."""
    out = []
    for ex in family.examples:
        form = db.resolve(ex.form)
        if form is None:
            continue
        width = form.destinations[0].container_bits if form.destinations else form.container_bits
        ops = " ".join(_hex(v, o.container_bits) for v, o in zip(ex.operands, form.sources))
        row = {"form": form.name, "operands": ops, "result": _hex(ex.result, width), "source": ex.source,
               "variant": ex.variant}
        try:
            if form.kind == "contract":
                row["model"] = _hex(int(api.reference(form, *ex.operands)), width)
                row["agrees"] = bool(api.allowed(form, ex.result, *ex.operands))
                row["how"] = "allowed by the contract"
            else:
                value = api.evaluate(form, *ex.operands)
                row["model"] = "true" if isinstance(value, (bool, np.bool_)) else _hex(int(value), width)
                row["agrees"] = bool(api.allowed(form, ex.result, *ex.operands))
                row["how"] = "equal (NaN policy applied)"
        except Exception as exc:  # a page must still build: show why the model could not say
            row.update(model=f"not evaluated: {exc}", agrees=None, how="")
        out.append(row)
    return out
