"""The model primitives the semantics language needs, against MPFR, exact rationals and vectors
computed by hand.

API under test (:mod:`tilecheck.model.ops`):

* ``fma(xp, fmt, a, b, c, mode, rule, scale=None)``: ``(a*b + c) * 2**scale`` rounded once
  (AMD ``V_DIV_FMAS``); zeros, infinities and NaNs unaffected by the scale;
* ``ldexp(xp, fmt, x, n, mode, rule)``: ``x * 2**n`` rounded once;
* ``convert(xp, src, dst, x, mode, rule)``: the exact value rounded to ``dst``; NaNs keep sign and
  the top of their payload, quieted;
* ``Mode(rounding, ftz, tininess, ftz_in=None, ftz_out=None)``: input and output flushing
  separately (``None`` follows ``ftz``), on the exact path and on the fast paths alike.

MPFR is only given operands inside the emulated format's exponent range (its functions assume
that); values outside it are checked against exact rationals (``Format.from_fraction``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilecheck.formats import ROUNDINGS, get_format
from tilecheck.model import ops
from tilecheck.model.api import compute
from tilecheck.oracle.mpfr import mpfr_context_parameters, mpfr_op
from tilecheck.inputs import generators
from tilecheck.inputs.edges import edge_values

gmpy2 = pytest.importorskip("gmpy2", reason="the MPFR references need gmpy2 (pip install 'tilecheck[test]')")

FORMATS = ("f16", "bf16", "f32", "f64")
MODE_OPS = ("add", "sub", "mul", "fma", "div", "sqrt", "rcp")
ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}
F16, BF16, F32, F64 = (get_format(n) for n in FORMATS)


# ---- references --------------------------------------------------------------------------------

def _context(f, rounding):
    prec, emin, emax = mpfr_context_parameters(f)
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}
    return gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode[rounding])


_EXACT = gmpy2.context(precision=256)  # holds every finite pattern of these formats (and 2**n scalings) exactly


def _mpfr(f, bits: int):
    """Exact MPFR value of a finite pattern (built outside the narrow context)."""
    value = f.to_fraction(bits)
    if value == 0:
        return gmpy2.mpfr("-0.0") if bits & f.sign_mask else gmpy2.mpfr(0)
    with _EXACT:  # a module function in the active context: gmpy2 2.2's context.div ignores the context
        return gmpy2.div(gmpy2.mpfr(value.numerator, 256), gmpy2.mpfr(value.denominator, 256))


def _bits(f, x) -> int:
    """Pattern of an MPFR value already rounded to ``f`` (not NaN)."""
    if gmpy2.is_infinite(x):
        return f.inf | (f.sign_mask if x < 0 else 0)
    if gmpy2.is_zero(x):
        return f.sign_mask if gmpy2.is_signed(x) else 0
    num, den = x.as_integer_ratio()
    return f.from_fraction(Fraction(int(num), int(den)))


def _in_range(f, value: Fraction) -> bool:
    """Whether MPFR may take ``value`` as an operand in ``f``'s emulation context."""
    _, emin, emax = mpfr_context_parameters(f)
    mag = abs(value)
    return mag == 0 or Fraction(2) ** (emin - 1) <= mag < Fraction(2) ** emax


def _patterns(f, n, rng):
    """Edge values, near-one values (cancellation, ties) and random patterns."""
    edges = np.array(edge_values(f), dtype=np.uint64)
    kind = rng.integers(0, 3, n)
    out = rng.integers(0, 1 << 62, n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, n, dtype=np.uint64)
    out = out & np.uint64((1 << f.width) - 1)
    near = (rng.integers(0, 2, n).astype(np.uint64) << np.uint64(f.width - 1)) | (
        rng.integers(f.bias - 3, f.bias + 4, n).astype(np.uint64) << np.uint64(f.mantissa_bits)) | (
        rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(f.mantissa_mask))
    out = np.where(kind == 0, edges[rng.integers(0, edges.size, n)], out)
    return np.where(kind == 1, near, out)


def _normals(f, n, rng, lo, hi):
    """Random finite normal patterns of either sign with biased exponent fields in [lo, hi)."""
    e = rng.integers(lo, hi, n).astype(np.uint64)
    m = rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(f.mantissa_mask)
    s = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(f.width - 1)
    return s | (e << np.uint64(f.mantissa_bits)) | m


def _fma(f, rounding, a, b, c, scale=None, **mode):
    args = np.broadcast_arrays(*(np.asarray(v, dtype=np.uint64) for v in (a, b, c)))
    with np.errstate(all="ignore"):
        return ops.fma(np, f, *args, ops.Mode(rounding, **mode), ops.NanRule.ieee(f), scale=scale)


def _ldexp(f, rounding, x, n, **mode):
    return ops.ldexp(np, f, np.asarray(x, dtype=np.uint64), n, ops.Mode(rounding, **mode), ops.NanRule.ieee(f))


def _convert(src, dst, rounding, x, rule=None, **mode):
    return ops.convert(np, src, dst, np.asarray(x, dtype=np.uint64), ops.Mode(rounding, **mode),
                       rule or ops.NanRule.ieee(dst))


def _hexes(*values):
    return [hex(int(v)) for v in values]


# ---- fused scaled fma --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_scaled_fma_matches_mpfr(fmt):
    # (a*b + c) * 2**s == (a*2**s)*b + c*2**s: with a and c in the middle of the exponent range
    # both scaled addends are patterns of the format, so MPFR's fma rounds the scaled value once
    # from in-range operands; b ranges over everything, so results reach subnormals and overflow.
    f = get_format(fmt)
    rng = np.random.default_rng(11)
    n = 300
    half = f.bias // 2
    a = _normals(f, n, rng, f.bias - half, f.bias + half)
    c = _normals(f, n, rng, f.bias - half, f.bias + half)
    c[: n // 10] &= np.uint64(f.sign_mask)  # some zero addends
    b = _patterns(f, n, rng)
    scale = rng.integers(-half + 1, half, n)
    checked = 0
    for rounding in ROUNDINGS:
        got = _fma(f, rounding, a, b, c, scale)
        ctx = _context(f, rounding)
        for i in range(n):
            vb = f.to_fraction(int(b[i]))
            if vb is None or f.to_fraction(int(a[i])) * vb + f.to_fraction(int(c[i])) == 0:
                continue  # Inf/NaN factors and exact zeros: the hand vectors below
            k = int(scale[i])
            sa = _EXACT.mul_2exp(_mpfr(f, int(a[i])), k)
            sc = _EXACT.mul_2exp(_mpfr(f, int(c[i])), k)
            want = _bits(f, ctx.fma(sa, _mpfr(f, int(b[i])), sc))
            assert int(got[i]) == want, (rounding, _hexes(a[i], b[i], c[i]), k, hex(want), hex(int(got[i])))
            checked += 1
    assert checked > 4 * n * 0.6  # guard: the comparison really ran


@pytest.mark.parametrize("fmt", FORMATS)
def test_scaled_fma_and_ldexp_match_rationals_over_the_whole_scale_range(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(7)
    n = 400
    a, b, c = (_normals(f, n, rng, 1, 2 * f.bias), _normals(f, n, rng, f.bias - 3, f.bias + 3),
               _normals(f, n, rng, 1, 2 * f.bias))
    scale = rng.integers(-3 * f.bias, 3 * f.bias, n)
    for rounding in ROUNDINGS:
        got = _fma(f, rounding, a, b, c, scale)
        got_ldexp = _ldexp(f, rounding, a, scale)
        checked = 0
        for i in range(n):
            va, vb, vc = (f.to_fraction(int(v[i])) for v in (a, b, c))
            exact = (va * vb + vc) * Fraction(2) ** int(scale[i])
            if exact != 0:
                want = f.from_fraction(exact, rounding)
                assert int(got[i]) == want, (rounding, _hexes(a[i], b[i], c[i]), int(scale[i]), hex(want))
                checked += 1
            neg = bool(int(a[i]) >> (f.width - 1))
            want_ldexp = f.from_fraction(va * Fraction(2) ** int(scale[i]), rounding, negative_zero=neg)
            assert int(got_ldexp[i]) == want_ldexp, (rounding, hex(int(a[i])), int(scale[i]))
        assert checked > n * 0.9  # guard: the comparison really ran


def test_fused_scale_rounds_once_in_the_subnormal_range():
    a = np.array([0x3FF0000000000001], dtype=np.uint64)  # 1 + 2^-52
    one = np.array([0x3FF0000000000000], dtype=np.uint64)
    zero = np.array([0], dtype=np.uint64)
    # (1 + 2^-52) * 2^-1074 is just above the smallest subnormal: one rounding gives 2^-1074
    assert int(_fma(F64, "rn", a, one, zero, -1074)[0]) == 1
    # 1.5 * 2^-1074 is a tie (-> 2 * 2^-1074); (1.5 + 2^-52) * 2^-1074 must round up, not tie
    x = np.array([0x3FF8000000000001], dtype=np.uint64)
    assert int(_fma(F64, "rn", x, one, zero, -1074)[0]) == 2
    assert int(_fma(F64, "rz", x, one, zero, -1074)[0]) == 1


def test_scaled_fma_hand_vectors():
    big = 0x7FEFFFFFFFFFFFFF  # largest finite binary64
    two, one, zero = 0x4000000000000000, 0x3FF0000000000000, 0
    cases = [
        # (rounding, a, b, c, scale, expected)
        ("rn", big, two, zero, -1, big),                      # max*2 overflows unscaled; scaled back it is exact
        ("rn", big, two, big | F64.sign_mask, -1, 0x7FDFFFFFFFFFFFFF),  # (2max - max)/2 = max/2
        ("rn", one, one, zero, 1024, F64.inf),               # 2^1024 overflows: inf to nearest
        ("rz", one, one, zero, 1024, big),                   # ... and the largest finite toward zero
        ("rm", one | F64.sign_mask, one, zero, 1024, F64.sign_mask | F64.inf),
        ("rp", one | F64.sign_mask, one, zero, 1024, F64.sign_mask | big),
        ("rn", one, one, zero, -1075, 0),                    # 2^-1075: tie between 0 and 2^-1074 -> even
        ("rp", one, one, zero, -1075, 1),
        ("rn", one, one, one | F64.sign_mask, 3000, 0),      # exact zero stays +0 whatever the scale
        ("rm", one, one, one | F64.sign_mask, 3000, F64.sign_mask),  # ... (-0 toward -inf)
        ("rn", F64.inf, one, zero, -5000, F64.inf),          # an infinite a*b + c is not scaled
        ("rn", zero, F64.inf, one, 7, F64.default_nan),      # 0 * inf: invalid
        ("rn", 0x7FF0000000000001, one, one, 7, 0x7FF8000000000001),  # a NaN operand, quieted
        ("rn", one, one, zero, 1 << 40, F64.inf),            # huge scales saturate (clamped, no wrap)
        ("rp", one, one, zero, -(1 << 62), 1),
        ("rn", one, one, zero, np.iinfo(np.int64).min, 0),
    ]
    for rounding, a, b, c, scale, want in cases:
        got = int(_fma(F64, rounding, [a], [b], [c], np.array([scale], dtype=np.int64))[0])
        assert got == want, (rounding, _hexes(a, b, c), scale, hex(want), hex(got))
        got_int = int(_fma(F64, rounding, [a], [b], [c], int(scale))[0])
        assert got_int == want, ("int scale", rounding, _hexes(a, b, c), scale)


@pytest.mark.parametrize("fmt", FORMATS)
def test_zero_scale_is_the_unscaled_fma(fmt):
    # the default path (scale=None) and a scale of 0, as an int or an array, agree bit for bit
    f = get_format(fmt)
    rng = np.random.default_rng(3)
    a, b, c = (_patterns(f, 20000, rng) for _ in range(3))
    for rounding in ROUNDINGS:
        plain = _fma(f, rounding, a, b, c)
        assert np.array_equal(plain, _fma(f, rounding, a, b, c, 0))
        assert np.array_equal(plain, _fma(f, rounding, a, b, c, np.zeros(a.shape, dtype=np.int64)))


def test_scale_broadcasts_and_only_fma_takes_one():
    x = np.array([0x3F800000, 0x40000000], dtype=np.uint64)  # 1.0, 2.0 (f32)
    one = np.full(2, 0x3F800000, dtype=np.uint64)
    zero = np.zeros(2, dtype=np.uint64)
    got = ops.apply(np, "fma", F32, [x, one, zero], ops.Mode(), ops.NanRule.ieee(F32), scale=np.array([1, -1]))
    assert got.tolist() == [0x40000000, 0x3F800000]
    with pytest.raises(ValueError, match="only fma"):
        ops.apply(np, "mul", F32, [x, one], ops.Mode(), ops.NanRule.ieee(F32), scale=1)


# ---- ldexp -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_ldexp_matches_mpfr(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(5)
    n = 500
    x = _patterns(f, n, rng)
    span = f.emax - f.emin + f.precision + 3
    k = rng.integers(-span, span + 1, n)
    checked = 0
    for rounding in ROUNDINGS:
        got = _ldexp(f, rounding, x, k)
        ctx = _context(f, rounding)
        for i in range(n):
            bits = int(x[i])
            if f.to_fraction(bits) is None or f.to_fraction(bits) == 0:
                continue  # specials: unchanged (below)
            want = _bits(f, ctx.mul_2exp(_mpfr(f, bits), int(k[i])))
            assert int(got[i]) == want, (rounding, hex(bits), int(k[i]), hex(want), hex(int(got[i])))
            checked += 1
    assert checked > 4 * n * 0.5


def test_ldexp_hand_vectors():
    cases = [
        # (format, rounding, x, n, expected)
        (F64, "rn", 0x3FF0000000000000, -1074, 0x0000000000000001),  # 1.0 -> smallest subnormal
        (F64, "rn", 0x0000000000000001, 1074, 0x3FF0000000000000),   # and back
        (F64, "rn", 0x3FF8000000000000, -1075, 0x0000000000000001),  # 0.75 * 2^-1074: rounds up
        (F64, "rn", 0x3FF0000000000000, -1075, 0x0000000000000000),  # 0.5 * 2^-1074: tie -> 0
        (F64, "rp", 0x3FF0000000000000, -1075, 0x0000000000000001),
        (F32, "rn", 0x3F800000, 128, 0x7F800000),                    # 2^128 overflows
        (F32, "rz", 0x3F800000, 128, 0x7F7FFFFF),
        (F32, "rm", 0xBF800000, 128, 0xFF800000),
        (F32, "rn", 0x00000003, -1, 0x00000002),                     # 1.5 * 2^-149: tie -> even
        (F32, "rn", 0x00000003, 1, 0x00000006),                      # exact within the subnormals
        (F16, "rn", 0x3C00, -25, 0x0000),
        (F16, "rp", 0x3C00, -25, 0x0001),
        (F32, "rn", 0x80000000, 5, 0x80000000),                      # -0 unchanged
        (F32, "rn", 0xFF800000, -500, 0xFF800000),                   # -inf unchanged
        (F32, "rn", 0x7F800001, 3, 0x7FC00001),                      # signalling NaN quieted
        (BF16, "rn", 0x3F80, 1 << 40, 0x7F80),                       # saturates (clamped scale)
        (BF16, "rz", 0x3F80, -(1 << 40), 0x0000),
    ]
    for f, rounding, x, n, want in cases:
        got = int(_ldexp(f, rounding, np.array([x], dtype=np.uint64), n)[0])
        assert got == want, (f.name, rounding, hex(x), n, hex(want), hex(got))


def test_ldexp_flushes_inputs_and_outputs_separately():
    sub, tiny = 0x00000001, 0x00400000  # 2^-149 and 2^-127 (f32 subnormals)
    assert int(_ldexp(F32, "rn", [sub], 23)[0]) == 0x00800000
    assert int(_ldexp(F32, "rn", [sub], 23, ftz_in=True)[0]) == 0
    assert int(_ldexp(F32, "rn", [sub], 23, ftz_out=True)[0]) == 0x00800000  # the result is normal
    assert int(_ldexp(F32, "rn", [0x3F800000], -127, ftz_out=True)[0]) == 0
    assert int(_ldexp(F32, "rn", [0x3F800000], -127)[0]) == tiny


# ---- convert -----------------------------------------------------------------------------------

PAIRS = [(s, d) for s in FORMATS for d in FORMATS if s != d]


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{s}-{d}" for s, d in PAIRS])
def test_convert_matches_mpfr_and_rationals(src, dst):
    fs, fd = get_format(src), get_format(dst)
    rng = np.random.default_rng(13)
    n = 600
    x = _patterns(fs, n, rng)
    checked_mpfr = 0
    for rounding in ROUNDINGS:
        got = _convert(fs, fd, rounding, x)
        ctx = _context(fd, rounding)
        for i in range(n):
            bits = int(x[i])
            value = fs.to_fraction(bits)
            if value is None:
                continue  # Inf/NaN: the hand vectors below
            neg = bool(bits & fs.sign_mask)
            want = fd.from_fraction(value, rounding, negative_zero=neg)
            assert int(got[i]) == want, (rounding, hex(bits), hex(want), hex(int(got[i])))
            if _in_range(fd, value):
                assert _bits(fd, ctx.mul(_mpfr(fs, bits), gmpy2.mpfr(1))) == want, (rounding, hex(bits))
                checked_mpfr += 1
    assert checked_mpfr > 4 * n * 0.3  # guard: MPFR really took part


def test_convert_widens_exactly_and_narrows_back():
    rng = np.random.default_rng(5)
    x = _patterns(F16, 2000, rng)
    wide = _convert(F16, F32, "rn", x)
    back = _convert(F32, F16, "rn", wide)
    finite = ~F16.is_nan(x)
    assert np.array_equal(back[finite], x[finite])
    assert np.array_equal(F32.is_nan(wide), F16.is_nan(x))


def test_convert_hand_vectors():
    cases = [
        # (src, dst, rounding, x, expected)
        (F32, F16, "rn", 0x33800000, 0x0001),            # 2^-24: the smallest f16 subnormal
        (F32, F16, "rn", 0x33000000, 0x0000),            # 2^-25: tie between 0 and 2^-24 -> even
        (F32, F16, "rp", 0x33000000, 0x0001),
        (F32, F16, "rn", 0x33000001, 0x0001),            # just above the tie
        (F32, F16, "rn", 0x477FF000, 0x7C00),            # 65520 rounds to inf
        (F32, F16, "rz", 0x477FF000, 0x7BFF),
        (F32, BF16, "rn", 0x3F808000, 0x3F80),           # tie -> even
        (F32, BF16, "rn", 0x3F818000, 0x3F82),
        (F64, F32, "rn", 0x3FF0000010000000, 0x3F800000),  # 1 + 2^-24: tie -> even
        (F64, F32, "rn", 0x3FF0000010000001, 0x3F800001),
        (F64, F32, "rn", 0x8000000000000000, 0x80000000),  # -0
        (F64, F16, "rm", 0xFFF0000000000000, 0xFC00),      # -inf
        (F16, F64, "rn", 0x0001, 0x3E70000000000000),      # 2^-24 exactly
        # NaNs: sign kept, payload aligned at the top (widening appends, narrowing drops), quieted
        (F32, F16, "rn", 0x7F812345, 0x7E09),
        (F16, F32, "rn", 0xFC01, 0xFFC02000),
        (F64, F32, "rn", 0x7FF0000000000001, 0x7FC00000),
        (BF16, F32, "rn", 0x7F81, 0x7FC10000),
        (F32, BF16, "rn", 0xFF800001, 0xFFC0),
        (F32, F64, "rn", 0x7FC00001, 0x7FF8000020000000),
    ]
    for src, dst, rounding, x, want in cases:
        got = int(_convert(src, dst, rounding, np.array([x], dtype=np.uint64))[0])
        assert got == want, (src.name, dst.name, rounding, hex(x), hex(want), hex(got))


def test_convert_nan_rules_other_than_ieee():
    x = np.array([0x7F812345, 0x3F800000], dtype=np.uint64)
    fixed = ops.NanRule(False, 0x7E00, fixed=0x7FFF)
    assert _convert(F32, F16, "rn", x, rule=fixed).tolist() == [0x7FFF, 0x3C00]
    canonical = ops.NanRule(False, 0x7E00)
    assert _convert(F32, F16, "rn", x, rule=canonical).tolist() == [0x7E00, 0x3C00]


def test_convert_flushes_inputs_and_outputs_separately():
    sub32 = np.array([0x00000001], dtype=np.uint64)  # 2^-149
    assert int(_convert(F32, F64, "rn", sub32)[0]) == 0x36A0000000000000
    assert int(_convert(F32, F64, "rn", sub32, ftz_in=True)[0]) == 0
    assert int(_convert(F32, F64, "rn", sub32, ftz_out=True)[0]) == 0x36A0000000000000  # normal in f64
    tiny64 = np.array([0xB7D0000000000000], dtype=np.uint64)  # -2^-130: subnormal in f32
    assert int(_convert(F64, F32, "rn", tiny64)[0]) == 0x80080000
    assert int(_convert(F64, F32, "rn", tiny64, ftz_out=True)[0]) == 0x80000000
    assert int(_convert(F64, F32, "rn", tiny64, ftz_in=True)[0]) == 0x80080000


def test_scalar_operands_raise_no_numpy_warnings():
    # filterwarnings = error: 0-d inputs take numpy's scalar paths, which warn on wrap-around
    assert int(_ldexp(F32, "rn", np.uint64(0x3F800000), 1)) == 0x40000000
    assert int(_convert(F32, F16, "rn", np.uint64(0x3F800000))) == 0x3C00
    one = np.uint64(0x3F800000)
    assert int(ops.apply(np, "fma", F32, [np.asarray(one)] * 3, ops.Mode(), ops.NanRule.ieee(F32), scale=2)) \
        == 0x41000000


# ---- separate input / output flushing ----------------------------------------------------------

def _apply(op, f, rounding, operands, **mode):
    """The exact path (``ops.apply``) and the block evaluator with its fast paths (``compute``:
    binary32 div/sqrt/rcp, binary64 div/rcp), which must agree; returns the result."""
    m, rule = ops.Mode(rounding, **mode), ops.NanRule.ieee(f)
    exact = ops.apply(np, op, f, [np.asarray(o, dtype=np.uint64) for o in operands], m, rule)
    blocks = compute(np, op, f, [np.asarray(o, dtype=f.uint) for o in operands], m, rule)
    bad = np.nonzero(exact != blocks)[0]
    assert bad.size == 0, (op, f.name, m, [hex(int(o[bad[0]])) for o in operands], hex(int(exact[bad[0]])),
                           hex(int(blocks[bad[0]])))
    return exact


def _flush(f, bits: int) -> int:
    return bits & f.sign_mask if 0 < bits & f.magnitude_mask < f.min_normal else bits


def _inputs(f, op, rng, n=120):
    cols = [generators.edge_biased(f, n, rng).astype(np.uint64) for _ in range(ARITY[op])]
    if op in ("mul", "fma", "div"):  # products/quotients next to the smallest normal
        extra = generators.ftz_boundary_pairs(f, n // 2, rng, "div" if op == "div" else op, "rn")
        cols = [np.concatenate([c, e.astype(np.uint64)]) for c, e in zip(cols, extra)]
    return cols


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("op", MODE_OPS)
def test_input_only_and_output_only_flushing_match_mpfr(fmt, op):
    f = get_format(fmt)
    rng = np.random.default_rng(17 * MODE_OPS.index(op) + FORMATS.index(fmt))
    cols = _inputs(f, op, rng)
    rows = list(zip(*[c.tolist() for c in cols]))
    for rounding in ROUNDINGS:
        only_in = _apply(op, f, rounding, cols, ftz_in=True)
        only_out = _apply(op, f, rounding, cols, ftz_out=True)
        only_out_before = _apply(op, f, rounding, cols, ftz_out=True, tininess="before")
        for i, args in enumerate(rows):
            # inputs flushed, results kept: the plain operation on flushed operands
            want_in = mpfr_op(op, f, rounding, *[_flush(f, a) for a in args])
            # results flushed, inputs kept: the plain result, flushed when it is subnormal
            want_out = _flush(f, mpfr_op(op, f, rounding, *args))
            assert int(only_in[i]) == want_in, ("ftz_in", op, rounding, _hexes(*args), hex(want_in))
            assert int(only_out[i]) == want_out, ("ftz_out", op, rounding, _hexes(*args), hex(want_out))
            if not any(_flush(f, a) != a for a in args):
                # with normal inputs output-only flushing is .ftz (here judged before rounding)
                want_before = mpfr_op(op, f, rounding, *args, ftz=True, tininess="before")
                assert int(only_out_before[i]) == want_before, ("before", op, rounding, _hexes(*args))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("op", MODE_OPS)
def test_ftz_is_both_overrides(fmt, op):
    # ftz=True, the two overrides, and mixtures spell the same modes (fast paths included)
    f = get_format(fmt)
    rng = np.random.default_rng(23)
    cols = [generators.edge_biased(f, 4000, rng).astype(np.uint64) for _ in range(ARITY[op])]
    for rounding in ("rn", "rp"):
        both = _apply(op, f, rounding, cols, ftz=True)
        assert np.array_equal(both, _apply(op, f, rounding, cols, ftz_in=True, ftz_out=True))
        assert np.array_equal(both, _apply(op, f, rounding, cols, ftz=False, ftz_in=True, ftz_out=True))
        assert np.array_equal(_apply(op, f, rounding, cols, ftz=True, ftz_in=False),
                              _apply(op, f, rounding, cols, ftz_out=True))
        assert np.array_equal(_apply(op, f, rounding, cols, ftz=True, ftz_out=False),
                              _apply(op, f, rounding, cols, ftz_in=True))
        assert np.array_equal(_apply(op, f, rounding, cols), _apply(op, f, rounding, cols, ftz_in=False, ftz_out=False))


def test_separate_flushing_hand_vectors():
    sub, big = 0x00000001, 0x4B000000  # 2^-149 (f32 subnormal), 2^23
    half, min_normal = 0x3F000000, 0x00800000
    cases = [
        # (mode overrides, op, operands, expected)
        ({}, "mul", [sub, big], min_normal),                 # 2^-149 * 2^23 = 2^-126: normal
        ({"ftz_in": True}, "mul", [sub, big], 0),            # the subnormal input is flushed first
        ({"ftz_out": True}, "mul", [sub, big], min_normal),  # ... the result is normal: kept
        ({"ftz": True}, "mul", [sub, big], 0),
        ({}, "mul", [min_normal, half], 0x00400000),         # 2^-127: subnormal result
        ({"ftz_in": True}, "mul", [min_normal, half], 0x00400000),
        ({"ftz_out": True}, "mul", [min_normal, half], 0),
        ({"ftz": True, "ftz_out": False}, "mul", [min_normal, half], 0x00400000),
        ({}, "div", [sub, half], 0x00000002),                # fast f32 path: subnormal in and out
        ({"ftz_in": True}, "div", [sub, half], 0),
        ({"ftz_out": True}, "div", [sub, half], 0),
        ({"ftz_out": True}, "div", [sub | 0x80000000, 0x34000000], 0x80800000),  # -2^-149 / 2^-23: normal
        ({}, "sqrt", [sub], 0x1A3504F3),                      # sqrt(2^-149) is normal
        ({"ftz_in": True}, "sqrt", [sub], 0),
        ({"ftz_out": True}, "sqrt", [sub], 0x1A3504F3),
        # x + 0 with x subnormal is a subnormal result: output flushing replaces it (AMD's
        # "allow input, flush output" mode), whichever operand is the zero and for sub too
        ({"ftz_out": True}, "add", [sub, 0], 0),
        ({"ftz_out": True}, "add", [0x80000000, sub | 0x80000000], 0x80000000),
        ({"ftz_out": True}, "sub", [0, sub], 0x80000000),
        ({"ftz_out": True}, "sub", [sub, 0x80000000], 0),
        ({}, "add", [sub, 0], sub),
        ({"ftz_out": True}, "add", [sub, sub], 0),           # 2^-148: still subnormal
        ({"ftz_out": True}, "add", [min_normal, 0], min_normal),
    ]
    for overrides, op, operands, want in cases:
        got = int(_apply(op, F32, "rn", [np.array([v], dtype=np.uint64) for v in operands], **overrides)[0])
        assert got == want, (overrides, op, _hexes(*operands), hex(want), hex(got))


@pytest.mark.parametrize("fmt", ("f16", "bf16", "f64"))
def test_output_flushing_replaces_a_subnormal_passed_through_a_zero_sum(fmt):
    # x + 0 = x exactly, but a subnormal x is a subnormal result: flushed under output flushing
    # (the binary16/bfloat16 fast path and the exact path alike), kept without it
    f = get_format(fmt)
    sub = np.array([1, f.sign_mask | 3], dtype=np.uint64)
    zero = np.array([0, 0], dtype=np.uint64)
    for rounding in ROUNDINGS:
        for op in ("add", "sub"):
            assert _apply(op, f, rounding, [sub, zero], ftz_out=True).tolist() == [0, f.sign_mask]
            flipped = [f.sign_mask, 0] if op == "sub" else [0, f.sign_mask]
            assert _apply(op, f, rounding, [zero, sub], ftz_out=True).tolist() == flipped
            assert _apply(op, f, rounding, [sub, zero]).tolist() == sub.tolist()
