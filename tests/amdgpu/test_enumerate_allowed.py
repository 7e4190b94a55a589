"""``enumerate_allowed`` of the AMD precision contracts against the membership test ``allowed``,
and the rsq/sqrt contracts against results computed outside tilecheck (numpy, exact rationals)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilecheck.amdgpu.contract import allowed, enumerate_allowed
from tilecheck.errors import UsageError
from tilecheck.spec.database import load_database

DB = load_database()
FORMS = DB.extras["amdgpu"]["forms"]
CONTRACT_FORMS = sorted(n for n, f in FORMS.items() if f.family in ("v_rcp", "v_rsq", "v_sqrt"))
LIMIT = 17


def operands(fmt, rng, n: int) -> np.ndarray:
    """Edge values (zeros, infinities, NaNs, subnormals, extremes, all-ones significands) and random
    patterns of both signs."""
    top = (1 << fmt.exponent_bits) - 1
    edges = [0, fmt.sign_mask, fmt.inf, fmt.inf | fmt.sign_mask, fmt.default_nan, fmt.inf | 1, 1,
             fmt.mantissa_mask, fmt.min_normal, fmt.max_finite, fmt.max_finite | fmt.sign_mask,
             (fmt.bias << fmt.mantissa_bits) | fmt.mantissa_mask, fmt.bias << fmt.mantissa_bits,
             ((fmt.bias + 1) << fmt.mantissa_bits) | fmt.mantissa_mask]
    field = rng.integers(0, top, n).astype(np.uint64)
    frac = rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(fmt.mantissa_mask)
    sign = (rng.random(n) < 0.2).astype(np.uint64) << np.uint64(fmt.width - 1)
    return np.concatenate([np.array(edges, dtype=np.uint64), sign | (field << np.uint64(fmt.mantissa_bits)) | frac])


def _around(fmt, center: np.ndarray, k: int) -> np.ndarray:
    """Patterns k steps in magnitude from each center (clipped to [0, inf]), sign kept."""
    mag = (center & np.uint64(fmt.magnitude_mask)).astype(np.int64) + k
    return (center & np.uint64(fmt.sign_mask)) | np.clip(mag, 0, fmt.inf).astype(np.uint64)


@pytest.mark.parametrize("name", CONTRACT_FORMS)
def test_enumerated_values_are_allowed_and_complete_rows_miss_none(name):
    form = FORMS[name]
    fmt = form.fmt
    rng = np.random.default_rng(len(name) * 7 + fmt.width)
    x = operands(fmt, rng, 30)
    values, valid, complete = enumerate_allowed(form, "observed", x, limit=LIMIT, rng=rng)
    assert values.shape == valid.shape and values.shape[0] == x.size and values.shape[1] <= LIMIT
    assert np.all(valid[:, 0])  # every operand has at least one allowed result
    for i in range(x.size):
        row = values[i][valid[i]]
        assert np.all(np.diff(row.astype(np.float64)) > 0) or row.size == 1  # sorted, no repeats
        assert np.all(allowed(form, "observed", row, np.full(row.size, x[i]))), (hex(int(x[i])), row)
        if not complete[i]:
            assert row.size == LIMIT
            continue
        enumerated = set(int(v) for v in row)
        if fmt.is_nan(row[:1])[0]:
            continue  # any NaN is allowed; the canonical one stands for them all
        # every pattern within +-LIMIT ulps of each listed value, and the zeros and infinities
        candidates = np.concatenate([_around(fmt, row, k) for k in range(-LIMIT, LIMIT + 1)]
                                    + [np.array([0, fmt.sign_mask, fmt.inf, fmt.inf | fmt.sign_mask], dtype=np.uint64)])
        ok = allowed(form, "observed", candidates, np.full(candidates.size, x[i]))
        missing = set(int(c) for c in candidates[ok]) - enumerated
        assert not missing, (name, hex(int(x[i])), [hex(m) for m in sorted(missing)])


@pytest.mark.parametrize("name", ["v_rcp_f64", "v_rsq_f64", "v_sqrt_f64"])
def test_incomplete_rows_hold_the_ends_and_the_nearest(name):
    form = FORMS[name]
    fmt = form.fmt
    x = np.array([0x4008000000000000, 0x3ff0000000000001, 0x000fffffffffffff], dtype=np.uint64)  # 3, 1 + ulp, a subnormal
    values, valid, complete = enumerate_allowed(form, "observed", x, limit=LIMIT)
    assert not np.any(complete)  # the 2^29-ulp bound allows millions of values
    xs = x.view(np.float64).astype(np.float64)
    with np.errstate(divide="ignore"):
        nearest = {"v_rcp_f64": 1 / xs, "v_sqrt_f64": np.sqrt(xs), "v_rsq_f64": None}[name]
    for i in range(x.size):
        row = values[i][valid[i]]
        lo, hi = row.min(), row.max()  # all results positive here: magnitude order = pattern order
        outward = np.array([lo - np.uint64(1), hi + np.uint64(1)], dtype=np.uint64)
        assert not np.any(allowed(form, "observed", outward, np.full(2, x[i])))
        if nearest is not None:  # numpy's correctly rounded 1/x and sqrt(x) are in the sample
            assert int(np.array([nearest[i]]).view(np.uint64)[0]) in set(int(v) for v in row)
        # the ends are about 2^-23 relative from the exact value
        span = (fmt.to_fraction(int(hi)) - fmt.to_fraction(int(lo))) / fmt.to_fraction(int(row[row.size // 2]))
        assert Fraction(2) ** -22 * Fraction(99, 100) < span < Fraction(2) ** -22 * Fraction(101, 100)


def test_nan_results_are_one_canonical_quiet_nan_and_limit_is_checked():
    form = FORMS["v_sqrt_f32"]
    x = np.array([0xBF800000, 0x7FC00001, 0xFF800000], dtype=np.uint64)  # -1, NaN, -inf
    values, valid, complete = enumerate_allowed(form, "observed", x)
    assert np.all(complete) and valid.sum() == 3
    assert set(int(v) for v in values[:, 0]) == {form.fmt.default_nan}
    with pytest.raises(UsageError):
        enumerate_allowed(form, "observed", x, limit=2)


@pytest.mark.parametrize("t,ftype", [("f32", np.float32), ("f16", np.float16)])
def test_sqrt_and_rsq_contracts_accept_numpy_results_and_reject_far_ones(t, ftype):
    """numpy's correctly rounded sqrt is allowed; a value 3 ulps away is not (1-ulp and 0.51-ulp
    bounds). rsq against the exact-rational nearest value."""
    rng = np.random.default_rng(21)
    utype = np.uint32 if t == "f32" else np.uint16
    x = (np.abs(rng.standard_normal(200)) * np.exp2(rng.integers(-10, 10, 200))).astype(ftype)
    x = x[(x > np.finfo(ftype).tiny) & np.isfinite(x)]
    xb = x.view(utype).astype(np.uint64)
    r = np.sqrt(x).view(utype).astype(np.uint64)
    sq = FORMS[f"v_sqrt_{t}"]
    assert np.all(allowed(sq, "observed", r, xb))
    assert not np.any(allowed(sq, "observed", r + np.uint64(3), xb))
    assert not np.any(allowed(sq, "observed", r - np.uint64(3), xb))
    rs = FORMS[f"v_rsq_{t}"]
    fmt = rs.fmt
    for xi in xb[:40]:
        xv = fmt.to_fraction(int(xi))
        # the nearest value to 1/sqrt(x): bisect on the pattern grid with exact squares
        lo, hi = 1, fmt.max_finite
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fmt.to_fraction(mid) ** 2 * xv <= 1:
                lo = mid
            else:
                hi = mid
        # 1/sqrt(x) lies in [lo, hi]; the nearer of the two is within half an ulp
        near = lo if (Fraction(1) / xv - fmt.to_fraction(lo) ** 2) < (fmt.to_fraction(hi) ** 2 - Fraction(1) / xv) else hi
        assert allowed(rs, "observed", np.array([near], dtype=np.uint64), np.array([xi]))[0], hex(int(xi))
        assert not allowed(rs, "observed", np.array([near + 3], dtype=np.uint64), np.array([xi]))[0], hex(int(xi))


# ---------------------------------------------------------------------------------------------
# the ulp readings, and the vectorised rsq/sqrt test against exact rationals

READINGS = ("exact", "correctly-rounded", "either")
ULP_FORMS = [n for n in CONTRACT_FORMS if not n.endswith("_f64")]  # the f64 bounds are relative


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("name", ULP_FORMS)
def test_each_reading_enumerates_exactly_what_allowed_accepts(name, reading):
    form = FORMS[name]
    fmt = form.fmt
    rng = np.random.default_rng(fmt.width + len(name) + len(reading))
    x = operands(fmt, rng, 40)
    values, valid, complete = enumerate_allowed(form, "observed", x, limit=LIMIT, rng=rng, reading=reading)
    assert np.all(complete) and np.all(valid[:, 0])
    for i in range(x.size):
        row = values[i][valid[i]]
        if fmt.is_nan(row[:1])[0]:
            continue
        candidates = np.unique(np.concatenate([_around(fmt, row, k) for k in range(-LIMIT, LIMIT + 1)]
                                              + [np.array([0, fmt.sign_mask, fmt.inf, fmt.inf | fmt.sign_mask],
                                                          dtype=np.uint64)]))
        ok = allowed(form, "observed", candidates, np.full(candidates.size, x[i]), reading=reading)
        assert set(int(c) for c in candidates[ok]) == set(int(v) for v in row), (name, reading, hex(int(x[i])))


def _rows(form, x, reading):
    values, valid, _ = enumerate_allowed(form, "observed", np.array(x, dtype=np.uint64), reading=reading)
    return [sorted(int(v) for v in values[i][valid[i]]) for i in range(len(x))]


def test_readings_differ_where_the_guide_says_and_either_is_their_union():
    rcp = FORMS["v_rcp_f32"]
    # rcp(3): exact {RD, RU}; correctly rounded RN = 0x3eaaaaab and one value either side
    assert _rows(rcp, [0x40400000], "exact") == [[0x3EAAAAAA, 0x3EAAAAAB]]
    assert _rows(rcp, [0x40400000], "correctly-rounded") == [[0x3EAAAAAA, 0x3EAAAAAB, 0x3EAAAAAC]]
    assert _rows(rcp, [0x40400000], "either") == [[0x3EAAAAAA, 0x3EAAAAAB, 0x3EAAAAAC]]
    # rcp(1) = 1 exactly: exact allows 1 - 2^-24, 1 - 2^-23 (one ulp of 1 is two steps below it) and
    # 1 + 2^-23; correctly rounded one value either side of 1
    assert _rows(rcp, [0x3F800000], "exact") == [[0x3F7FFFFE, 0x3F7FFFFF, 0x3F800000, 0x3F800001]]
    assert _rows(rcp, [0x3F800000], "correctly-rounded") == [[0x3F7FFFFF, 0x3F800000, 0x3F800001]]
    # -2^127: RN(1/x) = -2^-127 is subnormal; one value either side, and the flushed -0 (never +0)
    cr = _rows(rcp, [0xFF000000], "correctly-rounded")[0]
    assert cr == [0x80000000, 0x803FFFFF, 0x80400000, 0x80400001]
    # f16 with a 0.51-ulp bound: the correctly rounded reading allows RN alone, and an overflowing
    # RN (1/2^-24) is the infinity
    rcp16 = FORMS["v_rcp_f16"]
    assert _rows(rcp16, [0x0001], "correctly-rounded") == [[0x7C00]]
    assert _rows(rcp16, [0x4200], "correctly-rounded") == [[0x3555]]
    # the f64 relative bounds ignore the reading
    f64 = FORMS["v_rcp_f64"]
    x = np.array([0x4008000000000000], dtype=np.uint64)  # 3
    # around 1/3 in steps of 2^28 ulps: the 2^29-ulp bound's ends lie among them
    r = (np.array([1 / 3]).view(np.uint64) + np.arange(-4, 5) * (1 << 28)).astype(np.uint64)
    assert 0 < allowed(f64, "observed", r, np.repeat(x, r.size)).sum() < r.size
    assert all(np.array_equal(allowed(f64, "observed", r, np.repeat(x, r.size), reading=rd),
                              allowed(f64, "observed", r, np.repeat(x, r.size))) for rd in READINGS)
    with pytest.raises(UsageError):
        allowed(rcp, "observed", np.array([0], np.uint64), np.array([0], np.uint64), reading="faithful")


@pytest.mark.parametrize("name", ["v_rcp_f32", "v_sqrt_f32", "v_rsq_f32", "v_rcp_f16", "v_sqrt_f16", "v_rsq_f16"])
def test_union_of_the_readings_is_either(name):
    form = FORMS[name]
    x = operands(form.fmt, np.random.default_rng(3), 300)
    rows = {rd: _rows(form, x, rd) for rd in READINGS}
    for i in range(x.size):
        assert sorted(set(rows["exact"][i]) | set(rows["correctly-rounded"][i])) == rows["either"][i], hex(int(x[i]))


def _nearest_root(fmt, op: str, xv: Fraction) -> int:
    """RN of sqrt(x) or 1/sqrt(x) (positive, normal range) by bisection on the pattern grid with
    exact squares: the largest pattern whose value is at most e, then the nearer of it and its
    successor (ties cannot occur: e is a root of a non-square or a representable value)."""
    below = (lambda v: v * v <= xv) if op == "sqrt" else (lambda v: v * v * xv <= 1)
    lo, hi = 1, fmt.inf - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if below(fmt.to_fraction(mid)) else (lo, mid)
    a, b = fmt.to_fraction(lo), fmt.to_fraction(hi)
    if not below(b) and below(a):
        # compare e - a with b - e, i.e. e with the midpoint m: (sqrt) m^2 vs x, (rsq) m^2 x vs 1
        m = (a + b) / 2
        return lo if not below(m) else hi
    return hi if below(b) else lo


def _exact_root_reference(fmt, ulps, op: str, xv: Fraction, rv: Fraction) -> bool:
    """The exact reading in rationals, written independently of tilecheck.amdgpu.contract: the
    binade of e by a search over powers of four, then e in [r - t, r + t] by squares."""
    ge = (lambda v: xv >= v * v) if op == "sqrt" else (lambda v: v * v * xv <= 1)  # e >= v (v >= 0)
    k = 0
    while not ge(Fraction(2) ** k):
        k -= 1
    while ge(Fraction(2) ** (k + 1)):
        k += 1
    t = Fraction(ulps) * Fraction(2) ** (max(k, fmt.emin) - fmt.mantissa_bits)
    lo_ok = rv - t <= 0 or ge(rv - t)
    hi_ok = not ge(rv + t) or ((rv + t) ** 2 == xv if op == "sqrt" else (rv + t) ** 2 * xv == 1)
    return lo_ok and hi_ok


@pytest.mark.parametrize("name", ["v_sqrt_f32", "v_rsq_f32", "v_sqrt_f16", "v_rsq_f16"])
def test_vectorised_root_test_equals_exact_rationals(name):
    """The binary64 directed-rounding test of v_sqrt/v_rsq (exact reading) against rationals on
    edge and random operands, every candidate within 3 steps of RN(e)."""
    form = FORMS[name]
    fmt = form.fmt
    op = name.split("_")[1]
    c = form.variant("observed").contract
    rng = np.random.default_rng(len(name))
    n = 500 if fmt.width == 32 else 700
    mags = rng.integers(1, fmt.inf, n).astype(np.uint64)
    powers = np.arange(1, (1 << fmt.exponent_bits) - 1, dtype=np.uint64) << np.uint64(fmt.mantissa_bits)
    squares = np.array([fmt.from_fraction(Fraction(m * m)) for m in (3, 5, 7, 9, 11, 13, 255, 1023)], dtype=np.uint64)
    xs = np.concatenate([powers, powers | np.uint64(fmt.mantissa_mask), squares, mags,
                         np.array([1, fmt.mantissa_mask, fmt.min_normal, fmt.max_finite], dtype=np.uint64)])
    xs = xs[xs < np.uint64(fmt.inf)]  # the larger squares overflow f16
    if c.flush_inputs:
        xs = xs[xs >= np.uint64(fmt.min_normal)]
    r_all, x_all, want = [], [], []
    for xi in xs:
        xv = fmt.to_fraction(int(xi))
        rn = _nearest_root(fmt, op, xv)
        for d in range(-3, 4):
            r = rn + d
            if 0 < r < fmt.inf:
                r_all.append(r)
                x_all.append(int(xi))
                want.append(_exact_root_reference(fmt, c.ulp, op, xv, fmt.to_fraction(r)))
    got = allowed(form, "observed", np.array(r_all, np.uint64), np.array(x_all, np.uint64), reading="exact")
    bad = [(hex(x), hex(r)) for x, r, g, w in zip(x_all, r_all, got, want) if bool(g) != w]
    assert len(want) > 3000 and not bad, bad[:5]
    assert 0 < sum(want) < len(want)  # both verdicts occur among the candidates


@pytest.mark.parametrize("name", ["v_rcp_f32", "v_sqrt_f32", "v_rsq_f32", "v_rcp_f16", "v_sqrt_f16", "v_rsq_f16"])
def test_correctly_rounded_rows_are_the_values_around_numpys_nearest(name):
    """The correctly-rounded reading against a definition computed outside tilecheck: RN(e) by numpy
    (IEEE division and square root; for f16 computed in f32 and rounded once more, which is exact
    for these operations) or, for rsq, by exact-rational bisection; then the floor(k) values either
    side of it (k = 1 for the f32 forms and v_sqrt_f16, 0.51 for v_rcp_f16/v_rsq_f16)."""
    form = FORMS[name]
    fmt = form.fmt
    op = name.split("_")[1]
    ftype, utype = (np.float32, np.uint32) if fmt.width == 32 else (np.float16, np.uint16)
    rng = np.random.default_rng(11 + fmt.width)
    # operands whose results stay far inside the normal range; both signs for rcp
    xv = (rng.random(400) + 0.5) * np.exp2(rng.integers(-6, 7, 400))
    xv = xv * np.where(rng.random(400) < 0.5, -1, 1) if op == "rcp" else xv
    xs = xv.astype(ftype)
    xb = xs.view(utype).astype(np.uint64)
    with np.errstate(all="ignore"):
        if op == "rcp":
            rn = (np.float32(1) / xs.astype(np.float32)).astype(ftype).view(utype).astype(np.uint64)
        elif op == "sqrt":
            rn = np.sqrt(xs.astype(np.float32)).astype(ftype).view(utype).astype(np.uint64)
        else:
            rn = np.array([_nearest_root(fmt, "rsq", fmt.to_fraction(int(b))) for b in xb], dtype=np.uint64)
    k = int(np.floor(form.variant("observed").contract.ulp))
    rows = _rows(form, xb, "correctly-rounded")
    for i in range(xb.size):
        assert rows[i] == [int(rn[i]) + d for d in range(-k, k + 1)], (name, hex(int(xb[i])))
