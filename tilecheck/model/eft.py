"""binary64 add, sub, mul and fma in every rounding mode by error-free transformations.

The exact path (:mod:`tilecheck.model.ops`) builds every binary64 product from 128-bit integer
pieces; here native float64 operations do the work and only lanes outside the ranges where the
transformations are exact fall back to it (gathered by index, evaluated by :func:`ops.apply`).
Every fast result is the exact path's bits (the tests compare them, and both against MPFR).
On numpy arrays :mod:`tilecheck.model.jit` runs the same transformations as compiled loops; this
module serves the other array namespaces (CuPy on the GPU backend).

Round to nearest:

* ``add``/``sub``/``mul``: numpy's native operation is IEEE round-to-nearest-even (subnormal
  results, overflow and signed zeros included); only NaN bits are fixed afterwards.
* ``fma``: Boldo and Melquiond's emulation with rounding to odd (IEEE TC 57(4), 2008): the product
  is split exactly, ``a*b = uh + ul`` (Dekker's product with Veltkamp's splitting by
  ``2**27 + 1``: numpy has no fused multiply-add), ``c + uh = th + tl`` exactly (Knuth's TwoSum),
  ``v = RO(tl + ul)`` (rounded to odd: TwoSum, then a step to the odd neighbour on the side of the
  error when the rounded sum is inexact and even) and ``s = RN(th + v) = RN(a*b + c)``.

Directed rounding starts from the round-to-nearest result ``s`` (a neighbour of the exact value
``x``) and the sign of the residual ``x - s``, which decides whether ``s`` moves one unit on its bit
pattern (toward the exact value, as in :mod:`tilecheck.model.fast`):

* ``add``/``sub``: ``x - s`` is TwoSum's error term, exact whenever nothing overflows;
* ``mul``: an *integer* residual ``D = ma*mb - mp*2**k`` (integer significands, ``k`` in {52, 53}
  from the exponents) computed with wrapping uint64 arithmetic: ``|D| <= 2**52``, so its value
  modulo 2**64 is the value (products that over- or underflowed to inf or 0 lie beyond ``s``);
* ``fma``: the error ``e`` of TwoSum(th, v). With ``v = RO(tl + ul)`` and ``d = tl + ul - v``,
  ``x - s = e + d``. When ``d != 0``, ``v`` is an odd multiple of ``ulp(v)`` while ``th`` and
  ``s`` are multiples of it (``|v| <= 1.5 ulp(th)`` whenever ``tl != 0``), so ``e`` is an odd
  multiple of ``ulp(v)`` and ``|e| >= ulp(v) > |d|``: the sign of ``x - s`` is the sign of ``e``.

Where the transformations are exact (otherwise: the exact path):

* ``add``/``sub``: finite operands and a finite sum (an overflow anywhere in TwoSum shows as a
  non-finite error term); under ``.rm`` zero results take the exact path (their sign);
* ``mul``: normal operands; results normal, zero or infinite (subnormal results: exact path);
* ``fma``: a product ``|uh| >= 2**-964`` (then ``ulp(a)*ulp(b) >= 2**-1070``: every partial
  product is a multiple of ``2**-1074`` and Dekker's product is exact even with subnormal
  operands, Boldo 2006) and a finite non-zero result. Overflow anywhere -- in the split
  ``(2**27+1)*a``, the product, a sum -- and non-finite operands make the result non-finite, so
  that one check covers them. Of the other lanes, two classes have closed forms:
  a product of magnitude at least ``2**1025`` overflows whatever ``c`` is, and a non-zero product
  below a quarter ulp of a normal ``c`` leaves ``RN = c`` with the product's sign as the side.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format
from tilecheck.model import ops
from tilecheck.model.fast import fix_nans_into, scratch

__all__ = ["OPS", "applicable", "block"]

OPS = ("add", "sub", "mul", "fma")

_SPLIT = 134217729.0
"""Veltkamp's splitting constant for binary64: 2**27 + 1."""

_MANT = (1 << 52) - 1
_HIDDEN = 1 << 52


def applicable(op: str, fmt: Format, mode: ops.Mode) -> bool:
    """Whether :func:`block` covers ``op`` on ``fmt`` under ``mode`` (binary64 without flushing)."""
    return fmt.name == "f64" and op in OPS and not (mode.flush_in or mode.flush_out)


def _exponent(xp, x, out):
    """Biased exponent fields of uint64 patterns ``x`` (sign dropped) into ``out``."""
    xp.left_shift(x, xp.uint64(1), out=out)
    xp.right_shift(out, xp.uint64(53), out=out)
    return out


def _in_range(xp, e, lo: int, hi: int, out, tmp, combine: bool):
    """``lo <= e <= hi`` for uint64 ``e`` (one unsigned comparison after a wrapping subtract);
    ANDed into ``out`` when ``combine``."""
    xp.subtract(e, xp.uint64(lo), out=tmp)
    if combine:
        flag = xp.less_equal(tmp, xp.uint64(hi - lo))
        xp.logical_and(out, flag, out=out)
    else:
        xp.less_equal(tmp, xp.uint64(hi - lo), out=out)
    return out


def _step_value(xp, bits, pos, neg, rounding: str, n: int):
    """Move int64 patterns ``bits`` one representable value per ``rounding`` where the exact value
    lies above (``pos``) or below (``neg``) the nearest result (bool arrays)."""
    up = scratch(xp, "eft_up", n, xp.int64)
    if rounding == "rz":
        # toward zero where the exact value is nearer zero: below a positive, above a negative
        xp.right_shift(bits, xp.int64(63), out=up)  # -1 for negative patterns
        sel = xp.where(up < 0, pos, neg)
        xp.subtract(bits, sel, out=bits, casting="unsafe")
        return bits
    # +1 on a non-negative pattern is a step up in value, -1 on a negative one
    xp.right_shift(bits, xp.int64(63), out=up)
    xp.bitwise_or(up, xp.int64(1), out=up)
    if rounding == "rp":
        xp.multiply(up, pos, out=up, casting="unsafe")
        xp.add(bits, up, out=bits)
    else:
        xp.multiply(up, neg, out=up, casting="unsafe")
        xp.subtract(bits, up, out=bits)
    return bits


def _step_by_float(xp, s, e, rounding: str, n: int):
    """Directed rounding of ``s + e`` (``s`` the nearest result, ``e`` the exact residual as a
    float) written into ``s``'s bits."""
    pos = scratch(xp, "eft_pos", n, bool)
    bits = s.view(xp.int64)
    if rounding == "rz":
        # toward zero where s overshoots: e and s of opposite signs (sign(e) * s: no underflow)
        t = scratch(xp, "eft_t", n, xp.float64)
        xp.sign(e, out=t)
        xp.multiply(t, s, out=t)
        xp.less(t, 0.0, out=pos)
        xp.subtract(bits, pos, out=bits, casting="unsafe")
        return
    neg = scratch(xp, "eft_neg", n, bool)
    xp.greater(e, 0.0, out=pos)
    xp.less(e, 0.0, out=neg)
    _step_value(xp, bits, pos, neg, rounding, n)


def _add(xp, negate: bool, a, b, mode: ops.Mode, s, n: int):
    """add/sub into float64 ``s``; returns the indices of lanes for the exact path (or None)."""
    fa, fb = a.view(xp.float64), b.view(xp.float64)
    (xp.subtract if negate else xp.add)(fa, fb, out=s)
    if mode.rounding == "rn":
        return None
    # TwoSum: e = (a - (s - bb)) + (b' - bb) with bb = s - a, b' = -b for sub
    bb = scratch(xp, "eft_bb", n, xp.float64)
    e = scratch(xp, "eft_e", n, xp.float64)
    xp.subtract(s, fa, out=bb)
    xp.subtract(s, bb, out=e)
    xp.subtract(fa, e, out=e)
    if negate:
        xp.add(fb, bb, out=bb)
        xp.subtract(e, bb, out=e)
    else:
        xp.subtract(fb, bb, out=bb)
        xp.add(e, bb, out=e)
    ok = scratch(xp, "eft_ok", n, bool)
    xp.isfinite(e, out=ok)  # inf/NaN operands and every overflow leave a non-finite error
    if mode.rounding == "rm":
        ok &= s != 0.0  # exact zero sums: -0 under rm (sign rule) from the exact path
    _step_by_float(xp, s, e, mode.rounding, n)
    return None if bool(ok.all()) else xp.nonzero(~ok)[0]


def _mul(xp, a, b, mode: ops.Mode, s, n: int):
    """mul into float64 ``s``; returns the indices of lanes for the exact path (or None)."""
    xp.multiply(a.view(xp.float64), b.view(xp.float64), out=s)
    if mode.rounding == "rn":
        return None
    u, i64 = xp.uint64, xp.int64
    p = s.view(u)
    ea = _exponent(xp, a, scratch(xp, "eft_ea", n, u))
    eb = _exponent(xp, b, scratch(xp, "eft_eb", n, u))
    ep = _exponent(xp, p, scratch(xp, "eft_ep", n, u))
    tmp = scratch(xp, "eft_tmp", n, u)
    ok = _in_range(xp, ea, 1, 2046, scratch(xp, "eft_ok", n, bool), tmp, False)
    _in_range(xp, eb, 1, 2046, ok, tmp, True)
    # results outside the normal range: zero, subnormal or infinite
    special = _in_range(xp, ep, 1, 2046, scratch(xp, "eft_special", n, bool), tmp, False)
    xp.logical_not(special, out=special)
    # k = ep - ea - eb + 1075 (52..54 for normal results); D = ma*mb - mp*2**k mod 2**64
    xp.add(ep, u(1075), out=ep)
    xp.subtract(ep, ea, out=ep)
    xp.subtract(ep, eb, out=ep)
    xp.bitwise_and(ep, u(63), out=ep)  # lanes where k is out of range are not used
    xp.bitwise_and(a, u(_MANT), out=ea)
    xp.bitwise_or(ea, u(_HIDDEN), out=ea)
    xp.bitwise_and(b, u(_MANT), out=eb)
    xp.bitwise_or(eb, u(_HIDDEN), out=eb)
    xp.multiply(ea, eb, out=ea)  # low 64 bits of ma*mb
    xp.bitwise_and(p, u(_MANT), out=tmp)
    xp.bitwise_or(tmp, u(_HIDDEN), out=tmp)
    xp.left_shift(tmp, ep, out=tmp)
    xp.subtract(ea, tmp, out=ea)
    d = ea.view(i64)  # |x| - |s| in units: exact for normal results
    if bool(special.any()):
        idx = xp.nonzero(special)[0]
        mag = p[idx] << u(1)
        # an overflowed product lies below inf, an underflowed one above zero (in magnitude);
        # subnormal products take the exact path
        d[idx] = xp.where(mag == 0, i64(1), i64(-1))
        ok[idx] &= (mag == 0) | (mag == u(0x7FF << 53))
    # magnitude side -> value side: a negative result has the exact value above it when d < 0
    pos = scratch(xp, "eft_pos", n, bool)
    neg = scratch(xp, "eft_neg", n, bool)
    sgn = tmp.view(i64)
    xp.right_shift(s.view(i64), i64(63), out=sgn)  # 0 or -1
    xp.bitwise_xor(d, sgn, out=d)
    xp.subtract(d, sgn, out=d)  # -d for negative results
    xp.greater(d, i64(0), out=pos)
    xp.less(d, i64(0), out=neg)
    _step_value(xp, s.view(i64), pos, neg, mode.rounding, n)
    return None if bool(ok.all()) else xp.nonzero(~ok)[0]


def _fma(xp, a, b, c, mode: ops.Mode, s, n: int):
    """fma into float64 ``s`` for the regular lanes; returns indices of the others (or None)."""
    f = xp.float64
    fa, fb, fc = a.view(f), b.view(f), c.view(f)
    t = [scratch(xp, f"eft_f{i}", n, f) for i in range(6)]
    ah, al, bh, bl, uh, ul = t
    # Veltkamp: ah = fl(C*a) - (fl(C*a) - a) holds the top 26 bits, al = a - ah the rest
    for x, hi, lo in ((fa, ah, al), (fb, bh, bl)):
        xp.multiply(x, _SPLIT, out=hi)
        xp.subtract(hi, x, out=lo)
        xp.subtract(hi, lo, out=hi)
        xp.subtract(x, hi, out=lo)
    xp.multiply(fa, fb, out=uh)
    # Dekker: ul = ((ah*bh - uh) + ah*bl + al*bh) + al*bl, exact
    w = s  # s is free until the end: use it as a temporary
    xp.multiply(ah, bh, out=ul)
    xp.subtract(ul, uh, out=ul)
    xp.multiply(ah, bl, out=w)
    xp.add(ul, w, out=ul)
    xp.multiply(al, bh, out=w)
    xp.add(ul, w, out=ul)
    xp.multiply(al, bl, out=w)
    xp.add(ul, w, out=ul)
    th, tl, bb = ah, al, bh  # the split halves are done with
    _two_sum(xp, fc, uh, th, tl, bb)
    s1, s2 = bl, bb
    _two_sum(xp, tl, ul, s1, s2, scratch(xp, "eft_f6", n, f))
    return _fma_finish(xp, th, s1, s2, uh, s, mode, scratch(xp, "eft_ok", n, bool), n)


def _fma_finish(xp, th, s1, s2, uh, s, mode: ops.Mode, ok, n: int):
    """Round to odd, final addition, directed step and the range check of :func:`_fma`."""
    i64, u = xp.int64, xp.uint64
    nz = scratch(xp, "eft_nz", n, bool)
    _round_to_odd(xp, s1, s2, nz, n)
    xp.add(th, s1, out=s)
    if mode.rounding != "rn":
        # e = (th + v) - s exactly (TwoSum with s known); its sign is the side of the exact value
        bb, e = s2, scratch(xp, "eft_e", n, xp.float64)
        xp.subtract(s, th, out=bb)
        xp.subtract(s, bb, out=e)
        xp.subtract(th, e, out=e)
        xp.subtract(s1, bb, out=bb)
        xp.add(e, bb, out=e)
        _step_by_float(xp, s, e, mode.rounding, n)
    # in range: a product of at least 2**-964 (every partial product a multiple of 2**-1074; a
    # split that overflowed, like any other overflow or a non-finite operand, made s non-finite)
    # and a finite non-zero result
    mag = scratch(xp, "eft_mag", n, u)
    xp.left_shift(uh.view(u), u(1), out=mag)
    xp.greater_equal(mag, u((1023 - 964) << 53), out=ok)
    xp.left_shift(s.view(u), u(1), out=mag)
    xp.subtract(mag, u(1), out=mag)
    xp.less(mag, u((0x7FF << 53) - 1), out=nz)
    xp.logical_and(ok, nz, out=ok)
    return None if bool(ok.all()) else xp.nonzero(~ok)[0]


def _round_to_odd(xp, s1, s2, nz, n: int):
    """In place: ``s1 <- RO(s1 + s2)`` where ``s1 = RN(s1 + s2)`` and ``s2`` is its exact error.

    Truncate toward zero (one unit off ``s1``'s pattern where ``s2`` points toward zero), then set
    the last bit where the sum was inexact. ``nz`` is bool scratch."""
    i64 = xp.int64
    v = s1.view(i64)
    adj = scratch(xp, "eft_adj", n, i64)
    xp.not_equal(s2, 0.0, out=nz)
    xp.bitwise_xor(v, s2.view(i64), out=adj)
    xp.right_shift(adj, i64(63), out=adj)  # -1 where s2 has the other sign
    xp.multiply(adj, nz, out=adj, casting="unsafe")
    xp.add(v, adj, out=v)
    xp.bitwise_or(v, nz, out=v)


def _two_sum(xp, x, y, s, e, bb):
    """Knuth's TwoSum into ``s`` and ``e``: ``s = RN(x + y)``, ``e = x + y - s`` exactly (barring
    overflow). ``bb`` is scratch; ``s``/``e`` may alias neither ``x`` nor ``y`` except as noted by
    callers (``s`` may alias ``x`` only if ``e`` is computed from a copy -- not used here)."""
    xp.add(x, y, out=s)
    xp.subtract(s, x, out=bb)
    xp.subtract(s, bb, out=e)
    xp.subtract(x, e, out=e)
    xp.subtract(y, bb, out=bb)
    xp.add(e, bb, out=e)


def _fma_special(xp, fmt: Format, a, b, c, mode: ops.Mode, rule: ops.NanRule):
    """fma on lanes outside the EFT ranges: closed forms for overflowing products and for
    products below a quarter ulp of a normal ``c``; the exact path for the rest."""
    u = xp.uint64
    one = u(1)
    ea = (a << one) >> u(53)
    eb = (b << one) >> u(53)
    ec = (c << one) >> u(53)
    finite = (ea <= u(2046)) & (eb <= u(2046)) & (ec <= u(2046))
    nonzero = ((a << one) != 0) & ((b << one) != 0)
    esum = xp.maximum(ea, one) + xp.maximum(eb, one)
    # |a*b| >= 2**(Ea+Eb-2046) >= 2**1025 > |c| + max finite: overflows in every mode
    over = finite & (ea >= one) & (eb >= one) & (esum >= u(3071))
    # |a*b| < 2**(Ea'+Eb'-2044) <= 2**(ec-54), a quarter ulp of a normal c: RN = c
    small = finite & nonzero & (ec >= one) & (esum + u(969) <= ec) & ~over
    out = xp.empty(a.shape, dtype=u)
    neg_prod = ((a ^ b) >> u(63)).astype(bool)
    if bool(over.any()):
        idx = xp.nonzero(over)[0]
        sign = neg_prod[idx]
        inf = xp.where(sign, u(fmt.sign_mask | fmt.inf), u(fmt.inf))
        big = xp.where(sign, u(fmt.sign_mask | fmt.max_finite), u(fmt.max_finite))
        r = mode.rounding
        out[idx] = {"rn": inf, "rz": big, "rp": xp.where(sign, big, inf), "rm": xp.where(sign, inf, big)}[r]
    if bool(small.any()):
        idx = xp.nonzero(small)[0]
        sv = c[idx].copy()
        if mode.rounding != "rn":
            pos = ~neg_prod[idx]
            _step_value(xp, sv.view(xp.int64), pos, ~pos, mode.rounding, int(idx.size))
        out[idx] = sv
    rest = ~(over | small)
    if bool(rest.any()):
        idx = xp.nonzero(rest)[0]
        out[idx] = ops.apply(xp, "fma", fmt, [a[idx], b[idx], c[idx]], mode, rule)
    return out


SUB_BLOCK = 8192
"""Elements per step: a dozen float64 temporaries of this size stay in a core's L2 cache (measured
best between 2048 and 65536 elements; the model's blocks are larger)."""


def block(xp, op: str, fmt: Format, operands, mode: ops.Mode, rule: ops.NanRule, out=None):
    """Evaluate one block of binary64 ``op`` (see :func:`applicable`) into ``out`` (uint64) when
    given; returns the result patterns."""
    arrays = [o.astype(xp.uint64, copy=False) for o in operands]
    n = arrays[0].shape[0]
    if out is None:
        out = xp.empty(n, dtype=xp.uint64)
    fallback = []
    with np.errstate(all="ignore"):  # NaN/inf/garbage lanes are replaced below
        for start in range(0, n, SUB_BLOCK):
            stop = min(n, start + SUB_BLOCK)
            idx = _sub_block(xp, op, fmt, [a[start:stop] for a in arrays], mode, rule, out[start:stop])
            if idx is not None:
                fallback.append(idx + start)
        if fallback:
            # one exact-path call per block: its fixed cost is far above a sub-block's
            idx = xp.concatenate(fallback)
            part = [x[idx] for x in arrays]
            if op == "fma":
                out[idx] = _fma_special(xp, fmt, *part, mode, rule)
            else:
                out[idx] = ops.apply(xp, op, fmt, part, mode, rule)
    return out


def _sub_block(xp, op: str, fmt: Format, arrays, mode: ops.Mode, rule: ops.NanRule, out):
    """:func:`block` on at most :data:`SUB_BLOCK` elements; returns the indices of the lanes
    left for the exact path (or None)."""
    n = arrays[0].shape[0]
    s = out.view(xp.float64)
    if op in ("add", "sub"):
        idx = _add(xp, op == "sub", arrays[0], arrays[1], mode, s, n)
    elif op == "mul":
        idx = _mul(xp, arrays[0], arrays[1], mode, s, n)
    else:
        idx = _fma(xp, *arrays, mode, s, n)
    if mode.rounding == "rn" and op != "fma":
        fix_nans_into(xp, fmt, out, arrays, rule)  # native NaNs -> the rule's bits
    return idx if idx is not None and idx.size else None
