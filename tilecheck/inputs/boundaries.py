"""Two more numpy constructions of cases next to rounding boundaries (complementing
:mod:`tilecheck.inputs.generators`).

* :func:`tie_sums` -- ``(a, b)`` whose exact sum lies exactly on a midpoint of ``a``'s binade
  (round-to-nearest must break the tie to even) or a tiny fraction of an ulp beyond one;
* :func:`midpoint_pairs` -- ``(x, y)`` of two formats whose exact product or quotient lies next
  to a midpoint of a third, narrower one, with the product or quotient rounded to an intermediate
  format landing on that midpoint (a double rounding: Triton's float16 tensor times a float32
  argument, multiplied in float32 and rounded to float16);
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

__all__ = ["tie_sums", "rcp_ftz_boundary", "midpoint_pairs"]

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


def _nearest(fmt: Format, x: np.ndarray) -> np.ndarray | None:
    """Patterns of ``fmt`` nearest the float64 values ``x`` (numpy's conversion; bfloat16 through
    float32, a double rounding that only moves a case by an ulp); None for other formats."""
    if fmt.numpy_dtype:
        return np.asarray(x).astype(np.dtype(fmt.numpy_dtype)).view(fmt.uint).astype(np.uint64)
    if fmt.name == "bf16":
        w = np.asarray(x).astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((w + np.uint64(0x7FFF) + ((w >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)) & np.uint64(0xFFFF)
    return None


def midpoint_pairs(op: str, first: Format | str, second: Format | str, result: Format | str, n: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """``n`` pairs ``(x, y)``, ``x`` of ``first`` and ``y`` of ``second``, whose product (``op``
    ``mul``) or quotient ``x / y`` (``div``) lies next to a midpoint ``m`` of two neighbouring
    normal values of ``result``: ``y`` is ``second``'s nearest value to ``m / x`` (``x / m``). The
    exact value misses ``m`` by at most an ulp of ``second``, so rounded to a format about as wide
    as ``second`` it often lands on ``m`` exactly, and rounded again it ties (to even) where the
    exact value rounds once to one side: the double roundings of mixed-precision arithmetic. None
    where ``op`` is neither or a format has no nearest-value conversion here (or ``result`` is
    binary64, whose midpoints float64 arithmetic does not hold)."""
    a, b, r = (get_format(f) for f in (first, second, result))
    if op not in ("mul", "div") or r.width >= 64 or a.width > 64 or b.width > 64:
        return None
    # x: a random significand in [1, 2) with a small exponent; m: a midpoint in [1/2, 4) of r
    sig = rng.integers(0, 1 << a.mantissa_bits, n, dtype=np.uint64) + np.uint64(1 << a.mantissa_bits)
    x = np.ldexp(sig.astype(np.float64), (rng.integers(-2, 3, n) - a.mantissa_bits).astype(np.int32))
    lo = rng.integers(0, 1 << r.mantissa_bits, n, dtype=np.uint64) + np.uint64(1 << r.mantissa_bits)
    m = np.ldexp(lo.astype(np.float64) + 0.5, (rng.integers(-1, 2, n) - r.mantissa_bits).astype(np.int32))
    xb = _nearest(a, x)
    yb = _nearest(b, m / x if op == "mul" else x / m)
    if xb is None or yb is None:
        return None
    neg = rng.integers(0, 2, (2, n), dtype=np.uint64)
    return xb | (neg[0] << np.uint64(a.width - 1)), yb | (neg[1] << np.uint64(b.width - 1))


def narrowing_midpoints(source: Format | str, result: Format | str, n: int,
                        rng: np.random.Generator) -> np.ndarray | None:
    """``n`` patterns of ``source`` on or next to a midpoint of two neighbouring values of the
    narrower ``result``: the ties of a conversion to nearest. A third the midpoint itself, a third
    one to three ``source`` ulps off it, a third a relative 2^-t off, t from p + 3 (p: ``result``'s
    fraction bits) to ``source``'s precision -- where a conversion done in two steps (through a
    format in between) lands on the tie and breaks it to even, while one rounding goes to the side
    the value lies on. Midpoints span the exponents both formats hold; a share are ``result``'s
    subnormal ones and its rounding boundary to infinity (the largest finite value plus half an
    ulp), where ``source`` holds them. Random signs. None where ``result`` is not narrower in
    precision or ``source`` has no nearest-value conversion here."""
    s, r = get_format(source), get_format(result)
    if r.mantissa_bits >= s.mantissa_bits or s.width > 64 or _nearest(s, np.zeros(1)) is None:
        return None
    p = r.mantissa_bits
    # a value of r is k 2^(e - p): k in [2^p, 2^(p+1)) for a normal one, in [0, 2^p) at emin for a
    # subnormal; a midpoint's last bit, 2^(e - p - 1), must be one of s (exponents both formats hold)
    e_lo = max(r.emin, s.emin - s.mantissa_bits + p + 1)
    e_hi = min(r.emax, s.emax)
    k = rng.integers(1 << p, 1 << (p + 1), n).astype(np.int64)
    e = rng.integers(e_lo, e_hi + 1, n).astype(np.int64)
    kind = rng.random(n)
    sub = (kind < 0.15) & (e_lo == r.emin)   # r's subnormal midpoints, where s holds them
    top = (kind > 0.95) & (e_hi == r.emax)   # r's boundary to infinity, where s reaches it
    k = np.where(sub, rng.integers(0, 1 << p, n), np.where(top, (1 << (p + 1)) - 1, k))
    e = np.where(sub, r.emin, np.where(top, r.emax, e))
    m = np.ldexp(k.astype(np.float64) + 0.5, (e - p).astype(np.int32))  # exact: p + 2 bits
    bits = _nearest(s, m)
    how = rng.integers(0, 3, n)
    steps = rng.integers(1, 4, n).astype(np.uint64)
    up = rng.integers(0, 2, n).astype(bool)
    stepped = np.where(up, bits + steps, bits - np.minimum(steps, bits))
    t = rng.integers(p + 3, max(p + 3, s.mantissa_bits + 1) + 1, n)  # a quarter of r's ulp or less
    with np.errstate(all="ignore"):
        nudged = _nearest(s, m * (1.0 + np.where(up, 1.0, -1.0) * np.ldexp(1.0, (-t).astype(np.int32))))
    out = np.where(how == 0, bits, np.where(how == 1, stepped, nudged))
    neg = rng.integers(0, 2, n).astype(np.uint64)
    return out | (neg << np.uint64(s.width - 1))
