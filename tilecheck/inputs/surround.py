"""Operands for the PTX forms of kind ``function`` (cvt, setp, selp, mov, abs, neg, min, max,
copysign, testp, integer and logic ops): edge cases first, then random patterns.

:func:`function_operands` returns one array per source operand in PTX order, in the model's and
the oracle's conventions (uint64 patterns of each operand's own type, bool for predicates). The
edge set of a float operand holds NaNs with payloads (quiet and signalling, both signs), signed
zeros, the subnormal and normal bounds, ±max finite, ±Inf, 1, 1.5, rounding ties and their
neighbours at the destination's precision, the destination's saturation bounds (integer min/max
and neighbours, f16 65504/65520, bf16 max, values just beyond) and negatives; integers get 0, ±1,
min, max and neighbours, and the bounds of the destination type; shift amounts 0, 1, w-1, w, w+1,
2**32-1. Binary and ternary forms start with the special *pairs* (NaN against a number, -0 against
+0, equal values, ordered pairs both ways) so that 32 cases already meet them.

numpy and :mod:`tilecheck.formats` only (``Format.from_fraction`` builds edge values here: this
module chooses inputs, it judges nothing).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

from tilecheck.formats import Format, get_format
from tilecheck.spec.types import PTX_TYPES

__all__ = ["function_operands", "function_case_count"]

_FLOATS = ("f16", "bf16", "f32", "f64", "e4m3", "e5m2")


def _near(f: Format, value) -> list[int]:
    """The pattern nearest ``value`` (a Fraction; saturating to ±Inf) and its two neighbours."""
    v = Fraction(value)
    b = f.from_fraction(abs(v), "rn") if v else 0
    out = {b}
    if b & f.magnitude_mask < f.exponent_mask:
        out.add(b + 1)
    if b:
        out.add(b - 1)
    sign = f.sign_mask if v < 0 else 0
    return [x | sign for x in sorted(out)]


@lru_cache(maxsize=None)
def _float_core(name: str) -> tuple[int, ...]:
    """Destination-independent float edges, most important first."""
    f = get_format(name)
    s, q = f.sign_mask, f.quiet_bit
    one = f.bias << f.mantissa_bits
    vals = [f.exponent_mask | q | 1, s | f.exponent_mask | q | 3,  # quiet NaNs with payloads, both signs
            f.exponent_mask | 1, s | f.exponent_mask | (q >> 1),  # signalling NaNs, both signs
            0, s, one, s | one, f.exponent_mask, s | f.exponent_mask,
            1, s | 1, f.min_normal - 1, s | (f.min_normal - 1), f.min_normal, s | f.min_normal,
            f.max_finite, s | f.max_finite, one + (1 << (f.mantissa_bits - 1)),  # 1.5
            s | (one + (1 << (f.mantissa_bits - 1))), one + 1, one - 1, f.canonical_nan]
    for v in (Fraction(1, 2), Fraction(5, 2), Fraction(-5, 2), Fraction(-1, 2), Fraction(7, 2), 3):
        vals += _near(f, v)
    return tuple(dict.fromkeys(vals))


@lru_cache(maxsize=None)
def _float_for(src: str, dst: str) -> tuple[int, ...]:
    """Float edges of a source format aimed at the destination type's boundaries."""
    f = get_format(src)
    core = _float_core(src)
    vals: list[int] = []
    if dst in _FLOATS:
        d = get_format(dst)
        p = d.precision
        top = d.max_finite  # E4M3's largest value is not the IEEE pattern's (448, not 480)
        max_d = Fraction(2) ** ((top >> d.mantissa_bits) - d.bias) * (1 + Fraction(top & d.mantissa_mask, 2 ** d.mantissa_bits))
        ulp_max = Fraction(2) ** (d.emax - d.mantissa_bits)
        targets = [1 + Fraction(1, 2 ** p), 1 + Fraction(3, 2 ** p),  # ties to even, down and up
                   max_d, max_d + ulp_max / 2, max_d + ulp_max,  # f16 65504 / 65520 (tie to Inf)
                   Fraction(2) ** d.emin, Fraction(2) ** (d.emin - d.mantissa_bits),
                   Fraction(2) ** (d.emin - d.mantissa_bits - 1),  # half the smallest subnormal: a tie
                   Fraction(2) ** d.emin * (1 - Fraction(1, 2 ** p))]  # rounds to the smallest normal
        for t in targets:
            if f.precision > d.precision or f.emax > d.emax or f.emin < d.emin:
                vals += _near(f, t) + _near(f, -t)
    elif dst[0] in "us":
        w = int(dst[1:])
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, (1 << w) - 1)
        for t in (hi, hi + 1, lo, lo - 1, Fraction(2 * hi + 1, 2), Fraction(2 * lo - 1, 2), -1,
                  Fraction(-1, 2), Fraction(-3, 2)):
            if abs(t) < Fraction(2) ** (f.emax + 1):
                vals += _near(f, t)
    # NaNs, zeros, ±1, ±Inf first, then the destination's boundaries, then the other edges
    vals = list(core[:10]) + vals + list(core[10:])
    return tuple(dict.fromkeys(v & ((1 << f.width) - 1) for v in vals))


@lru_cache(maxsize=None)
def _int_for(src: str, dst: str) -> tuple[int, ...]:
    w = int(src[1:])
    m = (1 << w) - 1
    vals = [0, 1, m, 2, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1, 3, (1 << (w - 1)) - 2]
    if dst and dst[0] in "us" and dst != src:
        dw = int(dst[1:])
        for t in (1 << dw) - 1, 1 << (dw - 1), (1 << (dw - 1)) - 1:
            vals += [t - 1, t, t + 1, -t - 1, -t, -t + 1]
    elif dst in _FLOATS:
        d = get_format(dst)
        p = d.precision
        for t in (1 << p) - 1, 1 << p, (1 << p) + 1, (1 << (p + 1)) + 1, (1 << (p + 1)) + 3, (1 << (p + 1)) + 6:
            vals += [t, -t]
        if dst == "f16":
            vals += [65504, 65519, 65520, 65536, -65520]
    return tuple(dict.fromkeys(v & m for v in vals))


_SHIFTS = (0, 1, 2, 31, 32, 33, 63, 64, 65, 0xFFFFFFFF)


def _edges(form, o) -> tuple[int, ...]:
    """Edge patterns of one source operand (ints; predicates 0/1)."""
    t = o.ptx_type
    dst = form.destinations[0].ptx_type
    if t == "pred":
        return (0, 1)
    if form.family in ("shl", "shr") and o.name == "b":
        w = int(form.type[1:])
        return tuple(dict.fromkeys((w - 1, w, w + 1) + _SHIFTS))
    if o.element_format:
        if dst in PTX_TYPES and PTX_TYPES[dst].is_packed:
            dst = PTX_TYPES[dst].element  # a packed conversion's lanes: aim at the lane's format
        core = _float_for(o.element_format, dst if dst != "pred" and form.family == "cvt" else o.element_format)
        if o.lanes == 2:  # both lanes hit the edge set, in different combinations
            n, w = len(core), get_format(o.element_format).width
            return tuple(core[i] | (core[(i * 5 + 3) % n] << w) for i in range(n))
        return core
    if t[0] in "ubs":
        return _int_for(t if t[0] != "b" else "u" + t[1:], dst if form.family == "cvt" else "")
    raise ValueError(f"{form.name}: no edge set for operand type {t}")


def _pair_indices(k: int) -> list[tuple[int, int]]:
    """Index pairs into two edge lists that put the specials against each other: the first entries of
    :func:`_float_core` are qNaN, -qNaN, sNaN, -sNaN, +0, -0, 1, -1, Inf, -Inf, ..."""
    core = [(0, 6), (6, 0), (1, 7), (2, 2), (0, 1), (4, 5), (5, 4), (4, 4), (5, 5), (6, 6), (6, 7),
            (7, 6), (8, 9), (9, 8), (8, 8), (10, 4), (11, 5), (10, 11), (3, 9), (12, 14), (16, 17), (6, 19)]
    return [(i, j) for i, j in core if i < k and j < k]


def _uses_pairs(form) -> bool:
    s = form.sources
    return len(s) >= 2 and s[0].ptx_type != "pred" and s[1].ptx_type == s[0].ptx_type


def function_case_count(form, requested: int) -> int:
    """How many cases ``form`` needs at least to meet its whole edge set (at least ``requested``)."""
    edges = [_edges(form, o) for o in form.sources]
    need = max(len(e) for e in edges)
    if _uses_pairs(form):
        need += len(_pair_indices(min(len(edges[0]), len(edges[1]))))
    return max(requested, need)


def function_operands(form, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` cases per source operand: special pairs, then each operand's edges (rotated against each
    other), then random patterns. Deterministic given ``rng``."""
    sources = form.sources
    edges = [_edges(form, o) for o in sources]
    cols: list[list[int]] = [[] for _ in sources]
    if _uses_pairs(form):
        for i, j in _pair_indices(min(len(edges[0]), len(edges[1]))):
            cols[0].append(edges[0][i])
            cols[1].append(edges[1][j])
            for c in range(2, len(sources)):
                cols[c].append(edges[c][len(cols[0]) % len(edges[c])])
    longest = max(len(e) for e in edges)
    for k in range(longest):
        for c, e in enumerate(edges):
            cols[c].append(e[(k * (2 * c + 1) + c) % len(e)])  # different strides: varied combinations
    out = []
    for o, col in zip(sources, cols):
        col = col[:n]
        extra = n - len(col)
        if o.ptx_type == "pred":
            arr = np.array(col + rng.integers(0, 2, extra).tolist(), dtype=bool)
        else:
            w = o.container_bits
            rand = rng.integers(0, 1 << 63, extra, dtype=np.uint64)
            rand = (rand << np.uint64(1)) | rng.integers(0, 2, extra, dtype=np.uint64)
            if w < 64:
                rand &= np.uint64((1 << w) - 1)
            if form.family in ("shl", "shr") and o.name == "b":
                rand %= np.uint64(2 * int(form.type[1:]) + 2)
            arr = np.concatenate([np.array(col, dtype=np.uint64), rand])
        out.append(arr)
    return out
