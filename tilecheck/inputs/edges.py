"""Edge-class bit patterns of a format, shared by the Hypothesis strategies and the numpy
generators (plain ints; no Hypothesis, no randomness).

The classes follow where floating-point implementations go wrong: signed zeros, the smallest
and largest subnormals, the subnormal/normal boundary, one and its neighbours, powers of two and
their neighbours, the largest finite number (overflow), infinities, and NaNs of both kinds with
and without payloads (quiet-bit handling, payload propagation, sign of NaN).

Each function takes a :class:`~tilecheck.formats.Format` (a loaded database's, ``form.format``)
or a format name, looked up in the default spec root's formats; results are cached per Format
value, so two roots whose formats differ never share an entry.
"""

from __future__ import annotations

from functools import lru_cache

from tilecheck.formats import Format, get_format

__all__ = ["edge_values", "interesting_exponent_fields", "interesting_fractions", "nan_values"]


@lru_cache(maxsize=None)
def interesting_exponent_fields(fmt: Format | str) -> tuple[int, ...]:
    """Biased exponent fields worth hitting: 0 (subnormals), the first normals, around the bias
    (values near 1), around ``2*bias`` (values whose reciprocal is near the smallest normal), the
    largest finite fields, and the all-ones field (inf/NaN)."""
    f = get_format(fmt)
    top = (1 << f.exponent_bits) - 1
    cands = {0, 1, 2, 3, f.bias - 2, f.bias - 1, f.bias, f.bias + 1, f.bias + 2,
             2 * f.bias - 2, 2 * f.bias - 1, 2 * f.bias, top - 3, top - 2, top - 1, top}
    return tuple(sorted(e for e in cands if 0 <= e <= top))


@lru_cache(maxsize=None)
def interesting_fractions(fmt: Format | str) -> tuple[int, ...]:
    """Fraction fields worth hitting: 0 (powers of two), 1 and 2 (just above), all ones and one
    less (just below the next power of two), the quiet bit and its neighbours (NaN kinds and the
    middle of a binade)."""
    f = get_format(fmt)
    mask, qb = f.mantissa_mask, f.quiet_bit
    cands = {0, 1, 2, 3, mask, mask - 1, mask - 2, qb, qb - 1, qb + 1, qb >> 1}
    return tuple(sorted(v for v in cands if 0 <= v <= mask))


@lru_cache(maxsize=None)
def nan_values(fmt: Format | str) -> tuple[int, ...]:
    """NaN patterns of both signs: the default and canonical NaNs, quiet NaNs with small and
    full payloads, and signalling NaNs (quiet bit clear) with the smallest and largest payloads."""
    f = get_format(fmt)
    e, qb, mask = f.exponent_mask, f.quiet_bit, f.mantissa_mask
    pos = {f.default_nan & f.magnitude_mask, f.canonical_nan & f.magnitude_mask,
           e | qb, e | qb | 1, e | mask, e | 1, e | (qb - 1), e | (qb >> 1)}
    pos = {v for v in pos if (v & mask) != 0}  # e | 1 == e | qb when there is one fraction bit
    return tuple(sorted(pos | {v | f.sign_mask for v in pos}))


@lru_cache(maxsize=None)
def edge_values(fmt: Format | str) -> tuple[int, ...]:
    """Every edge-class pattern of the format, both signs, sorted and without duplicates."""
    f = get_format(fmt)
    one = f.bias << f.mantissa_bits
    mag = {
        0, 1, 2, 3,  # zero, smallest subnormals
        f.quiet_bit, f.mantissa_mask - 1, f.mantissa_mask,  # mid and largest subnormals
        f.min_normal, f.min_normal + 1, 2 * f.min_normal - 1, 2 * f.min_normal,  # boundary
        one - 1, one, one + 1, one + f.min_normal,  # 1 and its neighbours, 2
        one - f.min_normal,  # 1/2
        f.max_finite - 1, f.max_finite,  # overflow edge
    }
    if f.specials == "ieee":
        mag.add(f.inf)
    # powers of two next to the extremes of the exponent range and their neighbours
    for field in interesting_exponent_fields(f):
        for frac in (0, 1, f.mantissa_mask):
            mag.add((field << f.mantissa_bits) | frac)
    mag = {v for v in mag if 0 <= v <= f.magnitude_mask}
    if f.specials == "ieee":
        mag = {v for v in mag if not (v > f.exponent_mask)}  # NaNs come from nan_values
    values = mag | {v | f.sign_mask for v in mag}
    if f.specials == "ieee":
        values |= set(nan_values(f))
    return tuple(sorted(values))
