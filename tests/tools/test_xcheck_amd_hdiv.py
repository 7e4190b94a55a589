"""tools/xcheck_amd_hdiv.py: its rounding, its V_RCP_F32 sets and small enumerations.

The expected values are derived by hand (comments give the derivation), not by running the
tool; gmpy2 (MPFR), when installed, checks the integer rounding and the Triton sequence a third
way.  Runs in a few seconds.
"""

from __future__ import annotations

import json
import random
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import xcheck_amd_hdiv as x  # noqa: E402

F16, F32 = x.F16, x.F32


@pytest.mark.parametrize("m, e, bits", [
    (1, 0, 0x3C00),          # 1.0
    (65504, 0, 0x7BFF),      # the largest f16
    (65519, 0, 0x7BFF),      # below the midpoint 65520 of 65504 and 2^16
    (65520, 0, 0x7C00),      # the midpoint: ties to the even 2^16, past the range: inf
    (2049, 0, 0x6800),       # 2049 between 2048 and 2050 (spacing 2): tie to even 2048 = 1024*2
    (2051, 0, 0x6802),       # tie between 2050 (odd significand 1025) and 2052: 2052
    (1, -24, 0x0001),        # the smallest subnormal
    (1, -25, 0x0000),        # half of it: tie between 0 and 2^-24, to even 0
    (3, -26, 0x0001),        # 0.75 * 2^-24 rounds up
    (3, -25, 0x0002),        # 1.5 * 2^-24: tie between 1 and 2 (even)
    (1023, -24, 0x03FF),     # the largest subnormal
    (2047, -25, 0x0400),     # 1023.5 * 2^-24: tie between 1023 and 1024 (even): the smallest normal
])
def test_round_to_f16(m, e, bits):
    assert x.round_dyadic(F16, 0, m, e) == bits
    assert x.round_dyadic(F16, 1, m, e) == bits | 0x8000
    assert x.FR16.rn(Fraction(m) * Fraction(2) ** e) == bits      # the Fraction model's rounding


@pytest.mark.parametrize("m, e, bits", [
    ((1 << 24) + 1, 0, 0x4B800000),      # 2^24 + 1: tie between 2^24 and 2^24 + 2, to 2^24
    ((1 << 24) + 3, 0, 0x4B800002),      # tie between 2^24 + 2 (odd) and 2^24 + 4
    (1, -150, 0x00000000),               # half the smallest subnormal 2^-149: to 0
    (3, -151, 0x00000001),               # 0.75 * 2^-149: up
    ((1 << 25) - 1, 103, 0x7F800000),    # (2^25 - 1) * 2^103 = 2^128 - 2^103: the midpoint past MAX
    ((1 << 26) - 3, 102, 0x7F7FFFFF),    # just below that midpoint: MAX
])
def test_round_to_f32(m, e, bits):
    assert x.round_dyadic(F32, 0, m, e) == bits
    assert x.FR32.rn(Fraction(m) * Fraction(2) ** e) == bits


def test_round_ratio():
    assert x.round_ratio(F16, 0, 1, 3, 0) == 0x3555          # 1/3 = 1.0101...b * 2^-2
    assert x.round_ratio(F16, 0, 2, 3, 0) == 0x3955
    assert x.round_ratio(F32, 0, 1, 3, 0) == 0x3EAAAAAB
    assert x.round_ratio(F16, 1, 1, 3, -24) == 0x8000         # -2^-24/3 < half the smallest subnormal
    assert x.round_ratio(F16, 0, 2, 3, -24) == 0x0001         # 2/3 of it: up
    assert x.correct_quotient(0x3C00, 0x4200) == 0x3555       # 1/3
    assert x.correct_quotient(0x1356, 0x7756) == 0x0000       # exactly 2^-25: a tie, to even 0


def test_fma_signed_zeros_and_specials():
    p0, n0, one, m_one = (0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)
    assert x.fma(F32, p0, one, n0) == 0x00000000               # +0 + -0 = +0 (v_mul_f32 of +0)
    assert x.fma(F32, n0, one, n0) == 0x80000000               # -0 + -0 = -0
    assert x.fma(F32, one, one, m_one) == 0x00000000           # exact cancellation: +0
    assert x.fma(F32, (0, x.INF, 0), p0, one) == F32.qnan      # inf * 0
    assert x.fma(F32, (0, x.INF, 0), one, (1, x.INF, 0)) == F32.qnan
    assert x.widen_f16_to_f32(0x0001) == 0x33800000            # 2^-24 widens to a normal f32
    assert x.widen_f16_to_f32(0xFC00) == 0xFF800000
    assert x.widen_f16_to_f32(0x8000) == 0x80000000
    assert x.convert(F16, x.decode(0x80000000, F32)) == 0x8000   # cvt keeps -0
    assert x.convert(F16, x.decode(0x477FE000, F32)) == 0x7BFF   # 65504 exactly
    assert x.convert(F16, x.decode(0x477FEFFF, F32)) == 0x7BFF   # just below the midpoint 65520
    assert x.convert(F16, x.decode(0x477FF000, F32)) == 0x7C00   # 65520: to the even 2^16, inf



def test_div_fixup_f16_table():
    q = 0x1234
    assert x.div_fixup_f16(q, 0x0000, 0x0000) == 0xFE00        # 0/0: the default NaN
    assert x.div_fixup_f16(q, 0x7C00, 0xFC00) == 0xFE00        # inf/inf
    assert x.div_fixup_f16(q, 0x8000, 0x3C00) == 0xFC00        # 1/-0 = -inf
    assert x.div_fixup_f16(q, 0xFC00, 0x3C00) == 0x8000        # 1/-inf = -0
    assert x.div_fixup_f16(q, 0x3C00, 0x8000) == 0x8000        # -0/1
    assert x.div_fixup_f16(q, 0xBC00, 0x3C00) == 0x9234        # ordinary: |q| with the xor sign
    assert x.div_fixup_f16(0x7C00, 0x3C00, 0x3C00) == 0x7C00   # infinite quotient passes
    assert x.is_nan(x.div_fixup_f16(q, 0x7E00, 0x3C00), F16)


def test_rcp_sets_generic_divisor():
    # 1/3 = 0x3eaaaaaa.aaa...: RD = 0x3eaaaaaa, RU = 0x3eaaaaab; both within 1 ulp = 2^-25,
    # 0x3eaaaaa9 is 1.67 ulp away; every reading agrees except rn (RN = RU here).
    b32 = x.widen_f16_to_f32(0x4200)
    assert b32 == 0x40400000
    for reading in ("exact", "below", "steps", "faithful"):
        assert x.rcp_allowed(b32, reading) == [0x3EAAAAAA, 0x3EAAAAAB]
    assert x.rcp_allowed(b32, "rn") == [0x3EAAAAAB]
    assert x.rcp_allowed(b32 | 0x80000000) == [0xBEAAAAAA, 0xBEAAAAAB]


def test_rcp_sets_power_of_two():
    # 1/2 = 2^-1: ulp(2^-1) = 2^-24 above; below 0.5 the f32 spacing is 2^-25.
    b32 = x.widen_f16_to_f32(0x4000)
    half = 0x3F000000
    assert x.rcp_allowed(b32, "exact") == [half - 2, half - 1, half, half + 1]   # |r - 1/2| <= 2^-24
    assert x.rcp_allowed(b32, "below") == [half - 1, half]                       # <= 2^-25
    assert x.rcp_allowed(b32, "steps") == [half - 1, half, half + 1]
    assert x.rcp_allowed(b32, "faithful") == [half]
    assert x.rcp_allowed(b32, "rn") == [half]
    # the subnormal divisor 2^-24: 1/b = 2^24 = 0x4b800000
    assert x.rcp_allowed(x.widen_f16_to_f32(0x0001)) == [0x4B7FFFFE, 0x4B7FFFFF, 0x4B800000, 0x4B800001]


def test_rcp_specials():
    assert x.rcp_allowed(0x00000000) == [0x7F800000]
    assert x.rcp_allowed(0x80000000) == [0xFF800000]
    assert x.rcp_allowed(0x7F800000) == [0x00000000]
    assert x.rcp_allowed(0xFF800000) == [0x80000000]
    assert x.rcp_allowed(0x00400000) == [0x7F800000]           # an f32 subnormal acts as +0
    assert x.rcp_allowed(0x7FC00000) == [F32.qnan]


def test_llc_tie_counterexample():
    # a = 0x1356 = 1.8349609375 * 2^-11, b = 0x7756 = 1.8349609375 * 2^14: a/b = 2^-25 exactly, the
    # midpoint of 0 and the smallest subnormal; RNE gives +0.  With r = RU(1/b) = 0x380b9639 > 1/b,
    # a*r lies just above 2^-25 and v_fma_mixlo_f16 rounds it up to 0x0001.
    assert x.rcp_allowed(x.widen_f16_to_f32(0x7756)) == [0x380B9638, 0x380B9639]
    assert x.run_llc(0x1356, 0x7756, 0x380B9639) == 0x0001
    assert x.run_llc(0x1356, 0x7756, 0x380B9638) == 0x0000
    assert x.fraction_run("llc", 0x1356, 0x7756, 0x380B9639) == 0x0001
    # Triton's correction step brings the same pair back to the tie's even result
    assert x.run_triton(0x1356, 0x7756, 0x380B9639) == 0x0000


def test_exact_tie():
    assert x.is_exact_tie(0x1356, 0x7756)          # 2^-25: between 0 and 2^-24
    assert x.is_exact_tie(0x0003, 0x4000)          # 3 * 2^-24 / 2 = 1.5 * 2^-24
    assert not x.is_exact_tie(0x0002, 0x4000)      # 2^-24: representable
    assert not x.is_exact_tie(0x3C00, 0x4200)      # 1/3


def test_small_enumerations():
    # b = 2: a/2 is a tie exactly for the 2 * 1024 numerators with an odd significand among the
    # subnormals and the binade [2^-14, 2^-13) (both signs); llc misrounds each under "exact"
    # (r = 0.5 - 2^-25 rounds them down, 0.5 + 2^-24 up), never with r = 1/2 exactly.
    rset, bad = x.check_divisor("llc", 0x4000, "exact")
    assert len(rset) == 4
    expected = {s | e | f for s in (0, 0x8000) for e in (0, 0x0400) for f in range(1, 1024, 2)}
    assert {a for a, _, _ in bad} == expected
    assert x.check_divisor("llc", 0x4000, "rn")[1] == []
    # Triton on a slice of numerators around the same ties, and specials
    some = list(range(0x0000, 0x0800, 7)) + [0x7C00, 0x7E00, 0xFC00, 0x8000, 0x7BFF]
    assert x.check_divisor("triton", 0x4000, "exact", some)[1] == []
    assert x.check_divisor("triton", 0x0000, "exact", some)[1] == []


def test_main_json(tmp_path, capsys):
    out = tmp_path / "pairs.json"
    wit = tmp_path / "w.json"
    assert x.main(["--sequence", "llc", "--divisors", "0x7756,0x7c00", "--json", str(out),
                   "--witnesses", str(wit), "--crosscheck", "8"]) == 0
    assert json.loads(out.read_text()) == [[0x1356, 0x7756], [0x9356, 0x7756]]
    w = json.loads(wit.read_text())["witnesses"]
    assert w[0]["misrounding"] == [{"rcp": "0x380b9639", "result": x.f16_str(0x0001)}]
    assert "total: 2 misrounded pairs over 2 divisors" in capsys.readouterr().out


def test_parse_divisors():
    assert x.parse_divisors("0x3c00, 15360,range:1:3") == [0x3C00, 0x3C00, 1, 2, 3]
    r = x.parse_divisors("random:5:1")
    assert r == random.Random(1).sample(range(1 << 16), 5) and len(set(r)) == 5
    assert len(x.parse_divisors("all")) == 65536


def test_fraction_model_agrees_on_random_pairs():
    rng = random.Random(7)
    ordinary = [a for a in range(1 << 16) if x.decode(a, F16)[1] not in (0, x.INF, x.NAN)]
    for _ in range(150):
        a, b = rng.choice(ordinary), rng.choice(ordinary)
        assert x.correct_quotient(a, b) == x.fraction_correct(a, b)
        for r in x.rcp_allowed(x.widen_f16_to_f32(b)):
            for seq in ("llc", "triton"):
                assert x.SEQUENCES[seq](a, b, r) == x.fraction_run(seq, a, b, r), (seq, a, b, r)


# ---- a third implementation: MPFR through gmpy2 (skipped without it) ----------------------


def _mpfr_ctx(gmpy2, fmt):
    # MPFR exponents: x = 0.1b... * 2^e, so [2^(E-1), 2^E); f16: smallest subnormal 2^-24 -> -23,
    # largest finite < 2^16 -> 16; f32: -148, 128.  subnormalize emulates IEEE gradual underflow.
    emin, emax = (-23, 16) if fmt is F16 else (-148, 128)
    return gmpy2.context(precision=fmt.fbits + 1, emin=emin, emax=emax, subnormalize=True,
                         round=gmpy2.RoundToNearest)


def _mpfr_bits(gmpy2, v, fmt):
    """Bits of an mpfr value that is representable in fmt (through its exact rational)."""
    if gmpy2.is_infinite(v):
        return (fmt.sign if v < 0 else 0) | fmt.inf
    if v == 0:
        return fmt.sign if gmpy2.is_signed(v) else 0
    q = gmpy2.mpq(v)
    model = x.FR16 if fmt is F16 else x.FR32
    bits = model.rn(Fraction(int(q.numerator), int(q.denominator)))
    assert model.value(bits) == Fraction(int(q.numerator), int(q.denominator)), "not representable"
    return bits


def test_gmpy2_third_check():
    gmpy2 = pytest.importorskip("gmpy2")
    wide = gmpy2.context(precision=200, emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())
    c16, c32 = _mpfr_ctx(gmpy2, F16), _mpfr_ctx(gmpy2, F32)

    def val(bits, model):
        v = model.value(bits)
        with wide:
            return gmpy2.mpfr(gmpy2.mpq(v.numerator, v.denominator), 200)

    rng = random.Random(11)
    # the integer rounding against MPFR on random dyadics across both formats' ranges
    for _ in range(400):
        m, e = rng.randrange(1, 1 << 40), rng.randrange(-200, 100)
        for fmt, ctx in ((F16, c16), (F32, c32)):
            with wide:
                exact = gmpy2.mul(gmpy2.mpfr(m, 200), gmpy2.exp2(e))
            with ctx:
                r = gmpy2.mul(exact, 1)
            assert x.round_dyadic(fmt, 0, m, e) == _mpfr_bits(gmpy2, r, fmt), (fmt, m, e)
    # the Triton sequence and the correct quotient with MPFR fma/div
    ordinary = [a for a in range(1 << 16) if x.decode(a, F16)[1] not in (0, x.INF, x.NAN)]
    for _ in range(100):
        a, b = rng.choice(ordinary), rng.choice(ordinary)
        A, B = val(a, x.FR16), val(b, x.FR16)
        with c16:
            want = _mpfr_bits(gmpy2, gmpy2.div(A, B), F16)
        assert x.correct_quotient(a, b) == want
        for r in x.rcp_allowed(x.widen_f16_to_f32(b)):
            R = val(r, x.FR32)
            with c32:
                q0 = gmpy2.mul(A, R)
                e1 = gmpy2.fma(-B, q0, A)
                q1 = gmpy2.fma(e1, R, q0)
                e2 = gmpy2.fma(-B, q1, A)
                t = gmpy2.mul(e2, R)
            tm = _mpfr_bits(gmpy2, t, F32) & 0xFF800000
            with c32:
                q2 = gmpy2.add(val(tm, x.FR32), q1)
            with c16:
                h = gmpy2.mul(q2, 1)
                hl = gmpy2.mul(A, R)                  # llc: one rounding of a*r to f16
            sign = ((a ^ b) & 0x8000)
            assert x.run_triton(a, b, r) == sign | (_mpfr_bits(gmpy2, h, F16) & 0x7FFF), (a, b, r)
            assert x.run_llc(a, b, r) == sign | (_mpfr_bits(gmpy2, hl, F16) & 0x7FFF), (a, b, r)
