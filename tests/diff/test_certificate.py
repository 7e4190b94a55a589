"""The certificate of correct rounding (tilecheck.diff.certificate, compiled in
tilecheck.diff.certkernels): it accepts the model's results, rejects every result one unit away (and
results of the wrong mode), handles specials, subnormals, .ftz under both tininess readings, input-
or output-only flushing and .sat, agrees with the exact integer path on every binary16/bfloat16
input of the unary operations and with MPFR on samples, agrees with its numpy implementation on any
result, and judges exhaustive sweeps through the ``reference`` backend."""

from __future__ import annotations

import ast
import pathlib
import zlib

import numpy as np
import pytest

import tilecheck
from tilecheck import cpus
from tilecheck.diff import backends, certificate, certkernels
from tilecheck.formats import get_format
from tilecheck.model import api, ops


def _seed(*key) -> int:
    """A seed that is the same in every process (``hash`` of a str is randomised per process, so a
    failure seeded from it would not reproduce)."""
    return zlib.crc32(repr(key).encode())


CASES = [(fmt, op) for fmt, ops in certificate.OPS.items() for op in ops]
DTYPE = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32}


def _specials(fmt):
    e, m = certificate.FORMATS[fmt]
    w = 1 + e + m
    inf, one = ((1 << e) - 1) << m, ((1 << (e - 1)) - 1) << m
    vals = [0, 1, 2, (1 << m) - 1, 1 << m, (1 << m) + 1, inf - 1, inf - 2, inf, inf | 1, inf | (1 << (m - 1)),
            one, one + 1, one - 1, one + (1 << (m - 1)), 2 << m, 3 << m]
    return np.array(vals + [v | (1 << (w - 1)) for v in vals], dtype=np.uint64)


def _inputs(fmt, op, n, seed):
    rng = np.random.default_rng(seed)
    arity = certkernels.ARITY[op]
    w = WIDTH[fmt]
    out = []
    for _ in range(arity):
        x = rng.integers(0, 1 << w, n, dtype=np.uint64)
        pick = rng.random(n) < 0.2
        sp = _specials(fmt)
        x[pick] = sp[rng.integers(0, sp.size, int(pick.sum()))]
        # subnormal and near-boundary exponents
        pick = rng.random(n) < 0.2
        x[pick] &= np.uint64((1 << (w - 1)) | ((1 << certificate.FORMATS[fmt][1]) * 4 - 1))
        out.append(x.astype(DTYPE[fmt]))
    return out


def _is_nan(fmt, bits):
    e, m = certificate.FORMATS[fmt]
    mag = bits.astype(np.uint64) & np.uint64((1 << (e + m)) - 1)
    return mag > np.uint64(((1 << e) - 1) << m)


def _neighbours(fmt, got):
    """Results one unit below and above ``got`` (bit patterns, wrapping)."""
    mask = np.uint64((1 << WIDTH[fmt]) - 1)
    return [((got.astype(np.int64) + d).astype(np.uint64) & mask).astype(DTYPE[fmt]) for d in (-1, 1)]


def _assert_judges(fmt, op, rounding, operands, got, **options):
    """The certificate accepts ``got`` and rejects both neighbours (NaN for NaN aside)."""
    ok = certificate.check(op, fmt, rounding, got, *operands, **options)
    bad = np.nonzero(~ok)[0]
    assert bad.size == 0, (f"{op}.{rounding}.{fmt} {options}: rejects the model at "
                           f"{[hex(int(o[bad[0]])) for o in operands]} -> {int(got[bad[0]]):#x}")
    for wrong in _neighbours(fmt, got):
        still = certificate.check(op, fmt, rounding, wrong, *operands, **options)
        # a neighbour is never right, except NaN for NaN (any NaN bits under this policy)
        sneaky = still & ~(_is_nan(fmt, wrong) & _is_nan(fmt, got))
        assert not sneaky.any(), (f"{op}.{rounding}.{fmt} {options}: accepts {int(wrong[np.argmax(sneaky)]):#x} at "
                                  f"{[hex(int(o[np.argmax(sneaky)])) for o in operands]}")


@pytest.mark.parametrize("rounding", ("rn", "rz", "rm", "rp"))
@pytest.mark.parametrize("fmt,op", CASES)
def test_accepts_the_model_and_rejects_neighbours(fmt, op, rounding):
    # every op kind: a result one unit off is caught, whatever the mode and flushing
    for ftz, tininess in ((False, "after"), (True, "after"), (True, "before")):
        operands = _inputs(fmt, op, 8_000, _seed(fmt, op, rounding, ftz, tininess))
        got = tilecheck.ieee_op(op, fmt, rounding, *operands, ftz=ftz, tininess=tininess)
        _assert_judges(fmt, op, rounding, operands, got, ftz=ftz, tininess=tininess)


@pytest.mark.parametrize("fmt", ("f16", "bf16"))
def test_every_unary_input_against_the_exact_path(fmt):
    # all 2**16 inputs, every mode, flushing and tininess: the exact integer path's result is
    # accepted and its neighbours are not
    f = get_format(fmt)
    a = np.arange(1 << 16, dtype=np.uint64)
    for op in ("sqrt", "rcp"):
        for rounding in ("rn", "rz", "rm", "rp"):
            for ftz, tininess in ((False, "after"), (True, "after"), (True, "before")):
                want = ops.apply(np, op, f, [a], ops.Mode(rounding, ftz, tininess), ops.NanRule.ieee(f))
                _assert_judges(fmt, op, rounding, [a.astype(np.uint16)], want.astype(np.uint16), ftz=ftz,
                               tininess=tininess)


def test_every_second_operand_against_the_exact_path():
    # binary16 pairs: every second operand (all 2**16) against 16 first operands -- subnormals,
    # the binade edges, the largest finite value, zeros, infinities, a NaN -- one mode per operation
    f = get_format("f16")
    firsts = [0x0001, 0x03FF, 0x0400, 0x3C00, 0x3BFF, 0x7BFF, 0x8001, 0xFC00, 0x7E01, 0x1234, 0xC000, 0x0000,
              0x8000, 0x7C00, 0x5A5A, 0x2001]
    a = np.repeat(np.array(firsts, dtype=np.uint64), 1 << 16)
    b = np.tile(np.arange(1 << 16, dtype=np.uint64), len(firsts))
    for op, rounding, ftz in (("div", "rn", False), ("add", "rz", True), ("sub", "rm", False), ("mul", "rp", True)):
        want = ops.apply(np, op, f, [a, b], ops.Mode(rounding, ftz), ops.NanRule.ieee(f))
        _assert_judges("f16", op, rounding, [a.astype(np.uint16), b.astype(np.uint16)], want.astype(np.uint16),
                       ftz=ftz)


@pytest.mark.parametrize("fmt", ("f16", "bf16", "f32"))
def test_against_the_exact_path_on_random_slices(fmt):
    # binary operations (fma included) on random operands and contiguous slices, through the exact
    # integer path (no fast path): independent of the model's float64 arithmetic
    f = get_format(fmt)
    rng = np.random.default_rng(len(fmt))
    for op in certificate.OPS[fmt]:
        operands = [rng.integers(0, 1 << WIDTH[fmt], 3000, dtype=np.uint64) for _ in range(certkernels.ARITY[op])]
        start = int(rng.integers(0, 1 << WIDTH[fmt]))
        operands[0] = np.concatenate([operands[0], (np.arange(start, start + 1000) % (1 << WIDTH[fmt])).astype(np.uint64)])
        operands[1:] = [np.concatenate([o, o[:1000]]) for o in operands[1:]]
        for rounding in ("rn", "rm"):
            want = ops.apply(np, op, f, operands, ops.Mode(rounding), ops.NanRule.ieee(f))
            _assert_judges(fmt, op, rounding, [o.astype(DTYPE[fmt]) for o in operands], want.astype(DTYPE[fmt]))


def test_against_mpfr_samples():
    gmpy2 = pytest.importorskip("gmpy2", reason="the MPFR oracle needs gmpy2")
    assert gmpy2
    from tilecheck.oracle.mpfr import mpfr_op

    rng = np.random.default_rng(5)
    for fmt in ("f16", "bf16", "f32"):
        for op in certificate.OPS[fmt]:
            operands = _inputs(fmt, op, 120, 3)
            for rounding in ("rn", "rz", "rm", "rp"):
                ftz = bool(rng.integers(0, 2))
                want = np.array([mpfr_op(op, fmt, rounding, *(int(o[i]) for o in operands), ftz=ftz)
                                 for i in range(operands[0].size)], dtype=DTYPE[fmt])
                _assert_judges(fmt, op, rounding, operands, want, ftz=ftz)


def test_sat_forms(db):
    # .sat: the correctly rounded value clamped to [+0, 1.0] (NaN and negatives give +0)
    for name in ("add.sat.f16", "sub.rn.ftz.sat.f16", "mul.sat.f16", "mul.rn.ftz.sat.f16"):
        form = db.form(name)
        assert certificate.form_support(form).ok
        op = form.semantics.key.split(".")[1]
        operands = _inputs("f16", op, 20_000, 3)
        near_one = np.arange(0x3BF0, 0x3C10, dtype=np.uint16)  # results around 1.0
        operands = [np.concatenate([operands[0], np.repeat(near_one, 8)]),
                    np.concatenate([operands[1], np.tile(np.array([0, 0x3C00, 0x1000, 0x8400, 0x3BFF, 0x3C01, 0x8000,
                                                                   0x3800], np.uint16), near_one.size)])]
        got = np.asarray(api.evaluate(form, *operands)).astype(np.uint16)
        ftz = form.semantics.params["ftz"]
        assert certificate.check_form(form, got, operands).all()
        for wrong in _neighbours("f16", got):
            assert not certificate.check(op, "f16", "rn", wrong, *operands, ftz=ftz, sat=True).any()
        assert not certificate.check(op, "f16", "rn", got, *operands, ftz=ftz).all()  # unclamped: rejected


@pytest.mark.parametrize("fmt", ("f16", "bf16", "f32"))
def test_input_only_and_output_only_flushing(fmt):
    f = get_format(fmt)
    for op in certificate.OPS[fmt]:
        operands = [_inputs(fmt, "add", 3000, 9 + i)[0] for i in range(certkernels.ARITY[op])]
        for rounding in ("rn", "rp"):
            for fi, fo in ((True, False), (False, True)):
                for tininess in ("after", "before"):
                    mode = ops.Mode(rounding, False, tininess, ftz_in=fi, ftz_out=fo)
                    got = api.compute(np, op, f, [o.astype(np.uint64) for o in operands], mode, ops.NanRule.ieee(f))
                    _assert_judges(fmt, op, rounding, operands, got.astype(DTYPE[fmt]), ftz_in=fi, ftz_out=fo,
                                   tininess=tininess)


@pytest.mark.parametrize("fmt,op", [(fmt, op) for fmt, ops_ in certificate.NUMPY_OPS.items() for op in ops_])
def test_kernels_agree_with_the_numpy_certificate_on_any_result(fmt, op):
    # the two implementations on the right result, its neighbours and arbitrary patterns
    operands = _inputs(fmt, op, 6000, 77)
    got = tilecheck.ieee_op(op, fmt, "rz", *operands, ftz=True)
    rng = np.random.default_rng(1)
    for res in [got, *_neighbours(fmt, got), rng.integers(0, 1 << WIDTH[fmt], got.size).astype(DTYPE[fmt])]:
        for rounding in ("rn", "rz", "rp"):
            for ftz in (False, True):
                k = certificate.check(op, fmt, rounding, res, *operands, ftz=ftz)
                n = certificate.check_numpy(op, fmt, rounding, res, *operands, ftz=ftz)
                assert np.array_equal(k, n), (op, fmt, rounding, ftz, int(np.argmax(k != n)))


def test_tininess_before_differs_from_after():
    # the largest binary16 subnormal times 1 + 2^-10 is 2^-14 - 2^-34: rounded up (rp) it is the
    # smallest normal number, kept when tininess is judged after rounding, flushed before
    tiny, x = np.array([0x03FF], np.uint16), np.array([0x3C01], np.uint16)
    min_normal, zero = np.array([0x0400], np.uint16), np.array([0], np.uint16)
    assert certificate.check("mul", "f16", "rp", min_normal, tiny, x, ftz_out=True)[0]
    assert not certificate.check("mul", "f16", "rp", zero, tiny, x, ftz_out=True)[0]
    assert not certificate.check("mul", "f16", "rp", min_normal, tiny, x, ftz_out=True, tininess="before")[0]
    assert certificate.check("mul", "f16", "rp", zero, tiny, x, ftz_out=True, tininess="before")[0]


@pytest.mark.parametrize("fmt,op", [("f32", "sqrt"), ("f32", "rcp"), ("f32", "div"), ("bf16", "add"), ("f16", "mul")])
def test_rejects_results_of_another_mode(fmt, op):
    operands = _inputs(fmt, op, 20_000, 11)
    for mode, other in (("rz", "rp"), ("rn", "rz"), ("rm", "rn")):
        want = tilecheck.ieee_op(op, fmt, mode, *operands)
        wrong = tilecheck.ieee_op(op, fmt, other, *operands)
        differ = want != wrong
        assert differ.any()
        ok = certificate.check(op, fmt, mode, wrong, *operands)
        assert not ok[differ].any()


def test_exhaustive_f16_slice_agrees_with_the_model():
    """Every 4096th f16 pair (2**20 pairs over the whole domain), every binary op and mode."""
    idx = np.arange(0, 1 << 32, 1 << 12, dtype=np.uint64) + np.uint64(2049)
    a, b = (idx >> np.uint64(16)).astype(np.uint16), (idx & np.uint64(0xFFFF)).astype(np.uint16)
    for op in ("div", "add", "mul"):
        for rounding in ("rn", "rp"):
            got = tilecheck.ieee_op(op, "f16", rounding, a, b)
            assert certificate.check(op, "f16", rounding, got, a, b).all()


def test_nan_policies():
    nan_a = np.array([0x7E01], dtype=np.uint16)
    one = np.array([0x3C00], dtype=np.uint16)
    assert certificate.check("add", "f16", "rn", np.array([0x7E01], np.uint16), nan_a, one, nan="propagate")[0]
    assert not certificate.check("add", "f16", "rn", np.array([0x7E00], np.uint16), nan_a, one, nan="propagate")[0]
    assert certificate.check("add", "f16", "rn", np.array([0x7FFF], np.uint16), nan_a, one, nan="canonical",
                             nan_bits=0x7FFF)[0]
    assert certificate.check("add", "f16", "rn", np.array([0x7E00], np.uint16), nan_a, one, nan="unspecified")[0]


def _imports(module):
    tree = ast.parse(pathlib.Path(module.__file__).read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    return names + [(n.module or "") + "." + a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    for a in n.names]


def test_imports_nothing_from_the_model_or_the_solver():
    # the certificate imports only its kernels; the kernels only numpy, numba and the stdlib
    # (and the yes/no-with-reason record its form_support answers with, and the thread count,
    # which is no arithmetic: tilecheck.cpus imports only the exception tree)
    assert sorted(n for n in _imports(certificate) if n.startswith("tilecheck")) == [
        "tilecheck.cpus", "tilecheck.diff.certkernels", "tilecheck.diff.support.SUPPORTED",
        "tilecheck.diff.support.Support"]
    assert all(n.split(".")[0] in ("numpy", "numba", "os", "threading", "concurrent", "__future__")
               or n == "tilecheck.cpus" for n in _imports(certkernels)), _imports(certkernels)
    assert sorted(n for n in _imports(cpus) if n.startswith("tilecheck")) == ["tilecheck.errors.UsageError"]


def _float_instructions(fn, *args) -> set:
    """Floating-point LLVM instructions and types in a fresh (uncached) compile of ``fn``."""
    import re

    import numba

    fresh = numba.njit(fn.py_func)
    fresh(*args)
    ir = "".join(fresh.inspect_llvm(sig) for sig in fresh.signatures)
    assert "define" in ir
    return set(re.findall(r"\b(fadd|fsub|fmul|fdiv|fcmp|sitofp|uitofp|fptosi|fptoui|double|float|half)\b", ir))


def test_kernels_use_no_floating_point():
    # the compiled certificate (callees linked in) is integer code; a float kernel shows up
    z = np.zeros(4, np.uint32)
    assert _float_instructions(certkernels.check_into, 2, 8, 23, 3, True, True, True, True, 2, 0, z, z, z, z,
                               np.zeros(4, np.bool_)) == set()
    assert _float_instructions(certkernels._cmp, np.uint64(3), -2, np.uint64(5)) == set()

    def halve(x):
        return x * 0.5

    halve.py_func = halve
    assert "fmul" in _float_instructions(halve, 3)


def test_reference_backend_judges_by_certificate(db):
    form = db.form("sqrt.rz.ftz.f32")
    ref = backends.select("reference", db=db)
    assert ref.certifies(form) and "certificate" in ref.verdict_text(form)
    ops = [np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)]
    assert ref.judge(form, ops).count == 0
    assert not ref.support(db.form("fma.rn.f32")).ok  # not certified: the reference backend refuses it


def test_certified_verdict_catches_a_wrong_backend(db, monkeypatch):
    form = db.form("rcp.rp.f32")
    host = backends.select("host", db=db, certify=True)
    assert host.certifies(form)
    ops = [np.arange(0x3F800001, 0x3F800001 + 50_000, dtype=np.uint32)]
    assert host.judge(form, ops).count == 0
    from tilecheck.diff import hostref

    real = hostref.evaluate
    monkeypatch.setattr(hostref, "evaluate", lambda f, *o: real(db.form("rcp.rn.f32"), *o))
    assert host.judge(form, ops).count > 0


def test_fuzz_exhaustive_reports_the_certificate(tmp_path, capsys):
    from tilecheck.cli import main

    code = main(["fuzz", "sqrt.rm.f32", "--exhaustive", "--batch", "65536", "--stop-after", "2", "--quiet",
                 "--out", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert code == 0
    assert "backend reference" in out and "independent of the model's arithmetic" in out


def test_kernels_without_a_writable_cache_compile_per_process():
    import os
    import subprocess
    import sys

    code = ("import numba.core.caching as c\n"
            "(getattr(c, 'CacheImpl', None) or c._CacheImpl)._locator_classes = []\n"
            "import numpy as np\n"
            "from tilecheck.diff import certificate\n"
            "a = np.array([0x3C00], np.uint16)\n"
            "print(certificate.check('div', 'f16', 'rz', np.array([0x3555], np.uint16), a, np.array([0x4200], np.uint16)))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[ True]"  # 1/3 toward zero


def test_the_fast_path_agrees_with_the_general_path():
    # every lane the straight-line path decides is decided alike by the general one, on the right
    # result, its neighbours and arbitrary patterns (overflowing and underflowing results included)
    import numba

    fast, lane = certkernels._fast, certkernels._lane

    @numba.njit
    def compare(op, ebits, mbits, rnd, flush, res, a, b, c):
        width = 1 + ebits + mbits
        decided = differ = 0
        for i in range(res.shape[0]):
            r, x, y, z = np.uint64(res[i]), np.uint64(a[i]), np.uint64(b[i]), np.uint64(c[i])
            v = fast(op, width, ebits, mbits, rnd, flush, r, x, y, z)
            if v >= 0:
                decided += 1
                if (v == 1) != lane(op, width, ebits, mbits, rnd, flush, flush, False, False, 2, np.uint64(0),
                                    r, x, y, z):
                    differ += 1
        return decided, differ

    rng = np.random.default_rng(8)
    for fmt in ("f16", "bf16", "f32"):
        for op in certificate.OPS[fmt]:
            operands = [_inputs(fmt, "add", 4000, 20 + i)[0] for i in range(certkernels.ARITY[op])]
            operands += [operands[0]] * (3 - len(operands))
            for rounding in ("rn", "rz", "rm", "rp"):
                for ftz in (False, True):
                    got = tilecheck.ieee_op(op, fmt, rounding, *operands[:certkernels.ARITY[op]], ftz=ftz)
                    noise = rng.integers(0, 1 << WIDTH[fmt], got.size).astype(DTYPE[fmt])
                    for res in (got, *_neighbours(fmt, got), noise):
                        decided, differ = compare(certkernels.OPS[op], *certkernels.FORMATS[fmt],
                                                  certkernels.ROUNDINGS[rounding], ftz, res, *operands)
                        assert decided > 0 and differ == 0, (fmt, op, rounding, ftz, decided, differ)
