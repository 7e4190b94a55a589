"""The numpy reference model (``tilecheck.ieee_op``) against the independent oracles.

API under test: ``tilecheck.ieee_op(op, fmt, rounding, *bits_arrays, ftz=False, tininess="after")``
takes arrays of the format's unsigned dtype and returns one of the same dtype and shape. Its NaN
policy: the first NaN operand quieted, else the format's default NaN -- the MPFR oracle's policy,
so results against MPFR are compared bit for bit; against TestFloat (SoftFloat's negative default
NaN) NaN results are compared by class.

* every line of every TestFloat file, one vectorised ``ieee_op`` call per file;
* Hypothesis batches (edge-biased bits, the hard cases of :mod:`tilecheck.inputs.mix`) vs
  :func:`tilecheck.oracle.mpfr.mpfr_op`, without FTZ and with FTZ under both tininess settings,
  for f16/bf16/f32/f64 and add, sub, mul, fma, div, sqrt, rcp;
* numpy campaigns in the differential campaigns' mix (:func:`tilecheck.inputs.forms.mixed_operands`)
  vs the MPFR oracle, every rounding and FTZ setting;
* FTZ boundary cases whose answer is known by construction (no oracle involved);
* f16/bf16 sqrt and rcp over (a stride of) every input pattern; every pattern under the deep
  profile.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tilecheck
from tilecheck.formats import ROUNDINGS, get_format
from tilecheck.oracle import testfloat
from tilecheck.oracle.mpfr import mpfr_op
from tilecheck.inputs import generators
from tilecheck.inputs.forms import mixed_operands
from tilecheck.testing import construct
from tilecheck.testing import strategies as tst
from tilecheck.testing.compare import describe_case, mismatch_mask

pytest.importorskip("gmpy2", reason="the MPFR oracle needs gmpy2 (pip install 'tilecheck[test]')")

MODEL_FORMATS = ("f16", "bf16", "f32", "f64")
MODEL_OPS = ("add", "sub", "mul", "fma", "div", "sqrt", "rcp")
ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}
FTZ_SETTINGS = ((False, "after"), (True, "after"), (True, "before"))
DEEP = os.environ.get("TILECHECK_HYPOTHESIS_PROFILE") == "deep"

VECTORS = testfloat.available()
MISSING = (f"TestFloat vectors not found in {testfloat.vectors_dir()} (../shared/vectors/testfloat "
           f"next to the checkout, or set TILECHECK_VECTORS)")


def _model(op, f, rounding, operands, **kw) -> np.ndarray:
    arrays = [np.asarray(x, dtype=f.uint) for x in operands]
    out = tilecheck.ieee_op(op, f.name, rounding, *arrays, **kw)
    assert isinstance(out, np.ndarray), f"ieee_op returned {type(out).__name__}, not an ndarray"
    assert out.dtype == f.uint, f"ieee_op returned {out.dtype}, expected {np.dtype(f.uint)}"
    assert out.shape == arrays[0].shape
    return out


def _against_mpfr(op, f, rounding, operands, ftz=False, tininess="after", nan="bits"):
    """Run the model once on the arrays ``operands`` and compare every element with the oracle;
    return the descriptions of the mismatches."""
    got = _model(op, f, rounding, operands, ftz=ftz, tininess=tininess)
    cols = [np.asarray(x, dtype=f.uint).tolist() for x in operands]
    want = np.array([mpfr_op(op, f, rounding, *args, ftz=ftz, tininess=tininess) for args in zip(*cols)],
                    dtype=f.uint)
    bad = np.nonzero(mismatch_mask(f, got, want, nan=nan))[0]
    return [describe_case(f, op, rounding, [c[i] for c in cols], int(got[i]), int(want[i]),
                          ftz=ftz, tininess=tininess) for i in bad[:5]], len(bad)


def _assert_none(failures):
    shown, count = failures
    assert count == 0, f"{count} mismatches; first:\n" + "\n".join(shown)


# ---- (a) every TestFloat line ------------------------------------------------------------------

def _files():
    if not VECTORS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=MISSING), id="no-vectors")]
    return [pytest.param(v, id=f"{v[0]}-{v[1]}-{v[2]}") for v in VECTORS]


@pytest.mark.parametrize("vector", _files())
def test_model_matches_every_testfloat_line(vector):
    fmt, op, rounding, _ = vector
    f = get_format(fmt)
    operands, results, _ = testfloat.load(fmt, op, rounding)
    got = _model(op, f, rounding, operands)
    bad = np.nonzero(mismatch_mask(f, got, results, nan="class"))[0]
    shown = [describe_case(f, op, rounding, [int(o[i]) for o in operands], int(got[i]), int(results[i]))
             for i in bad[:5]]
    assert bad.size == 0, f"{bad.size} of {results.size} TestFloat cases differ; first:\n" + "\n".join(shown)


# ---- (b) Hypothesis batches vs the MPFR oracle ------------------------------------------------

def _batches(f, op):
    case = st.one_of(tst.operands(f, ARITY[op]), tst.hard_cases(f, op))
    return st.lists(case, min_size=1, max_size=24)


@pytest.mark.parametrize("fmt", MODEL_FORMATS)
@pytest.mark.parametrize("op", MODEL_OPS)
def test_model_matches_mpfr_on_hypothesis_batches(fmt, op):
    f = get_format(fmt)

    @given(_batches(f, op), tst.roundings(), st.sampled_from(FTZ_SETTINGS))
    def check(batch, rounding, setting):
        ftz, tininess = setting
        operands = [np.array(col, dtype=f.uint) for col in zip(*batch)]
        _assert_none(_against_mpfr(op, f, rounding, operands, ftz=ftz, tininess=tininess))

    check()


# ---- (c) numpy campaigns vs the MPFR oracle ----------------------------------------------------

def _campaign_inputs(f, op, rng, n):
    """The differential campaigns' mix (edge-biased, hard cases of ``op``, uniform), 2n cases."""
    cols, _ = mixed_operands(op, f, "rn", 2 * n, rng, ARITY[op])
    return [c.astype(f.uint) for c in cols]


@pytest.mark.parametrize("fmt", MODEL_FORMATS)
@pytest.mark.parametrize("op", MODEL_OPS)
def test_model_matches_mpfr_on_generated_campaigns(fmt, op):
    f = get_format(fmt)
    rng = np.random.default_rng(16 * MODEL_OPS.index(op) + MODEL_FORMATS.index(fmt))
    operands = _campaign_inputs(f, op, rng, 2000 if DEEP else 160)
    for rounding in ROUNDINGS:
        for ftz, tininess in FTZ_SETTINGS:
            _assert_none(_against_mpfr(op, f, rounding, operands, ftz=ftz, tininess=tininess))


# ---- (d) FTZ boundary cases, answers known by construction ------------------------------------

@pytest.mark.parametrize("fmt", MODEL_FORMATS)
@pytest.mark.parametrize("op", construct.FTZ_BOUNDARY_OPS)
@pytest.mark.parametrize("rounding", ("rn", "rp", "rm"))
def test_model_ftz_boundary_before_vs_after_rounding(fmt, op, rounding):
    f = get_format(fmt)
    operands = generators.ftz_boundary_pairs(f, 500, np.random.default_rng(99), op, rounding)
    # the sign of each exact result: the sign of the first operand, flipped by the second (div/
    # mul); for fma the addend c = +-2**emin decides it
    sign = (operands[2] if op == "fma" else operands[0] ^ operands[1]) & f.uint(f.sign_mask)
    plain = _model(op, f, rounding, operands)
    after = _model(op, f, rounding, operands, ftz=True, tininess="after")
    before = _model(op, f, rounding, operands, ftz=True, tininess="before")
    assert (plain == (sign | f.uint(f.min_normal))).all(), "no FTZ: the smallest normal"
    assert (after == (sign | f.uint(f.min_normal))).all(), "FTZ after rounding keeps the smallest normal"
    assert (before == sign).all(), "FTZ before rounding flushes the (tiny) exact result"


# ---- (e) unary ops over every input pattern ---------------------------------------------------

@pytest.mark.parametrize("fmt", ("f16", "bf16"))
@pytest.mark.parametrize("op", ("sqrt", "rcp"))
def test_model_unary_ops_over_all_patterns(fmt, op):
    f = get_format(fmt)
    stride = 1 if DEEP else 61  # a prime stride walks every exponent and many fractions
    a = np.arange(0, 1 << f.width, stride, dtype=np.uint64).astype(f.uint)
    for rounding in ROUNDINGS:
        for ftz, tininess in (FTZ_SETTINGS if DEEP else FTZ_SETTINGS[:2]):
            _assert_none(_against_mpfr(op, f, rounding, [a], ftz=ftz, tininess=tininess))
