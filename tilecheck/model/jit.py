"""binary64 add, sub, mul, fma, div and rcp in every rounding mode as compiled loops (Numba).

The numpy paths (:mod:`tilecheck.model.eft`, :mod:`tilecheck.model.fast`) spend one pass over
memory per operation of an error-free transformation; here the same transformations run per
element in one compiled loop, on numpy arrays only (CuPy arrays keep the numpy-style paths). Each
lane computes the round-to-nearest result natively and, for directed rounding, the sign of the
exact residual ``x - s``, which decides whether ``s`` moves one unit on its bit pattern (as in
:mod:`tilecheck.model.fast`). The fused multiply-add is LLVM's ``llvm.fma.f64`` (one correctly
rounded operation, the hardware instruction where there is one); Numba's default (no
``fastmath``) neither contracts ``a*b + c`` nor reorders float operations, which the
transformations depend on.

Residuals, per operation (``|.|`` magnitudes, ``s`` the nearest result):

* ``add``/``sub``: Knuth's TwoSum error term, exact whenever nothing overflows; an overflowed sum
  of finite operands lies beyond the exact value; an exact zero sum takes the sign rule.
* ``mul``: ``fma(|a|, |b|, -|s|)``: the exact value ``|a*b| - |s|`` is a multiple of
  ``ulp(a)*ulp(b)``, at least ``2**-981`` when non-zero once products below ``2**-800`` are
  scaled (the smaller factor and ``s`` by ``2**200``: exact, no overflow), so its rounding keeps
  its sign. A product that over- or underflowed to inf or 0 lies beyond the exact value.
* ``div``/``rcp``: the remainder ``fma(-|q|, |b|, |a|)``, a multiple of ``min(ulp(a),
  ulp(q)*ulp(b))``; scaling ``a`` and ``q`` by ``2**200`` when ``|a| < 2**-800`` or ``q`` is
  subnormal keeps a non-zero remainder above ``2**-981``.
* ``fma``: ``s`` is the native fused operation. Where ``s == c`` the residual is the product
  itself. Otherwise Boldo and Melquiond's emulation with rounding to odd, as in :mod:`eft`
  (``a*b = uh + ul`` exactly with ``ul = fma(a, b, -uh)`` for products of at least ``2**-964``;
  smaller ones are first scaled by ``2**120`` -- the smaller factor and ``c`` -- which brings every
  product that can move ``c`` into range), gives ``r = RN(x)`` on an unbounded exponent range and
  the sign of ``x - r``; it is the sign of ``x - s`` where ``r`` equals ``s`` (scaled), which the
  kernel checks (subnormal results can differ). An overflowed result of finite operands lies
  beyond the exact value; exact zero sums take the sign rule.

A lane the kernel cannot do (an intermediate overflow, an fma whose emulated result differs from
``s``: a few subnormal results) is flagged; :func:`block` evaluates those lanes with the exact path (:func:`ops.apply`).
NaN results follow the :class:`ops.NanRule` in the kernel.

Compiled code is cached on disk (``cache=True``) next to this file or in Numba's user cache; where
no cache location is writable, each process compiles the kernels it uses once (about a second each).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from tilecheck.formats import Format
from tilecheck.model import njit, ops
from tilecheck.model.fast import scratch

__all__ = ["CHUNK", "OPS", "OPTIONS", "ROUNDING_CODES", "applicable", "block"]

OPS = ("add", "sub", "mul", "fma", "div", "rcp")

CHUNK = 1 << 18
"""Elements per kernel call (and per thread's share of the work): a compiled loop keeps no
temporaries, so blocks need not fit in cache; large ones amortise the call overhead."""

ROUNDING_CODES = {"rn": 0, "rz": 1, "rm": 2, "rp": 3}
"""Rounding modes as the kernels' integer argument (one compiled kernel serves all four)."""

_RN, _RZ, _RM, _RP = 0, 1, 2, 3

# bit patterns as int64 (Numba mixes uint64 with int64 into float64: everything here is int64)
_SIGN = np.int64(-(1 << 63))
_MAG = np.int64((1 << 63) - 1)
_INF = np.int64(0x7FF << 52)
_QUIET = np.int64(1 << 51)
_ONE = np.int64(0x3FF << 52)
_MIN_NORMAL = np.int64(1 << 52)
_SMALL = np.int64((1023 - 800) << 52)  # 2**-800: below it, residuals are scaled
_TINY_PRODUCT = np.int64((1023 - 964) << 52)  # 2**-964: the fma transformation's range
_UP = 2.0 ** 200
_UP_FMA = 2.0 ** 120  # tiny products that can move c are at least 2**-1077

_NAN_PROPAGATE, _NAN_FIXED, _NAN_INVALID = 0, 1, 2


OPTIONS = {"nogil": True, "error_model": "numpy"}
"""Numba options of every kernel: release the GIL (blocks run on threads), IEEE division by zero
(no exception). No ``fastmath``: no contraction of ``a*b + c``, no reassociation."""


_jit = njit.cached(**OPTIONS)
"""Lazy compilation with an on-disk cache (per process where no cache location is writable)."""


@intrinsic
def _fma_intrinsic(typingctx, a, b, c):
    """``llvm.fma.f64``: a*b + c rounded once to nearest."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, args)

    return sig, codegen


_bits = njit.bitcast(types.float64, types.int64, "_bits")
"""The int64 bit pattern of a float64."""
_float = njit.bitcast(types.int64, types.float64, "_float")
"""The float64 with int64 bit pattern ``x``."""


@_jit
def _step_mag(bits, sm, rounding):
    """Move pattern ``bits`` one representable value as ``rounding`` demands, where the exact
    value's magnitude is above (``sm`` = 1) or below (``sm`` = -1) the nearest result's (0:
    exact). Branch-free: random data makes every branch here a coin toss."""
    sv = sm if bits >= 0 else -sm  # the side in value
    move = ((rounding == _RZ) & (sm < 0)) | ((rounding == _RP) & (sv > 0)) | ((rounding == _RM) & (sv < 0))
    # +1 on a pattern is a step away from zero, -1 toward it, for either sign
    return bits + (sm if move else 0)


@_jit
def _step_product(bits, sm, ma, mb, rounding):
    """:func:`_step_mag` for a product or quotient of operand magnitudes ``ma``, ``mb`` whose
    residual has sign ``sm``: an over- or underflowed result lies beyond the exact value; a zero or
    infinite operand makes the result exact."""
    mr = bits & _MAG
    sm = -1 if mr == _INF else (1 if mr == 0 else sm)
    exact = (ma >= _INF) | (mb >= _INF) | (ma == 0) | (mb == 0)
    return _step_mag(bits, 0 if exact else sm, rounding)


@_jit
def _sign(x):
    """-1, 0 or 1 as an int64 (0 for NaN)."""
    return (1 if x > 0.0 else 0) - (1 if x < 0.0 else 0)


@_jit
def _nan(a, b, c, nops, nan_mode, nan_fixed, nan_invalid):
    """The NaN result of a lane per the rule: fixed, else the first NaN operand quieted
    (propagating rules), else the invalid-operation pattern."""
    if nan_mode == _NAN_FIXED:
        return nan_fixed
    if nan_mode == _NAN_PROPAGATE:
        if (a & _MAG) > _INF:
            return a | _QUIET
        if nops > 1 and (b & _MAG) > _INF:
            return b | _QUIET
        if nops > 2 and (c & _MAG) > _INF:
            return c | _QUIET
    return nan_invalid


# Each operation has its own kernel, and each kernel spells out the same lane skeleton (load, the
# native operation, its pattern, the NaN test, the step, the NaN rule): one loop per operation has
# no per-lane dispatch on the operation, and the shared arithmetic is already in the helpers above.
@_jit
def _add_kernel(a, b, out, fail, rounding, negate, nan_mode, nan_fixed, nan_invalid):
    nfail = 0
    flip = _SIGN if negate else np.int64(0)
    for i in range(a.shape[0]):
        ai = a[i]
        bn = b[i] ^ flip
        x = _float(ai)
        y = _float(bn)
        s = x + y
        bits = _bits(s)
        nan = (bits & _MAG) > _INF
        if rounding != _RN:
            bb = s - x
            e = (x - (s - bb)) + (y - bb)
            sm = _sign(e) if bits >= 0 else -_sign(e)
            mag = bits & _MAG
            finite_ops = ((ai & _MAG) < _INF) & ((bn & _MAG) < _INF)
            # an overflowed sum of finite operands: the exact value lies below inf
            sm = -1 if (mag == _INF) & finite_ops else sm
            bits = _step_mag(bits, sm, rounding)
            # an exact zero sum is -0 toward -inf unless both terms are +0
            bits = (ai | bn) & _SIGN if (mag == 0) & (rounding == _RM) else bits
            bad = (mag < _INF) & (e - e != 0.0)  # an intermediate overflow
            fail[i] = bad
            nfail += 1 if bad else 0
        if nan:
            bits = _nan(ai, bn ^ flip, 0, 2, nan_mode, nan_fixed, nan_invalid)
        out[i] = bits
    return nfail


@_jit
def _mul_kernel(a, b, out, fail, rounding, nan_mode, nan_fixed, nan_invalid):
    for i in range(a.shape[0]):
        ai = a[i]
        bi = b[i]
        x = _float(ai)
        y = _float(bi)
        p = x * y
        bits = _bits(p)
        nan = (bits & _MAG) > _INF
        if rounding != _RN:
            ma = ai & _MAG
            mb = bi & _MAG
            mp = bits & _MAG
            # below 2**-800 the smaller factor and the product are scaled by 2**200
            up = _UP if mp < _SMALL else 1.0
            ax = abs(x) * (up if ma <= mb else 1.0)
            ay = abs(y) * (1.0 if ma <= mb else up)
            bits = _step_product(bits, _sign(_fma_intrinsic(ax, ay, -(abs(p) * up))), ma, mb, rounding)
        if nan:
            bits = _nan(ai, bi, 0, 2, nan_mode, nan_fixed, nan_invalid)
        out[i] = bits
    return 0


@_jit
def _div_kernel(a, b, out, fail, rounding, reciprocal, nan_mode, nan_fixed, nan_invalid):
    for i in range(b.shape[0]):
        ai = _ONE if reciprocal else a[i]
        bi = b[i]
        x = _float(ai)
        y = _float(bi)
        q = x / y
        bits = _bits(q)
        nan = (bits & _MAG) > _INF
        if rounding != _RN:
            ma = ai & _MAG
            mb = bi & _MAG
            mq = bits & _MAG
            up = _UP if (ma < _SMALL) | (mq < _MIN_NORMAL) else 1.0
            bits = _step_product(bits, _sign(_fma_intrinsic(-(abs(q) * up), abs(y), abs(x) * up)), ma, mb, rounding)
        if nan:
            bits = _nan(ai, bi, 0, 2, nan_mode, nan_fixed, nan_invalid)
        out[i] = bits
    return 0


@_jit
def _fma_kernel(a, b, c, out, fail, rounding, nan_mode, nan_fixed, nan_invalid):
    nfail = 0
    for i in range(a.shape[0]):
        ai = a[i]
        bi = b[i]
        ci = c[i]
        x = _float(ai)
        y = _float(bi)
        z = _float(ci)
        s = _fma_intrinsic(x, y, z)
        bits = _bits(s)
        nan = (bits & _MAG) > _INF
        if rounding != _RN:
            ma = ai & _MAG
            mb = bi & _MAG
            ms = bits & _MAG
            # products below 2**-964 are scaled (the smaller factor, c and s by 2**120: exact)
            up = _UP_FMA if (_bits(x * y) & _MAG) < _TINY_PRODUCT else 1.0
            xs = x * (up if ma <= mb else 1.0)
            ys = y * (1.0 if ma <= mb else up)
            zs = z * up
            uh = xs * ys
            ul = _fma_intrinsic(xs, ys, -uh)  # a*b = uh + ul exactly (products >= 2**-964)
            th = zs + uh  # TwoSum(c, uh)
            bb = th - zs
            tl = (zs - (th - bb)) + (uh - bb)
            s1 = tl + ul  # TwoSum(tl, ul)
            bb = s1 - tl
            s2 = (tl - (s1 - bb)) + (ul - bb)
            # v = RO(tl + ul): truncate toward zero, then set the last bit where inexact
            v = _bits(s1)
            v -= 1 if (s2 != 0.0) & ((v ^ _bits(s2)) < 0) else 0
            v |= 1 if s2 != 0.0 else 0
            fv = _float(v)
            r = th + fv  # RN(x) on an unbounded exponent range
            bb = r - th
            e = (th - (r - bb)) + (fv - bb)  # x - r, of the sign of x - r
            # the sign of x - r is that of x - s where r is s scaled (a subnormal s may differ)
            ok = (r == s * up) & (e - e == 0.0) & ((_bits(uh) & _MAG) >= _TINY_PRODUCT)
            # s == c: the residual is the product itself (whatever its size)
            sv = (-1 if (ai ^ bi) < 0 else 1) if s == z else _sign(e)
            sm = sv if bits >= 0 else -sv
            finite_ops = (ma < _INF) & (mb < _INF) & ((ci & _MAG) < _INF)
            zero_product = (ma == 0) | (mb == 0)
            regular = finite_ops & ~zero_product & (ms < _INF)
            sm = 0 if zero_product else sm
            # an overflowed result of finite operands: the exact value lies below inf
            sm = -1 if ms == _INF else sm
            sm = sm if finite_ops else 0
            bits = _step_mag(bits, sm, rounding)
            # exact zero sums are -0 toward -inf unless both terms are +0
            exact_zero = finite_ops & (ms == 0) & (sm == 0)
            bits = ((ai ^ bi) | ci) & _SIGN if exact_zero & (rounding == _RM) else bits
            bad = regular & (s != z) & ~ok
            fail[i] = bad
            nfail += 1 if bad else 0
        if nan:
            bits = _nan(ai, bi, ci, 3, nan_mode, nan_fixed, nan_invalid)
        out[i] = bits
    return nfail


def applicable(xp, op: str, fmt: Format, mode: ops.Mode) -> bool:
    """Whether :func:`block` covers ``op`` on ``fmt`` under ``mode``: binary64 without flushing,
    on numpy arrays, with Numba compiling (``NUMBA_DISABLE_JIT=1`` leaves the numpy paths)."""
    return (xp is np and fmt.name == "f64" and op in OPS and not (mode.flush_in or mode.flush_out)
            and njit.enabled())


def _signed(pattern: int) -> np.int64:
    """A 64-bit pattern as the int64 the kernels use."""
    return np.int64(pattern - (1 << 64) if pattern >= 1 << 63 else pattern)


def _rule_args(rule: ops.NanRule):
    """The kernels' NaN arguments: (mode, fixed pattern, invalid pattern)."""
    if rule.fixed is not None:
        return _NAN_FIXED, _signed(rule.fixed), _signed(rule.invalid)
    return (_NAN_PROPAGATE if rule.propagate else _NAN_INVALID), np.int64(0), _signed(rule.invalid)


def block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """Evaluate one block of binary64 ``op`` (see :func:`applicable`) into ``out`` (uint64) when
    given; returns the result patterns."""
    arrays = [np.ascontiguousarray(o, dtype=np.uint64) for o in operands]
    n = arrays[0].shape[0]
    if out is None:
        out = np.empty(n, dtype=np.uint64)
    target = out if out.flags.c_contiguous else np.empty(n, dtype=np.uint64)
    # the kernels write a lane's flag wherever they can fail (and report how many did)
    fail = scratch(np, "jit_fail", n, np.bool_)
    r = ROUNDING_CODES[mode.rounding]
    nan = _rule_args(rule)
    views = [x.view(np.int64) for x in arrays]
    res = target.view(np.int64)
    if op in ("add", "sub"):
        nfail = _add_kernel(views[0], views[1], res, fail, r, op == "sub", *nan)
    elif op == "mul":
        nfail = _mul_kernel(views[0], views[1], res, fail, r, *nan)
    elif op == "div":
        nfail = _div_kernel(views[0], views[1], res, fail, r, False, *nan)
    elif op == "rcp":
        nfail = _div_kernel(views[0], views[0], res, fail, r, True, *nan)
    else:
        nfail = _fma_kernel(views[0], views[1], views[2], res, fail, r, *nan)
    if nfail:
        idx = np.nonzero(fail)[0]
        target[idx] = ops.apply(np, op, fmt, [x[idx] for x in arrays], mode, rule)
    if target is not out:
        out[...] = target
    return out
