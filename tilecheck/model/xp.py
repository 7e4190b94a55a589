"""Array-namespace helpers so the model runs on numpy and, unchanged, on CuPy.

The model's code takes ``xp`` (the ``numpy`` or ``cupy`` module) from its input arrays and uses
only functions both provide. Nothing here imports CuPy: an array from another namespace announces
itself through its type's module.
"""

from __future__ import annotations

import numpy as np


def namespace(*arrays):
    """The array module (numpy or cupy) that owns ``arrays``; numpy for plain Python values."""
    for a in arrays:
        module = type(a).__module__
        if module.startswith("cupy"):
            import cupy  # only reached when the caller already handed us CuPy arrays

            return cupy
    return np


def broadcast_all(xp, *arrays) -> list:
    """``arrays`` at one broadcast shape: each array already of that shape as it is, every other one
    a new writeable copy. (``broadcast_arrays``' views are marked warn-on-write, and Numba reads
    the writeable flag of each kernel argument, which numpy answers with a FutureWarning.)"""
    shape = np.broadcast_shapes(*(tuple(a.shape) for a in arrays))  # shapes only: any array library
    return [a if a.shape == shape else xp.array(xp.broadcast_to(a, shape)) for a in arrays]


def u64(xp, value: int):
    """A uint64 scalar of namespace ``xp`` (keeps numpy 2 from promoting uint64 op int to float64)."""
    return xp.uint64(value)


def i64(xp, value: int):
    """An int64 scalar of namespace ``xp``."""
    return xp.int64(value)


def bit_length(xp, x):
    """Number of significant bits of each uint64 in ``x`` (0 for 0), exact for all 64-bit values.

    float64 conversion gives the exponent directly; it can round a value just below a power of two
    up to that power, so one shift-back check corrects the off-by-one.
    """
    with np.errstate(all="ignore"):
        _, e = xp.frexp(x.astype(xp.float64))
    # values within 2**10 of 2**64 round up to 2**64 in float64: cap before the check
    bl = xp.minimum(e.astype(xp.int64), 64)
    probe = xp.clip(bl - 1, 0, 63).astype(xp.uint64)
    too_big = (bl > 0) & ((x >> probe) == 0)
    return bl - too_big.astype(xp.int64)


def shift_left(xp, x, n):
    """``x << n`` for uint64 ``x`` and non-negative int ``n`` (array or scalar), 0 when n >= 64."""
    n = xp.asarray(n, dtype=xp.int64)
    safe = xp.clip(n, 0, 63).astype(xp.uint64)
    return xp.where(n >= 64, u64(xp, 0), x << safe)


def shift_right_jam(xp, x, n):
    """``x >> n`` with every shifted-out 1 bit ORed into the result's lowest bit ("jamming").

    Keeps exactly the information rounding needs (the sticky bit) while narrowing a significand.
    ``n`` >= 64 gives 1 for non-zero ``x`` and 0 for zero.
    """
    n = xp.asarray(n, dtype=xp.int64)
    safe = xp.clip(n, 0, 63).astype(xp.uint64)
    shifted = x >> safe
    lost = x != (shifted << safe)
    out = shifted | lost.astype(xp.uint64)
    return xp.where(n >= 64, (x != 0).astype(xp.uint64), xp.where(n <= 0, x, out))
