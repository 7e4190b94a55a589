"""Fused regions of a plan: runs of pure register steps executed by one compiled loop over lanes.

A :class:`~tilecheck.sim.plan.Plan` runs one numpy step per instruction; each step reads and writes
whole register arrays, so a short instruction costs a few passes over memory per lane. Here, at
plan-compile time, :func:`find_regions` marks maximal runs of consecutive steps that only compute
on registers (moves, conversions among f16/bf16/f32, integer conversions and arithmetic, logic and
shifts, comparisons, selection, abs/neg, add/sub/mul/fma rounded to nearest, forward branches
inside the run) and encodes each run as a small table of instructions. One Numba kernel
(:func:`_kernel`, compiled once and cached on disk, shared by every plan) interprets any such table
chunk by chunk: per chunk of lanes it copies the live-in registers into a work array, runs every
instruction over the chunk's lanes (a lane's next instruction index makes forward branches and
reconvergence per lane), and copies out the registers live after the run. A table instead of
generated source per region: one compilation serves every kernel, so a plan costs nothing to
compile, and the instruction dispatch is paid once per instruction and chunk, not per lane.

Everything else -- approximate (forking) instructions, contraction pairs, memory, calls, special
registers, backward branches, forms the plan runs through the model's general paths (directed
rounding, binary64 fma, packed types) -- keeps its numpy step. The plan runs a region only when
every lane stands at its first step, tracing is off and fusion is on (:func:`enabled`,
``RunContext.fuse``); otherwise the region's own steps run. A region holding a flushing
arithmetic step runs fused only under tininess "after" (the model's fast paths; "before" takes its
exact path).

Semantics are those of the numpy steps bit for bit (tests/sim/test_fused.py runs the committed
corpus both ways): the NaN rule of each form (fixed canonical patterns; binary64's propagation of
the first NaN operand), ``.ftz`` on inputs and results, subnormals and signed zeros. Rounding to
nearest reuses the model's algorithms: binary32 add/sub/mul through float64 (exact products,
innocuous double rounding), fma as the exact product plus TwoSum and rounding to odd in float64
(:func:`tilecheck.model.fast.f32_arith_block`), binary16/bfloat16 results through
:func:`tilecheck.model.narrowjit` 's nearest rounding of a float64. Numba never uses fastmath here.
"""

from __future__ import annotations

import os

import numpy as np
from numba import carray
from numba.core import types

from tilecheck.model import api, njit
from tilecheck.model.narrowjit import _round_nearest
from tilecheck.sim.parser import Imm, Reg
from tilecheck.spec.types import PTX_TYPES

__all__ = ["Region", "enabled", "find_regions"]

ENV = "TILECHECK_FUSE"
"""``TILECHECK_FUSE=0`` turns fused regions off (every step runs as numpy; for comparison and
debugging)."""

CHUNK = 256
"""Lanes per chunk: the work array (registers x lanes) stays in the first-level cache."""

MIN_STEPS = 4
"""Shorter runs keep their numpy steps: the kernel call's fixed cost is more than what fusing two or
three steps saves (measured on Triton's element kernels: a region of two integer steps took 0.3 ms
per 2^16 lanes where its numpy steps took 0.19, one of an add and two conversions 0.71 against
0.32)."""

MIN_LANES = 4096
"""Fewer lanes run the numpy steps: the kernel call's fixed cost is then more than what fusing
saves (measured on the corpus kernels when the call built typed lists of the registers; the call
now passes addresses and costs less, so the threshold is conservative)."""

# instruction table: one int64 row per step, and one uint64 row of constants
OP, DST, A, B, C, GUARD, GNEG, TARGET, P1, P2, P3, P4, P5, DWIDTH = range(14)
NFIELDS = 14
K_SIGN, K_EXP, K_NAN, K_INVALID, K_QUIET = range(5)
NKON = 5

(MOV, CVTI, CVTF, ABSNEG, SETPF, SETPI, SELP, LOGIC, SHIFT, INT, FARITH, BRA) = range(1, 13)

_CMP = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5, "num": 6, "nan": 7,
        "lo": 2, "ls": 3, "hi": 4, "hs": 5}
_FMT = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3}
_INT_HEAD = {"add": 0, "sub": 1, "neg": 2, "mul": 3, "mad": 4, "min": 5, "max": 6, "abs": 7}
_INT_MODE = {None: 0, "lo": 1, "hi": 2, "wide": 3}
_FOPS = {"add": 0, "sub": 1, "mul": 2, "fma": 3}
_BOOL = {None: 0, "and": 1, "or": 2, "xor": 3}

TYPES = {t.name: (t.bits, t.kind) for t in PTX_TYPES.values()}


def enabled() -> bool:
    """Whether fused regions run: ``TILECHECK_FUSE`` unset or not ``0``, and Numba compiling
    (under ``NUMBA_DISABLE_JIT=1`` the kernel's bit-cast intrinsics do not exist)."""
    return os.environ.get(ENV, "1") != "0" and njit.enabled()


# ---------------------------------------------------------------------------------------------
# the kernel

_jit = njit.cached(nogil=True, error_model="numpy")
# helpers inlined into the kernel at Numba's level: their loop-invariant parameters then fold away
_inl = njit.cached(nogil=True, error_model="numpy", inline="always")
_f64 = njit.bitcast(types.uint64, types.float64, "_f64")
_u64 = njit.bitcast(types.float64, types.uint64, "_u64")
_f32 = njit.bitcast(types.uint32, types.float32, "_f32")
_u32 = njit.bitcast(types.float32, types.uint32, "_u32")
_p8 = njit.address_pointer(types.uint8, "_p8")
_p16 = njit.address_pointer(types.uint16, "_p16")
_p32 = njit.address_pointer(types.uint32, "_p32")
_p64 = njit.address_pointer(types.uint64, "_p64")

U = np.uint64


@_inl
def _mask(width):
    """All ones in the low ``width`` bits (width 1..64)."""
    if width >= 64:
        return U(0xFFFFFFFFFFFFFFFF)
    return (U(1) << U(width)) - U(1)


@_inl
def _sext(x, width):
    """The low ``width`` bits of ``x`` as a signed int64."""
    if width >= 64:
        return np.int64(x)
    s = U(64 - width)
    return np.int64(x << s) >> np.int64(64 - width)


@_inl
def _flush(x, sign, exp):
    """A subnormal (or zero) pattern replaced by the zero of its sign."""
    return x & sign if (x & exp) == U(0) else x


@_inl
def _is_nan(x, sign, exp):
    """Whether the pattern is a NaN (magnitude above the exponent field)."""
    return (x & ~sign) > exp


@_inl
def _value(x, fmt):
    """The float64 value of a pattern of format ``fmt`` (0 f16, 1 bf16, 2 f32, 3 f64); exact."""
    if fmt == 3:
        return _f64(x)
    if fmt == 2:
        return np.float64(_f32(np.uint32(x & U(0xFFFFFFFF))))
    if fmt == 1:
        return np.float64(_f32(np.uint32((x & U(0xFFFF)) << U(16))))
    return _half(x)


@_inl
def _half(x):
    """The float64 value of a binary16 pattern: its fields moved into binary64's (subnormals as
    their integer significand times 2**-24; all exact)."""
    e = (x >> U(10)) & U(0x1F)
    m = x & U(0x3FF)
    if e == U(0):
        v = np.float64(m) * 5.9604644775390625e-08
    elif e == U(31):
        v = _f64(U(0x7FF0000000000000) | (m << U(42)))
    else:
        v = _f64(((e + U(1008)) << U(52)) | (m << U(42)))
    return -v if (x & U(0x8000)) != U(0) else v


@_inl
def _round_to(q, fmt):
    """``q`` (float64) rounded to nearest even in ``fmt``, as a pattern (NaN: some NaN)."""
    if fmt == 3:
        return _u64(q)
    if fmt == 2:
        return U(_u32(np.float32(q)))
    if fmt == 1:
        return U(_round_nearest(q, 8, 7)) & U(0xFFFF)
    return U(_round_nearest(q, 5, 10)) & U(0xFFFF)


@_inl
def _odd(p, c):
    """``p + c`` rounded to odd in float64 (RN, then one step toward the TwoSum error where RN was
    even and inexact): rounding it once more to a format of at most 51 bits is correct rounding."""
    x = p + c
    bb = x - p
    err = (p - (x - bb)) + (c - bb)
    if np.isfinite(x) and err != 0.0:
        xb = _u64(x)
        if (xb & U(1)) == U(0):
            # one unit toward the error on the sign-magnitude pattern (x != 0 here: a zero sum of a
            # product and an addend is exact)
            if (err > 0.0) == (x > 0.0):
                xb += U(1)
            else:
                xb -= U(1)
            x = _f64(xb)
    return x


@_jit
def _farith(op, fmt, a, b, c, ftz, sign, exp, propagate, fixed, invalid, quiet):
    """add/sub/mul/fma rounded to nearest, with the model's flushing and NaN rule."""
    a0, b0, c0 = a, b, c
    if ftz:
        a = _flush(a, sign, exp)
        b = _flush(b, sign, exp)
        c = _flush(c, sign, exp)
    x = _value(a, fmt)
    y = _value(b, fmt)
    if op == 0:
        q = x + y
    elif op == 1:
        q = x - y
    elif op == 2:
        q = x * y
    elif fmt == 3:
        q = np.nan  # not fused (see _translate)
    else:
        q = _odd(x * y, _value(c, fmt))
    r = _round_to(q, fmt)
    if ftz:
        r = _flush(r, sign, exp)
    if _is_nan(r, sign, exp):
        if not propagate:
            return fixed
        chosen = invalid
        if op == 3 and _is_nan(c0, sign, exp):
            chosen = c0 | quiet
        if _is_nan(b0, sign, exp):
            chosen = b0 | quiet
        if _is_nan(a0, sign, exp):
            chosen = a0 | quiet
        return chosen
    return r


@_jit
def _cvtf(kind, x, ftz, nan):
    """The plan's float conversions: 0 f16->f32, 1 bf16->f32, 2 f32->f16 rn, 3 f32->bf16 rn."""
    s32, e32 = U(0x80000000), U(0x7F800000)
    if kind <= 1:
        if kind == 0:
            if _is_nan(x, U(0x8000), U(0x7C00)):
                return nan
            r = U(_u32(np.float32(_value(x, 0))))
        else:
            if _is_nan(x, U(0x8000), U(0x7F80)):
                return nan
            r = (x & U(0xFFFF)) << U(16)
        return _flush(r, s32, e32) if ftz else r
    if ftz:
        x = _flush(x, s32, e32)
    if _is_nan(x, s32, e32):
        return nan
    return _round_to(_value(x, 2), 0 if kind == 2 else 1)


@_inl
def _compare(cmp, x, y):
    """Comparison ``cmp`` (eq ne lt le gt ge) of two ordered values."""
    if cmp == 0:
        return x == y
    if cmp == 1:
        return x != y
    if cmp == 2:
        return x < y
    if cmp == 3:
        return x <= y
    if cmp == 4:
        return x > y
    return x >= y


@_inl
def _setpf(fmt, cmp, unordered, ftz, a, b, sign, exp):
    """Floating-point setp: NaN operands make every comparison false (unordered forms: true)."""
    if ftz:
        a = _flush(a, sign, exp)
        b = _flush(b, sign, exp)
    x = _value(a, fmt)
    y = _value(b, fmt)
    nan = (x != x) or (y != y)
    if cmp == 6:
        return not nan
    if cmp == 7:
        return nan
    if nan:
        return unordered
    return _compare(cmp, x, y)


@_jit
def _int(head, mode, width, signed, out_w, a, b, c):
    """The plan's integer arithmetic (``_Compiler._int_arith``) on ``width``-bit operands."""
    if head <= 2 or ((head == 3 or head == 4) and mode == 1):
        if head == 0:
            out = a + b
        elif head == 1:
            out = a - b
        elif head == 2:
            out = U(0) - a
        else:
            out = a * b
    elif head == 3 or head == 4:
        if signed:
            p = _sext(a, width) * _sext(b, width)  # width <= 32: exact in 64 bits
            out = U(p >> np.int64(width)) if mode == 2 else U(p)
        else:
            pu = a * b
            out = (pu >> U(width)) if mode == 2 else pu
    elif head == 5 or head == 6:
        if signed:
            x, y = _sext(a, width), _sext(b, width)
            out = U(min(x, y) if head == 5 else max(x, y))
        else:
            out = min(a, b) if head == 5 else max(a, b)
    else:
        out = U(abs(_sext(a, width))) if signed else a
    if head == 4:
        out = out + c
    return out & _mask(out_w)


@_jit
def _shift(kind, width, a, n):
    """shl (0), shr logical (1), shr arithmetic (2) of a ``width``-bit value by ``n``."""
    n = min(n, U(width))
    if kind == 2:
        m = min(n, U(width - 1))
        return U(_sext(a, width) >> np.int64(m)) & _mask(width)
    if n >= U(width):
        return U(0)
    return ((a << n) if kind == 0 else (a >> n)) & _mask(width)


@_jit
def _kernel(prog, kon, n, in_map, in_addr, rows, tile, out_map, out_addr, imm_slots, imm_vals, nslots):
    """Run the instruction table ``prog`` over ``n`` lanes (see the module docstring).

    The registers come and go as the lanes' own arrays, passed by address (``in_addr``,
    ``out_addr``: one call serves any number of registers of any widths without building typed
    lists, which cost more than a small region's loop); ``in_map`` rows are (kind of
    :data:`_KINDS`, slot, gathered, length), and lane i reads a gathered input at ``rows[i]``, or
    at ``i % tile`` where ``tile`` > 0 (a fork's pending copy, ``Lanes.pending``); ``out_map`` rows
    are (kind, slot), each output ``n`` long.

    One loop over the chunk's lanes per instruction: the dispatch on the opcode is paid once per
    instruction and chunk. ``act`` marks the lanes an instruction runs on (its guard holds and no
    forward branch took the lane beyond it); while no lane can have branched and the step has no
    guard, every lane runs."""
    work = np.zeros((nslots, CHUNK), dtype=np.uint64)
    nxt = np.zeros(CHUNK, dtype=np.int64)
    act = np.ones(CHUNK, dtype=np.bool_)
    for k in range(imm_slots.shape[0]):
        work[imm_slots[k], :] = imm_vals[k]
    ninstr = prog.shape[0]
    src = np.zeros(CHUNK, dtype=np.int64)  # per lane of the chunk: where its gathered inputs are
    for base in range(0, n, CHUNK):
        m = min(CHUNK, n - base)
        if tile > 0:
            j = base % tile
            for i in range(m):
                src[i] = j
                j += 1
                if j == tile:
                    j = 0
        elif rows.shape[0]:
            for i in range(m):
                src[i] = rows[base + i]
        for k in range(in_map.shape[0]):
            kind, row, gathered, length = in_map[k, 0], in_map[k, 1], in_map[k, 2] != 0, in_map[k, 3]
            wr, addr = work[row], in_addr[k]
            if kind == 0:  # predicates travel as their bytes, 0 or 1
                _copy_in(wr, carray(_p8(addr), length), m, base, gathered, src)
            elif kind == 1:
                _copy_in(wr, carray(_p16(addr), length), m, base, gathered, src)
            elif kind == 2:
                _copy_in(wr, carray(_p32(addr), length), m, base, gathered, src)
            else:
                _copy_in(wr, carray(_p64(addr), length), m, base, gathered, src)
        nxt[:m] = 0
        diverged = False
        all_act = False
        lowest = 0  # the lowest next instruction of any lane: steps below it run on no lane
        for k in range(ninstr):
            if k < lowest:
                continue
            op = prog[k, OP]
            g, gneg = prog[k, GUARD], prog[k, GNEG] != 0
            if not diverged and g < 0:
                if not all_act:
                    act[:] = True
                    all_act = True
            else:
                wg = work[max(g, 0)]
                for i in range(m):
                    act[i] = (not diverged or nxt[i] <= k) and (g < 0 or (wg[i] != U(0)) != gneg)
                all_act = False
            if op == BRA:
                target = prog[k, TARGET]
                lowest = ninstr
                for i in range(m):
                    if act[i]:
                        nxt[i] = target
                    lowest = min(lowest, max(nxt[i], k + 1))
                diverged = True
                continue
            wd, wa, wb, wc = work[prog[k, DST]], work[prog[k, A]], work[prog[k, B]], work[prog[k, C]]
            p1, p2, p3, p4, p5 = prog[k, P1], prog[k, P2], prog[k, P3], prog[k, P4], prog[k, P5]
            dw = prog[k, DWIDTH]
            # a predicate holds 0 or 1: its writers are 1-bit operations, or setp (see _Translator)
            dmask = _mask(dw) if dw > 0 else U(1)
            sign, exp, nan, invalid = kon[k, K_SIGN], kon[k, K_EXP], kon[k, K_NAN], kon[k, K_INVALID]
            quiet = kon[k, K_QUIET]
            if op == MOV:
                w = _mask(p1)
                for i in range(m):
                    if act[i]:
                        wd[i] = (wa[i] & w) & dmask
            elif op == CVTI:
                for i in range(m):
                    if act[i]:
                        a = wa[i]
                        v = (U(_sext(a, p1)) if p2 != 0 else a & _mask(p1)) & _mask(p3)
                        if p4 != 0 and dw > p3 and ((v >> U(p3 - 1)) & U(1)) != U(0):
                            v = v | (_mask(dw) ^ _mask(p3))
                        wd[i] = (v) & dmask
            elif op == CVTF and p1 == 0:  # f16 -> f32 (exact; NaN: the canonical pattern)
                for i in range(m):
                    if act[i]:
                        a = wa[i]
                        if (a & U(0x7FFF)) > U(0x7C00):
                            v = nan
                        else:
                            v = U(_u32(np.float32(_half(a))))
                            if p2 != 0:
                                v = _flush(v, U(0x80000000), U(0x7F800000))
                        wd[i] = v & dmask
            elif op == CVTF and p1 == 2:  # f32 -> f16 to nearest
                for i in range(m):
                    if act[i]:
                        a = wa[i] & U(0xFFFFFFFF)
                        if p2 != 0:
                            a = _flush(a, U(0x80000000), U(0x7F800000))
                        if (a & U(0x7FFFFFFF)) > U(0x7F800000):
                            v = nan
                        else:
                            v = U(_round_nearest(np.float64(_f32(np.uint32(a))), 5, 10)) & U(0xFFFF)
                        wd[i] = v & dmask
            elif op == CVTF:
                for i in range(m):
                    if act[i]:
                        wd[i] = (_cvtf(p1, wa[i], p2 != 0, nan)) & dmask
            elif op == ABSNEG:
                for i in range(m):
                    if act[i]:
                        x = _flush(wa[i], sign, exp) if p3 != 0 else wa[i]
                        v = (x & ~sign) if p2 == 0 else (x ^ sign)
                        if _is_nan(x, sign, exp):
                            v = nan if p4 == 0 else x  # abs.f64 passes a NaN through unchanged
                        wd[i] = (v) & dmask
            elif op == SETPF or op == SETPI:
                w = _mask(p1)
                for i in range(m):
                    if act[i]:
                        if op == SETPF:
                            t = _setpf(p1, p2, p3 != 0, p4 != 0, wa[i], wb[i], sign, exp)
                        elif p2 != 0:
                            t = _compare(p3, _sext(wa[i], p1), _sext(wb[i], p1))
                        else:
                            t = _compare(p3, wa[i] & w, wb[i] & w)
                        if p5 != 0:
                            q = wc[i] != U(0)
                            t = (t and q) if p5 == 1 else ((t or q) if p5 == 2 else (t != q))
                        wd[i] = (U(1) if t else U(0)) & dmask
            elif op == SELP:
                w = _mask(p1)
                for i in range(m):
                    if act[i]:
                        wd[i] = ((wa[i] if wc[i] != U(0) else wb[i]) & w) & dmask
            elif op == LOGIC:
                w = _mask(p1)
                for i in range(m):
                    if act[i]:
                        if p2 == 0:
                            v = wa[i] & wb[i]
                        elif p2 == 1:
                            v = wa[i] | wb[i]
                        elif p2 == 2:
                            v = wa[i] ^ wb[i]
                        else:
                            v = ~wa[i]
                        wd[i] = (v & w) & dmask
            elif op == SHIFT:
                w = _mask(p1)
                for i in range(m):
                    if act[i]:
                        wd[i] = (_shift(p2, p1, wa[i] & w, wb[i] & U(0xFFFFFFFF))) & dmask
            elif op == INT and (p3 <= 1 or (p3 >= 3 and p3 <= 4 and p4 == 1)):
                # add, sub, mul.lo, mad.lo: wrapping arithmetic on the low bits
                for i in range(m):
                    if act[i]:
                        if p3 == 0:
                            v = wa[i] + wb[i]
                        elif p3 == 1:
                            v = wa[i] - wb[i]
                        else:
                            v = wa[i] * wb[i]
                            if p3 == 4:
                                v = v + wc[i]
                        wd[i] = v & _mask(p5) & dmask
            elif op == INT and p3 == 3 and p4 == 3 and p2 != 0:  # mul.wide.s16/s32
                for i in range(m):
                    if act[i]:
                        wd[i] = U(_sext(wa[i], p1) * _sext(wb[i], p1)) & _mask(p5) & dmask
            elif op == INT:
                w = _mask(p1)
                wo = _mask(p5)
                for i in range(m):
                    if act[i]:
                        wd[i] = (_int(p3, p4, p1, p2 != 0, p5, wa[i] & w, wb[i] & w, wc[i] & wo)) & dmask
            elif op == FARITH and p2 == 2 and p5 == 0:
                # binary32 to nearest through float64: exact products and sums of two operands round
                # once more innocuously; fma rounds to odd first (see _odd); NaN: the fixed pattern
                for i in range(m):
                    if act[i]:
                        a, b = wa[i] & U(0xFFFFFFFF), wb[i] & U(0xFFFFFFFF)
                        if p4 != 0:
                            a = _flush(a, U(0x80000000), U(0x7F800000))
                            b = _flush(b, U(0x80000000), U(0x7F800000))
                        x = np.float64(_f32(np.uint32(a)))
                        y = np.float64(_f32(np.uint32(b)))
                        if p3 == 0:
                            q = x + y
                        elif p3 == 1:
                            q = x - y
                        elif p3 == 2:
                            q = x * y
                        else:
                            c = wc[i] & U(0xFFFFFFFF)
                            if p4 != 0:
                                c = _flush(c, U(0x80000000), U(0x7F800000))
                            q = _odd(x * y, np.float64(_f32(np.uint32(c))))
                        v = U(_u32(np.float32(q)))
                        if p4 != 0:
                            v = _flush(v, U(0x80000000), U(0x7F800000))
                        if (v & U(0x7FFFFFFF)) > U(0x7F800000):
                            v = nan
                        wd[i] = v & dmask
            else:  # FARITH
                w = _mask(p1)
                for i in range(m):
                    if act[i]:
                        v = _farith(p3, p2, wa[i] & w, wb[i] & w, wc[i] & w, p4 != 0, sign, exp, p5 != 0, nan,
                                    invalid, quiet)
                        wd[i] = (v) & dmask
        for k in range(out_map.shape[0]):
            kind, row = out_map[k, 0], out_map[k, 1]
            wr, addr = work[row], out_addr[k]  # values are masked to the register's width already
            if kind == 0:
                _copy_out(carray(_p8(addr), n), wr, m, base)
            elif kind == 1:
                _copy_out(carray(_p16(addr), n), wr, m, base)
            elif kind == 2:
                _copy_out(carray(_p32(addr), n), wr, m, base)
            else:
                _copy_out(carray(_p64(addr), n), wr, m, base)


@_inl
def _copy_in(wr, arr, m, base, gathered, src):
    """Lanes ``base .. base+m-1`` of a register array into a work row: lane i's own element, or,
    ``gathered``, element ``src[i - base]`` (a fork's pending copy)."""
    if gathered:
        for i in range(m):
            wr[i] = U(arr[src[i]])
    else:
        for i in range(m):
            wr[i] = U(arr[base + i])


@_inl
def _copy_out(arr, wr, m, base):
    """A work row into lanes ``base .. base+m-1`` of a register array (of the row's width or a
    predicate's bytes: the values fit)."""
    for i in range(m):
        arr[base + i] = wr[i]


# ---------------------------------------------------------------------------------------------
# regions


class Region:
    """A fused run of steps ``start .. end-1``: its instruction table, slots and live sets."""

    def __init__(self, start, end, prog, kon, inputs, outputs, imms, nslots, needs_after, dtypes):
        self.start, self.end = start, end
        self.prog, self.kon = prog, kon
        self.inputs = inputs      # [(register, slot)]
        self.outputs = outputs    # [(register, slot)]
        self.imm_slots = np.array([s for s, _ in imms], dtype=np.int64)
        self.imm_vals = np.array([v for _, v in imms], dtype=np.uint64)
        self.nslots = nslots
        self.needs_after = needs_after  # a flushing arithmetic step: fused only under tininess "after"
        self.dtypes = dtypes

    def usable(self, ctx, lanes: int) -> bool:
        """Whether this run's settings and size call for the fused execution."""
        return lanes >= MIN_LANES and not (self.needs_after and ctx.tininess != "after")

    def run(self, lanes, live_after) -> None:
        """Execute the region on every lane (all at ``start``); writes the registers live after it
        (``live_after``). Registers a fork left pending (``Lanes.pending``) are read through its rows
        inside the loop, instead of being copied first; the pending ones the region does not read
        or write and that are live after it are copied."""
        n = lanes.size
        rows, pending = lanes.pending if lanes.pending is not None else (_NO_ROWS, {})
        tile = 0
        if isinstance(rows, int):  # a tiled fork: lane i is a copy of lane i % rows
            rows, tile = _NO_ROWS, rows
        in_map = np.zeros((len(self.inputs), 4), dtype=np.int64)
        in_addr = np.zeros(len(self.inputs), dtype=np.uint64)
        keep = []  # the arrays passed by address stay referenced until the kernel returns
        for k, (name, slot) in enumerate(self.inputs):
            gathered = name in pending
            arr = pending[name] if gathered else lanes.regs.get(name)
            if arr is None:  # dropped where it was dead: a don't-care (Lanes.reg)
                arr, gathered = np.zeros(n, dtype=np.uint64), False
            if arr.dtype == np.bool_:
                kind, arr = 0, arr.view(np.uint8)
            else:
                if arr.dtype.itemsize == 1:  # 8-bit registers enter through 16 bits
                    arr = arr.astype(np.uint16)
                elif arr.dtype.kind != "u":  # signed arrays as their bits
                    arr = arr.view(f"uint{8 * arr.dtype.itemsize}")
                kind = _KINDS[arr.dtype]
            arr = np.ascontiguousarray(arr)
            keep.append(arr)
            in_map[k] = (kind, slot, gathered, arr.shape[0])
            in_addr[k] = arr.ctypes.data
        out_map = np.zeros((len(self.outputs), 2), dtype=np.int64)
        out_addr = np.zeros(len(self.outputs), dtype=np.uint64)
        results = []
        for k, (name, slot) in enumerate(self.outputs):
            kind = _KINDS.get(self.dtypes[name], 1)  # 8-bit registers leave through 16 bits
            arr = np.empty(n, dtype=_KIND_DTYPES[kind])
            results.append(arr)
            out_map[k] = (kind, slot)
            out_addr[k] = arr.ctypes.data
        _kernel(self.prog, self.kon, n, in_map, in_addr, rows, tile, out_map, out_addr, self.imm_slots, self.imm_vals,
                self.nslots)
        del keep
        written = set()
        for (name, _), arr in zip(self.outputs, results):
            dtype = self.dtypes[name]
            if arr.dtype == np.uint8:  # a predicate, written as bytes 0 and 1
                arr = arr.view(np.bool_)
            lanes.regs[name] = arr if arr.dtype == dtype else arr.astype(dtype)
            written.add(name)
        lanes.materialize({name for name in pending if name in live_after and name not in written})


_NO_ROWS = np.zeros(0, dtype=np.int64)
# the kernel's register kinds: predicates (as bytes 0/1), 16, 32 and 64 bits
_KIND_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))
_KINDS = {np.dtype(bool): 0, np.dtype(np.uint16): 1, np.dtype(np.uint32): 2, np.dtype(np.uint64): 3}


def _qual(step) -> str:
    run = step.run
    return getattr(run, "__qualname__", "") if run is not None else ""


class _Translator:
    """Encodes one step as a table row, or says it cannot (None)."""

    def __init__(self, plan, comp):
        self.plan = plan
        self.comp = comp
        self.reg_types = comp.reg_types
        self.slots: dict = {}
        self.imms: list = []
        self.needs_after = False

    def reg_width(self, name):
        t = self.reg_types[name]
        return TYPES.get(t, (64, "b"))[0]

    def slot(self, name):
        if name not in self.slots:
            self.slots[name] = len(self.slots)
        return self.slots[name]

    def operand(self, ins, op, width, ftype=None):
        """The slot of a register operand (any width: masks are the instruction's) or of an
        immediate (its bits as the plan reads them); None for anything else."""
        if isinstance(op, Reg) and op.name in self.reg_types:
            rw = self.reg_width(op.name)
            if (width == 1) != (rw == 1):
                return None
            return self.slot(op.name)
        if isinstance(op, Imm):
            bits = self.comp.immediate(ins, op, width, ftype)
            s = len(self.slots)
            self.imms.append((s, bits))
            self.slots[f" imm{s}"] = s  # a row of its own (register names never hold a space)
            return s
        return None

    def dst(self, op):
        """(slot, register width; 0 for a predicate) of a destination register, else None."""
        if not isinstance(op, Reg) or op.name not in self.reg_types or "|" in op.name:
            return None
        w = self.reg_width(op.name)
        return self.slot(op.name), (0 if w == 1 else w)

    def row(self, **fields):
        r = np.zeros(NFIELDS, dtype=np.int64)
        r[GUARD] = -1
        r[A] = r[B] = r[C] = 0
        for k, v in fields.items():
            r[globals()[k]] = v
        return r

    def translate(self, k, step):
        """(row, constants) for step ``k``, or None when it keeps its numpy step."""
        if step.approximate is not None:
            return None
        ins = step.instr
        tokens = ins.opcode.split(".")
        head, mods = tokens[0], tokens[1:]
        q = _qual(step)
        kon = np.zeros(NKON, dtype=np.uint64)
        if step.kind == "bra":
            if step.target <= k:
                return None
            r = self.row(OP=BRA, TARGET=step.target)
        elif step.kind != "op":
            return None
        elif head in ("mov", "cvta") and q.endswith("<lambda>") and len(ins.operands) == 2:
            if head == "mov":
                width, kind = TYPES[mods[0]]
                ft = mods[0] if kind == "f" else None
            else:
                width, ft = 64, None
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], width, ft)
            if d is None or a is None or (d[1] == 0) != (width == 1):
                return None
            r = self.row(OP=MOV, DST=d[0], DWIDTH=d[1], A=a, P1=width)
        elif head == "cvt" and q.endswith(".icvt"):
            rest = [m for m in mods if m in TYPES]
            if "sat" in mods:
                return None
            (dw, dk), (sw, sk) = TYPES[rest[0]], TYPES[rest[1]]
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], sw)
            if d is None or a is None or d[1] == 0:
                return None
            r = self.row(OP=CVTI, DST=d[0], DWIDTH=d[1], A=a, P1=sw, P2=int(sk == "s"), P3=dw, P4=int(dk == "s"))
        elif head == "cvt" and q.endswith(".fcvt"):
            rest = [m for m in mods if m in TYPES]
            rnd = [m for m in mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")]
            dst_t, src_t = rest
            kinds = {("f32", "f16"): 0, ("f32", "bf16"): 1, ("f16", "f32"): 2, ("bf16", "f32"): 3}
            kind = kinds.get((dst_t, src_t))
            if kind is None or (kind >= 2 and rnd != ["rn"]) or (kind < 2 and rnd) or "sat" in mods:
                return None
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], self.comp.db.formats[src_t].width)
            if d is None or a is None or d[1] == 0:
                return None
            kon[K_NAN] = self.comp.db.formats[dst_t].canonical_nan
            r = self.row(OP=CVTF, DST=d[0], DWIDTH=d[1], A=a, P1=kind, P2=int("ftz" in mods))
        elif head in ("abs", "neg") and q.endswith("<lambda>") and "_absneg" in q:
            type_ = [m for m in mods if m != "ftz"][0]
            if type_ not in _FMT:
                return None
            fmt = self.comp.db.formats[type_]
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], fmt.width, type_)
            if d is None or a is None or d[1] == 0:
                return None
            kon[K_SIGN], kon[K_EXP], kon[K_NAN] = fmt.sign_mask, fmt.exponent_mask, fmt.canonical_nan
            keep = int(type_ == "f64" and head == "abs")
            r = self.row(OP=ABSNEG, DST=d[0], DWIDTH=d[1], A=a, P2=int(head == "neg"), P3=int("ftz" in mods),
                         P4=keep)
        elif head == "setp" and q.endswith(".setp"):
            ftz = "ftz" in mods
            ms = [m for m in mods if m != "ftz"]
            boolop = ms.pop(1) if len(ms) == 3 and ms[1] in ("and", "or", "xor") else None
            cmp, type_ = ms
            width, kind = TYPES[type_]
            ft = type_ if kind == "f" else None
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], width, ft)
            b = self.operand(ins, ins.operands[2], width, ft)
            c = self.operand(ins, ins.operands[3], 1) if boolop else 0
            if d is None or a is None or b is None or c is None or d[1] != 0:
                return None
            if kind == "f":
                if type_ not in _FMT:
                    return None
                fmt = self.comp.db.formats[type_]
                unordered = len(cmp) == 3 and cmp.endswith("u")
                base = cmp[:-1] if unordered else cmp
                if base not in _CMP or base in ("lo", "ls", "hi", "hs"):
                    return None
                kon[K_SIGN], kon[K_EXP] = fmt.sign_mask, fmt.exponent_mask
                r = self.row(OP=SETPF, DST=d[0], DWIDTH=0, A=a, B=b, C=c, P1=_FMT[type_], P2=_CMP[base],
                             P3=int(unordered), P4=int(ftz), P5=_BOOL[boolop])
            else:
                if cmp not in _CMP or cmp in ("num", "nan"):
                    return None
                r = self.row(OP=SETPI, DST=d[0], DWIDTH=0, A=a, B=b, C=c, P1=width, P2=int(kind == "s"),
                             P3=_CMP[cmp], P5=_BOOL[boolop])
        elif head == "selp" and "op_selp" in q:
            width, kind = TYPES[mods[0]]
            ft = mods[0] if kind == "f" else None
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], width, ft)
            b = self.operand(ins, ins.operands[2], width, ft)
            c = self.operand(ins, ins.operands[3], 1)
            if d is None or a is None or b is None or c is None or (d[1] == 0) != (width == 1):
                return None
            r = self.row(OP=SELP, DST=d[0], DWIDTH=d[1], A=a, B=b, C=c, P1=width)
        elif head in ("and", "or", "xor", "not") and "_logic" in q:
            width = TYPES[mods[0]][0]
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], width)
            b = self.operand(ins, ins.operands[2], width) if head != "not" else 0
            if d is None or a is None or b is None or (d[1] == 0) != (width == 1):
                return None
            r = self.row(OP=LOGIC, DST=d[0], DWIDTH=d[1], A=a, B=b, P1=width,
                         P2={"and": 0, "or": 1, "xor": 2, "not": 3}[head])
        elif head in ("shl", "shr") and q.endswith(".shift"):
            width, kind = TYPES[mods[0]]
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], width)
            b = self.operand(ins, ins.operands[2], 32)
            if d is None or a is None or b is None or d[1] == 0:
                return None
            sk = 0 if head == "shl" else (2 if kind == "s" else 1)
            r = self.row(OP=SHIFT, DST=d[0], DWIDTH=d[1], A=a, B=b, P1=width, P2=sk)
        elif q.endswith("_int_arith.<locals>.run"):
            ms = list(mods)
            mode = ms.pop(0) if head in ("mul", "mad") and ms and ms[0] in ("lo", "hi", "wide") else None
            width, kind = TYPES[ms[0]]
            out_w = 2 * width if mode == "wide" else width
            arity = {"neg": 1, "abs": 1, "mad": 3}.get(head, 2)
            d = self.dst(ins.operands[0])
            a = self.operand(ins, ins.operands[1], width)
            b = self.operand(ins, ins.operands[2], width) if arity >= 2 else 0
            c = self.operand(ins, ins.operands[3], out_w) if head == "mad" else 0
            if d is None or a is None or b is None or c is None or d[1] == 0:
                return None
            r = self.row(OP=INT, DST=d[0], DWIDTH=d[1], A=a, B=b, C=c, P1=width, P2=int(kind == "s"),
                         P3=_INT_HEAD[head], P4=_INT_MODE[mode], P5=out_w)
        elif q.endswith("model.<locals>.exact"):
            form = self.comp.db.resolve(ins.opcode)
            if form is None or form.kind != "exact" or form.lanes != 1:
                return None
            op = form.semantics.function
            params = form.semantics.params
            fmt_name = form.element_format
            if op not in _FOPS or fmt_name not in _FMT or params.get("rounding", "rn") != "rn" or params.get("sat"):
                return None
            if fmt_name == "f64" and (op == "fma" or params.get("ftz")):
                return None
            if form.type != fmt_name or len(ins.operands) != len(form.operands):
                return None
            fmt = form.format
            rule = api.nan_rule(form, fmt)
            d = self.dst(ins.operands[0])
            srcs = [self.operand(ins, o, fmt.width, fmt_name) for o in ins.operands[1:]]
            if d is None or any(s is None for s in srcs) or d[1] == 0:
                return None
            srcs = srcs + [0] * (3 - len(srcs))
            ftz = bool(params.get("ftz"))
            self.needs_after |= ftz
            kon[K_SIGN], kon[K_EXP] = fmt.sign_mask, fmt.exponent_mask
            kon[K_NAN] = rule.fixed if rule.fixed is not None else 0
            kon[K_INVALID] = rule.invalid
            kon[K_QUIET] = fmt.quiet_bit
            r = self.row(OP=FARITH, DST=d[0], DWIDTH=d[1], A=srcs[0], B=srcs[1], C=srcs[2], P1=fmt.width,
                         P2=_FMT[fmt_name], P3=_FOPS[op], P4=int(ftz), P5=int(rule.fixed is None and rule.propagate))
        else:
            return None
        if step.guard is not None:
            g, neg = step.guard
            if g not in self.reg_types or self.reg_width(g) != 1:
                return None
            r[GUARD] = self.slot(g)
            r[GNEG] = int(neg)
        return r, kon


def _fusable(plan, comp) -> list:
    """Per step: whether some translation exists (a dry run of :class:`_Translator`)."""
    t = _Translator(plan, comp)
    out = []
    for k, st in enumerate(plan.steps):
        try:
            out.append(t.translate(k, st) is not None)
        except Exception:  # a shape the table does not know keeps its numpy step
            out.append(False)
    return out


def find_regions(plan, comp) -> dict:
    """Start step -> :class:`Region` for every maximal fusable run of ``plan`` (``comp``: the plan's
    compiler, for register types, immediates and the spec database)."""
    ok = _fusable(plan, comp)
    n = len(plan.steps)
    regions = {}
    k = 0
    while k < n:
        if not ok[k]:
            k += 1
            continue
        end = k
        while end < n and ok[end]:
            end += 1
        # a branch must land inside the run (or just after it): otherwise the run ends before it
        while True:
            bad = [j for j in range(k, end) if plan.steps[j].kind == "bra" and plan.steps[j].target > end]
            if not bad:
                break
            end = bad[0]
        if end - k >= MIN_STEPS:
            region = _build(plan, comp, k, end)
            if region is not None:
                regions[k] = region
        k = max(end, k + 1)
    return regions


def _build(plan, comp, start, end):
    t = _Translator(plan, comp)
    rows, kons = [], []
    reads, writes = set(), set()
    for j in range(start, end):
        st = plan.steps[j]
        tr = t.translate(j, st)
        if tr is None:
            return None
        row, kon = tr
        if st.kind == "bra":
            row[TARGET] -= start
        rows.append(row)
        kons.append(kon)
        reads |= set(st.reads) | ({st.guard[0]} if st.guard else set())
        writes |= set(st.writes)
    after = set(plan.live_in[end]) | set(plan.read_after[end])
    outputs = sorted(w for w in writes if w in after)
    # what a lane may read before writing it, along the region's paths (guarded writes do not kill)
    inputs = sorted((reads | set(outputs)) & set(plan.live_in[start]) & set(t.reg_types))
    for name in inputs + outputs:
        t.slot(name)
    dtypes = {}
    for name in outputs:
        w = t.reg_width(name)
        dtypes[name] = np.dtype(bool) if w == 1 else np.dtype(f"uint{w}")
    return Region(start, end, np.array(rows, dtype=np.int64), np.array(kons, dtype=np.uint64),
                  [(r, t.slots[r]) for r in inputs], [(r, t.slots[r]) for r in outputs], t.imms,
                  max(1, len(t.slots)), t.needs_after, dtypes)
