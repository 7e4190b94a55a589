"""The element-wise AMD forms a wave simulator runs (add/sub/mul/fma, max/min, cvt, fma_mix, ldexp,
frexp, compares) against references that share no arithmetic with tilecheck's model: numpy's IEEE
float16/float32/float64 arithmetic and exact rationals (``fractions.Fraction``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilecheck.amdgpu.instructions import evaluate, mode_for
from tilecheck.amdgpu.mix import fma_mix
from tilecheck.errors import UsageError
from tilecheck.spec.database import load_database

DB = load_database()
FORMS = DB.extras["amdgpu"]["forms"]
DTYPES = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32), "f64": (np.float64, np.uint64)}


def bits(values, t: str) -> np.ndarray:
    """numpy floats of format ``t`` as uint64 patterns."""
    ftype, utype = DTYPES[t]
    return np.asarray(values, dtype=ftype).view(utype).astype(np.uint64)


def floats(patterns, t: str) -> np.ndarray:
    ftype, utype = DTYPES[t]
    return np.asarray(patterns, dtype=np.uint64).astype(utype).view(ftype)


def normals(rng, n: int, t: str, spread: int = 8) -> np.ndarray:
    """Random normal values of both signs with exponents in [-spread, spread]."""
    ftype, _ = DTYPES[t]
    mant = 1 + rng.random(n)
    return (np.where(rng.random(n) < 0.5, -1, 1) * np.ldexp(mant, rng.integers(-spread, spread + 1, n))).astype(ftype)


def same_or_both_nan(got, want, t: str) -> np.ndarray:
    g, w = floats(got, t), floats(want, t)
    return (np.asarray(got, dtype=np.uint64) == np.asarray(want, dtype=np.uint64)) | (np.isnan(g) & np.isnan(w))


# ---------------------------------------------------------------------------------------------
# arithmetic against numpy


BINARY = {"v_add": np.add, "v_sub": np.subtract, "v_mul": np.multiply, "v_subrev": lambda a, b: np.subtract(b, a)}


@pytest.mark.parametrize("name", [f"{fam}_{t}" for fam in BINARY for t in DTYPES if f"{fam}_{t}" in FORMS])
def test_binary_arithmetic_matches_numpy(name):
    family, t = name.rsplit("_", 1)
    fn = BINARY[family]
    rng = np.random.default_rng(len(name))
    a, b = normals(rng, 400, t), normals(rng, 400, t)
    # numpy's float16 arithmetic rounds the float32 result again: innocuous, as 24 >= 2 * 11 + 2
    with np.errstate(over="ignore"):
        want = bits(fn(a, b), t)
    got = evaluate(name, "observed", db=DB, S0=bits(a, t), S1=bits(b, t))["D"]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("t", ["f16", "f32"])
def test_fma_matches_exact_rationals(t):
    rng = np.random.default_rng(7)
    a, b = normals(rng, 200, t, 4), normals(rng, 200, t, 4)
    c = -(a.astype(np.float64) * b.astype(np.float64)).astype(DTYPES[t][0])  # cancellation: sticky bits matter
    c = np.where(rng.random(200) < 0.5, c, normals(rng, 200, t, 4))
    got = floats(evaluate(f"v_fma_{t}", "observed", db=DB, S0=bits(a, t), S1=bits(b, t), S2=bits(c, t))["D"], t)
    fmt = FORMS[f"v_fma_{t}"].fmt
    for x, y, z, g in zip(a, b, c, got):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        want = fmt.to_fraction(fmt.from_fraction(exact, "rn"))
        assert Fraction(float(g)) == want or (exact == 0 and g == 0), (x, y, z)


# ---------------------------------------------------------------------------------------------
# conversions against numpy's astype


@pytest.mark.parametrize("name,src,dst", [("v_cvt_f16_f32", "f32", "f16"), ("v_cvt_f32_f64", "f64", "f32"),
                                          ("v_cvt_f32_f16", "f16", "f32"), ("v_cvt_f64_f32", "f32", "f64")])
def test_conversions_match_numpy_astype(name, src, dst):
    rng = np.random.default_rng(3)
    _, utype = DTYPES[src]
    width = np.dtype(utype).itemsize * 8
    patterns = rng.integers(0, 1 << min(width, 63), 2000, dtype=np.uint64)
    if width == 64:
        patterns |= rng.integers(0, 2, 2000).astype(np.uint64) << np.uint64(63)
    with np.errstate(over="ignore", invalid="ignore"):
        want = bits(floats(patterns, src).astype(DTYPES[dst][0]), dst)
    got = evaluate(name, "observed", db=DB, S0=patterns)["D"]
    assert np.all(same_or_both_nan(got, want, dst))


def test_conversion_rounding_reads_the_destination_field_of_mode():
    x = bits([1 + 2.0 ** -11 + 2.0 ** -20], "f32")  # above the f16 tie: up in rn/rp, down in rz/rm
    rz_f16 = mode_for("v_cvt_f16_f32", 0b1100, db=DB)  # FP_ROUND[3:2] = 3: toward zero for f16/f64
    rz_f32 = mode_for("v_cvt_f16_f32", 0b0011, db=DB)  # FP_ROUND[1:0] = 3: f32 only
    assert int(evaluate("v_cvt_f16_f32", "observed", rz_f16, db=DB, S0=x)["D"][0]) == 0x3c00
    assert int(evaluate("v_cvt_f16_f32", "observed", rz_f32, db=DB, S0=x)["D"][0]) == 0x3c01


# ---------------------------------------------------------------------------------------------
# mode_for


def test_mode_for_decodes_the_mode_register_fields():
    # LLVM SIDefines.h FP_ROUND: 0 nearest, 1 +inf, 2 -inf, 3 zero (llc-19: llvm.set.rounding(toward
    # zero) writes 15 to MODE[3:0], (toward +inf) 5, (toward -inf) 10)
    assert mode_for(FORMS["v_add_f32"], 0xF0) == {"round_f32": "rn", "round_f64": "rn", "denorm_f32": 3, "denorm_f64": 3}
    assert mode_for(FORMS["v_add_f32"], 15) == {"round_f32": "rz", "round_f64": "rz", "denorm_f32": 0, "denorm_f64": 0}
    assert mode_for(FORMS["v_add_f32"], 5 | (1 << 4) | (2 << 6)) == \
        {"round_f32": "rp", "round_f64": "rp", "denorm_f32": 1, "denorm_f64": 2}
    assert mode_for(FORMS["v_add_f32"], 10 | 0x300)["round_f32"] == "rm"  # bits above 7 ignored
    with pytest.raises(UsageError):
        mode_for("v_add_f32", 0)  # a name needs db=


def test_mode_for_selects_each_forms_field():
    tie = dict(S0=bits([1.0], "f32"), S1=bits([2.0 ** -24], "f32"))  # 1 + 2^-24: rn 1.0, rp 1 + 2^-23
    up_f32 = mode_for("v_add_f32", 0b0001, db=DB)
    up_f64 = mode_for("v_add_f32", 0b0100, db=DB)
    assert int(evaluate("v_add_f32", "observed", up_f32, db=DB, **tie)["D"][0]) == 0x3f800001
    assert int(evaluate("v_add_f32", "observed", up_f64, db=DB, **tie)["D"][0]) == 0x3f800000
    sub = bits([2.0 ** -24], "f16")  # an f16 subnormal: FP_DENORM[7:6] governs it, [5:4] does not
    assert int(evaluate("v_add_f16", "observed", mode_for("v_add_f16", 0x30, db=DB), db=DB, S0=sub, S1=sub)["D"][0]) == 0
    assert int(evaluate("v_add_f16", "observed", mode_for("v_add_f16", 0xC0, db=DB), db=DB, S0=sub, S1=sub)["D"][0]) == 2
    # v_cvt_f32_f16: f16 input flushing from [7:6], the f32 result's from [5:4]
    assert int(evaluate("v_cvt_f32_f16", "observed", mode_for("v_cvt_f32_f16", 0x30, db=DB), db=DB, S0=sub)["D"][0]) == 0
    assert int(evaluate("v_cvt_f32_f16", "observed", mode_for("v_cvt_f32_f16", 0xC0, db=DB), db=DB, S0=sub)["D"][0]) \
        == 0x33800000


# ---------------------------------------------------------------------------------------------
# fma_mix


def _exact_f16_bits(value: Fraction, rounding: str = "rn") -> int:
    return FORMS["v_fma_mixlo_f16"].formats["f16"].from_fraction(value, rounding)


def test_fma_mix_runs_tritons_f16_division_steps_by_hand():
    a16, b16 = 0x4200, 0x4000  # 3.0 and 2.0 in the low halves of v3 and v2
    r = int(bits([0.5], "f32")[0])  # v_rcp_f32 of 2.0
    # v_fma_mix_f32 v5, v3, v4, neg(0) op_sel_hi:[1,0,0]: q = a * r + (-0)
    q = fma_mix("v_fma_mix_f32", "observed", None, a16, r, 0, 0, [1, 0, 0], [0, 0, 1], 0, db=DB)
    assert int(q) == int(bits([1.5], "f32")[0])
    # v_fma_mix_f32 v6, -v2, v5, v3 op_sel_hi:[1,0,1]: e = -b * q + a = 0
    e = fma_mix("v_fma_mix_f32", "observed", None, b16, q, a16, 0, [1, 0, 1], [1, 0, 0], 0, db=DB)
    assert int(e) == 0


def test_fma_mix_half_selection_modifiers_and_preserved_halves():
    reg0 = (0x4000 << 16) | 0x3C00  # hi 2.0, lo 1.0
    reg1 = (0xC200 << 16) | 0x4400  # hi -3.0, lo 4.0
    c = int(bits([0.25], "f32")[0])
    # |hi(reg1)| * lo(reg0) + 0.25 = 3.25; neg on S0 (lo(reg0)) -> -3 + 0.25 = -2.75
    cases = [((0b010, 0b011, 0, 0b010), 3.25), ((0b010, 0b011, 0b001, 0b010), -2.75),
             ((0b001, 0b011, 0, 0), 2 * 4 + 0.25)]
    for (sel, sel_hi, neg, ab), want in cases:
        got = fma_mix("v_fma_mix_f32", "observed", None, reg0, reg1, c, sel, sel_hi, neg, ab, db=DB)
        assert floats(np.atleast_1d(got), "f32")[0] == np.float32(want), (sel, sel_hi, neg, ab)
    old = 0xDEADBEEF
    lo = fma_mix("v_fma_mixlo_f16", "observed", None, reg0, reg1, c, 0, 0b011, 0, 0, db=DB, old=old)
    hi = fma_mix("v_fma_mixhi_f16", "observed", None, reg0, reg1, c, 0, 0b011, 0, 0, db=DB, old=old)
    want16 = _exact_f16_bits(Fraction(17, 4))  # 1 * 4 + 0.25
    assert int(lo) == (old & 0xFFFF0000) | want16 and int(hi) == (old & 0xFFFF) | (want16 << 16)
    with pytest.raises(UsageError, match="old="):
        fma_mix("v_fma_mixlo_f16", "observed", None, reg0, reg1, c, 0, 0, 0, 0, db=DB)
    with pytest.raises(UsageError):
        fma_mix("v_fma_f32", "observed", None, reg0, reg1, c, 0, 0, 0, 0, db=DB)


@pytest.mark.parametrize("rounding", ["rn", "rz", "rm", "rp"])
def test_fma_mixlo_rounds_once_like_exact_rationals(rounding):
    rng = np.random.default_rng(11)
    n = 300
    a32, b32 = normals(rng, n, "f32", 6), normals(rng, n, "f32", 6)
    # addends near -a*b make the exact sum need more than f32's 24 bits
    c32 = np.where(rng.random(n) < 0.5, (-(a32.astype(np.float64) * b32) * (1 + rng.random(n) * 2.0 ** -8)).astype(np.float32),
                   normals(rng, n, "f32", 6))
    mode = {"round_f64": rounding}  # the f16 result's field
    got = fma_mix("v_fma_mixlo_f16", "observed", mode, bits(a32, "f32"), bits(b32, "f32"), bits(c32, "f32"),
                  0, 0, 0, 0, db=DB, old=0)
    for x, y, z, g in zip(a32, b32, c32, got):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        want = _exact_f16_bits(exact, rounding)
        if exact == 0:
            want = 0x8000 if rounding == "rm" else 0
        assert int(g) == want, (x, y, z, rounding)


# ---------------------------------------------------------------------------------------------
# ldexp, frexp


def test_ldexp_matches_numpy():
    rng = np.random.default_rng(5)
    x = normals(rng, 500, "f32", 20)
    n = rng.integers(-200, 200, 500)
    with np.errstate(over="ignore", under="ignore"):
        want = bits(np.ldexp(x, n), "f32")
    got = evaluate("v_ldexp_f32", "observed", db=DB, S0=bits(x, "f32"), S1=(n & 0xFFFFFFFF).astype(np.uint64))["D"]
    assert np.array_equal(got, want)
    x64 = normals(rng, 500, "f64", 500)
    n64 = rng.integers(-1200, 1200, 500)
    with np.errstate(over="ignore", under="ignore"):
        want = bits(np.ldexp(x64, n64), "f64")
    got = evaluate("v_ldexp_f64", "observed", db=DB, S0=bits(x64, "f64"), S1=(n64 & 0xFFFFFFFF).astype(np.uint64))["D"]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_frexp_matches_numpy_including_subnormals(t):
    rng = np.random.default_rng(9)
    _, utype = DTYPES[t]
    width = np.dtype(utype).itemsize * 8
    mant_mask = (1 << (23 if t == "f32" else 52)) - 1
    # subnormals whose fraction is all ones below its leading bit (2**k - 1): their exponent is the
    # easiest to get wrong by one
    edges = np.array([mant_mask, mant_mask >> 1, mant_mask >> 7, 1, 3], dtype=np.uint64)
    x = floats(np.concatenate([edges, rng.integers(0, 1 << min(width, 63), 1000, dtype=np.uint64)]), t)
    x = x[np.isfinite(x)]
    mant, exp = np.frexp(x)
    got_m = evaluate(f"v_frexp_mant_{t}", "observed", db=DB, S0=bits(x, t))["D"]
    got_e = evaluate(f"v_frexp_exp_i32_{t}", "observed", db=DB, S0=bits(x, t))["D"]
    assert np.array_equal(got_m, bits(mant, t))
    assert np.array_equal(got_e, (exp.astype(np.int64) & 0xFFFFFFFF).astype(np.uint64))


# ---------------------------------------------------------------------------------------------
# compares, class, max/min


PREDICATES = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
              "lg": lambda a, b: np.less(a, b) | np.greater(a, b), "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
              "u": lambda a, b: np.isnan(a) | np.isnan(b), "neq": lambda a, b: ~np.equal(a, b),
              "nlg": lambda a, b: ~(np.less(a, b) | np.greater(a, b)), "nlt": lambda a, b: ~np.less(a, b),
              "nle": lambda a, b: ~np.less_equal(a, b), "ngt": lambda a, b: ~np.greater(a, b),
              "nge": lambda a, b: ~np.greater_equal(a, b)}


def _compare_operands(t: str, rng) -> tuple[np.ndarray, np.ndarray]:
    ftype, _ = DTYPES[t]
    pool = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, 0.5], dtype=ftype)
    return pool[rng.integers(0, pool.size, 300)], pool[rng.integers(0, pool.size, 300)]


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
def test_float_compares_match_numpy(t):
    rng = np.random.default_rng(13)
    a, b = _compare_operands(t, rng)
    with np.errstate(invalid="ignore"):
        for p, fn in PREDICATES.items():
            got = evaluate(f"v_cmp_{p}_{t}", "observed", db=DB, S0=bits(a, t), S1=bits(b, t))["D"]
            assert np.array_equal(got, fn(a, b)), p


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
def test_cmp_class_matches_numpy_classification(t):
    ftype, utype = DTYPES[t]
    fmt = FORMS[f"v_cmp_class_{t}"].fmt
    tiny = np.finfo(ftype).smallest_subnormal
    values = np.array([np.inf, -np.inf, 1.5, -1.5, tiny, -tiny, 0.0, -0.0], dtype=ftype)
    patterns = np.concatenate([bits(values, t), np.array([fmt.default_nan, fmt.inf | 1], dtype=np.uint64)])
    x = floats(patterns, t)
    neg = np.signbit(x)
    sub = (np.abs(x) < np.finfo(ftype).tiny) & (x != 0)
    quiet = (patterns & np.uint64(fmt.quiet_bit)) != 0
    classes = [np.isnan(x) & ~quiet, np.isnan(x) & quiet, np.isinf(x) & neg, np.isfinite(x) & ~sub & (x != 0) & neg,
               sub & neg, (x == 0) & neg, (x == 0) & ~neg, sub & ~neg, np.isfinite(x) & ~sub & (x != 0) & ~neg,
               np.isinf(x) & ~neg]
    for mask in (1 << np.arange(10)).tolist() + [0x260, 0x3FF, 0x90]:
        want = np.zeros(patterns.size, dtype=bool)
        for k in range(10):
            if (mask >> k) & 1:
                want |= classes[k]
        got = evaluate(f"v_cmp_class_{t}", "observed", db=DB, S0=patterns, S1=np.full(patterns.size, mask, dtype=np.uint64))["D"]
        assert np.array_equal(got, want), hex(mask)


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
def test_max_min_match_numpy_fmax_fmin_on_quiet_nans_and_nonzero_values(t):
    rng = np.random.default_rng(17)
    ftype, _ = DTYPES[t]
    a, b = normals(rng, 300, t), normals(rng, 300, t)
    a = np.where(rng.random(300) < 0.1, ftype(np.nan), a)
    b = np.where(rng.random(300) < 0.1, ftype(np.nan), b)
    for family, fn in (("v_max", np.fmax), ("v_min", np.fmin)):
        got = evaluate(f"{family}_{t}", "observed", db=DB, S0=bits(a, t), S1=bits(b, t))["D"]
        assert np.all(same_or_both_nan(got, bits(fn(a, b), t), t)), family
