"""The simulator's fast floating-point conversions: the common ``cvt`` forms on whole lanes.

Exact widenings (f16 -> f32, bf16 -> f32) and round-to-nearest-even narrowings (f32 -> f16,
f32 -> bf16), NaNs made canonical as the model does (``0x7FFF`` for the halves, ``0x7FFFFFFF`` for
binary32). Each conversion exists twice, with one meaning: as numpy expressions over whole arrays
(the reference form, and what runs where Numba does not compile) and as a Numba loop, which runs
where it compiles: a narrowing written as numpy makes a dozen passes over its lanes (and a binary32
addition on subnormal values, slow on most processors), the loop makes one.
tests/sim/test_compiled_ptx.py checks both against the model's general conversion
(``tilecheck.model.ops.convert``); the plan (:mod:`tilecheck.sim.plan`) takes them from
:func:`native_convert`.
"""

from __future__ import annotations

import numpy as np

from tilecheck.model import njit

__all__ = ["native_convert", "numpy_convert"]

F16_NAN, F32_NAN, BF16_NAN = 0x7FFF, 0x7FFFFFFF, 0x7FFF


def _f16_f32(v):
    out = v.view(np.float16).astype(np.float32).view(np.uint32)
    return np.where((v & np.uint16(0x7FFF)) > np.uint16(0x7C00), np.uint32(F32_NAN), out)


def _f32_f16(v):
    # integer rounding of the pattern for normal results; results below 2^-14 are rounded to the
    # subnormal grid (multiples of 2^-24) by one binary32 addition of 0.5, whose ulp is 2^-24
    mag = v & np.uint32(0x7FFFFFFF)
    normal = ((mag + np.uint32(0xFFF) + ((mag >> np.uint32(13)) & np.uint32(1))) >> np.uint32(13)) \
        - np.uint32(112 << 10)
    with np.errstate(all="ignore"):
        sub = (mag.view(np.float32) + np.float32(0.5)).view(np.uint32) - np.uint32(0x3F000000)
    h = np.where(mag < np.uint32(0x38800000), sub, normal)
    h = np.where(mag >= np.uint32(0x477FF000), np.uint32(0x7C00), h)
    h = h | ((v >> np.uint32(16)) & np.uint32(0x8000))
    return np.where(mag > np.uint32(0x7F800000), np.uint32(F16_NAN), h).astype(np.uint16)


def _bf16_f32(v):
    out = v.astype(np.uint32) << np.uint32(16)
    return np.where((v & np.uint16(0x7FFF)) > np.uint16(0x7F80), np.uint32(F32_NAN), out)


def _f32_bf16(v):
    # round to nearest even on the bit pattern: uniform spacing within a binade, carries into the
    # exponent (and to infinity) are what rounding up means
    lsb = (v >> np.uint32(16)) & np.uint32(1)
    out = ((v + np.uint32(0x7FFF) + lsb) >> np.uint32(16)).astype(np.uint16)
    return np.where((v & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000), np.uint16(BF16_NAN), out)


_NUMPY = {("f16", "f32"): _f16_f32, ("f32", "f16"): _f32_f16, ("bf16", "f32"): _bf16_f32,
          ("f32", "bf16"): _f32_bf16}


@njit.cached()
def _f16_f32_loop(v, out):
    for i in range(v.shape[0]):
        x = np.uint32(v[i])
        mag = x & np.uint32(0x7FFF)
        sign = (x & np.uint32(0x8000)) << np.uint32(16)
        if mag > np.uint32(0x7C00):
            out[i] = np.uint32(F32_NAN)
        elif mag >= np.uint32(0x0400):  # normal, or infinity: the exponent rebiased by 112
            out[i] = sign | ((mag + np.uint32(0x1C000)) << np.uint32(13) if mag < np.uint32(0x7C00)
                             else np.uint32(0x7F800000))
        elif mag == np.uint32(0):
            out[i] = sign
        else:  # subnormal: m * 2^-24 with m < 2^10, normalized
            m = mag
            e = np.uint32(113)  # the binary32 exponent field of 2^-14
            while m < np.uint32(0x400):
                m <<= np.uint32(1)
                e -= np.uint32(1)
            out[i] = sign | (e << np.uint32(23)) | ((m & np.uint32(0x3FF)) << np.uint32(13))


@njit.cached()
def _f32_f16_loop(v, out):
    for i in range(v.shape[0]):
        x = v[i]
        mag = x & np.uint32(0x7FFFFFFF)
        if mag > np.uint32(0x7F800000):
            out[i] = np.uint16(F16_NAN)
            continue
        if mag >= np.uint32(0x477FF000):  # rounds to 2^16 or more: infinity
            h = np.uint32(0x7C00)
        elif mag >= np.uint32(0x38800000):  # normal results: integer rounding of the pattern
            h = ((mag + np.uint32(0xFFF) + ((mag >> np.uint32(13)) & np.uint32(1))) >> np.uint32(13)) \
                - np.uint32(112 << 10)
        else:
            # below 2^-14: round to the subnormal grid, multiples of 2^-24 (q units, to nearest even)
            e = mag >> np.uint32(23)
            if e < np.uint32(102):  # under 2^-25: below half the smallest subnormal
                h = np.uint32(0)
            else:
                m = (mag & np.uint32(0x7FFFFF)) | np.uint32(0x800000)  # value m * 2^(e - 150)
                sh = np.uint32(126) - e
                q = m >> sh
                rem = m & ((np.uint32(1) << sh) - np.uint32(1))
                half = np.uint32(1) << (sh - np.uint32(1))
                if rem > half or (rem == half and (q & np.uint32(1)) != np.uint32(0)):
                    q += np.uint32(1)
                h = q
        out[i] = np.uint16(h | ((x >> np.uint32(16)) & np.uint32(0x8000)))


@njit.cached()
def _bf16_f32_loop(v, out):
    for i in range(v.shape[0]):
        x = np.uint32(v[i])
        out[i] = np.uint32(F32_NAN) if (x & np.uint32(0x7FFF)) > np.uint32(0x7F80) else x << np.uint32(16)


@njit.cached()
def _f32_bf16_loop(v, out):
    for i in range(v.shape[0]):
        x = v[i]
        if (x & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
            out[i] = np.uint16(BF16_NAN)
        else:
            out[i] = np.uint16((x + np.uint32(0x7FFF) + ((x >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))


_LOOPS = {("f16", "f32"): (_f16_f32_loop, np.uint16, np.uint32), ("f32", "f16"): (_f32_f16_loop, np.uint32, np.uint16),
          ("bf16", "f32"): (_bf16_f32_loop, np.uint16, np.uint32), ("f32", "bf16"): (_f32_bf16_loop, np.uint32, np.uint16)}

LOOP_MIN = 256
"""Fewer lanes take the numpy form: a compiled call's fixed cost is then more than it saves."""


def numpy_convert(src: str, dst: str, rounding: str | None, ftz: bool):
    """The numpy form of the conversion ``src`` -> ``dst`` (a function of a uint array), or None
    where the model's general conversion is needed (directed rounding, ``.ftz``, other formats)."""
    if ftz or rounding not in (None, "rn"):
        return None
    return _NUMPY.get((src, dst))


def native_convert(src: str, dst: str, rounding: str | None, ftz: bool):
    """:func:`numpy_convert`, run as its Numba loop where Numba compiles and the lanes are many."""
    plain = numpy_convert(src, dst, rounding, ftz)
    if plain is None or not njit.enabled():
        return plain
    loop, src_dtype, dst_dtype = _LOOPS[(src, dst)]

    def convert(v):
        v = np.ascontiguousarray(v)
        if v.ndim != 1 or v.shape[0] < LOOP_MIN or v.dtype != src_dtype:
            return plain(v)
        out = np.empty(v.shape[0], dtype=dst_dtype)
        loop(v, out)
        return out
    convert.loop = loop  # (for the tests: the compiled form itself)
    return convert
