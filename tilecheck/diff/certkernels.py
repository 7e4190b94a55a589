"""Compiled certificate kernels: correct rounding judged per lane by integer tests, no evaluation.

The same certificate as :mod:`tilecheck.diff.certificate` (read its docstring for the rounding
intervals and the integer comparisons), compiled with Numba into one loop that keeps every lane in
registers: a few dozen integer operations per lane instead of some fifty numpy passes. It also
covers what the numpy certificate does not:

* binary32 ``add/sub/mul`` and binary16/bfloat16 ``fma`` (aligned sums in 64 bits, see
  :func:`_sum2`; binary32 ``fma`` would need 128 bits and is not certified here);
* output flushing with tininess *before* rounding (a zero result iff ``|x| < 2**emin``, and the
  smallest normal number only for ``|x| >= 2**emin``) besides *after* rounding (a zero result iff
  ``x`` rounds below the smallest normal number on the format's grid), and input and output
  flushing separately;
* ``.sat`` (PTX: the correctly rounded result clamped to ``[+0, 1.0]``; negative results, ``-0``
  and NaN give ``+0``).

This module imports nothing from tilecheck (only numpy and numba) and uses no floating-point
arithmetic: it must share nothing with what it checks. Every function here is integer code.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from tilecheck import cpus

__all__ = ["FORMATS", "OPS", "ROUNDINGS", "NAN_POLICIES", "TININESS", "supports", "check", "check_into", "specialised", "points_into"]

FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23)}
"""(exponent bits, fraction bits) of the formats certified here."""

OPS = {"sqrt": 0, "rcp": 1, "div": 2, "mul": 3, "add": 4, "sub": 5, "fma": 6}
"""Operation codes of the kernels."""

# The names below (operand counts, roundings, NaN policies, tininess) restate the spec registry's
# vocabulary on purpose, as check() repeats tilecheck.oracle.common.check_call's argument checks:
# this module imports nothing from tilecheck (tests/diff/test_certificate.py holds it to that), so
# that no table or check it shares with the model can be wrong in both at once.
ARITY = {"sqrt": 1, "rcp": 1, "div": 2, "mul": 2, "add": 2, "sub": 2, "fma": 3}

ROUNDINGS = {"rn": 0, "rz": 1, "rm": 2, "rp": 3}
NAN_POLICIES = {"unspecified": 0, "canonical": 1, "propagate": 2}
TININESS = {"after": 0, "before": 1}

_ALIGN = 32
"""add/sub/fma: a term whose last bit lies more than this many bits below the other term's is
replaced by one unit ``2**-_ALIGN`` below that bit, with its sign (see :func:`_sum2`)."""

_MAX63 = np.uint64((1 << 63) - 1)


def supports(op: str, fmt: str) -> bool:
    """Whether the kernels certify ``op`` on ``fmt`` (every op on every format except binary32 fma)."""
    return fmt in FORMATS and op in OPS and not (op == "fma" and fmt == "f32")


def _compiler(**options):
    """A decorator compiling with an on-disk cache; where no cache location is writable (Numba
    raises), compiling per process instead."""

    def decorate(fn):
        try:
            return numba.njit(nogil=True, cache=True, **options)(fn)
        except RuntimeError:
            return numba.njit(nogil=True, **options)(fn)

    return decorate


_jit = _compiler()
_inline = _compiler(inline="always")
"""Inlined into its callers at Numba's IR level, so their constants reach its branches (only the
loop bodies: inlining the general path too would multiply the compile time many times over)."""


@_jit
def _cmp(p, d, q):
    """Sign of ``p * 2**d - q`` for ``0 <= p, q < 2**63`` (uint64) and any int64 ``d``."""
    if d >= 0:
        if p == 0:
            return 0 if q == 0 else -1
        if d >= 63 or p > (_MAX63 >> np.uint64(d)):
            return 1  # p * 2**d >= 2**63 > q
        v = p << np.uint64(d)
        return 1 if v > q else (-1 if v < q else 0)
    dd = -d
    if q == 0:
        return 1 if p != 0 else 0
    if dd >= 63 or q > (_MAX63 >> np.uint64(dd)):
        return -1
    v = q << np.uint64(dd)
    return 1 if p > v else (-1 if p < v else 0)


@_jit
def _vs(kind, p, pe, den, n, f):
    """Sign of ``|x| - n * 2**f`` for the exact value ``x`` described by (kind, p, pe, den):
    kind 2: ``|x| = sqrt(p * 2**pe)``; kind 1: ``|x| = p * 2**pe / den``."""
    if kind == 2:
        return _cmp(p, pe - 2 * f, n * n)
    return _cmp(p, pe - f, n * den)


@_jit
def _inside(kind, p, pe, den, lo, lo_closed, hi, hi_closed, open_ended, f):
    """Whether ``|x|`` lies in the interval from ``lo * 2**f`` to ``hi * 2**f`` (``hi`` ignored
    when ``open_ended``)."""
    c = _vs(kind, p, pe, den, lo, f)
    if c < 0 or (c == 0 and not lo_closed):
        return False
    if open_ended:
        return True
    c = _vs(kind, p, pe, den, hi, f)
    return c < 0 or (c == 0 and hi_closed)


@_jit
def _lower_ok(kind, p, pe, den, rm_, re_, rfield, mbits, mm):
    """Whether ``|x|`` is at or above the lower end of the rounding interval of the finite
    positive value with significand ``rm_``, last-bit exponent ``re_`` and field ``rfield``."""
    q = rm_ << np.uint64(2)
    power = rm_ == (np.uint64(1) << np.uint64(mbits)) and rfield > 1
    below = np.uint64(2) if power else np.uint64(4)
    if mm == 0:
        lo = q - below // np.uint64(2)
        closed = (rm_ & np.uint64(1)) == 0
    elif mm == 1:
        lo = q
        closed = True
    else:
        lo = q - below
        closed = False
    c = _vs(kind, p, pe, den, lo, re_ - 2)
    return c > 0 or (c == 0 and closed)


@_jit
def _judge(kind, p, pe, den, s, r, width, ebits, mbits, rnd, flush_out, before):
    """Whether result pattern ``r`` is the correctly rounded value of the finite non-zero exact
    value ``x`` of sign ``s`` (see :func:`_vs`) under rounding ``rnd`` and output flushing."""
    bias = (1 << (ebits - 1)) - 1
    emax_field = (1 << ebits) - 1
    emin_lsb = 1 - bias - mbits
    rsign = r >> np.uint64(width - 1)
    if rsign != s:
        return False
    rfield = np.int64((r >> np.uint64(mbits)) & np.uint64(emax_field))
    frac = r & np.uint64((1 << mbits) - 1)
    hidden = np.uint64(1) << np.uint64(mbits)
    # magnitude mode: 0 nearest, 1 toward zero, 2 away from zero
    if rnd == 0:
        mm = 0
    elif rnd == 1:
        mm = 1
    elif (rnd == 3) == (s == 0):
        mm = 2
    else:
        mm = 1
    max_m = (hidden << np.uint64(1)) - np.uint64(1)
    max_e = emax_field - 1 - bias - mbits
    if rfield == emax_field:
        if frac != 0 or mm == 1:
            return False  # NaN, or infinity toward zero from a finite value
        q = max_m << np.uint64(2)
        if mm == 0:
            return _inside(kind, p, pe, den, q + np.uint64(2), True, q, False, True, max_e - 2)
        return _inside(kind, p, pe, den, q, False, q, False, True, max_e - 2)
    if rfield == 0 and frac != 0 and flush_out:
        return False  # a subnormal result where results are flushed
    if rfield == 0 and frac == 0 and flush_out:
        # a flushed zero: |x| below the flush threshold
        if before:
            return _vs(kind, p, pe, den, hidden << np.uint64(2), emin_lsb - 2) < 0
        return not _lower_ok(kind, p, pe, den, hidden, emin_lsb, 1, mbits, mm)
    m = (frac | hidden) if rfield != 0 else frac
    e = (rfield if rfield != 0 else 1) - bias - mbits
    q = m << np.uint64(2)
    power = m == hidden and rfield > 1
    below = np.uint64(2) if power else np.uint64(4)
    if mm == 0:
        lo = q - below // np.uint64(2) if q >= np.uint64(2) else np.uint64(0)
        hi = q + np.uint64(2)
        even = (m & np.uint64(1)) == 0
        lo_closed = even
        hi_closed = even
    elif mm == 1:
        lo = q
        hi = q + np.uint64(4)
        lo_closed = True
        hi_closed = False
    else:
        lo = q - below if q >= below else np.uint64(0)
        hi = q
        lo_closed = False
        hi_closed = True
    open_ended = mm == 1 and rfield == emax_field - 1 and m == max_m
    if flush_out and before and rfield == 1 and m == hidden:
        lo = q  # the smallest normal number: only from |x| >= 2**emin
        lo_closed = True
    return _inside(kind, p, pe, den, lo, lo_closed, hi, hi_closed, open_ended, e - 2)


@_jit
def _sum2(s1, m1, e1, s2, m2, e2):
    """``(-1)**s1 m1 2**e1 + (-1)**s2 m2 2**e2`` as (sign, |S|, Es); significands below 2**30
    (``m1 != 0``; ``m2`` may be 0).

    A term more than :data:`_ALIGN` bits below the other (by last bits) is below ``2**-8`` of the
    larger term's last bit (significands have at most 24 bits), and every rounding boundary near
    the sum is a multiple of at least ``2**-3`` of that bit (the sum is within a factor 2 of the
    larger term), so no boundary separates the true sum from the larger term plus one unit
    ``2**-_ALIGN`` below its last bit on the same side: that unit stands in for the small term.
    """
    if m2 == 0:
        return s1, m1, e1
    hi_e = max(e1, e2)
    lo_e = max(min(e1, e2), hi_e - _ALIGN)
    if e1 < lo_e:
        v1 = np.int64(1)
    else:
        v1 = np.int64(m1 << np.uint64(e1 - lo_e))
    if e2 < lo_e:
        v2 = np.int64(1)
    else:
        v2 = np.int64(m2 << np.uint64(e2 - lo_e))
    if s1:
        v1 = -v1
    if s2:
        v2 = -v2
    t = v1 + v2
    if t < 0:
        return np.uint64(1), np.uint64(-t), lo_e
    return np.uint64(0), np.uint64(t), lo_e


@_jit
def _is_nan(x, width, mbits, ebits):
    mag = x & np.uint64((1 << (width - 1)) - 1)
    return mag > np.uint64(((1 << ebits) - 1) << mbits)


@_jit
def _nan_ok(r, a, b, c, arity, width, ebits, mbits, policy, nan_bits):
    """Whether NaN result ``r`` is acceptable under the NaN policy (a NaN is due)."""
    if policy == 1:
        return r == nan_bits
    if not _is_nan(r, width, mbits, ebits):
        return False
    if policy == 0:
        return True
    quiet = np.uint64(1) << np.uint64(mbits - 1)
    any_nan = False
    for k in range(arity):
        o = a if k == 0 else (b if k == 1 else c)
        if _is_nan(o, width, mbits, ebits):
            any_nan = True
            if r == (o | quiet):
                return True
    return not any_nan  # invalid operation on non-NaN operands: any NaN


@_jit
def _decode(o, width, ebits, mbits, flush_in):
    """(sign, class, significand, last-bit exponent) of a pattern; class 0 zero (subnormals too
    when ``flush_in``), 1 finite non-zero, 2 infinity, 3 NaN."""
    bias = (1 << (ebits - 1)) - 1
    emax_field = (1 << ebits) - 1
    sign = o >> np.uint64(width - 1)
    fld = np.int64((o >> np.uint64(mbits)) & np.uint64(emax_field))
    frac = o & np.uint64((1 << mbits) - 1)
    if fld == emax_field:
        return sign, (3 if frac != 0 else 2), np.uint64(0), np.int64(0)
    if fld == 0 and (frac == 0 or flush_in):
        return sign, 0, np.uint64(0), np.int64(0)
    if fld == 0:
        return sign, 1, frac, np.int64(1 - bias - mbits)
    return sign, 1, frac | (np.uint64(1) << np.uint64(mbits)), fld - bias - mbits


@_jit
def _lane(op, width, ebits, mbits, rnd, flush_in, flush_out, before, sat, policy, nan_bits, r, a, b, c):
    """The certificate of one lane: is ``r`` the result of ``op`` on ``a, b, c``?"""
    arity = 1 if op <= 1 else (3 if op == 6 else 2)
    bias = (1 << (ebits - 1)) - 1
    emax_field = (1 << ebits) - 1
    hidden = np.uint64(1) << np.uint64(mbits)
    # operands: sign, class (0 zero, 1 finite, 2 inf, 3 NaN), significand, last-bit exponent
    s0, k0, m0, e0 = _decode(a, width, ebits, mbits, flush_in)
    s1_, k1, m1_, e1_ = _decode(b, width, ebits, mbits, flush_in) if arity > 1 else (np.uint64(0), 0, np.uint64(0), np.int64(0))
    s2_, k2, m2_, e2_ = _decode(c, width, ebits, mbits, flush_in) if arity > 2 else (np.uint64(0), 0, np.uint64(0), np.int64(0))
    # the exact result: NaN due (0), infinity (1), zero (2) or finite non-zero (3); its sign
    cls = 3
    s = np.uint64(0)
    zsign = np.uint64(0)
    kind = 1
    p = np.uint64(0)
    pe = np.int64(0)
    den = np.uint64(1)
    any_nan = k0 == 3 or k1 == 3 or k2 == 3
    if any_nan:
        cls = 0
    elif op == 0:  # sqrt
        if k0 == 0:
            cls, zsign = 2, s0
        elif s0 == 1:
            cls = 0
        elif k0 == 2:
            cls, s = 1, np.uint64(0)
        else:
            kind, p, pe = 2, m0, e0
    elif op == 1:  # rcp
        s = s0
        if k0 == 0:
            cls = 1
        elif k0 == 2:
            cls, zsign = 2, s
        else:
            p, pe, den = np.uint64(1), -e0, m0
    elif op == 2:  # div
        s = s0 ^ s1_
        if (k0 == 0 and k1 == 0) or (k0 == 2 and k1 == 2):
            cls = 0
        elif k0 == 2 or k1 == 0:
            cls = 1
        elif k0 == 0 or k1 == 2:
            cls, zsign = 2, s
        else:
            p, pe, den = m0, e0 - e1_, m1_
    elif op == 3:  # mul
        s = s0 ^ s1_
        if (k0 == 0 and k1 == 2) or (k0 == 2 and k1 == 0):
            cls = 0
        elif k0 == 2 or k1 == 2:
            cls = 1
        elif k0 == 0 or k1 == 0:
            cls, zsign = 2, s
        else:
            p, pe = m0 * m1_, e0 + e1_
    else:  # add, sub, fma: x = t1 + t2
        if op == 6:
            s1 = s0 ^ s1_
            c1 = 0
            if (k0 == 0 and k1 == 2) or (k0 == 2 and k1 == 0):
                c1 = 3
            elif k0 == 2 or k1 == 2:
                c1 = 2
            elif k0 == 1 and k1 == 1:
                c1 = 1
            m1, e1 = m0 * m1_, e0 + e1_
            s2, c2, m2, e2 = s2_, k2, m2_, e2_
        else:
            s1, c1, m1, e1 = s0, k0, m0, e0
            s2 = s1_ ^ np.uint64(1) if op == 5 else s1_
            c2, m2, e2 = k1, m1_, e1_
        if c1 == 3 or (c1 == 2 and c2 == 2 and s1 != s2):
            cls = 0
        elif c1 == 2 or c2 == 2:
            cls, s = 1, (s1 if c1 == 2 else s2)
        elif c1 == 0 and c2 == 0:
            cls = 2
            zsign = s1 if s1 == s2 else np.uint64(1 if rnd == 2 else 0)
        else:
            if c1 == 0:
                s, p, pe = _sum2(s2, m2, e2, s1, np.uint64(0), e2)
            else:
                s, p, pe = _sum2(s1, m1, e1, s2, m2 if c2 != 0 else np.uint64(0), e2)
            if p == 0:
                cls, zsign = 2, np.uint64(1 if rnd == 2 else 0)
    sign_bit = np.uint64(1) << np.uint64(width - 1)
    one = np.uint64(bias) << np.uint64(mbits)
    inf_bits = np.uint64(emax_field) << np.uint64(mbits)
    if sat:
        # clamp(correctly rounded x, +0, 1.0); NaN and negative results (-0 included) give +0
        if cls == 0:
            return r == 0
        if cls == 2:
            return r == 0
        if cls == 1:
            return r == (one if s == 0 else np.uint64(0))
        if s == 1:
            return r == 0
        if r == 0:
            return _judge(kind, p, pe, den, s, r, width, ebits, mbits, rnd, flush_out, before)
        if r == one:
            return _lower_ok(kind, p, pe, den, hidden, np.int64(-mbits), bias, mbits,
                             0 if rnd == 0 else (2 if rnd == 3 else 1))
        if r > one:
            return False
        return _judge(kind, p, pe, den, s, r, width, ebits, mbits, rnd, flush_out, before)
    if cls == 0:
        return _nan_ok(r, a, b, c, arity, width, ebits, mbits, policy, nan_bits)
    if cls == 1:
        return r == ((s << np.uint64(width - 1)) | inf_bits)
    if cls == 2:
        return r == (zsign << np.uint64(width - 1))
    _ = sign_bit
    return _judge(kind, p, pe, den, s, r, width, ebits, mbits, rnd, flush_out, before)


@_inline
def _fast(op, width, ebits, mbits, rnd, flush_out, r, a, b, c):
    """The certificate of a common lane in straight-line code: 1 right, 0 wrong, -1 not common
    (then :func:`_lane` decides). Common: no ``.sat``, operands normal (positive for sqrt), a
    finite or infinite result (not NaN), and when results are flushed a result above the smallest
    binade (flushing and tininess then change nothing)."""
    bias = (1 << (ebits - 1)) - 1
    emax_field = (1 << ebits) - 1
    hidden = np.uint64(1) << np.uint64(mbits)
    fmask = hidden - np.uint64(1)
    top = np.uint64(width - 1)
    rf = np.int64((r >> np.uint64(mbits)) & np.uint64(emax_field))
    rfrac = r & fmask
    if rf == emax_field and rfrac != 0:
        return -1
    if rf <= 1 and flush_out:
        return -1
    fa = np.int64((a >> np.uint64(mbits)) & np.uint64(emax_field))
    if fa == 0 or fa == emax_field:
        return -1
    sa = a >> top
    ma = (a & fmask) | hidden
    ea = fa - bias - mbits
    if op == 0:
        if sa != 0:
            return -1
        s = sa
    else:
        fb = np.int64((b >> np.uint64(mbits)) & np.uint64(emax_field))
        if op != 1 and (fb == 0 or fb == emax_field):
            return -1
        sb = b >> top
        mb = (b & fmask) | hidden
        eb = fb - bias - mbits
        if op == 1:
            s = sa
        elif op <= 3:
            s = sa ^ sb
        else:
            if op == 6:
                fc = np.int64((c >> np.uint64(mbits)) & np.uint64(emax_field))
                if fc == 0 or fc == emax_field:
                    return -1
                s, p, pe = _sum2(sa ^ sb, ma * mb, ea + eb, c >> top, (c & fmask) | hidden, fc - bias - mbits)
            else:
                s, p, pe = _sum2(sa, ma, ea, sb ^ np.uint64(op == 5), mb, eb)
            if p == 0:
                return -1
    if (r >> top) != s:
        return 0
    toward_zero = rnd == 1 or (rnd != 0 and (rnd == 3) != (s == 0))
    open_ended = False
    if rf == emax_field:
        # infinity: from the largest finite number plus half a unit (nearest) or beyond it (away)
        if toward_zero:
            return 0
        q = ((hidden << np.uint64(1)) - np.uint64(1)) << np.uint64(2)
        f = emax_field - 1 - bias - mbits - 2
        lo = q + np.uint64(2) if rnd == 0 else q
        hi = q
        open_lo = rnd != 0
        open_hi = False
        open_ended = True
    else:
        rm_ = (rfrac | hidden) if rf != 0 else rfrac
        f = (rf if rf != 0 else 1) - bias - mbits - 2  # exponent of a quarter of the result's last bit
        q = rm_ << np.uint64(2)
        below = np.uint64(2) if (rm_ == hidden and rf > 1) else np.uint64(4)  # the gap under a power of 2
        if rnd == 0:
            half = below >> np.uint64(1)
            lo = q - half if q >= half else np.uint64(0)
            hi = q + np.uint64(2)
            odd = (rm_ & np.uint64(1)) != 0
            open_lo = odd
            open_hi = odd
        elif toward_zero:
            lo = q
            hi = q + np.uint64(4)
            open_lo = False
            open_hi = True
            open_ended = rf == emax_field - 1 and rm_ == (hidden << np.uint64(1)) - np.uint64(1)
        else:
            lo = q - below if q >= below else np.uint64(0)
            hi = q
            open_lo = True
            open_hi = False
    if op == 0:
        c_lo = _cmp(ma, ea - 2 * f, lo * lo)
        c_hi = _cmp(ma, ea - 2 * f, hi * hi)
    elif op == 1:
        c_lo = _cmp(np.uint64(1), -ea - f, lo * ma)
        c_hi = _cmp(np.uint64(1), -ea - f, hi * ma)
    elif op == 2:
        c_lo = _cmp(ma, ea - eb - f, lo * mb)
        c_hi = _cmp(ma, ea - eb - f, hi * mb)
    elif op == 3:
        c_lo = _cmp(ma * mb, ea + eb - f, lo)
        c_hi = _cmp(ma * mb, ea + eb - f, hi)
    else:
        c_lo = _cmp(p, pe - f, lo)
        c_hi = _cmp(p, pe - f, hi)
    if c_lo < 0 or (c_lo == 0 and open_lo):
        return 0
    if not open_ended and (c_hi > 0 or (c_hi == 0 and open_hi)):
        return 0
    return 1


def _check_loop(op, ebits, mbits, rnd, flush_in, flush_out, before, sat, policy, nan_bits, res, a, b, c, out):
    """``out[i]`` = the certificate of lane ``i`` (see the module docstring). ``res, a, b, c``:
    unsigned arrays of equal length (unused operands: any array of that length); codes from
    :data:`OPS`, :data:`ROUNDINGS`, :data:`NAN_POLICIES`. Returns the number of rejected lanes.
    Common lanes take :func:`_fast` (inlined), the others :func:`_lane`."""
    width = 1 + ebits + mbits
    bad = 0
    for i in range(res.shape[0]):
        r, x, y, z = np.uint64(res[i]), np.uint64(a[i]), np.uint64(b[i]), np.uint64(c[i])
        verdict = -1 if sat else _fast(op, width, ebits, mbits, rnd, flush_out, r, x, y, z)
        if verdict >= 0:
            ok = verdict == 1
        else:
            ok = _lane(op, width, ebits, mbits, rnd, flush_in, flush_out, before, sat, policy,
                       np.uint64(nan_bits), r, x, y, z)
        out[i] = ok
        if not ok:
            bad += 1
    return bad


check_into = _jit(_check_loop)
_check_inline = _inline(_check_loop)

_SPECIALISED: dict = {}
_SPECIALISED_LOCK = threading.Lock()


def specialised(op: str, fmt: str, rounding: str, *, ftz_in: bool = False, ftz_out: bool = False,
                tininess: str = "after", sat: bool = False, nan: str = "propagate", nan_bits: int = 0):
    """``kernel(res, a, b, c, out) -> rejected lanes``: :func:`check_into` compiled for one
    configuration, its codes constants (the common lanes then cost some 4 ns instead of 7-14 here).
    Compiled on first use in each process (a few seconds, not cached on disk); for long sweeps."""
    key = (op, fmt, rounding, bool(ftz_in), bool(ftz_out), tininess, bool(sat), nan, int(nan_bits))
    with _SPECIALISED_LOCK:
        kernel = _SPECIALISED.get(key)
        if kernel is None:
            ebits, mbits = FORMATS[fmt]
            codes = (OPS[op], ebits, mbits, ROUNDINGS[rounding], bool(ftz_in), bool(ftz_out), tininess == "before",
                     bool(sat), NAN_POLICIES[nan], int(nan_bits))
            kernel = _SPECIALISED[key] = _make_specialised(*codes)
    return kernel


def _make_specialised(op, ebits, mbits, rnd, flush_in, flush_out, before, sat, policy, nan_bits):
    @numba.njit(nogil=True)
    def kernel(res, a, b, c, out):
        return _check_inline(op, ebits, mbits, rnd, flush_in, flush_out, before, sat, policy, nan_bits,
                             res, a, b, c, out)

    return kernel


@_jit
def points_into(start, unary, a, b):
    """Operands of sweep points ``start, start + 1, ...``: unary sweeps ``a[i] = start + i``;
    binary sweeps of 16-bit formats point ``k`` is ``(k >> 16, k & 0xffff)``."""
    n = a.shape[0]
    for i in range(n):
        k = start + i
        if unary:
            a[i] = k
        else:
            a[i] = k >> 16
            b[i] = k & 0xFFFF


def check(op: str, fmt: str, rounding: str, result, *operands, ftz: bool = False, ftz_in: bool | None = None,
          ftz_out: bool | None = None, tininess: str = "after", sat: bool = False, nan: str = "propagate",
          nan_bits: int | None = None, threads: int | None = None) -> np.ndarray:
    """Per lane: is ``result`` the correctly rounded ``op`` of ``operands`` (bit patterns of
    ``fmt``) under ``rounding``? ``ftz`` flushes subnormal operands and results (``ftz_in`` /
    ``ftz_out`` override either side), results per ``tininess`` (``after`` or ``before``
    rounding); ``sat`` clamps to ``[+0, 1.0]``; ``nan`` judges NaN results (``unspecified``: any
    NaN, ``canonical``: exactly ``nan_bits``, ``propagate``: a NaN operand's payload quieted, any
    NaN for invalid operations). Large inputs are split over ``threads`` (default: one per CPU,
    at most 8; ``TILECHECK_THREADS``). Raises ``ValueError`` for what is not certified."""
    # argument checks of our own, not oracle.common's (see the note above ARITY)
    if not supports(op, fmt):
        raise ValueError(f"no certificate for {op} on {fmt}")
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    if nan not in NAN_POLICIES:
        raise ValueError(f"unknown NaN policy {nan!r}")
    if tininess not in TININESS:
        raise ValueError(f"unknown tininess {tininess!r}")
    if len(operands) != ARITY[op]:
        raise ValueError(f"{op} takes {ARITY[op]} operand(s), got {len(operands)}")
    if nan == "canonical" and nan_bits is None:
        raise ValueError("the canonical NaN policy needs nan_bits")
    arrays = np.broadcast_arrays(np.asarray(result), *[np.asarray(o) for o in operands])
    shape = arrays[0].shape
    flat = [np.ascontiguousarray(x).reshape(-1) for x in arrays]
    for x in flat:
        if x.dtype.kind not in "ui":
            raise ValueError(f"bit patterns must be integer arrays, got {x.dtype}")
    res = flat[0]
    ops_ = flat[1:] + [flat[1]] * (3 - len(flat[1:]))
    out = np.empty(res.size, dtype=np.bool_)
    ebits, mbits = FORMATS[fmt]
    fi = bool(ftz) if ftz_in is None else bool(ftz_in)
    fo = bool(ftz) if ftz_out is None else bool(ftz_out)
    args = (OPS[op], ebits, mbits, ROUNDINGS[rounding], fi, fo, tininess == "before", bool(sat),
            NAN_POLICIES[nan], int(nan_bits or 0))

    def work(lo: int, hi: int) -> None:
        check_into(*args, res[lo:hi], ops_[0][lo:hi], ops_[1][lo:hi], ops_[2][lo:hi], out[lo:hi])

    n = res.size
    workers = cpus.threads() if threads is None else max(1, int(threads))
    if workers <= 1 or n < (1 << 16):
        work(0, n)
    else:
        share = -(-n // workers)
        with ThreadPoolExecutor(max_workers=workers) as pool:  # the kernel releases the GIL
            for fut in [pool.submit(work, lo, min(n, lo + share)) for lo in range(0, n, share)]:
                fut.result()
    return out.reshape(shape)

