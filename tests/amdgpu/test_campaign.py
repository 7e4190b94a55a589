"""``verify_sequence`` on the AMD division macros: reproducibility, the observed/documented
verdicts, the contract finding, the reference cross-checked with MPFR, and the CLI glue."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from tilecheck.amdgpu import campaign
from tilecheck.spec.database import load_database
from tilecheck.amdgpu.campaign import format_report, generate, run_chunk, verify_sequence
from tilecheck.spec.sequence import lookup_sequence, run_sequence
from tilecheck.formats import get_format
from tilecheck.model.semantics import NumpyBackend

CASES = 20000


def test_counts_are_reproducible_from_the_seed():
    a = verify_sequence("amdgpu.fdiv64", "documented", 3000, seed=7, db=load_database())
    b = verify_sequence("amdgpu.fdiv64", "documented", 3000, seed=7, db=load_database())
    c = verify_sequence("amdgpu.fdiv64", "documented", 3000, seed=8, db=load_database())
    assert (a.mismatches, a.by_category, a.by_rcp_choice) == (b.mismatches, b.by_category, b.by_rcp_choice)
    assert a.by_category != c.by_category
    assert sum(v[0] for v in a.by_category.values()) == 3000


@pytest.mark.parametrize("name", ["amdgpu.fdiv64", "amdgpu.fdiv32", "amdgpu.fdiv32.ftz"])
def test_observed_semantics_with_the_correctly_rounded_reciprocal_is_exact(name):
    result = verify_sequence(name, "observed", CASES, seed=1, rcp="nearest", db=load_database())
    assert result.cases == CASES
    assert result.mismatches == 0, [format_report(lookup_sequence(name, db=load_database()), result, r) for r in result.reports]


@pytest.mark.parametrize("name", ["amdgpu.fdiv64", "amdgpu.fdiv32"])
def test_observed_semantics_over_the_whole_contract(name):
    """Anywhere inside the reciprocal's contract, the only incorrectly rounded results are the
    Markstein exception: denominators whose significand is all ones, with a seed that is not the
    correctly rounded reciprocal. Every such case is right with the correctly rounded seed."""
    seq = lookup_sequence(name, db=load_database())
    fmt = seq.fmt
    result = verify_sequence(name, "observed", CASES, seed=1, db=load_database())
    assert result.cases == CASES
    assert result.mismatches_with_nearest_rcp == 0
    assert result.by_rcp_choice["nearest"][1] == 0
    for report in result.reports:
        assert report.inputs["d"] & fmt.mantissa_mask == fmt.mantissa_mask, hex(report.inputs["d"])
    # and the class is really hit (the campaign's special values include such denominators)
    assert result.mismatches > 0


def test_the_smallest_f64_counterexample_by_hand():
    """1 / (4 - 2^-51) with v_rcp_f64 returning exactly 0.25 (relative error 2^-53, well inside
    its 2^-23 contract): every Newton step lands on a tie and rounds to even, so the macro gives
    0.25 instead of the correctly rounded 0x3fd0000000000001."""
    seq = lookup_sequence("amdgpu.fdiv64", db=load_database())
    n = np.array([0x3ff0000000000000], dtype=np.uint64)
    d = np.array([0x400fffffffffffff], dtype=np.uint64)

    def choose(step, form, args):
        return np.array([0x3fd0000000000000], dtype=np.uint64)

    trace = run_sequence(seq, "observed", NumpyBackend((1,)), {"n": n, "d": d}, choose, db=load_database())
    assert int(trace.result[0]) == 0x3fd0000000000000
    from tilecheck.model.api import ieee_op

    assert int(ieee_op("div", "f64", "rn", n, d)[0]) == 0x3fd0000000000001
    from tilecheck.amdgpu import contract
    from tilecheck.amdgpu.instructions import lookup

    assert contract.allowed(lookup("v_rcp_f64", db=load_database()), "observed", np.array([0x3fd0000000000000], dtype=np.uint64), d)[0]


@pytest.mark.parametrize("name", ["amdgpu.fdiv64", "amdgpu.fdiv32"])
def test_documented_semantics_has_counterexamples_with_full_reports(name):
    result = verify_sequence(name, "documented", 5000, seed=3, db=load_database())
    assert result.mismatches > 0
    assert result.mismatches_with_nearest_rcp > 0  # wrong whatever the seed: the semantics itself
    assert result.reports
    seq = lookup_sequence(name, db=load_database())
    lines = format_report(seq, result, result.reports[0])
    text = "\n".join(lines)
    assert "expected div.rn" in text and "got" in text
    steps = [s for s in seq.steps if s.op is not None]
    assert sum(1 for line in lines if "<-" in line) >= len(steps)  # every intermediate is shown


def test_documented_fmas_factor_alone_breaks_near_overflow_quotients():
    result = verify_sequence("amdgpu.fdiv64", "documented", 4000, seed=2, db=load_database())
    assert result.by_category["huge-quotient"][1] == result.by_category["huge-quotient"][0] > 0


def test_reference_division_matches_mpfr_on_campaign_inputs():
    gmpy2 = pytest.importorskip("gmpy2")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "semantics"))
    from mpfr_ref import ieee, is_nan_bits

    from tilecheck.model.api import ieee_op

    assert gmpy2.version()
    for fmt_name in ("f64", "f32"):
        fmt = get_format(fmt_name)
        num, den, _, _, _ = generate(fmt, 4, 0, 3000)
        want = np.asarray(ieee_op("div", fmt, "rn", num, den), dtype=np.uint64)
        for i in range(0, 3000, 3):
            ref = ieee(fmt, "div", "rn", int(num[i]), int(den[i]))
            if ref is None:
                assert is_nan_bits(fmt, int(want[i]))
            else:
                assert int(want[i]) == ref, (hex(int(num[i])), hex(int(den[i])))


def test_midpoint_construction_really_lands_next_to_midpoints():
    from fractions import Fraction

    fmt = get_format("f64")
    rng = np.random.default_rng(0)
    for kind in ("midpoint", "midpoint-subnormal"):
        num, den = campaign._midpoint_pairs(fmt, rng, 300, kind)
        close = 0
        for a, b in zip(num, den):
            q = fmt.to_fraction(int(a)) / fmt.to_fraction(int(b))
            lo = fmt.from_fraction(abs(q), "rz")
            hi = fmt.from_fraction(abs(q), "rp")
            if lo == hi:
                continue
            mid = (fmt.to_fraction(lo) + fmt.to_fraction(hi)) / 2
            gap = fmt.to_fraction(hi) - fmt.to_fraction(lo)
            if abs(abs(q) - mid) < gap * Fraction(1, 1 << 40):
                close += 1
        assert close > 100, (kind, close)


def test_z3_sequence_encoding_matches_numpy():
    z3 = pytest.importorskip("z3")
    from tilecheck.smt.amdgpu import encode_sequence

    for name in ("amdgpu.fdiv64", "amdgpu.fdiv32"):
        seq = lookup_sequence(name, db=load_database())
        num, den, cat, choice, rng = generate(seq.fmt, 9, 0, 40)
        trace, chosen = run_chunk(seq, "observed", num, den, choice, rng, db=load_database())
        for i in range(40):
            sym, constraints = encode_sequence(name, "observed", {"n": int(num[i]), "d": int(den[i])}, db=load_database())
            subs = []
            for step, names in sym.order:
                if step.op and step.op.startswith("v_rcp"):
                    var = sym.values[step.dst[0]]
                    subs.append((var, z3.BitVecVal(int(chosen[step.dst[0]][i]), seq.fmt.width)))
            result = z3.simplify(z3.substitute(sym.result, *subs))
            assert result.as_long() == int(trace.result[i]), (name, hex(int(num[i])), hex(int(den[i])))
            assert all(z3.is_true(z3.simplify(z3.substitute(c, *subs))) for c in constraints)


def test_verify_target_cli_glue(capsys):
    from tilecheck.verify import amdgpu

    args = argparse.Namespace(semantics="observed", cases=3000, seed=5, rcp="nearest", quiet=True)
    assert amdgpu.run("amdgpu.fdiv64", args, load_database()) == 0
    out = capsys.readouterr().out
    assert "seed 5: 3000 cases, 0 incorrectly rounded" in out
    assert ("reproduce: tilecheck verify amdgpu.fdiv64 --semantics observed --rcp nearest --seed 5 "
            "--sequence-cases 3000") in out
    args = argparse.Namespace(semantics="documented", cases=3000, seed=5, quiet=True)
    assert amdgpu.run("amdgpu.fdiv64", args, load_database()) == 1
    out = capsys.readouterr().out
    assert "counterexample: case #" in out and "expected div.rn.f64" in out


def test_usage_errors():
    from tilecheck.errors import UnknownFormError, UsageError

    with pytest.raises(UnknownFormError):
        verify_sequence("amdgpu.fdiv128", cases=10, db=load_database())
    with pytest.raises(UsageError):
        verify_sequence("amdgpu.fdiv64", "literal", cases=10, db=load_database())
    with pytest.raises(UsageError):
        verify_sequence("amdgpu.fdiv64", cases=0, db=load_database())
