"""Fast numpy input generators for differential campaigns (millions of cases per second).

Each function takes a format (a :class:`~tilecheck.formats.Format`, or a name looked up in the
default spec root's formats), a count ``n`` and a ``numpy.random.Generator`` (pass a seeded one
to reproduce a campaign) and returns arrays of the format's unsigned dtype:

* :func:`edge_biased` -- half edge-class patterns, a quarter structured, a quarter uniform (the
  numpy twin of :func:`tilecheck.testing.strategies.bits`);
* :func:`integer_edge_biased` -- the same mix for the integer operands of conversions;
* :func:`hard_division_pairs` -- ``(a, b)`` with the exact quotient a tiny fraction of an ulp from
  a grid point or midpoint (Matula--McFearin construction);
* :func:`hard_sqrt_inputs` -- ``a`` with ``sqrt(a)`` a tiny fraction of an ulp from a grid point
  or midpoint;
* :func:`ftz_boundary_pairs` -- operands whose exact result is below ``2**emin`` but rounds to the
  smallest normal (FTZ before vs after rounding disagree).

The mathematics, the bounds and why they hold are in :mod:`tilecheck.testing.construct`; this
module is the same constructions vectorised on uint64 with a 64x64->128-bit product, so it
covers every format up to f64. Results are checked (exact divisibility, representability) and a
violated check raises ``RuntimeError`` rather than returning a wrong "hard" case.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format, get_format
from tilecheck.inputs.edges import edge_values, interesting_exponent_fields, interesting_fractions

__all__ = ["edge_biased", "integer_edge_biased", "hard_division_pairs", "hard_sqrt_inputs", "ftz_boundary_pairs", "encode"]

_U = np.uint64
_M32 = _U(0xFFFFFFFF)


def _bitlen(x: np.ndarray) -> np.ndarray:
    """Bit length of each uint64, as int64 (0 for 0)."""
    x = x.astype(_U)
    n = np.zeros(x.shape, dtype=np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = x >= _U(1 << s)
        n += np.where(big, s, 0)
        x = np.where(big, x >> _U(s), x)
    return n + (x > 0)


def _mulw(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full 128-bit product of uint64 arrays as ``(hi, lo)`` (32-bit limbs, no overflow)."""
    a0, a1 = a & _M32, a >> _U(32)
    b0, b1 = b & _M32, b >> _U(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _U(32)) + (p01 & _M32) + (p10 & _M32)  # < 3 * 2**32, no overflow
    lo = (p00 & _M32) | ((mid & _M32) << _U(32))
    hi = p11 + (p01 >> _U(32)) + (p10 >> _U(32)) + (mid >> _U(32))
    return hi, lo


def _add_small(hi: np.ndarray, lo: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo) + k`` for a small signed int64 ``k`` (carry/borrow into ``hi``)."""
    mag = np.abs(k).astype(_U)
    pos = k >= 0
    new_lo = np.where(pos, lo + mag, lo - mag)
    carry = (pos & (new_lo < lo)).astype(_U)
    borrow = (~pos & (lo < mag)).astype(_U)
    return hi + carry - borrow, new_lo


def _shr_wide(hi: np.ndarray, lo: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``(hi, lo) >> n`` for ``0 < n < 64``, when the result fits in 64 bits."""
    n = n.astype(_U)
    return (hi << (_U(64) - n)) | (lo >> n)


def _wide_lt(ahi, alo, bhi, blo) -> np.ndarray:
    return (ahi < bhi) | ((ahi == bhi) & (alo < blo))


def _wide_const(v: int) -> tuple[np.uint64, np.uint64]:
    return _U(v >> 64), _U(v & ((1 << 64) - 1))


def encode(fmt: Format | str, neg, sig, exp) -> np.ndarray:
    """Bits of ``(-1)**neg * sig * 2**exp`` elementwise (uint64 ``sig``, int ``exp``), which must
    be exactly representable and finite (``RuntimeError`` otherwise)."""
    f = get_format(fmt)
    sig = np.asarray(sig, dtype=_U)
    exp = np.asarray(exp, dtype=np.int64)
    neg = np.asarray(neg, dtype=bool)
    bl = _bitlen(sig)
    top = exp + bl - 1
    quantum = np.maximum(top, f.emin) - f.mantissa_bits
    shift = exp - quantum
    down = np.maximum(-shift, 0).astype(_U)
    if ((sig & ((_U(1) << down) - _U(1))) != 0).any() or ((sig != 0) & (top > f.emax)).any():
        raise RuntimeError(f"encode: value not representable in {f.name}")
    field = np.where(shift >= 0, sig << np.maximum(shift, 0).astype(_U), sig >> down)
    normal = (sig != 0) & (top >= f.emin)
    biased = np.where(normal, top + f.bias, 0).astype(_U)
    mant = np.where(normal, field - _U(f.min_normal), field)
    out = (biased << _U(f.mantissa_bits)) | mant | np.where(neg, _U(f.sign_mask), _U(0))
    return out.astype(f.uint)


def edge_biased(fmt: Format | str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` patterns: about half edge-class values, a quarter structured (interesting or random
    exponent field x interesting or random fraction, random sign), a quarter uniform."""
    f = get_format(fmt)
    edges = np.array(edge_values(f), dtype=_U)
    kind = rng.integers(0, 4, n)
    out = edges[rng.integers(0, len(edges), n)]
    fields = np.array(interesting_exponent_fields(f), dtype=_U)
    fracs = np.array(interesting_fractions(f), dtype=_U)
    field = np.where(rng.random(n) < 0.67, fields[rng.integers(0, len(fields), n)],
                     rng.integers(0, 1 << f.exponent_bits, n, dtype=_U))
    frac = np.where(rng.random(n) < 0.67, fracs[rng.integers(0, len(fracs), n)],
                    rng.integers(0, 1 << f.mantissa_bits, n, dtype=_U))
    sign = np.where(rng.random(n) < 0.5, _U(f.sign_mask), _U(0))
    structured = sign | (field << _U(f.mantissa_bits)) | frac
    uniform = rng.integers(0, 1 << f.width, n, dtype=_U)
    out = np.where(kind == 2, structured, np.where(kind == 3, uniform, out))
    return out.astype(f.uint)


def integer_edge_biased(fmt, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` patterns of an :class:`~tilecheck.formats.IntegerFormat`: about a third edge values
    (0, +-1, the extremes, +-2^k and +-(2^k +- 1) for every k), a third structured (a random
    magnitude in [2^k, 2^(k+1)) whose low d bits, d random, are 10...0, 01...1, 10...01, 1...1 or
    0...0: the ties and near-ties of rounding it to a float of any precision), a third uniform."""
    w = fmt.width
    mask = _U((1 << w) - 1)
    mag_bits = w - 1 if fmt.signed else w
    edges = {0, 1, 2, fmt.low, fmt.low + 1, fmt.high, fmt.high - 1}
    for k in range(1, mag_bits):
        for v in (1 << k, (1 << k) - 1, (1 << k) + 1):
            edges.update({v, -v} if fmt.signed else {v})
    edge_bits = np.array(sorted(fmt.from_int(v) for v in edges if fmt.low <= v <= fmt.high), dtype=_U)
    kind = rng.integers(0, 3, n)
    out = edge_bits[rng.integers(0, len(edge_bits), n)]
    k = rng.integers(0, mag_bits, n).astype(_U)
    top = _U(1) << k
    mag = top | (rng.integers(0, 1 << 62, n, dtype=_U) & (top - _U(1)))
    d = (rng.integers(0, 1 << 62, n, dtype=_U) % (k + _U(1))).astype(_U)  # 0..k low bits set by pattern
    low = (_U(1) << d) - _U(1)
    half = np.where(d > 0, _U(1) << (d - _U(1)) % _U(64), _U(0))
    pattern = rng.integers(0, 5, n)
    tail = np.select([pattern == 0, pattern == 1, pattern == 2, pattern == 3],
                     [half, half - np.minimum(half, _U(1)), half | np.minimum(d, _U(1)), low], _U(0))
    structured = (mag & ~low) | (tail & low)
    if fmt.signed:
        structured = np.where(rng.random(n) < 0.5, (~structured + _U(1)) & mask, structured)
    uniform = rng.integers(0, 1 << 62, n, dtype=_U) ^ (rng.integers(0, 4, n, dtype=_U) << _U(62))
    out = np.where(kind == 1, structured, np.where(kind == 2, uniform, out)) & mask
    return out.astype(fmt.uint)


def _inv_pow2_64(y: np.ndarray) -> np.ndarray:
    """Inverse of odd uint64 ``y`` modulo 2**64 (Newton: correct bits double each step)."""
    inv = y.copy()  # y*y = 1 mod 8: three correct bits
    for _ in range(5):
        inv = inv * (_U(2) - y * inv)
    return inv


def _place(f: Format, x, y_bits: int, d, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random ``(ea, eb)`` with ``ea - eb = d`` making ``x * 2**ea`` and a ``y_bits``-bit
    ``y * 2**eb`` representable (see ``construct._place``)."""
    low = f.emin - f.mantissa_bits + np.maximum(0, -d)
    high = f.emax + 1 - np.maximum(y_bits, _bitlen(x) + d)
    if (high < low).any():
        raise RuntimeError(f"no exponent placement in {f.name}")
    eb = rng.integers(low, high + 1)
    return eb + d, eb


def hard_division_pairs(fmt: Format | str, n: int, rng: np.random.Generator,
                        midpoint: bool | None = None, subnormal_fraction: float = 0.25,
                        kmax: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` whose exact quotient is ``|k|/Y`` ulp (``<= |k| * 2**(1-p)``) from a grid point
    (``midpoint=False``) or ``|k|/(2Y)`` ulp from a midpoint (``midpoint=True``; ``None`` mixes
    both), ``k`` odd with ``|k| <= kmax``; a ``subnormal_fraction`` of them has a subnormal
    result. Random signs, exponents over the whole admissible range."""
    f = get_format(fmt)
    p, m = f.precision, f.mantissa_bits
    mid = rng.random(n) < 0.5 if midpoint is None else np.full(n, bool(midpoint))
    sub = rng.random(n) < subnormal_fraction
    pp = np.where(sub, rng.integers(1, p, n), p)  # significant bits of the result
    nbits = pp + mid  # modulus 2**nbits
    kk = min(kmax, (1 << max(p - 2, 1)) - 1)
    ks = np.array([k for k in range(-kk, kk + 1) if k % 2], dtype=np.int64)
    k = ks[rng.integers(0, len(ks), n)]
    y = np.zeros(n, dtype=_U)
    q = np.zeros(n, dtype=_U)
    todo = np.ones(n, dtype=bool)
    for attempt in range(256):
        idx = np.nonzero(todo)[0]
        if idx.size == 0:
            break
        if attempt:  # narrow formats may lack a divisor for one sign of k; |k| stays the same
            k[idx] = np.where(rng.random(idx.size) < 0.5, -k[idx], k[idx])
        yy = _U(1 << (p - 1)) + _U(2) * rng.integers(0, 1 << (p - 2), idx.size, dtype=_U) + _U(1)
        mask = (_U(1) << nbits[idx].astype(_U)) - _U(1)
        qq = (k[idx].view(_U) * (_U(0) - _inv_pow2_64(yy))) & mask  # -k * Y**-1 mod 2**nbits
        ok = qq > (mask >> _U(1))  # top bit set
        y[idx[ok]] = yy[ok]
        q[idx[ok]] = qq[ok]
        todo[idx[ok]] = False
    if todo.any():
        raise RuntimeError(f"hard_division_pairs: no divisor found for {int(todo.sum())} cases in {f.name}")
    hi, lo = _add_small(*_mulw(q, y), k)
    if ((lo & ((_U(1) << nbits.astype(_U)) - _U(1))) != 0).any():
        raise RuntimeError("hard_division_pairs: Q*Y + k is not divisible by 2**n")
    x = _shr_wide(hi, lo, nbits)
    qlo, qhi = f.emin - m, f.emax - m
    qe = np.where(rng.random(n) < 0.1, rng.choice([qlo, qlo + 1, qhi - 1, qhi], n), rng.integers(qlo, qhi + 1, n))
    qe = np.where(sub, qlo, qe)
    ea, eb = _place(f, x, p, qe + pp, rng)
    return (encode(f, rng.random(n) < 0.5, x, ea), encode(f, rng.random(n) < 0.5, y, eb))


def hard_sqrt_inputs(fmt: Format | str, n: int, rng: np.random.Generator,
                     midpoint: bool | None = None, kmax: int = 63) -> np.ndarray:
    """Positive ``a`` whose square root is ``|k|/(2S)`` ulp (``<= |k| * 2**-p``) from a grid point
    or ``|k|/(4S)`` ulp (``<= |k| * 2**-(p+2)``) from a midpoint, ``k = -1 mod 8``,
    ``|k| <= kmax``."""
    f = get_format(fmt)
    p = f.precision
    ks = np.array([k for k in range(-kmax, kmax + 1) if (-k) % 8 == 1 and abs(k) < (1 << max(p - 2, 1))],
                  dtype=np.int64)
    k = ks[rng.integers(0, len(ks), n)]
    mid = rng.random(n) < 0.5 if midpoint is None else np.full(n, bool(midpoint))
    s = p + mid  # bits of S
    j = 2 * s - p
    jm = (_U(1) << j.astype(_U)) - _U(1)
    c = (_U(0) - k.view(_U)) & jm  # -k mod 2**j, = 1 mod 8
    r = np.ones(n, dtype=_U)
    for i in range(3, int(j.max())):  # Hensel lifting: r*r = c mod 2**i -> mod 2**(i+1)
        off = ((r * r - c) & _U((1 << (i + 1)) - 1)) != 0
        r = np.where((i < j) & off, r + _U(1 << (i - 1)), r)
    r &= jm
    half = _U(1) << (j - 1).astype(_U)
    cands = np.stack([r, (_U(0) - r) & jm, (r + half) & jm, (half - r) & jm])
    valid = (cands >= (_U(1) << (s - 1).astype(_U))) & (cands < (_U(1) << s.astype(_U)))
    if not valid.any(axis=0).all():
        raise RuntimeError("hard_sqrt_inputs: no square root of the right length")
    pick = np.argmax(rng.random((4, n)) * valid, axis=0)
    big_s = cands[pick, np.arange(n)]
    hi, lo = _add_small(*_mulw(big_s, big_s), k)
    if ((lo & jm) != 0).any():
        raise RuntimeError("hard_sqrt_inputs: S*S + k is not divisible by 2**j")
    a = _shr_wide(hi, lo, j)
    low = f.emin - f.mantissa_bits
    high = f.emax + 1 - _bitlen(a)
    low = low + (low - j) % 2
    high = high - (high - j) % 2
    ea = low + 2 * rng.integers(0, (high - low) // 2 + 1)
    return encode(f, np.zeros(n, dtype=bool), a, ea)


def ftz_boundary_pairs(fmt: Format | str, n: int, rng: np.random.Generator, op: str = "div",
                       rounding: str = "rn") -> tuple[np.ndarray, ...]:
    """Operands of ``op`` (div, mul: two arrays; fma: three) whose exact result is below
    ``2**emin`` in magnitude but rounds to the smallest normal under ``rounding`` (rn: random
    signs; rp: positive; rm: negative results). All operands are normal, so input flushing does
    not change the case. See :mod:`tilecheck.testing.construct` for why rn division cases are
    exact ties."""
    f = get_format(fmt)
    p, m, emin = f.precision, f.mantissa_bits, f.emin
    if rounding not in ("rn", "rp", "rm"):
        raise ValueError(f"no result rounds up to the smallest normal under {rounding!r}")
    neg = rng.random(n) < 0.5 if rounding == "rn" else np.full(n, rounding == "rm")
    pos = np.zeros(n, dtype=bool)
    if op == "div":
        ea = rng.integers(emin - p + 1, f.emax + emin - p + 1, n)
        a = encode(f, neg, np.full(n, (1 << p) - 1, dtype=_U), ea)
        b = encode(f, pos, np.ones(n, dtype=_U), ea - emin + p)
        if rounding != "rn":  # half of them: (Y-1)/Y * 2**emin, rounds away to 2**emin
            y = _U((1 << (p - 1)) + 2) + rng.integers(0, (1 << (p - 1)) - 2, n, dtype=_U)
            ea2, eb2 = _place(f, y - _U(1), p, np.full(n, emin), rng)
            away = rng.random(n) < 0.5
            a = np.where(away, encode(f, neg, y - _U(1), ea2), a)
            b = np.where(away, encode(f, pos, y, eb2), b)
        return a, b
    if op == "mul":
        low_t = (1 << (2 * p - 1)) - (1 << (p - 1))  # X*Y in [low_t, 2**(2p-1))
        lhi, llo = _wide_const(low_t)
        uhi, ulo = _wide_const(1 << (2 * p - 1))
        start = int(np.ceil(np.sqrt(float(low_t))))
        x = np.zeros(n, dtype=_U)
        y = np.zeros(n, dtype=_U)
        todo = np.ones(n, dtype=bool)
        for _ in range(256):
            idx = np.nonzero(todo)[0]
            if idx.size == 0:
                break
            xx = rng.integers(start, 1 << p, idx.size, dtype=_U)
            yy = np.floor(float(low_t) / xx.astype(np.float64)).astype(_U)
            for _ in range(4):  # float estimate is off by a few units for p = 53: correct it
                yy = yy + _wide_lt(*_mulw(xx, yy), lhi, llo).astype(_U)
            for _ in range(4):
                yy = yy - (~_wide_lt(*_mulw(xx, yy - _U(1)), lhi, llo)).astype(_U)
            ok = _wide_lt(*_mulw(xx, yy), uhi, ulo) & (yy < _U(1 << p)) & ~_wide_lt(*_mulw(xx, yy), lhi, llo)
            x[idx[ok]] = xx[ok]
            y[idx[ok]] = yy[ok]
            todo[idx[ok]] = False
        if todo.any():
            raise RuntimeError(f"ftz_boundary_pairs: no mul significands found in {f.name}")
        ea = rng.integers(emin - m, -p + 1, n)
        return encode(f, neg, x, ea), encode(f, pos, y, emin - 2 * p + 1 - ea)
    if op == "fma":
        x = rng.integers(1 << (p - 1), 1 << p, n, dtype=_U)
        y = rng.integers(1 << (p - 1), 1 << p, n, dtype=_U)
        hi, lo = _mulw(x, y)
        bl = np.where(hi > 0, 64 + _bitlen(hi), _bitlen(lo))
        lo_e, hi_e = emin - m, f.emax - m
        top = emin - p - bl  # product <= 2**(emin - p); deeper ones keep both operands normal
        total = top - rng.integers(0, top - 2 * lo_e + 1)
        ea = rng.integers(np.maximum(lo_e, total - hi_e), np.minimum(hi_e, total - lo_e) + 1)
        return (encode(f, ~neg, x, ea), encode(f, pos, y, total - ea),
                encode(f, neg, np.ones(n, dtype=_U), np.full(n, emin)))
    raise ValueError(f"no FTZ boundary construction for {op!r}; known: div, mul, fma")
