"""The Z3 encodings of the instructions around the arithmetic agree with the numpy model.

For two forms of every ``function`` group (the first and the last of its expansion) both are
evaluated on the same batch of edge and random operands (every special class of float operands,
integer extremes, shift amounts around the width, both predicate values); results must be equal,
NaN results by class where the form's NaN policy is ``unspecified`` (``tilecheck.allowed``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tilecheck.errors import UsageError
from tilecheck.formats import get_format
from tilecheck.model.api import allowed, evaluate
from tilecheck.spec.database import load_database

z3 = pytest.importorskip("z3")
from tilecheck.smt import instructions  # noqa: E402  (needs z3)

DB = load_database()
RNG = np.random.default_rng(7)


def _values(ptx_type: str, n: int) -> list:
    if ptx_type == "pred":
        return [False, True]
    from tilecheck.spec.types import PTX_TYPES

    t = PTX_TYPES[ptx_type]
    elem, lanes, width = t.element, t.lanes, t.bits
    if elem is not None:
        fmt = get_format(elem)
        one = fmt.from_fraction(1)
        base = [0, 1, fmt.min_normal, one, one + 1, fmt.from_fraction(3) if fmt.precision > 2 else one,
                fmt.max_finite, fmt.inf, fmt.canonical_nan, fmt.from_fraction(2 ** 15 + 1 if fmt.precision > 16 else 7)]
        vals = [b | s for b in base for s in (0, fmt.sign_mask)]
        vals += [int(x) for x in RNG.integers(0, 1 << min(fmt.width, 63), n, dtype=np.uint64)]
        if lanes == 2:
            vals = [v | (w << fmt.width) for v, w in zip(vals, reversed(vals))]
        return vals
    m = (1 << width) - 1
    vals = [0, 1, 2, width - 1, width, width + 1, m, m - 1, 1 << (width - 1), (1 << (width - 1)) - 1]
    return [v & m for v in vals] + [int(x) & m for x in RNG.integers(0, 1 << 63, n, dtype=np.uint64)]


def _byte_float(form) -> bool:
    """A conversion to or from an 8-bit float: no Z3 encoding (test below)."""
    return any(o.format is not None and o.format.container_bits == 8 for o in form.operands)


def test_the_8_bit_float_conversions_say_they_have_no_encoding():
    forms = [f for f in DB.ptx_forms() if f.kind == "function" and _byte_float(f)]
    assert len(forms) == 12
    for form in forms:
        with pytest.raises(UsageError, match="no Z3 encoding"):
            instructions.encode(form, *[z3.BitVec(o.name, o.container_bits) for o in form.sources])


def _forms():
    groups: dict = {}
    for f in DB.ptx_forms():
        if f.kind == "function" and not (f.family == "cvta" and f.semantics.get("space") != "global") \
                and not _byte_float(f):
            groups.setdefault((f.family, f.group), []).append(f)
    picked = []
    for forms in groups.values():
        picked += [forms[0]] + ([forms[-1]] if len(forms) > 1 else [])
    return picked


@pytest.mark.parametrize("form", [pytest.param(f, id=f.name) for f in _forms()])
def test_z3_matches_model(form):
    per_operand = [_values(o.ptx_type, 3) for o in form.sources]
    rows = list(itertools.product(*per_operand))
    if len(rows) > 20:
        idx = RNG.choice(len(rows), 20, replace=False)
        rows = [rows[i] for i in sorted(idx)]
    dests = 2 if form.family == "setp" and form.lanes == 2 else 1
    for row in rows:
        got = instructions.evaluate(form, *row, destinations=dests)
        if dests == 2:
            assert got == tuple(bool(x) for x in evaluate(form, *row, destinations=2)), (form.name, row)
            continue
        assert allowed(form, got, *row), (form.name, [hex(int(r)) for r in row], got, evaluate(form, *row))


def test_every_function_key_has_a_model_and_a_z3_encoding():
    from tilecheck.model.instructions import IMPLEMENTATIONS
    from tilecheck.spec import registry

    keys = {k for k, e in registry.ENTRIES.items() if e.kind == "function"}
    assert keys == set(IMPLEMENTATIONS)
    # each is exercised by test_z3_matches_model, but cvt.lanes, whose every form converts to or
    # from an 8-bit float (no encoding: test_the_8_bit_float_conversions_say_they_have_no_encoding)
    assert keys == {f.semantics.key for f in _forms()} | {"cvt.lanes"}


def test_two_destination_setp_in_z3():
    assert instructions.evaluate(load_database().form("setp.lt.f32"), 0x3F800000, 0x40000000, destinations=2) == (True, False)
    assert instructions.evaluate(load_database().form("setp.lt.or.f32"), 0x7FC00000, 0x40000000, True,
                                  destinations=2) == (True, True)
