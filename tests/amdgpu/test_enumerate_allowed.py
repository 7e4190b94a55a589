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
