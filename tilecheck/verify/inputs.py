"""Operand generation for verify checks: edge-biased bit patterns per source operand of a form.

Prefers the importable generators of :mod:`tilecheck.testing.generators` when present; the small
fallback here draws from the special values of the format and random patterns.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import get_format
from tilecheck.spec.forms import TYPE_INFO, Form


def _edge_values(fmt) -> np.ndarray:
    one = fmt.from_fraction(1)
    base = [0, 1, 2, fmt.mantissa_mask, fmt.min_normal, fmt.min_normal + 1, fmt.max_finite,
            fmt.max_finite - 1, one, one + 1, one - 1, fmt.inf, fmt.default_nan, fmt.inf | 1]
    return np.array(base + [b | fmt.sign_mask for b in base], dtype=np.uint64)


def element_bits(fmt, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` patterns of ``fmt``: a third special values, a third random exponents near the
    middle and the extremes, a third uniformly random patterns (uint64)."""
    try:
        from tilecheck.testing.generators import edge_biased

        return np.asarray(edge_biased(fmt, n, rng), dtype=np.uint64)
    except ImportError:
        pass
    width = fmt.width
    out = rng.integers(0, 1 << min(width, 63), n, dtype=np.uint64)
    if width == 64:
        out |= rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    pick = rng.random(n) < 0.33
    edges = _edge_values(fmt)
    out[pick] = edges[rng.integers(0, edges.size, int(pick.sum()))]
    return out


def operands_for(form: Form, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Source operand containers for ``form`` (packed forms: independent lanes)."""
    ops = []
    for op in form.sources:
        if op.element_format is None:
            bits = TYPE_INFO[op.ptx_type][3]
            ops.append(rng.integers(0, 1 << min(bits, 63), n, dtype=np.uint64))
            continue
        fmt = get_format(op.element_format)
        value = np.zeros(n, dtype=np.uint64)
        for lane in range(op.lanes):
            value |= element_bits(fmt, n, rng) << np.uint64(lane * fmt.width)
        ops.append(value)
    return ops
