"""Operand generation for verify checks: edge-biased bit patterns per source operand of a form.

Element patterns come from :func:`tilecheck.inputs.generators.edge_biased`.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import get_format
from tilecheck.inputs.generators import edge_biased
from tilecheck.spec.forms import Form


def element_bits(fmt, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` edge-biased patterns of ``fmt`` (:func:`tilecheck.inputs.generators.edge_biased`), uint64."""
    return np.asarray(edge_biased(fmt, n, rng), dtype=np.uint64)


def operands_for(form: Form, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Source operand containers for ``form`` (packed forms: independent lanes)."""
    ops = []
    for op in form.sources:
        if op.element_format is None:
            bits = op.container_bits
            ops.append(rng.integers(0, 1 << min(bits, 63), n, dtype=np.uint64))
            continue
        fmt = get_format(op.element_format)
        value = np.zeros(n, dtype=np.uint64)
        for lane in range(op.lanes):
            value |= element_bits(fmt, n, rng) << np.uint64(lane * fmt.width)
        ops.append(value)
    return ops
