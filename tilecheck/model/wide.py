"""128-bit unsigned integer arithmetic on pairs of uint64 arrays ``(hi, lo)``.

Needed where an exact intermediate does not fit 64 bits: the 106-bit product of two binary64
significands (``mul``, ``fma``). Only the handful of operations those paths use are here; shift
counts are clipped before shifting because a uint64 shift by 64 or more is undefined in numpy.
"""

from __future__ import annotations

from tilecheck.model.xp import bit_length, u64

_M32 = (1 << 32) - 1


def mul_64x64(xp, a, b):
    """Exact product of two uint64 values below 2**64 as (hi, lo)."""
    a0 = a & u64(xp, _M32)
    a1 = a >> u64(xp, 32)
    b0 = b & u64(xp, _M32)
    b1 = b >> u64(xp, 32)
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    # mid may carry out of 64 bits only for full 64-bit inputs; keep its carry explicitly
    mid = p01 + p10
    mid_carry = (mid < p01).astype(xp.uint64)
    lo = p00 + (mid << u64(xp, 32))
    carry = (lo < p00).astype(xp.uint64)
    hi = p11 + (mid >> u64(xp, 32)) + (mid_carry << u64(xp, 32)) + carry
    return hi, lo


def add(xp, ah, al, bh, bl):
    """(a + b) mod 2**128."""
    lo = al + bl
    carry = (lo < al).astype(xp.uint64)
    return ah + bh + carry, lo


def sub(xp, ah, al, bh, bl):
    """(a - b) mod 2**128 (callers ensure a >= b)."""
    lo = al - bl
    borrow = (al < bl).astype(xp.uint64)
    return ah - bh - borrow, lo


def greater_equal(xp, ah, al, bh, bl):
    """a >= b elementwise."""
    return (ah > bh) | ((ah == bh) & (al >= bl))


def bit_length128(xp, hi, lo):
    """Number of significant bits (0 for zero)."""
    return xp.where(hi != 0, 64 + bit_length(xp, hi), bit_length(xp, lo))


def shift_left(xp, hi, lo, n):
    """(hi, lo) << n for 0 <= n <= 127 (bits beyond 128 are lost)."""
    n = xp.asarray(n, dtype=xp.int64)
    small = n < 64
    s = xp.clip(n, 0, 63).astype(xp.uint64)
    back = xp.clip(64 - n, 1, 63).astype(xp.uint64)  # n == 0 handled by the where below
    hi_small = xp.where(n == 0, hi, (hi << s) | (lo >> back))
    lo_small = lo << s
    s2 = xp.clip(n - 64, 0, 63).astype(xp.uint64)
    hi_big = lo << s2
    return xp.where(small, hi_small, hi_big), xp.where(small, lo_small, u64(xp, 0))


def shift_right_jam(xp, hi, lo, n):
    """(hi, lo) >> n with shifted-out 1 bits ORed into bit 0; n >= 128 gives 0 or 1."""
    n = xp.asarray(n, dtype=xp.int64)
    nonzero = (hi != 0) | (lo != 0)
    s = xp.clip(n, 0, 63).astype(xp.uint64)
    fwd = xp.clip(64 - n, 1, 63).astype(xp.uint64)
    # 0 < n < 64
    lo_a = (lo >> s) | (hi << fwd)
    hi_a = hi >> s
    lost_a = (lo << fwd) != 0
    # 64 <= n < 128
    s2 = xp.clip(n - 64, 0, 63).astype(xp.uint64)
    fwd2 = xp.clip(128 - n, 1, 63).astype(xp.uint64)
    lo_b = hi >> s2
    lost_b = (lo != 0) | xp.where(n == 64, False, (hi << fwd2) != 0)
    hi_out = xp.where(n <= 0, hi, xp.where(n < 64, hi_a, u64(xp, 0)))
    lo_out = xp.where(n <= 0, lo, xp.where(n < 64, lo_a | lost_a.astype(xp.uint64),
                                           xp.where(n < 128, lo_b | lost_b.astype(xp.uint64),
                                                    nonzero.astype(xp.uint64))))
    return hi_out, lo_out
