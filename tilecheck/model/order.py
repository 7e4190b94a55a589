"""The total order of a format's non-NaN patterns as int64 keys, shared by the contract modules.

Keys run ... -min_subnormal, -0, +0, +min_subnormal ... (-0 is -1, +0 is 0), so that consecutive
keys are adjacent values and an allowed run of results is one interval of keys, across zero too.
"""

from __future__ import annotations

from tilecheck.formats import Format
from tilecheck.model.xp import u64


def order_key(xp, fmt: Format, bits, stride: int):
    """Total order of non-NaN patterns (int64): ... -min_sub, -0, +0, +min_sub ... in units of
    ``stride`` (magnitudes are multiples of it)."""
    m = ((bits & u64(xp, fmt.magnitude_mask)) // u64(xp, stride)).astype(xp.int64)
    return xp.where((bits >> u64(xp, fmt.width - 1)) != 0, -m - 1, m)


def from_key(xp, fmt: Format, key, stride: int):
    """Inverse of :func:`order_key`."""
    neg = key < 0
    m = xp.where(neg, -key - 1, key).astype(xp.uint64) * u64(xp, stride)
    return xp.where(neg, m | u64(xp, fmt.sign_mask), m)
