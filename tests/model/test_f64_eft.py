"""binary64 fast paths -- the numpy ones (error-free transformations for add/sub/mul/fma, the
integer residual for div/rcp) and the compiled kernels of :mod:`tilecheck.model.jit` -- against the
exact path and against MPFR, on random, constructed hard and edge inputs, and mutants of those
paths (a step the wrong way, no rounding to odd, a wrong rounding of the native operation, a
contracted ``a*b + c``) that the same comparisons must catch."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import numba
import numpy as np
import pytest

import tilecheck
from tilecheck.formats import get_format
from tilecheck.model import eft, fast, jit, ops

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


PATHS = ("numpy", "jit")


def _fast(op, mode, operands, xp=np, path="numpy", rule=None):
    rule = ops.NanRule.ieee(F64) if rule is None else rule
    if path == "jit":
        return jit.block(np, op, F64, operands, mode, rule)
    if op in eft.OPS:
        return eft.block(xp, op, F64, operands, mode, rule)
    return fast.block(xp, op, F64, operands, mode, rule)


def _mismatches(op: str, rounding: str, n: int = 6000, xp=np, path="numpy", rule=None) -> int:
    """Lanes where the fast path differs from the exact path, over every input kind."""
    mode = ops.Mode(rounding)
    rule = ops.NanRule.ieee(F64) if rule is None else rule
    bad = 0
    for i, kind in enumerate(KINDS):
        operands = _inputs(op, kind, n, 1000 + i)
        want = ops.apply(np, op, F64, operands, mode, rule)
        got = _fast(op, mode, operands, xp, path, rule)
        bad += int(np.count_nonzero(want != got))
    return bad


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma", "div", "rcp"))
def test_fast_f64_equals_exact_path(op, rounding, path):
    assert eft.applicable(op, F64, ops.Mode(rounding)) or fast.applicable(op, F64, ops.Mode(rounding))
    assert jit.applicable(np, op, F64, ops.Mode(rounding))
    assert _mismatches(op, rounding, 20_000, path=path) == 0


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "fma", "div", "rcp"))
def test_fast_f64_equals_mpfr(op, rounding, path):
    """The independent oracle (MPFR through gmpy2), on every input kind."""
    from tilecheck.oracle.mpfr import mpfr_op

    mode = ops.Mode(rounding)
    for i, kind in enumerate(KINDS):
        operands = _inputs(op, kind, 150, 7 + i)
        got = _fast(op, mode, operands, path=path)
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
    for op in jit.OPS:
        assert not jit.applicable(np, op, F64, ops.Mode("rz", True))
        assert not jit.applicable(np, op, F64, ops.Mode("rn", ftz_out=True))
        assert not jit.applicable(np, op, get_format("f32"), ops.Mode("rn"))
        # other array namespaces (CuPy) keep the numpy-style paths
        assert not jit.applicable(_Namespace(), op, F64, ops.Mode("rn"))


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


# ---------------------------------------------------------------------------------------------
# the compiled kernels (tilecheck.model.jit): NaN rules, fallback lanes, threads, compile options,
# a missing cache, and mutants compiled from the kernels' own source


@pytest.mark.parametrize("rule", [ops.NanRule(True, F64.default_nan), ops.NanRule(False, 0xFFF8000000000001),
                                  ops.NanRule(False, 0x7FFFFFFFFFFFFFFF, fixed=0x7FFFFFFFFFFFFFFF)],
                         ids=["propagate", "invalid", "fixed"])
@pytest.mark.parametrize("op", jit.OPS)
def test_jit_nan_rules_equal_exact_path(op, rule):
    for rounding in ROUNDINGS:
        operands = _inputs(op, "edge", 4000, 11)
        want = ops.apply(np, op, F64, operands, ops.Mode(rounding), rule)
        assert np.array_equal(want, _fast(op, ops.Mode(rounding), operands, path="jit", rule=rule)), (op, rounding)


def test_jit_fallback_lanes_take_the_exact_path():
    """fma with subnormal results near a comparable c: the kernel flags lanes it cannot do."""
    rng = np.random.default_rng(3)
    n = 4000
    a = _scaled(rng, n, -1030, -1000)
    b = _scaled(rng, n, 0, 0)
    c = rng.integers(0, 1 << 52, n, dtype=U) | _signs(rng, n)  # subnormal
    mode = ops.Mode("rz")
    out, fail = np.empty(n, np.int64), np.zeros(n, bool)
    nfail = jit._fma_kernel(a.view(np.int64), b.view(np.int64), c.view(np.int64), out, fail,
                            jit.ROUNDING_CODES["rz"], *jit._rule_args(ops.NanRule.ieee(F64)))
    assert nfail > 0 and nfail == int(fail.sum())
    want = ops.apply(np, "fma", F64, [a, b, c], mode, ops.NanRule.ieee(F64))
    assert np.array_equal(want, _fast("fma", mode, [a, b, c], path="jit"))


@pytest.mark.parametrize("op", ("add", "fma"))
def test_jit_through_the_api_on_threads_and_broadcast(monkeypatch, op):
    """ieee_op splits large inputs over threads in kernel-sized blocks; scalars broadcast."""
    monkeypatch.setenv("TILECHECK_THREADS", "2")
    n = 2 * jit.CHUNK + 7
    operands = [_edge(np.random.default_rng(20 + i), n) for i in range(ops.ARITY[op])]
    want = ops.apply(np, op, F64, operands, ops.Mode("rm"), ops.NanRule.ieee(F64))
    assert np.array_equal(want, tilecheck.ieee_op(op, "f64", "rm", *operands))
    scalar = [0x3FF0000000000001] + operands[1:]
    wide = [np.full(n, 0x3FF0000000000001, dtype=U)] + operands[1:]
    want = ops.apply(np, op, F64, wide, ops.Mode("rp"), ops.NanRule.ieee(F64))
    assert np.array_equal(want, tilecheck.ieee_op(op, "f64", "rp", *scalar))


def test_jit_one_compiled_kernel_per_operation():
    """Roundings, NaN rules and add/sub, div/rcp share one compiled specialisation per kernel."""
    rules = [None, ops.NanRule(False, 0x7FF8000000000001, fixed=0x7FF8000000000001)]
    for op in jit.OPS:
        operands = [np.arange(4, dtype=U)] * ops.ARITY[op]
        for rounding in ROUNDINGS:
            for rule in rules:
                _fast(op, ops.Mode(rounding), operands, path="jit", rule=rule)
    for kernel in (jit._add_kernel, jit._mul_kernel, jit._div_kernel, jit._fma_kernel):
        assert len(kernel.signatures) == 1, kernel.signatures


def _contraction_probe(a, b, c):
    return a * b + c


def test_jit_options_do_not_contract():
    """``a*b + c`` with a = b = 1 + 2**-30, c = -(1 + 2**-29): 0 when rounded twice, 2**-60 when
    fused. The kernels' options must give 0 (the same options with contraction allowed give
    2**-60, so the probe can tell)."""
    args = (1 + 2.0 ** -30, 1 + 2.0 ** -30, -(1 + 2.0 ** -29))
    assert numba.njit(**jit.OPTIONS)(_contraction_probe)(*args) == 0.0
    assert numba.njit(**jit.OPTIONS, fastmath={"contract"})(_contraction_probe)(*args) == 2.0 ** -60
    for kernel in (jit._add_kernel, jit._mul_kernel, jit._div_kernel, jit._fma_kernel, jit._step_mag):
        assert not kernel.targetoptions.get("fastmath")


@pytest.mark.parametrize("setup,env", [
    ("import numba.core.caching as c\n(getattr(c, 'CacheImpl', None) or c._CacheImpl)._locator_classes = []\n", {}),
    ("", {"NUMBA_DISABLE_JIT": "1"}),
], ids=["no-cache-location", "jit-disabled"])
def test_jit_without_a_cache_or_without_compiling(setup, env):
    """No usable Numba cache location (a read-only install without a user cache): the kernels
    compile in the process instead of failing. With Numba's JIT disabled the numpy paths serve.
    Both for the binary64 and the binary16 kernels."""
    code = setup + ("import tilecheck\n"
                    "print(hex(tilecheck.ieee_op('fma', 'f64', 'rz', 0x3FF0000000000001, 0x3FF0000000000001, 0)),\n"
                    "      hex(tilecheck.ieee_op('add', 'f16', 'rz', 0x3C00, 0x3C01)))")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}, **env}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # (1 + 2**-52)**2 and 1 + (1 + 2**-10) toward zero (binary16 has compiled kernels too)
    assert done.stdout.split() == ["0x3ff0000000000002", "0x4000"]


def _mutant(monkeypatch, name: str, old: str | None = None, new: str = ""):
    """Replace kernel ``name`` of :mod:`jit` by one compiled from its source with ``old`` -> ``new``
    (recompiled as it is, against the module's current functions, when ``old`` is None)."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(getattr(jit, name).py_func))
    if old is not None:
        assert source.count(old) == 1, f"{old!r} not in {name}"
        source = source.replace(old, new)
    namespace = dict(vars(jit))
    exec(source.replace("@_jit\n", ""), namespace)  # noqa: S102 - test-only mutant
    monkeypatch.setattr(jit, name, numba.njit(**jit.OPTIONS)(namespace[name]))


JIT_MUTANTS = [
    # (kernel, original, mutation, op, roundings)
    ("_step_mag", "(rounding == _RZ) & (sm < 0)", "(rounding == _RZ) & (sm > 0)", "mul", ("rz",)),
    ("_step_mag", "(rounding == _RP) & (sv > 0)", "(rounding == _RM) & (sv > 0)", "div", ("rm", "rp")),
    ("_step_mag", "bits + (sm if move else 0)", "bits - (sm if move else 0)", "fma", ("rz", "rm", "rp")),
    ("_add_kernel", "e = (x - (s - bb)) + (y - bb)", "e = (x - (s - bb)) - (y - bb)", "sub", ("rz", "rm", "rp")),
    ("_add_kernel", "bits = (ai | bn) & _SIGN", "bits = (ai & bn) & _SIGN", "add", ("rm",)),
    ("_mul_kernel", "_fma_intrinsic(ax, ay, -(abs(p) * up))", "_fma_intrinsic(ax, ay, -abs(p))", "mul", ("rz", "rp")),
    ("_div_kernel", "-(abs(q) * up), abs(y), abs(x) * up", "-abs(q), abs(y), abs(x)", "div", ("rz", "rm")),
    ("_fma_kernel", "s = _fma_intrinsic(x, y, z)", "s = x * y + z", "fma", ("rn",)),
    ("_fma_kernel", "sv = (-1 if (ai ^ bi) < 0 else 1) if s == z", "sv = (1 if (ai ^ bi) < 0 else -1) if s == z",
     "fma", ("rz", "rm", "rp")),
]


@pytest.mark.parametrize("kernel,old,new,op,roundings", JIT_MUTANTS,
                         ids=[f"{m[0]}-{m[3]}-{i}" for i, m in enumerate(JIT_MUTANTS)])
def test_jit_mutant_is_caught(monkeypatch, kernel, old, new, op, roundings):
    """Each plausible rounding bug in a kernel, compiled from the kernel's own source, must make
    the comparison with the exact path fail in every rounding mode it affects."""
    _mutant(monkeypatch, kernel, old, new)
    if kernel == "_step_mag":  # the op's kernel calls it (mul, div through _step_product): recompile those
        callers = {"mul": ("_step_product", "_mul_kernel"), "div": ("_step_product", "_div_kernel"),
                   "fma": ("_fma_kernel",)}[op]
        for caller in callers:
            _mutant(monkeypatch, caller)
    for rounding in roundings:
        assert _mismatches(op, rounding, 2000, path="jit") > 0, rounding
