"""The TestFloat reader, and the MPFR and SoftFloat oracles against TestFloat's vectors.

The oracle comparison uses every 50th line of every file by default (about 69,000 cases, a few
seconds); ``TILECHECK_HYPOTHESIS_PROFILE=deep`` runs every line (3.4 million cases, minutes), and
``TILECHECK_TESTFLOAT_STRIDE=N`` picks any stride.
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest

from tilecheck.errors import UsageError
from tilecheck.formats import get_format
from tilecheck.oracle import testfloat
from tilecheck.oracle.mpfr import mpfr_op
from tilecheck.testing.compare import describe_case, same_result

VECTORS = testfloat.available()
MISSING = (f"TestFloat vectors not found in {testfloat.vectors_dir()} (../shared/vectors/testfloat "
           f"next to the checkout, or set TILECHECK_VECTORS)")


def _stride() -> int:
    if os.environ.get("TILECHECK_TESTFLOAT_STRIDE"):
        return max(1, int(os.environ["TILECHECK_TESTFLOAT_STRIDE"]))
    return 1 if os.environ.get("TILECHECK_HYPOTHESIS_PROFILE") == "deep" else 50


def _files():
    if not VECTORS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=MISSING), id="no-vectors")]
    return [pytest.param(v, id=f"{v[0]}-{v[1]}-{v[2]}") for v in VECTORS]


# ---- the reader on synthetic files (always runs) ---------------------------------------------

def _write(folder, name: str, text: str):
    (folder / name).write_bytes(gzip.compress(text.encode("ascii")))


def test_reader_parses_fixed_width_and_free_form_files(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECHECK_VECTORS", str(tmp_path))
    _write(tmp_path, "f16_div.rminMag.tv.gz", "3C00 4200 3555 01\nFBFF 0001 FC00 05\n")
    _write(tmp_path, "f32_mulAdd.rmax.tv.gz", "3F800000 3F800000 BF800000 00000000 00\n"
                                              "7FC00000 0 1 FFC00000 10\n")  # not fixed width
    _write(tmp_path, "f128_div.rmin.tv.gz", "0 0 0 00\n")  # unknown format: not listed
    _write(tmp_path, "f16_rem.rmin.tv.gz", "0 0 0 00\n")  # unknown op: not listed
    assert [(f, o, r) for f, o, r, _ in testfloat.available()] == [("f16", "div", "rz"), ("f32", "fma", "rp")]
    (a, b), res, flags = testfloat.load("f16", "div", "rz")
    assert a.dtype == np.uint16 and res.dtype == np.uint16 and flags.dtype == np.uint8
    assert a.tolist() == [0x3C00, 0xFBFF] and b.tolist() == [0x4200, 0x0001]
    assert res.tolist() == [0x3555, 0xFC00] and flags.tolist() == [0x01, 0x05]
    (x, y, z), res, flags = testfloat.load("f32", "fma", "rp")
    assert x.tolist() == [0x3F800000, 0x7FC00000] and z.tolist() == [0xBF800000, 1]
    assert res.tolist() == [0, 0xFFC00000] and flags.tolist() == [0, 0x10]
    assert not res.flags.writeable
    assert testfloat.load("f32", "fma", "rp")[1] is res  # cached


def test_reader_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECHECK_VECTORS", str(tmp_path))
    with pytest.raises(UsageError):
        testfloat.load("f32", "rem", "rn")
    with pytest.raises(UsageError):
        testfloat.load("f32", "div", "rna")
    with pytest.raises(FileNotFoundError):
        testfloat.load("f32", "div", "rn")
    _write(tmp_path, "f16_add.rmin.tv.gz", "3C00 3C00\n")
    with pytest.raises(ValueError, match="expected 4 hex fields"):
        testfloat.load("f16", "add", "rm")
    monkeypatch.setenv("TILECHECK_VECTORS", str(tmp_path / "absent"))
    assert testfloat.available() == []


# ---- the shared vectors -----------------------------------------------------------------------

@pytest.mark.skipif(not VECTORS, reason=MISSING)
def test_every_expected_file_is_there():
    # guard the guard: 3 formats x 6 ops x 4 roundings; a silently empty glob must fail
    found = {(f, o, r) for f, o, r, _ in VECTORS}
    assert len(VECTORS) == 72
    assert found == {(f, o, r) for f in ("f16", "f32", "f64")
                     for o in ("add", "sub", "mul", "div", "sqrt", "fma") for r in ("rn", "rz", "rm", "rp")}
    for fmt, op, rounding, _ in VECTORS:
        operands, results, flags = testfloat.load(fmt, op, rounding)
        n = len(results)
        assert n == len(flags) and all(len(x) == n for x in operands)
        assert len(operands) == {"sqrt": 1, "fma": 3}.get(op, 2)
        if op in ("add", "sub", "mul", "div"):
            assert n == 46464, (fmt, op, rounding, n)
        else:
            assert n >= 300, (fmt, op, rounding, n)


@pytest.mark.skipif(not VECTORS, reason=MISSING)
@pytest.mark.parametrize("fmt, op, rounding", [("f16", "div", "rn"), ("f32", "sqrt", "rp"),
                                               ("f64", "fma", "rm")])
def test_vectorised_parse_matches_a_line_by_line_parse(fmt, op, rounding):
    path = next(p for f, o, r, p in VECTORS if (f, o, r) == (fmt, op, rounding))
    with gzip.open(path, "rt") as fh:
        lines = [ln.split() for _, ln in zip(range(3000), fh)]
    operands, results, flags = testfloat.load(fmt, op, rounding)
    for i, fields in enumerate(lines):
        values = [int(x, 16) for x in fields]
        assert [int(o[i]) for o in operands] + [int(results[i]), int(flags[i])] == values


@pytest.mark.parametrize("vector", _files())
def test_mpfr_oracle_matches_testfloat(vector):
    fmt, op, rounding, _ = vector
    f = get_format(fmt)
    operands, results, _ = testfloat.load(fmt, op, rounding)
    stride = _stride()
    bad = []
    for i in range(0, len(results), stride):
        args = [int(o[i]) for o in operands]
        got = mpfr_op(op, f, rounding, *args)
        if not same_result(f, got, int(results[i])):
            bad.append(describe_case(f, op, rounding, args, got, int(results[i])))
    assert not bad, f"{len(bad)} mismatches, first: " + "\n".join(bad[:5])


@pytest.mark.parametrize("vector", _files())
def test_softfloat_wrapper_matches_testfloat_including_flags(vector):
    pytest.importorskip("softfloatpy", reason="softfloatpy is not installed: pip install 'tilecheck[test]'")
    from tilecheck.oracle.softfloat import softfloat_op_flags

    fmt, op, rounding, _ = vector
    operands, results, flags = testfloat.load(fmt, op, rounding)
    stride = _stride() * 4  # the wrapper is checked here, not the semantics: a lighter sample
    bad = []
    for i in range(0, len(results), stride):
        args = [int(o[i]) for o in operands]
        got, got_flags = softfloat_op_flags(op, fmt, rounding, *args)
        if not same_result(fmt, got, int(results[i])) or got_flags != int(flags[i]):
            bad.append(describe_case(fmt, op, rounding, args, got, int(results[i]))
                       + f" flags {got_flags:#04x} vs {int(flags[i]):#04x}")
    assert not bad, f"{len(bad)} mismatches, first: " + "\n".join(bad[:5])
