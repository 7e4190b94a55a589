"""Low-level helpers of the model against Python integers: bit lengths, jamming shifts, 128-bit
arithmetic (edge values near every power of two and random values)."""

from __future__ import annotations

import numpy as np

from tilecheck.model import wide
from tilecheck.model.xp import bit_length, shift_right_jam

_EDGES = sorted({v for k in range(65) for v in ((1 << k) - 1, 1 << k, (1 << k) + 1) if 0 <= v < 1 << 64}
                | {(1 << 64) - 1024, (1 << 64) - 1025, (1 << 64) - 2048})


def _values(rng, n=2000):
    rand = [int(x) for x in rng.integers(0, 1 << 63, n, dtype=np.uint64)]
    rand += [int(x) << 1 | 1 for x in rng.integers(0, 1 << 63, n, dtype=np.uint64)]
    return _EDGES + rand


def test_bit_length_matches_python_on_all_64_bit_edges():
    vals = _values(np.random.default_rng(0))
    got = bit_length(np, np.array(vals, dtype=np.uint64)).tolist()
    assert got == [v.bit_length() for v in vals]


def test_shift_right_jam_keeps_a_sticky_bit():
    rng = np.random.default_rng(1)
    vals = _values(rng, 500)
    for n in (0, 1, 7, 31, 63, 64, 65, 200):
        got = shift_right_jam(np, np.array(vals, dtype=np.uint64), n).tolist()
        want = [(v >> n) | int(v & ((1 << n) - 1) != 0) if n < 64 else int(v != 0) for v in vals]
        assert got == want, n


def test_128_bit_product_shift_and_compare():
    rng = np.random.default_rng(2)
    a = _values(rng, 300)
    b = list(reversed(a))
    hi, lo = wide.mul_64x64(np, np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64))
    prods = [(int(h) << 64) | int(l) for h, l in zip(hi, lo)]
    assert prods == [x * y for x, y in zip(a, b)]
    assert wide.bit_length128(np, hi, lo).tolist() == [p.bit_length() for p in prods]
    for n in (0, 1, 63, 64, 65, 127, 130):
        h2, l2 = wide.shift_right_jam(np, hi, lo, n)
        got = [(int(h) << 64) | int(l) for h, l in zip(h2, l2)]
        want = [(p >> n) | int(p & ((1 << n) - 1) != 0) if n < 128 else int(p != 0) for p in prods]
        assert got == want, n
