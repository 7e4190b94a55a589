"""The certificate of correct rounding (tilecheck.diff.certificate): it accepts the model's results,
rejects every result one unit away (and results of the wrong mode), handles specials, subnormals
and .ftz, and judges exhaustive sweeps through the ``reference`` backend."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import tilecheck
from tilecheck.diff import backends, certificate

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
    arity = 1 if op in ("sqrt", "rcp") else 2
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


@pytest.mark.parametrize("rounding", ("rn", "rz", "rm", "rp"))
@pytest.mark.parametrize("fmt,op", CASES)
def test_accepts_the_model_and_rejects_neighbours(fmt, op, rounding):
    for ftz in (False, True):
        operands = _inputs(fmt, op, 20_000, hash((fmt, op, rounding, ftz)) & 0xFFFF)
        got = tilecheck.ieee_op(op, fmt, rounding, *operands, ftz=ftz)
        ok = certificate.check(op, fmt, rounding, got, *operands, ftz=ftz)
        bad = np.nonzero(~ok)[0]
        assert bad.size == 0, (f"{op}.{rounding}.{fmt} ftz={ftz}: rejects the model at "
                               f"{[hex(int(o[bad[0]])) for o in operands]} -> {int(got[bad[0]]):#x}")
        for delta in (-1, 1):
            wrong = (got.astype(np.int64) + delta).astype(np.uint64) & np.uint64((1 << WIDTH[fmt]) - 1)
            wrong = wrong.astype(DTYPE[fmt])
            still = certificate.check(op, fmt, rounding, wrong, *operands, ftz=ftz)
            # a neighbour is never right, except NaN for NaN (any NaN bits under this policy)
            sneaky = still & ~(_is_nan(fmt, wrong) & _is_nan(fmt, got))
            assert not sneaky.any(), (f"{op}.{rounding}.{fmt} ftz={ftz}: accepts {delta:+d} unit at "
                                      f"{[hex(int(o[np.argmax(sneaky)])) for o in operands]}")


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


def test_imports_nothing_from_the_model_or_the_solver():
    tree = ast.parse(pathlib.Path(certificate.__file__).read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    # the one tilecheck import is the yes/no-with-reason record its form_support answers with
    assert all(not name.startswith("tilecheck") or name == "tilecheck.diff.support" for name in names), names


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
