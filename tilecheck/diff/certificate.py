"""Certificates of correct rounding: judge a result without computing the operation.

A finite result ``r`` of a correctly rounded operation is right exactly when the exact value ``x``
lies in ``r``'s *rounding interval* under the mode (nearest: half a gap on either side, endpoints
included when ``r``'s significand is even; toward zero: ``[|r|, |r| + ulp)``; away from zero:
``(|r| - gap below, |r|]``; infinities and the largest finite number bound their intervals on one
side only). Both endpoints are dyadic numbers ``N * 2**F`` with ``N < 2**(p+3)``, and ``x``
compares with them by integer arithmetic on the operands' significands and exponents:

=======  ===================================================================
sqrt     ``sqrt(a)`` vs ``N 2^F``  <=>  ``Ma 2^Ea``        vs ``N^2 2^(2F)``
rcp      ``1/b``     vs ``N 2^F``  <=>  ``1``              vs ``N Mb 2^(F+Eb)``
div      ``a/b``     vs ``N 2^F``  <=>  ``Ma 2^Ea``        vs ``N Mb 2^(F+Eb)``
mul      ``a*b``     vs ``N 2^F``  <=>  ``Ma Mb 2^(Ea+Eb)`` vs ``N 2^F``
add/sub  the exact sum ``S 2^Es`` (operands aligned in 64 bits) vs ``N 2^F``
fma      the exact sum of ``Ma Mb 2^(Ea+Eb)`` and ``c``, aligned likewise
=======  ===================================================================

Every side fits in 64 bits for binary16, bfloat16 and binary32 (``N^2 < 2^54``, ``N Mb < 2^51``);
a comparison ``P 2^d`` vs ``Q`` shifts one side by ``|d|`` and, where the shift would lose bits,
is decided by that alone. Zeros, infinities and NaNs follow IEEE 754's exact rules (signs of zero
sums and products, invalid operations); ``.ftz`` flushes subnormal operands to signed zero and
accepts a zero result exactly when the exact value is tiny (tininess *after* rounding: it rounds
below the smallest normal number; *before*: ``|x| < 2**emin``); ``.sat`` clamps the correctly
rounded value to ``[+0, 1.0]``.

:func:`check` runs the compiled kernels of :mod:`tilecheck.diff.certkernels` (every format and
operation above, binary32 ``fma`` excepted, flushing of inputs and results separately, both
tininess readings, ``.sat``); :func:`check_numpy` is a second implementation in numpy passes
(binary16/bfloat16 add/sub/mul/div/rcp/sqrt, binary32 div/rcp/sqrt; ``.ftz`` after rounding),
written independently and kept to cross-check the kernels.

This module and the kernels share nothing with any evaluator: no floating-point arithmetic, no
import from the model or the solver encodings -- only the formats' field widths (a table here)
and integer operations. What a passing certificate establishes: *the result brackets the exact
value under the mode's rounding interval*; it is independent of the model's arithmetic.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from tilecheck import cpus
from tilecheck.diff import certkernels
from tilecheck.diff.support import SUPPORTED, Support

__all__ = ["ESTABLISHES", "FORMATS", "OPS", "supports", "check", "check_numpy", "form_support", "check_form"]

ESTABLISHES = ("certificate: result brackets the exact value under the mode's rounding interval; "
               "independent of the model's arithmetic")
"""What a certificate verdict establishes (for reports)."""

FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23)}
"""(exponent bits, fraction bits) of the formats certified here."""

OPS = {fmt: tuple(op for op in certkernels.OPS if certkernels.supports(op, fmt)) for fmt in FORMATS}
"""Operations :func:`check` certifies per format (binary32 fma: the aligned sum of a 48-bit product
and an addend needs more than 64 bits)."""

NUMPY_OPS = {"f16": ("add", "sub", "mul", "div", "rcp", "sqrt"),
             "bf16": ("add", "sub", "mul", "div", "rcp", "sqrt"),
             "f32": ("div", "rcp", "sqrt")}
"""Operations :func:`check_numpy` certifies (binary32 add/sub/mul: its aligned sums are not cut)."""

_ROUNDINGS = ("rn", "rz", "rm", "rp")
_NAN_POLICIES = ("unspecified", "canonical", "propagate")

_U = np.uint64
_I = np.int64


@dataclass(frozen=True)
class _Fmt:
    width: int
    ebits: int
    mbits: int

    @property
    def p(self) -> int:
        return self.mbits + 1

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin_lsb(self) -> int:
        """Exponent of the last bit of subnormals (and of the smallest normal numbers)."""
        return 1 - self.bias - self.mbits

    @property
    def emax_field(self) -> int:
        return (1 << self.ebits) - 1


def _fmt(name: str) -> _Fmt:
    e, m = FORMATS[name]
    return _Fmt(1 + e + m, e, m)


def supports(op: str, fmt: str) -> bool:
    """Whether :func:`check` certifies ``op`` on format ``fmt``."""
    return op in OPS.get(fmt, ())


@dataclass
class _Value:
    """Fields of bit patterns: sign (0/1), significand M, exponent of its last bit E, classes."""

    sign: np.ndarray
    m: np.ndarray
    e: np.ndarray
    field: np.ndarray
    nan: np.ndarray
    inf: np.ndarray
    zero: np.ndarray


def _decode(f: _Fmt, bits: np.ndarray) -> _Value:
    b = bits.astype(_U)
    sign = (b >> _U(f.width - 1)) & _U(1)
    field = (b >> _U(f.mbits)) & _U(f.emax_field)
    frac = b & _U((1 << f.mbits) - 1)
    normal = field != 0
    m = frac | (normal.astype(_U) << _U(f.mbits))
    e = np.maximum(field, _U(1)).astype(_I) - (f.bias + f.mbits)
    special = field == _U(f.emax_field)
    return _Value(sign, m, e, field, special & (frac != 0), special & (frac == 0), (field == 0) & (frac == 0))


def _flush(f: _Fmt, bits: np.ndarray) -> np.ndarray:
    """Subnormal patterns -> zero of the same sign."""
    b = bits.astype(_U)
    mag = b & _U((1 << (f.width - 1)) - 1)
    sub = (mag != 0) & (mag < _U(1 << f.mbits))
    return np.where(sub, b & _U(1 << (f.width - 1)), b)


def _cmp(p: np.ndarray, d: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Sign of ``p * 2**d - q`` for uint64 ``p, q < 2**62`` and int64 ``d`` (int8 array)."""
    s = np.minimum(np.abs(d), 63).astype(_U)
    up = d >= 0
    x = np.where(up, p, q)  # the side that moves
    xs = x << s
    lost = ((xs >> s) != x) | (np.abs(d) > 62)
    lost &= x != 0
    ps = np.where(up, xs, p)
    qs = np.where(up, q, xs)
    res = (ps > qs).astype(np.int8) - (ps < qs).astype(np.int8)
    # a shift that loses bits makes the moved side the larger one
    return np.where(lost, np.where(up, np.int8(1), np.int8(-1)), res)


def _bound_compare(op: str, ops_: list[_Value], s_mag, s_exp, n: np.ndarray, fexp: np.ndarray) -> np.ndarray:
    """Sign of ``|x| - n * 2**fexp`` for the exact result ``x`` of ``op`` (regular lanes)."""
    if op == "sqrt":
        a = ops_[0]
        return _cmp(a.m, a.e - 2 * fexp, n * n)
    if op == "rcp":
        b = ops_[0]
        return _cmp(np.ones_like(n), -(fexp + b.e), n * b.m)
    if op == "div":
        a, b = ops_
        return _cmp(a.m, a.e - fexp - b.e, n * b.m)
    if op == "mul":
        a, b = ops_
        return _cmp(a.m * b.m, a.e + b.e - fexp, n)
    return _cmp(s_mag, s_exp - fexp, n)  # add/sub: the aligned exact sum


_ALIGN = 40
"""add/sub: an operand more than this many bits below the other's last bit only acts as a sticky
unit (no rounding boundary lies between the larger operand and the sum; see :func:`_exact_sum`)."""


def _exact_sum(a: _Value, b: _Value, negate_b: bool):
    """(sign, |S|, Es) with ``a +- b = (-1)^sign * S * 2**Es`` for binary16/bfloat16 operands.

    When the exponents differ by more than :data:`_ALIGN`, the smaller operand (below 2**-30 of
    the larger one's last bit) is replaced by one unit ``2**-(_ALIGN)`` below that bit with its
    sign: every rounding boundary within a factor two of the sum is a multiple of at least
    ``2**-13`` of the larger operand's last bit, so no boundary separates the true sum from this
    one, and the comparison with boundaries elsewhere only depends on the magnitude.
    """
    sb = b.sign ^ _U(1) if negate_b else b.sign
    e_lo = np.maximum(np.minimum(a.e, b.e), np.maximum(a.e, b.e) - _ALIGN)
    ma = a.m.astype(_I)
    mb = b.m.astype(_I)
    da = a.e - e_lo
    db = b.e - e_lo
    # operands further down than _ALIGN: one sticky unit (magnitude below the unit, non-zero)
    va = np.where(da < 0, (ma != 0).astype(_I), ma << np.clip(da, 0, 62).astype(_I))
    vb = np.where(db < 0, (mb != 0).astype(_I), mb << np.clip(db, 0, 62).astype(_I))
    va = np.where(a.sign == 1, -va, va)
    vb = np.where(sb == 1, -vb, vb)
    total = va + vb
    return (total < 0).astype(_U), np.abs(total).astype(_U), e_lo


def _interval(f: _Fmt, r: _Value, mag_mode: np.ndarray, ftz_zero: np.ndarray):
    """Rounding interval of ``|r|`` as (lo, hi, lo_closed, hi_closed, hi_open_ended, F): bounds
    ``lo * 2**F``, ``hi * 2**F``. ``mag_mode``: 0 nearest, 1 toward zero, 2 away from zero."""
    max_m = _U((1 << f.p) - 1)
    max_e = f.emax_field - 1 - f.bias - f.mbits
    m = np.where(r.inf, max_m, r.m).astype(_I)
    e = np.where(r.inf, _I(max_e), r.e)
    # ftz zero results: the interval below the smallest normal number's
    m = np.where(ftz_zero, _I(1 << f.mbits), m)
    e = np.where(ftz_zero, _I(f.emin_lsb), e)
    field = np.where(ftz_zero, _U(1), r.field)
    q = m * 4
    power = (m == (1 << f.mbits)) & (field > _U(1))  # gap below is half a unit
    below = np.where(power, _I(2), _I(4))
    even = (m & 1) == 0
    nearest, trunc = mag_mode == 0, mag_mode == 1
    lo = np.where(nearest, q - below // 2, np.where(trunc, q, q - below))
    hi = np.where(nearest, q + 2, np.where(trunc, q + 4, q))
    lo_closed = np.where(nearest, even, trunc)
    hi_closed = np.where(nearest, even, ~trunc)
    open_ended = np.zeros(m.shape, dtype=bool)
    is_max = (~r.inf) & (r.field == _U(f.emax_field - 1)) & (r.m == max_m)
    open_ended |= is_max & trunc  # toward zero never overflows: [max, inf)
    # infinity: at or beyond max + half a unit (nearest), beyond max (away); never toward zero
    lo = np.where(r.inf, np.where(nearest, q + 2, q), lo)
    lo_closed = np.where(r.inf, nearest, lo_closed)
    open_ended |= r.inf
    # ftz: zero iff |x| is below the smallest normal number's interval
    hi = np.where(ftz_zero, lo, hi)
    hi_closed = np.where(ftz_zero, ~lo_closed, hi_closed)
    lo = np.where(ftz_zero, _I(0), lo)
    lo_closed = np.where(ftz_zero, True, lo_closed)
    lo = np.maximum(lo, 0)
    bad_inf = r.inf & trunc  # toward zero: a finite x never gives infinity
    return lo.astype(_U), hi.astype(_U), lo_closed, hi_closed, open_ended, e - 2, bad_inf


def _nan_ok(f: _Fmt, result: np.ndarray, operand_bits: list[np.ndarray], policy: str, nan_bits: int | None):
    """Whether a NaN result is acceptable under the NaN policy (lanes where a NaN is due)."""
    res = result.astype(_U)
    mag_mask = _U((1 << (f.width - 1)) - 1)
    exp_mask = _U(f.emax_field << f.mbits)
    is_nan = (res & mag_mask) > exp_mask
    if policy == "canonical":
        return res == _U(nan_bits)
    if policy == "unspecified":
        return is_nan
    quiet = _U(1 << (f.mbits - 1))
    nan_in = np.zeros(res.shape, dtype=bool)
    payload = np.zeros(res.shape, dtype=bool)
    for op in operand_bits:
        o = op.astype(_U)
        o_nan = (o & mag_mask) > exp_mask
        nan_in |= o_nan
        payload |= o_nan & (res == (o | quiet))
    return np.where(nan_in, payload, is_nan)


def check(op: str, fmt: str, rounding: str, result, *operands, ftz: bool = False, ftz_in: bool | None = None,
          ftz_out: bool | None = None, tininess: str = "after", sat: bool = False, nan: str = "propagate",
          nan_bits: int | None = None) -> np.ndarray:
    """Per lane: is ``result`` the correctly rounded ``op`` of ``operands`` (bit patterns of
    ``fmt``) under ``rounding``? The compiled kernels (:func:`tilecheck.diff.certkernels.check`,
    whose docstring lists the options: flushing, tininess, ``.sat``, NaN policies). Raises
    ``ValueError`` for what is not certified (:func:`supports`)."""
    return certkernels.check(op, fmt, rounding, result, *operands, ftz=ftz, ftz_in=ftz_in, ftz_out=ftz_out,
                             tininess=tininess, sat=sat, nan=nan, nan_bits=nan_bits)


def check_numpy(op: str, fmt: str, rounding: str, result, *operands, ftz: bool = False,
                nan: str = "propagate", nan_bits: int | None = None) -> np.ndarray:
    """:func:`check` in numpy passes (the second implementation, see the module docstring):
    :data:`NUMPY_OPS`, ``.ftz`` with tininess after rounding.

    ``nan``: how NaN results are judged -- ``unspecified`` (any NaN where one is due),
    ``canonical`` (exactly ``nan_bits``), ``propagate`` (a NaN operand's payload quieted; any NaN
    for invalid operations). Raises ``ValueError`` for what is not certified (:func:`supports`).
    """
    if op not in NUMPY_OPS.get(fmt, ()):
        raise ValueError(f"no numpy certificate for {op} on {fmt}")
    if rounding not in _ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    if nan not in _NAN_POLICIES:
        raise ValueError(f"unknown NaN policy {nan!r}")
    res = np.asarray(result)
    arrays = [np.asarray(o) for o in operands]
    res, *arrays = np.broadcast_arrays(res, *arrays)
    shape = res.shape
    flat = [a.reshape(-1) for a in arrays]
    res = res.reshape(-1)
    out = np.empty(res.size, dtype=bool)
    f = _fmt(fmt)

    def work(lo: int, hi: int) -> None:
        for start in range(lo, hi, BLOCK):
            stop = min(hi, start + BLOCK)
            out[start:stop] = _check_block(op, f, rounding, res[start:stop], [a[start:stop] for a in flat],
                                           ftz, nan, nan_bits)

    threads = cpus.threads()
    if threads <= 1 or res.size < 8 * BLOCK:
        work(0, res.size)
    else:
        # numpy releases the GIL inside its loops: one contiguous share per thread
        share = -(-res.size // threads)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for fut in [pool.submit(work, lo, min(res.size, lo + share)) for lo in range(0, res.size, share)]:
                fut.result()
    return out.reshape(shape)


BLOCK = 1 << 15
"""Lanes per step (every temporary stays in cache)."""


def _fields(f: _Fmt, bits):
    """(sign, biased exponent field, significand with hidden bit) of normal patterns (uint64)."""
    sign = bits >> _U(f.width - 1)
    field = (bits >> _U(f.mbits)) & _U(f.emax_field)
    m = (bits & _U((1 << f.mbits) - 1)) | _U(1 << f.mbits)
    return sign, field, m


def _normal(f: _Fmt, field):
    """Exponent field of a normal number below the top binade: 1 .. emax_field - 2 (one
    unsigned comparison)."""
    return (field - _U(1)) <= _U(f.emax_field - 3)


def _fast(op: str, f: _Fmt, rounding: str, res_bits, raw):
    """The certificate for the common lanes, in a few integer operations each.

    Common: normal operands (positive for sqrt), a normal result below the top binade whose
    exponent is within a few units of where the exact value puts it. Returns (common, ok); the
    other lanes go through the general path (:func:`_check_rest`).
    """
    p = f.p
    rs, rf, rm_ = _fields(f, res_bits)
    common = _normal(f, rf)
    q = rm_ << _U(2)  # |r| in units of a quarter of its last bit, exponent fexp
    fexp = rf.astype(_I) - (f.bias + f.mbits + 2)
    # the exact result's sign and operand fields
    fields = [_fields(f, o) for o in raw]
    for _, fld, _ in fields:
        common &= _normal(f, fld) | (fld == _U(f.emax_field - 1))
    if op == "sqrt":
        sign = np.zeros_like(rs)
        common &= fields[0][0] == 0
    elif op == "rcp":
        sign = fields[0][0]
    else:
        sign = fields[0][0] ^ fields[1][0]
    common &= rs == sign
    # interval offsets (quarter units) and openness per mode
    power = (rm_ == _U(1 << f.mbits)) & (rf > _U(1))
    if rounding == "rn":
        odd = rm_ & _U(1)
        lo = q - _U(2) + power
        hi = q + _U(2)
        open_lo = open_hi = odd
    elif rounding == "rz":
        lo, hi = q, q + _U(4)
        open_lo, open_hi = _U(0), _U(1)
    else:
        away = (sign == _U(0 if rounding == "rp" else 1)).astype(_U)
        lo = q - away * (_U(4) - (power.astype(_U) << _U(1)))
        hi = q + ((_U(1) - away) << _U(2))
        open_lo, open_hi = away, _U(1) - away
    if op == "sqrt":
        ma = fields[0][2]
        ea = fields[0][1].astype(_I) - (f.bias + f.mbits)
        d = (ea - 2 * fexp).astype(_U) - _U(p + 1)
        common &= d <= _U(5)  # d in [p + 1, p + 6]: x < 2**(2p + 6)
        x = ma << (d + _U(p + 1))
        lo, hi = lo * lo, hi * hi
    elif op in ("rcp", "div"):
        mb = fields[-1][2]
        eb = fields[-1][1].astype(_I) - (f.bias + f.mbits)
        if op == "rcp":
            k = (-(fexp + eb)).astype(_U) - _U(2 * p - 1)
            common &= k <= _U(4)  # k in [2p - 1, 2p + 3]
            x = _U(1) << (k + _U(2 * p - 1))
        else:
            ma = fields[0][2]
            ea = fields[0][1].astype(_I) - (f.bias + f.mbits)
            d = (ea - fexp - eb).astype(_U) - _U(p - 1)
            common &= d <= _U(5)  # d in [p - 1, p + 4]
            x = ma << (d + _U(p - 1))
        lo, hi = lo * mb, hi * mb
    elif op == "mul":
        ma, mb = fields[0][2], fields[1][2]
        ea = fields[0][1].astype(_I) - (f.bias + f.mbits)
        eb = fields[1][1].astype(_I) - (f.bias + f.mbits)
        d = (fexp - ea - eb).astype(_U) - _U(p - 5)
        common &= d <= _U(5)  # x = ma*mb against bounds shifted by p - 5 .. p
        x = ma * mb
        sh = d + _U(p - 5)
        lo, hi = lo << sh, hi << sh
    else:
        return np.zeros(res_bits.shape, dtype=bool), None
    ok = (x >= lo + open_lo) & (x + open_hi <= hi)
    return common, ok


def _check_block(op: str, f: _Fmt, rounding: str, result, operands, ftz: bool, nan: str, nan_bits):
    """:func:`check` on one block of flat arrays: the common lanes by :func:`_fast`, the rest
    by :func:`_check_rest`."""
    raw = [o.astype(_U) for o in operands]
    res_bits = result.astype(_U)
    common, ok = _fast(op, f, rounding, res_bits, raw)
    if bool(common.all()):
        return ok
    rest = np.nonzero(~common)[0]
    out = ok if ok is not None else np.zeros(res_bits.shape, dtype=bool)
    out[rest] = _check_rest(op, f, rounding, res_bits[rest], [o[rest] for o in raw], ftz, nan, nan_bits)
    return out


def _check_rest(op: str, f: _Fmt, rounding: str, res_bits, raw, ftz: bool, nan: str, nan_bits):
    """The general certificate: special operands and results, subnormals, flushing, any lane."""
    flushed = [_flush(f, o) for o in raw] if ftz else raw
    vals = [_decode(f, o) for o in flushed]
    r = _decode(f, res_bits)
    shape = res_bits.shape
    false = np.zeros(shape, dtype=bool)
    # -- the exact result's class and sign
    invalid = false.copy()
    exact_inf = false.copy()
    exact_zero = false.copy()
    any_nan = false.copy()
    for v in vals:
        any_nan |= v.nan
    s_mag = s_exp = None
    if op == "sqrt":
        a = vals[0]
        sign = a.sign
        invalid = (a.sign == 1) & ~a.zero & ~a.nan
        exact_inf = a.inf & (a.sign == 0)
        exact_zero = a.zero
        zero_sign = a.sign
    elif op == "rcp":
        b = vals[0]
        sign = b.sign
        exact_inf = b.zero
        exact_zero = b.inf
        zero_sign = sign
    elif op in ("div", "mul"):
        a, b = vals
        sign = a.sign ^ b.sign
        if op == "div":
            invalid = (a.zero & b.zero) | (a.inf & b.inf)
            exact_inf = (a.inf & ~b.inf) | (b.zero & ~a.zero & ~a.inf)
            exact_zero = (a.zero & ~b.zero) | (b.inf & ~a.inf)
        else:
            invalid = (a.zero & b.inf) | (a.inf & b.zero)
            exact_inf = a.inf | b.inf
            exact_zero = a.zero | b.zero
        zero_sign = sign
    else:
        a, b = vals
        negate = op == "sub"
        sb = b.sign ^ _U(1) if negate else b.sign
        invalid = a.inf & b.inf & (a.sign != sb)
        exact_inf = a.inf | b.inf
        sign = np.where(a.inf, a.sign, sb)
        s_sign, s_mag, s_exp = _exact_sum(a, b, negate)
        exact_zero = s_mag == 0
        # an exact zero sum: the common sign of equal-signed terms, else +0 (-0 under rm)
        zero_sign = np.where(a.zero & b.zero & (a.sign == sb), a.sign, _U(1 if rounding == "rm" else 0))
        sign = np.where(exact_inf, sign, s_sign)
    nan_due = any_nan | invalid
    exact_inf &= ~nan_due
    exact_zero &= ~nan_due & ~exact_inf
    regular = ~(nan_due | exact_inf | exact_zero)
    ok = np.where(nan_due, _nan_ok(f, res_bits, raw, nan, nan_bits), False)
    sign_bit = _U(1 << (f.width - 1))
    inf_bits = _U(f.emax_field << f.mbits)
    ok |= exact_inf & (res_bits == ((sign << _U(f.width - 1)) | inf_bits))
    ok |= exact_zero & (res_bits == (zero_sign << _U(f.width - 1)))
    if not bool(regular.any()):
        return ok
    if not bool(regular.all()):
        # the interval certificate on the regular lanes only
        idx = np.nonzero(regular)[0]
        vals = [_take(v, idx) for v in vals]
        r = _take(r, idx)
        sign = sign[idx]
        if s_mag is not None:
            s_mag, s_exp = s_mag[idx], s_exp[idx]
        ok[idx] = _certify(op, f, rounding, r, vals, sign, s_mag, s_exp, ftz)
        return ok
    return ok | _certify(op, f, rounding, r, vals, sign, s_mag, s_exp, ftz)


def _take(v: _Value, idx) -> _Value:
    return _Value(*(getattr(v, k)[idx] for k in ("sign", "m", "e", "field", "nan", "inf", "zero")))


def _certify(op: str, f: _Fmt, rounding: str, r: _Value, vals, sign, s_mag, s_exp, ftz: bool):
    """The interval certificate for lanes whose exact result is finite and non-zero."""
    shape = sign.shape
    if rounding == "rn":
        mag_mode = np.zeros(shape, dtype=np.int8)
    elif rounding == "rz":
        mag_mode = np.ones(shape, dtype=np.int8)
    else:
        away = sign == (0 if rounding == "rp" else 1)
        mag_mode = np.where(away, np.int8(2), np.int8(1))
    ftz_zero = (r.zero & np.bool_(ftz))
    lo, hi, lo_closed, hi_closed, open_ended, fexp, bad_inf = _interval(f, r, mag_mode, ftz_zero)
    c_lo = _bound_compare(op, vals, s_mag, s_exp, lo, fexp)
    c_hi = _bound_compare(op, vals, s_mag, s_exp, hi, fexp)
    inside = ((c_lo > 0) | ((c_lo == 0) & lo_closed)) & (open_ended | (c_hi < 0) | ((c_hi == 0) & hi_closed))
    good = inside & ~r.nan & ~bad_inf & (r.sign == sign)
    if ftz:
        subnormal = (r.field == 0) & ~r.zero
        good &= ~subnormal
    return good


def form_support(form) -> Support:
    """Whether :func:`check_form` certifies ``form`` (a PTX form; the reason when it does not)."""
    key = form.semantics.key
    op = form.semantics.function
    if form.kind != "exact" or not key.startswith("fp."):
        return Support(f"{form.name} is not a correctly rounded arithmetic form")
    if form.lanes != 1 or form.element_format not in FORMATS or not supports(op, form.element_format):
        return Support(f"no certificate for {op} on {form.element_format} (certified: {_describe()})")
    if form.nan.policy not in _NAN_POLICIES:
        return Support(f"{form.name}: NaN policy {form.nan.policy!r} is not certified")
    return SUPPORTED


def _describe() -> str:
    return "; ".join(f"{fmt} {'/'.join(ops)}" for fmt, ops in OPS.items())


def check_form(form, results, operands, tininess: str = "after") -> np.ndarray:
    """:func:`check` for a PTX form (see :func:`form_support`); ``tininess`` is the reading of
    ``.ftz`` (``after`` or ``before`` rounding)."""
    found = form_support(form)
    if not found.ok:
        raise ValueError(found.reason)
    params = form.semantics.params
    op = form.semantics.function
    return check(op, form.element_format, str(params.get("rounding", "rn")), results, *operands,
                 ftz=bool(params.get("ftz", False)), tininess=tininess, sat=bool(params.get("sat", False)),
                 nan=form.nan.policy, nan_bits=form.nan.bits)
