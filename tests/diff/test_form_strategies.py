"""Hypothesis strategies per form: they produce valid operands, and with them the model's exact
path and fast path (the verdict) agree on every form."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tilecheck.diff import backends
from tilecheck.diff.cases import source_layout
from tilecheck.model import api
from tilecheck.spec.database import load_database
from tilecheck.testing.forms import form_operands, forms

DB = load_database()


@given(st.data())
def test_exact_path_results_are_allowed(data):
    form = data.draw(forms(DB))
    ops = data.draw(form_operands(form))
    layout = source_layout(form)
    arrays = [np.array([v], dtype=spec[1]) for v, spec in zip(ops, layout)]
    result = backends.ModelBackend().run(form, arrays)
    assert bool(api.allowed(form, result, *arrays)[0]), (form.name, [hex(v) for v in ops], hex(int(result[0])))


@given(st.data())
def test_memory_form_operands_have_the_kernel_layout(data):
    form = data.draw(forms(DB, ("memory",)))
    ops = data.draw(form_operands(form))
    layout = source_layout(form)
    assert len(ops) == len(layout) == 1
    (_, dtype, per), (values,) = layout[0], ops
    assert len(values) == per and all(0 <= v <= np.iinfo(dtype).max for v in values)
    # and they run: a load/store moves exactly these bits
    arrays = [np.array(values, dtype=dtype)]
    assert backends.ModelBackend().judge(form, arrays).count == 0
