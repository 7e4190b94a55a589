"""The numpy backend's fast conversions (numpy casts) equal the model's exact ``ops.convert``.

Every binary16 pattern widened to binary32 and binary64; binary32 and binary64 patterns narrowed
with round to nearest even: random patterns plus, for each target, the values on and one unit of
the source either side of every rounding midpoint of a sample of target values (where a double
rounding or a truncation would show), subnormal and overflow boundaries included. NaNs go through
``ops.convert`` in both, so they are left out of the comparison's inputs only by construction.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.model import ops
from tilecheck.model.semantics import NumpyBackend
from tilecheck.spec.database import load_database

FORMATS = load_database().formats


def _exact(src, dst, x):
    return ops.convert(np, src, dst, x, ops.Mode("rn"), ops.NanRule.ieee(dst))


def _fast(src, dst, x):
    return NumpyBackend(x.shape).float_convert(src, dst, "rn", x)


@pytest.mark.parametrize("dst", ["f32", "f64"])
def test_every_half_widens_exactly(dst):
    x = np.arange(1 << 16, dtype=np.uint64)
    src, d = FORMATS["f16"], FORMATS[dst]
    assert np.array_equal(_fast(src, d, x), _exact(src, d, x))


def _midpoints(src, dst, rng, n):
    """Patterns of ``src`` at and next to the midpoints between consecutive ``dst`` values."""
    t = rng.integers(0, (1 << (dst.width - 1)) - 1, n, dtype=np.uint64)  # positive dst patterns
    lo = _exact(dst, src, t)                                            # exact widening
    hi = _exact(dst, src, t + np.uint64(1))
    keep = ~src.is_nan(hi) & ~src.is_inf(hi)
    lo, hi = lo[keep], hi[keep]
    # the midpoint in src: the mean of the two widened patterns' values is a src pattern when src
    # has at least one more bit than dst (true for every pair tested here)
    vals = (lo.view(np.int64) + hi.view(np.int64)) // 2 if src.width == 64 else None
    if vals is None:
        mid = ((lo.astype(np.uint64) + hi.astype(np.uint64)) // np.uint64(2))
    else:
        mid = vals.astype(np.uint64)
    out = np.concatenate([mid, mid + np.uint64(1), mid - np.uint64(1), lo, hi])
    sign = np.uint64(1 << (src.width - 1))
    return np.concatenate([out, out | sign])


@pytest.mark.parametrize("src_name,dst_name", [("f32", "f16"), ("f64", "f16"), ("f64", "f32")])
def test_narrowing_rounds_to_nearest_even(src_name, dst_name):
    rng = np.random.default_rng(7)
    src, dst = FORMATS[src_name], FORMATS[dst_name]
    x = np.concatenate([rng.integers(0, 1 << src.width, 1 << 18, dtype=np.uint64) if src.width < 64 else
                        rng.integers(0, np.iinfo(np.uint64).max, 1 << 18, dtype=np.uint64, endpoint=True),
                        _midpoints(src, dst, rng, 1 << 16)])
    x = x[~src.is_nan(x)]
    assert np.array_equal(_fast(src, dst, x), _exact(src, dst, x))
