"""binary64 fast paths (error-free transformations for add/sub/mul/fma, the integer residual for
div/rcp) against the exact path and against MPFR, on random, constructed hard and edge inputs --
and mutants of those paths (a step the wrong way, no rounding to odd, a wrong rounding of the native
operation) that the same comparisons must catch."""

from __future__ import annotations

import types

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.model import eft, fast, ops

F64 = get_format("f64")
ROUNDINGS = ("rn", "rz", "rm", "rp")
U = np.uint64


def _bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).view(U)


def _signs(rng, n):
    return rng.integers(0, 2, n, dtype=U) << U(63)


def _scaled(rng, n, lo=-60, hi=60):
    exps = rng.integers(1023 + lo, 1023 + hi + 1, n).astype(U)
    return (exps << U(52)) | rng.integers(0, 1 << 52, n, dtype=U) | _signs(rng, n)


def _edge(rng, n):
    out = rng.integers(0, 1 << 63, n, dtype=U) | _signs(rng, n)
    one = F64.from_fraction(1)
    specials = [0, 1, 2, F64.mantissa_mask, F64.min_normal, F64.min_normal + 1, F64.max_finite,
                F64.max_finite - 1, F64.inf, F64.default_nan, F64.inf | 1, one, one + 1, one - 1,
                F64.from_fraction(3), 0x7FE0000000000000, 0x0010000000000001, 0x000FFFFFFFFFFFFF]
    specials = np.array(specials + [s | F64.sign_mask for s in specials], dtype=U)
    pick = rng.random(n) < 0.3
    out[pick] = specials[rng.integers(0, specials.size, int(pick.sum()))]
    return out


def _few_bits(rng, n, exps):
    """Significands with at most 20 low bits set (exact products with short tails)."""
    frac = rng.integers(0, 1 << 20, n, dtype=U) << U(int(rng.integers(0, 33)))
    return ((exps.astype(U) + U(1023)) << U(52)) | (frac & U(F64.mantissa_mask)) | _signs(rng, n)


def _hard(op: str, rng, n):
    """Inputs whose exact results lie on or next to rounding boundaries."""
    ea = rng.integers(-200, 200, n)
    a = _few_bits(rng, n, ea)
    # 1.5 * 2**k times an odd significand: the product is a tie to the bit
    tie = rng.random(n) < 0.25
    a[tie] = ((ea[tie].astype(U) + U(1023)) << U(52)) | U(1 << 51)
    b = _few_bits(rng, n, rng.integers(-200, 200, n))
    fa, fb = a.view(np.float64), b.view(np.float64)
    with np.errstate(all="ignore"):
        if op in ("add", "sub"):
            # b a half, a quarter or one and a half units of a (ties and near-ties), either sign
            k = np.array([0.5, 0.25, 0.75, 1.5, 1.0 + 2.0 ** -40, 0.5 - 2.0 ** -45])[rng.integers(0, 6, n)]
            fb = np.spacing(np.abs(fa)) * k * np.where(rng.random(n) < 0.5, -1.0, 1.0)
            return [a, _bits(fb)]
        if op in ("mul", "div"):
            return [a, b]
        if op == "rcp":
            return [b]
        uh = fa * fb
        ulp = np.spacing(np.abs(uh))
        kind = rng.integers(0, 5, n)
        k = np.array([0.5, 0.25, 1.5, 0.5 + 2.0 ** -30, 0.5 - 2.0 ** -30])[rng.integers(0, 5, n)]
        c = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                      [ulp * k * np.sign(rng.random(n) - 0.5),  # near a tie of uh
                       -uh,  # cancellation: the result is the product's tail
                       -uh + ulp * k,  # cancellation plus a tie-sized rest
                       np.ldexp(uh, -rng.integers(54, 120, n))],  # a far smaller addend
                      np.ldexp(fa, rng.integers(-60, 60, n)))  # unrelated
        return [a, b, _bits(c)]


def _inputs(op: str, kind: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    arity = ops.ARITY[op]
    if kind == "hard":
        return _hard(op, rng, n)
    if kind == "edge":
        return [_edge(rng, n) for _ in range(arity)]
    if kind == "wide":  # exponents over the whole range: over- and underflow
        return [_scaled(rng, n, -1022, 1023) for _ in range(arity)]
    if kind == "tiny":  # results near and below the subnormal boundary
        return [_scaled(rng, n, -540, -480) for _ in range(arity)]
    return [_scaled(rng, n) for _ in range(arity)]


KINDS = ("scaled", "hard", "edge", "wide", "tiny")


def _fast(op, mode, operands, xp=np):
    rule = ops.NanRule.ieee(F64)
    if op in eft.OPS:
        return eft.block(xp, op, F64, operands, mode, rule)
    return fast.block(xp, op, F64, operands, mode, rule)


def _mismatches(op: str, rounding: str, n: int = 6000, xp=np) -> int:
    """Lanes where the fast path differs from the exact path, over every input kind."""
    mode = ops.Mode(rounding)
    rule = ops.NanRule.ieee(F64)
    bad = 0
    for i, kind in enumerate(KINDS):
        operands = _inputs(op, kind, n, 1000 + i)
        want = ops.apply(np, op, F64, operands, mode, rule)
        got = _fast(op, mode, operands, xp)
        bad += int(np.count_nonzero(want != got))
    return bad


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma", "div", "rcp"))
def test_fast_f64_equals_exact_path(op, rounding):
    assert eft.applicable(op, F64, ops.Mode(rounding)) or fast.applicable(op, F64, ops.Mode(rounding))
    assert _mismatches(op, rounding, 20_000) == 0


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma", "div"))
def test_fast_f64_equals_mpfr(op, rounding):
    """The independent oracle (MPFR through gmpy2), on every input kind."""
    from tilecheck.oracle.mpfr import mpfr_op

    mode = ops.Mode(rounding)
    for i, kind in enumerate(KINDS):
        operands = _inputs(op, kind, 150, 7 + i)
        got = _fast(op, mode, operands)
        for j in range(got.size):
            args = [int(o[j]) for o in operands]
            want = mpfr_op(op, "f64", rounding, *args)
            g = int(got[j])
            if F64.is_nan(np.uint64(g)) and F64.is_nan(np.uint64(want)):
                continue
            assert g == want, f"{op}.{rounding}.f64 {[hex(x) for x in args]}: fast {g:#x}, MPFR {want:#x} ({kind})"


def test_flushing_modes_take_the_exact_path():
    assert not eft.applicable("fma", F64, ops.Mode("rn", True))
    assert not eft.applicable("add", get_format("f32"), ops.Mode("rn"))
    assert eft.applicable("fma", F64, ops.Mode("rz"))


# ---------------------------------------------------------------------------------------------
# mutants: each is a plausible rounding bug; the comparisons above must see it


def _reverse_value_steps(monkeypatch):
    step_value = eft._step_value
    monkeypatch.setattr(eft, "_step_value", lambda xp, bits, pos, neg, r, n: step_value(xp, bits, neg, pos, r, n))


def _reverse_residual_sign(monkeypatch):
    step_float = eft._step_by_float
    monkeypatch.setattr(eft, "_step_by_float", lambda xp, s, e, r, n: step_float(xp, s, -e, r, n))


class _Namespace(types.SimpleNamespace):
    """numpy with some functions replaced."""

    def __getattr__(self, name):
        return getattr(np, name)


def _swapped_comparisons():
    return _Namespace(greater=np.less, less=np.greater)


def _rounding_toward_zero(op):
    """A native operation that rounds toward zero instead of to nearest (through the exact path)."""

    def native(x, y, out=None, **kw):
        bits = ops.apply(np, op, F64, [x.view(U), y.view(U)], ops.Mode("rz"), ops.NanRule.ieee(F64))
        out[...] = bits.view(np.float64)
        return out

    return native


# (mutant, op, rounding): every directed binary64 path goes through one of the two steps
STEP_MUTANTS = ([(_reverse_residual_sign, op, r) for op in ("add", "sub", "fma") for r in ("rz", "rm", "rp")]
                + [(_reverse_value_steps, "mul", r) for r in ("rz", "rm", "rp")]
                + [(_reverse_value_steps, op, r) for op in ("add", "sub", "fma") for r in ("rm", "rp")])


@pytest.mark.parametrize("mutant,op,rounding", STEP_MUTANTS)
def test_mutant_directed_step_reversed_is_caught(monkeypatch, mutant, op, rounding):
    mutant(monkeypatch)
    assert _mismatches(op, rounding, 2000) > 0


def test_mutant_fma_without_round_to_odd_is_caught(monkeypatch):
    """Round to nearest needs the rounding to odd (double rounding otherwise). Directed modes
    depend on it only when ``th + RN(tl + ul)`` happens to be exact while ``tl + ul`` is not."""
    monkeypatch.setattr(eft, "_round_to_odd", lambda xp, s1, s2, nz, n: None)
    assert _mismatches("fma", "rn", 2000) > 0


@pytest.mark.parametrize("op,name", [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("div", "divide")])
def test_mutant_native_rounding_toward_zero_is_caught(op, name):
    xp = _Namespace(**{name: _rounding_toward_zero(op)})
    assert _mismatches(op, "rn", 2000, xp=xp) > 0


@pytest.mark.parametrize("rounding", ("rz", "rm", "rp"))
def test_mutant_division_step_reversed_is_caught(rounding):
    assert _mismatches("div", rounding, 2000, xp=_swapped_comparisons()) > 0


@pytest.mark.parametrize("fmt_name", ("f16", "bf16"))
@pytest.mark.parametrize("op", fast.HALF_OPS)
def test_half_fast_path_equals_exact_path(fmt_name, op):
    """binary16/bfloat16 through float64 (every mode, with and without .ftz) = the exact path."""
    fmt = get_format(fmt_name)
    rng = np.random.default_rng(len(op) * 7 + len(fmt_name))
    operands = [rng.integers(0, 1 << 16, 30_000, dtype=U) for _ in range(ops.ARITY[op])]
    for rounding in ROUNDINGS:
        for ftz in (False, True):
            mode = ops.Mode(rounding, ftz)
            assert fast.applicable(op, fmt, mode)
            want = ops.apply(np, op, fmt, operands, mode, ops.NanRule.ieee(fmt))
            got = fast.block(np, op, fmt, operands, mode, ops.NanRule.ieee(fmt)).astype(U)
            assert np.array_equal(want, got), f"{op}.{rounding}.{fmt_name} ftz={ftz}"
