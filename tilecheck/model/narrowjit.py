"""Compiled fast paths for the narrow formats: numpy's algorithms of :mod:`tilecheck.model.fast`
in one Numba loop each, lane by lane in registers (bit-identical; the tests compare them).

:func:`block` (binary16/bfloat16, :func:`tilecheck.model.fast.half_block`): the operands widened to
float64 exactly (a table of all 2**16 patterns), ``q = RN64(x)`` by the hardware, ``c = RN(q)`` in
the format (round to nearest even on ``q``'s bits, with overflow to infinity and the subnormal
grid; the double rounding is innocuous, 53 >= 2p + 2), the exact-zero sum sign under ``rm``, then
for directed modes one step of ``c`` toward the exact value by the sign of ``q - c`` (bfloat16
sums: the sign of TwoSum's error where ``q == c``), output flushing and the NaN rule.

:func:`f32_block` (binary32 div/sqrt/rcp, :func:`tilecheck.model.fast.f32_block`): ``q`` in
float64, ``c = RN32(q)`` by the hardware conversion, one step of ``c`` by the sign of ``q - c`` for
directed modes, flushing and the NaN rule.

numpy's paths stay the reference (the tests compare both with the exact integer path) and serve
CuPy arrays.
"""

from __future__ import annotations

import numpy as np
from numba.core import types

from tilecheck.formats import Format
from tilecheck.model import njit

__all__ = ["block", "f32_block"]

_OPS = {"sqrt": 0, "rcp": 1, "add": 2, "sub": 3, "mul": 4, "div": 5}
_ROUND = {"rn": 0, "rz": 1, "rm": 2, "rp": 3}


def _table(name: str) -> np.ndarray:
    """float64 value of every binary16 / bfloat16 pattern (exact widening)."""
    bits = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(all="ignore"):  # NaN patterns widen to NaNs (the NaN rule replaces them)
        if name == "f16":
            return bits.astype(np.uint16).view(np.float16).astype(np.float64)
        return (bits << np.uint32(16)).view(np.float32).astype(np.float64)


_TABLES = {name: _table(name) for name in ("f16", "bf16")}


# bit casts: one register move each
_bits = njit.bitcast(types.float64, types.uint64, "_bits")
_bits32 = njit.bitcast(types.float32, types.uint32, "_bits32")
_float32 = njit.bitcast(types.uint32, types.float32, "_float32")


_jit = njit.cached(nogil=True, error_model="numpy")


@_jit
def _flushed(bits, sign_bit, mag_mask, min_normal):
    """``bits`` with a subnormal (or zero) magnitude replaced by the zero of its sign."""
    return bits & sign_bit if (bits & mag_mask) < min_normal else bits


@_jit
def _round_nearest(q, ebits, mbits):
    """Pattern of ``q`` rounded to nearest even in the format (NaN: a quiet NaN)."""
    qb = _bits(q)
    sign = np.int64(qb >> np.uint64(63)) << 15
    ex = np.int64((qb >> np.uint64(52)) & np.uint64(0x7FF))
    mant = qb & np.uint64((1 << 52) - 1)
    bias = (1 << (ebits - 1)) - 1
    inf = ((1 << ebits) - 1) << mbits
    if ex == 0x7FF:
        return sign | inf | ((1 << (mbits - 1)) if mant != 0 else 0)
    if ex == 0:
        return sign
    e = ex - 1023
    if e > bias:
        return sign | inf
    emin = 1 - bias
    shift = 52 - mbits
    base = 0
    if e >= emin:
        base = (e - emin) << mbits
    else:
        shift += emin - e
        if shift > 62:
            return sign
    sig = mant | np.uint64(1 << 52)
    r = np.int64(sig >> np.uint64(shift))
    rem = sig & ((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
    half = np.uint64(1) << np.uint64(shift - 1)
    if rem > half or (rem == half and (r & 1) == 1):
        r += 1
    out = base + r
    if out >= inf:
        out = inf
    return sign | out


@_jit
def _loop(op, ebits, mbits, rnd, flush_in, flush_out, fixed, propagate, invalid, one, tab, a, b, out):
    """Evaluate lanes of ``a`` (and ``b``) into ``out`` (see the module docstring)."""
    bf16 = ebits == 8
    sign_bit = 0x8000
    mag_mask = 0x7FFF
    exp_mask = ((1 << ebits) - 1) << mbits
    min_normal = 1 << mbits
    quiet = 1 << (mbits - 1)
    for i in range(out.shape[0]):
        x_bits = np.int64(a[i])
        y_bits = np.int64(b[i])
        if flush_in:
            x_bits = _flushed(x_bits, sign_bit, mag_mask, min_normal)
            y_bits = _flushed(y_bits, sign_bit, mag_mask, min_normal)
        x = tab[x_bits]
        y = 0.0
        err = 0.0
        if op == 0:
            q = np.sqrt(x)
        elif op == 1:
            q = 1.0 / x
        else:
            y = tab[y_bits]
            if op == 3:
                y = -y
            if op <= 3:
                q = x + y
                if bf16 and rnd != 0:
                    bb = q - x  # TwoSum: the exact error of x + y
                    err = (x - (q - bb)) + (y - bb)
            elif op == 4:
                q = x * y
            else:
                q = x / y
        r = _round_nearest(q, ebits, mbits)
        if op == 2 or op == 3:
            if rnd == 2 and q == 0.0:
                # an exact zero sum is -0 under rm unless both terms are +0 (IEEE 754 6.3)
                neg = (_bits(x) >> np.uint64(63)) != 0 or (_bits(y) >> np.uint64(63)) != 0
                r = sign_bit if neg else 0
        if rnd != 0:
            c = tab[r]
            d = q - c
            if d == d:  # NaN where q or c is NaN or both infinite: no step
                side = 1 if d > 0 else (-1 if d < 0 else 0)
                if side == 0 and err != 0.0:
                    side = 1 if err > 0 else -1
                negative = (r & sign_bit) != 0
                if rnd == 1:
                    # toward zero where c overshoots: side and c of opposite signs
                    if c != 0.0 and ((side > 0) == (c < 0)) and side != 0:
                        r -= 1
                else:
                    move = side > 0 if rnd == 3 else side < 0
                    if move:
                        # one unit up in value: magnitude up for positive, down for negative
                        if (rnd == 3) != negative:
                            r += 1
                        else:
                            r -= 1
        if flush_out:
            r = _flushed(r, sign_bit, mag_mask, min_normal)
        if (r & mag_mask) > exp_mask:
            if fixed >= 0:
                r = fixed
            else:
                chosen = invalid
                if propagate:
                    if op == 1:
                        first, second = one, x_bits
                    else:
                        first, second = x_bits, y_bits
                    if (second & mag_mask) > exp_mask and op != 0:
                        chosen = second | quiet
                    if (first & mag_mask) > exp_mask:
                        chosen = first | quiet
                r = chosen
        out[i] = r


def block(op: str, fmt: Format, operands, mode, rule, out=None):
    """:func:`tilecheck.model.fast.half_block` on numpy uint16 arrays, compiled."""
    a = np.ascontiguousarray(operands[0], dtype=np.uint16)
    b = np.ascontiguousarray(operands[1], dtype=np.uint16) if len(operands) > 1 else a
    if out is None:
        out = np.empty(a.shape[0], dtype=np.uint16)
    ebits, mbits = fmt.exponent_bits, fmt.mantissa_bits
    fixed = -1 if rule.fixed is None else int(rule.fixed)
    _loop(_OPS[op], ebits, mbits, _ROUND[mode.rounding], bool(mode.flush_in), bool(mode.flush_out), fixed,
          bool(rule.propagate), int(rule.invalid), int(fmt.from_fraction(1)), _TABLES[fmt.name], a, b, out)
    return out


# _loop32 repeats _loop's lane skeleton (flushing, the step, the NaN rule) on uint32 patterns and
# without the widening table: binary32 keeps its own loop so that each compiles to straight-line
# code for its width, without the narrow formats' branches per lane.
@_jit
def _loop32(op, rnd, flush_in, flush_out, fixed, propagate, invalid, a, b, out):
    """binary32 div (op 5), sqrt (0), rcp (1) of ``a`` (and ``b``) into ``out``."""
    sign_bit = np.uint32(0x80000000)
    mag_mask = np.uint32(0x7FFFFFFF)
    exp_mask = np.uint32(0x7F800000)
    min_normal = np.uint32(0x00800000)
    quiet = np.uint32(0x00400000)
    for i in range(out.shape[0]):
        x_bits = np.uint32(a[i])
        y_bits = np.uint32(b[i])
        if flush_in:
            x_bits = _flushed(x_bits, sign_bit, mag_mask, min_normal)
            y_bits = _flushed(y_bits, sign_bit, mag_mask, min_normal)
        x = np.float64(_float32(x_bits))
        if op == 0:
            q = np.sqrt(x)
        elif op == 1:
            q = 1.0 / x
        else:
            q = x / np.float64(_float32(y_bits))
        c32 = np.float32(q)  # round to nearest binary32
        r = np.int64(_bits32(c32))
        if rnd != 0:
            c = np.float64(c32)
            d = q - c  # the side of the exact result from c (NaN: no step)
            # the same step as _loop's, written on d: one njit helper for both loops made this loop
            # about 2.5 times slower (measured on f32 div.rm), so each loop keeps its own copy
            negative = r >= 0x80000000
            if rnd == 1:
                # toward zero where c overshoots: side and c of opposite signs
                if (d < 0 and c > 0) or (d > 0 and c < 0):
                    r -= 1
            elif (d > 0) if rnd == 3 else (d < 0):
                # one unit up in value: magnitude up for positive, down for negative
                if (rnd == 3) != negative:
                    r += 1
                else:
                    r -= 1
        res = np.uint32(r)
        if flush_out:
            res = _flushed(res, sign_bit, mag_mask, min_normal)
        if (res & mag_mask) > exp_mask:
            if fixed >= 0:
                res = np.uint32(fixed)
            else:
                chosen = np.uint32(invalid)
                if propagate:
                    if op == 5 and (y_bits & mag_mask) > exp_mask:
                        chosen = y_bits | quiet
                    if (x_bits & mag_mask) > exp_mask:
                        chosen = x_bits | quiet
                res = chosen
        out[i] = res


def f32_block(op: str, operands, mode, rule, out=None):
    """:func:`tilecheck.model.fast.f32_block` on numpy uint32 arrays, compiled."""
    a = np.ascontiguousarray(operands[0], dtype=np.uint32)
    b = np.ascontiguousarray(operands[1], dtype=np.uint32) if len(operands) > 1 else a
    if out is None:
        out = np.empty(a.shape[0], dtype=np.uint32)
    fixed = -1 if rule.fixed is None else int(rule.fixed)
    _loop32(_OPS[op], _ROUND[mode.rounding], bool(mode.flush_in), bool(mode.flush_out), fixed,
            bool(rule.propagate), int(rule.invalid), a, b, out)
    return out
