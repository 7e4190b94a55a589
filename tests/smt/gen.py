"""Operand generation for the Z3-vs-model tests: edge values, structured random values and
random patterns per source operand of a form (seeded, reproducible)."""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format
from tilecheck.spec.forms import Form
from tilecheck.inputs.edges import edge_values, interesting_exponent_fields
from tilecheck.inputs.forms import form_operands


def element_bits(fmt: Format, n: int, rng: np.random.Generator, centre: bool = False) -> np.ndarray:
    """``n`` patterns: a quarter edge values, half random fractions over interesting (or, with
    ``centre``, near-bias) exponent fields with random signs, a quarter random patterns."""
    edges = np.array(edge_values(fmt), dtype=np.uint64)
    fields = np.array(interesting_exponent_fields(fmt), dtype=np.uint64)
    out = np.empty(n, dtype=np.uint64)
    kind = rng.integers(0, 4, n)
    out[kind == 0] = edges[rng.integers(0, edges.size, int((kind == 0).sum()))]
    k = int((kind >= 1).sum())
    frac = rng.integers(0, 1 << 62, k, dtype=np.uint64) & np.uint64(fmt.mantissa_mask)
    if centre:
        field = rng.integers(max(fmt.bias - 3, 0), fmt.bias + 4, k).astype(np.uint64)
    else:
        field = fields[rng.integers(0, fields.size, k)]
        top = (1 << fmt.exponent_bits) - 1
        field = np.where(field == top, np.uint64(top - 1), field)
    sign = rng.integers(0, 2, k).astype(np.uint64) << np.uint64(fmt.width - 1)
    out[kind >= 1] = sign | (field << np.uint64(fmt.mantissa_bits)) | frac
    rand = kind == 3
    out[rand] = rng.integers(0, 1 << 62, int(rand.sum()), dtype=np.uint64) * np.uint64(4) >> np.uint64(64 - fmt.width) \
        if fmt.width == 64 else rng.integers(0, 1 << fmt.width, int(rand.sum()), dtype=np.uint64)
    return out


def operands_for(form: Form, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Source containers for ``form``; packed forms get independent lanes. For fma the addend is
    drawn near the product's magnitude half of the time (cancellation, tie cases)."""
    centre = form.semantics.key in ("fp.fma", "fp.add", "fp.sub") and rng.random() < 0.5

    def lane(form, fmt, k, rng, arity):
        return [element_bits(fmt, k, rng, centre) for _ in range(arity)]

    return [o.astype(np.uint64) for o in form_operands(form, n, rng, lane)]
