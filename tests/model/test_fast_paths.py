"""The fast paths (binary32 via binary64, binary64 division by wrapped integer residual, the
binary16/bfloat16 path compiled and in numpy passes) must give exactly the exact path's bits on
edge-biased inputs, every rounding, with and without FTZ."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.model import fast, narrowjit, ops


def _seed(*key) -> int:
    """A seed that is the same in every process (``hash`` of a str is randomised per process, so a
    failure seeded from it would not reproduce)."""
    return zlib.crc32(repr(key).encode())


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


CASES = [(f, op, r, ftz) for f in ("f16", "bf16", "f32", "f64") for op in ("div", "rcp", "sqrt", "add", "sub", "mul", "fma")
         for r in ("rn", "rz", "rm", "rp")
         for ftz in (False, True)
         if fast.applicable(op, get_format(f), ops.Mode(r, ftz, "after"))]


@pytest.mark.parametrize("fmt_name,op,rounding,ftz", CASES)
def test_fast_path_equals_exact_path(fmt_name, op, rounding, ftz):
    fmt = get_format(fmt_name)
    mode = ops.Mode(rounding, ftz, "after")
    rng = np.random.default_rng(_seed(fmt_name, op, rounding, ftz))
    operands = [_edge_biased(fmt, 40_000, rng) for _ in range(ops.ARITY[op])]
    for rule in (ops.NanRule.ieee(fmt), ops.NanRule(False, fmt.canonical_nan, fixed=fmt.canonical_nan)):
        want = ops.apply(np, op, fmt, operands, mode, rule)
        got = fast.block(np, op, fmt, operands, mode, rule).astype(np.uint64)
        bad = np.nonzero(want != got)[0]
        assert bad.size == 0, (f"{op}.{rounding}.{fmt_name}: first mismatch inputs "
                               f"{[hex(int(o[bad[0]])) for o in operands]} exact {int(want[bad[0]]):#x} "
                               f"fast {int(got[bad[0]]):#x}")


def test_fast_path_coverage_is_what_we_think():
    # f32 div/rcp/sqrt x 4 roundings x ftz; f64 div/rcp x 4 roundings; f32 add/sub/mul/fma rn x ftz;
    # f16/bf16 add/sub/mul/div/rcp/sqrt x 4 roundings x ftz
    assert len(CASES) == 8 * 3 + 8 + 4 * 2 + 2 * 6 * 8
    f32, f64 = get_format("f32"), get_format("f64")
    assert fast.applicable("div", f32, ops.Mode("rz", True, "after"))
    assert not fast.applicable("div", f32, ops.Mode("rz", True, "before"))
    assert fast.applicable("div", f64, ops.Mode("rp"))
    assert not fast.applicable("sqrt", f64, ops.Mode("rp"))
    assert fast.applicable("add", f32, ops.Mode("rn"))
    assert not fast.applicable("add", f32, ops.Mode("rz"))


@pytest.mark.parametrize("fmt_name", ("f16", "bf16"))
def test_compiled_half_path_equals_numpy_half_path(fmt_name):
    # numpy's half path (kept for CuPy arrays) and the compiled one: the same bits, every rule
    fmt = get_format(fmt_name)
    rng = np.random.default_rng(len(fmt_name))
    a = _edge_biased(fmt, 30_000, rng).astype(np.uint16)
    b = _edge_biased(fmt, 30_000, rng).astype(np.uint16)
    b[:5000] = a[:5000] ^ rng.integers(0, 4, 5000).astype(np.uint16)  # near cancellation
    b[5000:10000] = (a[5000:10000] ^ np.uint16(0x8000)) + rng.integers(0, 3, 5000).astype(np.uint16)
    rules = (ops.NanRule.ieee(fmt), ops.NanRule(False, fmt.canonical_nan, fixed=fmt.canonical_nan),
             ops.NanRule(True, fmt.canonical_nan), ops.NanRule(False, fmt.default_nan))
    for op in ("sqrt", "rcp", "add", "sub", "mul", "div"):
        args = [a] if op in ("sqrt", "rcp") else [a, b]
        for rounding in ("rn", "rz", "rm", "rp"):
            for mode in (ops.Mode(rounding), ops.Mode(rounding, True), ops.Mode(rounding, ftz_out=True)):
                for rule in rules:
                    with np.errstate(all="ignore"):
                        want = fast.half_block(np, op, fmt, args, mode, rule)
                    got = narrowjit.block(op, fmt, args, mode, rule)
                    bad = np.nonzero(want != got)[0]
                    assert bad.size == 0, (op, rounding, mode, rule, [hex(int(x[bad[0]])) for x in args],
                                           hex(int(want[bad[0]])), hex(int(got[bad[0]])))


def test_compiled_f32_path_equals_numpy_f32_path():
    fmt = get_format("f32")
    rng = np.random.default_rng(32)
    a = _edge_biased(fmt, 30_000, rng).astype(np.uint32)
    b = _edge_biased(fmt, 30_000, rng).astype(np.uint32)
    rules = (ops.NanRule.ieee(fmt), ops.NanRule(False, fmt.canonical_nan, fixed=fmt.canonical_nan),
             ops.NanRule(True, fmt.canonical_nan), ops.NanRule(False, fmt.default_nan))
    for op in ("sqrt", "rcp", "div"):
        args = [a] if op != "div" else [a, b]
        for rounding in ("rn", "rz", "rm", "rp"):
            for mode in (ops.Mode(rounding), ops.Mode(rounding, True), ops.Mode(rounding, ftz_out=True),
                         ops.Mode(rounding, ftz_in=True)):
                for rule in rules:
                    with np.errstate(all="ignore"):
                        want = fast.f32_block(np, op, fmt, args, mode, rule)
                    got = narrowjit.f32_block(op, args, mode, rule)
                    bad = np.nonzero(want != got)[0]
                    assert bad.size == 0, (op, rounding, mode, rule, [hex(int(x[bad[0]])) for x in args],
                                           hex(int(want[bad[0]])), hex(int(got[bad[0]])))
