"""The ulp bound decided rigorously in float64, against exact rationals.

``contracts._bound_check`` decides most lanes in float64 with a safety margin. The lanes the
margin leaves -- probes at the edge of the allowed range that lie exactly on the bound (exact
quotients of short significands: every bfloat16 division) or within a hair of it (results far
below the subnormal ulp the bound is made of) -- are decided in float64 with TwoSum and the
float64 result's error bound (``contracts._exactly_within``), and only what that cannot settle
goes to exact rational arithmetic (``contracts._exact_lane``). Here such lanes -- exact and
inexact quotients, reciprocals and square roots (bfloat16 and random operands, tiny and huge
results), probes from five values below RN(x) to five above and both zeros -- are judged both
ways: the verdicts must be the same, lane for lane.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tilecheck.model import contracts
from tilecheck.spec.database import load_database

DB = load_database()
F32 = DB.formats["f32"]
# the ulp-bound contracts of the database, and one of them lent to sqrt (no sqrt form has an ulp
# bound, but the decision serves it)
# (ex2's transcendental results are decided by tilecheck.model.exp2: tests/model/test_exp2.py)
CASES = [(f.name, f.contract.operation) for f in DB.ptx_forms()
         if f.kind == "contract" and f.contract.ulp is not None and f.element_format == "f32"
         and f.contract.operation in ("div", "rcp", "sqrt", "rsqrt")]
CASES += [("div.approx.f32", "sqrt")]


def _bits(q: Fraction) -> int | None:
    """The f32 pattern of ``q`` when it is exactly an f32 value, else None."""
    bits = F32.from_fraction(q)
    return bits if F32.to_fraction(bits) == q else None


def _short(rng, bits: int, lo: int, hi: int) -> Fraction:
    """A random signed value with a significand of at most ``bits`` bits, exponent in [lo, hi]."""
    sig = int(rng.integers(1, 1 << bits)) | 1
    sign = -1 if rng.integers(0, 2) else 1
    e = int(rng.integers(lo, hi + 1))
    return sign * Fraction(sig) * Fraction(2) ** e


def _operands(fn: str, rng, n: int) -> list[tuple[int, ...]]:
    """Operand tuples (f32 patterns) whose exact result a float64 holds exactly."""
    out = []
    while len(out) < n:
        if fn == "div":
            b = _short(rng, 5, -160, 120)
            q = _short(rng, 12, -200, 200)
            a, b = _bits(b * q), _bits(b)
            ops = None if a is None or b is None else (a, b)
        elif fn == "rcp":
            b = _bits(Fraction(2) ** int(rng.integers(-149, 128)) * (-1 if rng.integers(0, 2) else 1))
            ops = None if b is None else (b,)
        else:
            s = _short(rng, 12, -80, 60)
            a = _bits(s * s)
            ops = None if a is None else (a,)
        if ops is not None:
            out.append(ops)
    # tiny quotients below half the smallest subnormal, and the operands of a bfloat16 block
    if fn == "div":
        out += [(0x00060000, 0x48000000), (0x80020000, 0x48000000), (0x00000001, 0x7F000000),
                (0x00000003, 0x6B000000), (0x00400000, 0x5F000000), (0x00010000, 0x63010000)]
    # results float64 does not hold exactly: bfloat16 operands (short, but 129/128 does not divide),
    # random patterns, and quotients far below the subnormal ulp or near the top of the range
    arity = 2 if fn == "div" else 1
    for _ in range(n):
        bf = [int(rng.integers(0, 1 << 16)) << 16 for _ in range(arity)]
        rand = [int(rng.integers(0, 1 << 32)) for _ in range(arity)]
        for ops in (bf, rand):
            if fn == "sqrt":
                ops[0] &= 0x7FFFFFFF
            if all(0 < (o & 0x7FFFFFFF) < 0x7F800000 for o in ops):
                out.append(tuple(ops))
    if fn == "div":
        for _ in range(n // 4):
            a = int(rng.integers(1, 1 << 23)) | (int(rng.integers(0, 2)) << 31)
            b = (int(rng.integers(0x60, 0x7F)) << 23) | int(rng.integers(0, 1 << 23))
            big = (int(rng.integers(0x70, 0x7F)) << 23) | int(rng.integers(0, 1 << 23))
            small = (int(rng.integers(0x01, 0x10)) << 23) | int(rng.integers(0, 1 << 23))
            out += [(a, b), (big, small)]
    return out


def _key(bits: int) -> int:
    return -(bits & 0x7FFFFFFF) - 1 if bits >> 31 else bits


def _from_key(key: int) -> int:
    return ((-key - 1) | 0x80000000) if key < 0 else key


@pytest.mark.parametrize("name,fn", CASES, ids=[f"{n}:{fn}" for n, fn in CASES])
def test_exact_results_are_decided_as_exact_arithmetic_decides(name, fn):
    form = DB.forms[name]
    ftz = ".ftz" in name
    rng = np.random.default_rng(sum(map(ord, name + fn)))
    rows, probes = [], []
    for ops in _operands(fn, rng, 400):
        values = [F32.to_fraction(b) for b in ops]
        q, _ = contracts._exact_parts(fn, values)
        exact = _root(q) if fn == "sqrt" else q
        centre = F32.from_fraction(exact)  # RN(x); beyond the format: the largest finite value
        if (centre & 0x7FFFFFFF) >= 0x7F800000:
            centre = 0x7F7FFFFF if exact > 0 else 0xFF7FFFFF
        k = _key(centre)
        for d in range(-5, 6):
            r = _from_key(max(-0x7F800000, min(0x7F7FFFFF, k + d)))
            if (r & 0x7FFFFFFF) < 0x7F800000:
                rows.append(ops)
                probes.append(r)
        rows += [ops, ops]
        probes += [0x00000000, 0x80000000]
    op_arrays = [np.array([r[j] for r in rows], dtype=np.uint64) for j in range(len(rows[0]))]
    got = contracts._bound_check(np, fn, F32, form, np.array(probes, dtype=np.uint64), op_arrays, ftz)
    want = np.array([contracts._exact_lane(fn, F32, form.contract, ftz, r, list(ops)) for r, ops in zip(probes, rows)])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(hex(probes[i]), [hex(o) for o in rows[i]], bool(want[i])) for i in bad[:5]]
    # the lanes at stake: the probes cover both verdicts, and most were decided without rationals
    assert want.any() and not want.all()


def _root(q: Fraction) -> Fraction:
    """The square root of a dyadic rational: exact for a square, else its float64 value (probes
    only need to start near RN)."""
    rn, rd = math.isqrt(q.numerator), math.isqrt(q.denominator)
    if rn * rn == q.numerator and rd * rd == q.denominator:
        return Fraction(rn, rd)
    return Fraction(math.sqrt(q))


@pytest.mark.parametrize("a,b", [(0x00000001, 0x7F000000), (0x00010000, 0x63010000)],
                         ids=["exact 2^-276", "inexact about 2^-204"])
def test_twosum_decides_a_difference_that_rounds_onto_the_bound(a, b, monkeypatch):
    """A quotient far below the subnormal ulp 2^-149 that the bound (2 ulps) is made of: r = 2^-148
    is within it (|r - x| = 2^-148 - x), r = -2^-148 is not (2^-148 + x), though both differences
    round to 2^-148 in float64: only TwoSum's error term tells them apart. The rational fallback
    is not reached, whether the float64 quotient is exact or not."""
    form = DB.forms["div.approx.f32"]
    calls = []
    real = contracts._exact_fallback
    monkeypatch.setattr(contracts, "_exact_fallback", lambda *args: (calls.append(1), real(*args))[1])
    ops = [np.array([a] * 2, dtype=np.uint64), np.array([b] * 2, dtype=np.uint64)]
    r = np.array([0x00000002, 0x80000002], dtype=np.uint64)
    got = contracts._bound_check(np, "div", F32, form, r, ops, False)
    want = [contracts._exact_lane("div", F32, form.contract, False, int(v), [a, b]) for v in r]
    assert want == [True, False]
    assert list(got) == want and not calls
