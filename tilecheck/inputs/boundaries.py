"""Two more numpy constructions of cases next to rounding boundaries (complementing
:mod:`tilecheck.inputs.generators`).

* :func:`tie_sums` -- ``(a, b)`` whose exact sum lies exactly on a midpoint of ``a``'s binade
  (round-to-nearest must break the tie to even) or a tiny fraction of an ulp beyond one;
* :func:`rcp_ftz_boundary` -- ``b`` whose exact reciprocal lies just below the smallest normal
  and rounds up to it under ``rp`` (positive) / ``rm`` (negative): the reciprocal's "FTZ before
  or after rounding" cases. (Under ``rn`` no reciprocal of a p-bit number lands close enough:
  ``1/(2**-emin * (1 + 2**-m))`` is half a subnormal quantum short of the midpoint.)

Why :func:`tie_sums` works: with ``a = A * 2**q`` (``A`` a p-bit significand, ``q`` the exponent
of its last bit) and ``b = (2t + 1) * 2**(q - 1)`` for a small ``t``, the sum is an odd multiple of
``2**(q - 1)``: exactly halfway between two neighbours of ``a``'s grid as long as it stays in
``a``'s binade (``A`` is drawn away from the binade ends). Adding ``2**(q - 1 - d)`` to ``b`` moves
the sum ``2**-d`` of a half-ulp past the midpoint; ``b`` stays representable because its
significand has at most ``log2(2t + 1) + d + 1 <= p`` bits. The sign of ``b`` is random, so both
addition and subtraction of magnitudes occur.

Formats are :class:`~tilecheck.formats.Format` objects or names (looked up in the default spec
root's formats).
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format, get_format
from tilecheck.inputs.generators import encode

__all__ = ["tie_sums", "rcp_ftz_boundary"]

_U = np.uint64


def tie_sums(fmt: Format | str, n: int, rng: np.random.Generator, tmax: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` with ``a + b`` on a midpoint (half of them) or ``2**-d`` half-ulps past one."""
    f = get_format(fmt)
    p, m = f.precision, f.mantissa_bits
    tmax = max(0, min(tmax, (1 << max(p - 4, 0)) - 1))
    # A away from the binade ends so the sum stays in the binade: |b| < 2**(q + log2(2t+2))
    guard = 1 << max(p - 4, 1)
    big_a = rng.integers((1 << (p - 1)) + guard, (1 << p) - guard, n, dtype=_U)
    # a's last-bit exponent q: both a and b (down to 2**(q - 1 - d)) normal or subnormal-exact
    dmax = max(p - 3 - int(tmax).bit_length(), 1)
    d = rng.integers(1, dmax + 1, n)
    lo = f.emin - m + 1 + dmax + 1
    hi = f.emax - m
    q = rng.integers(lo, hi + 1, n)
    t = rng.integers(0, tmax + 1, n).astype(_U)
    exact = rng.random(n) < 0.5
    # b = ((2t + 1) * 2**d + (not exact)) * 2**(q - 1 - d)
    sig_b = ((_U(2) * t + _U(1)) << d.astype(_U)) + (~exact).astype(_U)
    a = encode(f, rng.random(n) < 0.5, big_a, q)
    b = encode(f, rng.random(n) < 0.5, sig_b, q - 1 - d)
    return a, b


def rcp_ftz_boundary(fmt: Format | str, n: int, rng: np.random.Generator, jmax: int = 64) -> np.ndarray:
    """``b = +-2**-emin * (1 + j * 2**-m)`` for ``1 <= j <= jmax``: ``1/b`` lies in
    ``(2**emin - (j + 1) * 2**(emin - m), 2**emin)``, below the smallest normal by about ``j``
    subnormal quanta, so ``rp`` (b > 0) / ``rm`` (b < 0) round ``j = 1`` cases up to it."""
    f = get_format(fmt)
    m = f.mantissa_bits
    jmax = max(1, min(jmax, (1 << m) - 1))
    # small j more often: they are the ones that round up to the smallest normal
    j = np.where(rng.random(n) < 0.5, 1, rng.integers(1, jmax + 1, n)).astype(_U)
    sig = (_U(1) << _U(m)) + j
    return encode(f, rng.random(n) < 0.5, sig, np.full(n, -f.emin - m))
