"""The fast paths (binary32 via binary64, binary64 division by wrapped integer residual) must
give exactly the exact path's bits on edge-biased inputs, every rounding, with and without FTZ."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.model import fast, ops


def _edge_biased(fmt, n, rng):
    out = rng.integers(0, 1 << min(fmt.width, 63), n, dtype=np.uint64)
    if fmt.width == 64:
        out |= rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    one = fmt.from_fraction(1)
    specials = [0, 1, 2, fmt.mantissa_mask, fmt.min_normal, fmt.min_normal + 1, fmt.max_finite,
                fmt.max_finite - 1, fmt.inf, fmt.default_nan, fmt.inf | 1, one, one + 1, one - 1,
                fmt.from_fraction(3), fmt.from_fraction(2)]
    specials = np.array(specials + [s | fmt.sign_mask for s in specials], dtype=np.uint64)
    pick = rng.random(n) < 0.3
    out[pick] = specials[rng.integers(0, specials.size, int(pick.sum()))]
    # exponents from the whole range, so quotients over- and underflow
    pick = rng.random(n) < 0.3
    exps = rng.integers(0, 1 << fmt.exponent_bits, int(pick.sum()), dtype=np.uint64)
    out[pick] = (out[pick] & np.uint64(fmt.sign_mask | fmt.mantissa_mask)) | (exps << np.uint64(fmt.mantissa_bits))
    return out


CASES = [(f, op, r, ftz) for f in ("f32", "f64") for op in ("div", "rcp", "sqrt", "add", "sub", "mul", "fma")
         for r in ("rn", "rz", "rm", "rp")
         for ftz in (False, True)
         if fast.applicable(op, get_format(f), ops.Mode(r, ftz, "after"))]


@pytest.mark.parametrize("fmt_name,op,rounding,ftz", CASES)
def test_fast_path_equals_exact_path(fmt_name, op, rounding, ftz):
    fmt = get_format(fmt_name)
    mode = ops.Mode(rounding, ftz, "after")
    rng = np.random.default_rng(hash((fmt_name, op, rounding, ftz)) & 0xFFFF)
    operands = [_edge_biased(fmt, 40_000, rng) for _ in range(ops.ARITY[op])]
    for rule in (ops.NanRule.ieee(fmt), ops.NanRule(False, fmt.canonical_nan, fixed=fmt.canonical_nan)):
        want = ops.apply(np, op, fmt, operands, mode, rule)
        got = fast.block(np, op, fmt, operands, mode, rule).astype(np.uint64)
        bad = np.nonzero(want != got)[0]
        assert bad.size == 0, (f"{op}.{rounding}.{fmt_name}: first mismatch inputs "
                               f"{[hex(int(o[bad[0]])) for o in operands]} exact {int(want[bad[0]]):#x} "
                               f"fast {int(got[bad[0]]):#x}")


def test_fast_path_coverage_is_what_we_think():
    # f32 div/rcp/sqrt x 4 roundings x ftz; f64 div/rcp x 4 roundings; f32 add/sub/mul/fma rn x ftz
    assert len(CASES) == 8 * 3 + 8 + 4 * 2
    f32, f64 = get_format("f32"), get_format("f64")
    assert fast.applicable("div", f32, ops.Mode("rz", True, "after"))
    assert not fast.applicable("div", f32, ops.Mode("rz", True, "before"))
    assert fast.applicable("div", f64, ops.Mode("rp"))
    assert not fast.applicable("sqrt", f64, ops.Mode("rp"))
    assert fast.applicable("add", f32, ops.Mode("rn"))
    assert not fast.applicable("add", f32, ops.Mode("rz"))
