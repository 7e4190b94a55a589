"""Choices in references, spelled as PTX makes them (``setp`` compares, ``selp`` selects), on
Triton's kernels that choose (examples/triton/leaky_relu_*, relu_*, greater_*, where_f32,
maximum_nan_f64_v): the references' values are checked here against numpy's comparisons and
``np.where``, which share no code with the model; the kernels are then run against them, and a
reference that chooses differently is a counterexample exactly where numpy says the choices differ."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.errors import UsageError
from tilecheck.verify import compiled
from tilecheck.verify.compiled import parse_reference, verify_ptx

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
LEAKY_F16 = "selp.b16(a, mul.rn.f16(a, 0.01000213623046875), setp.gt.f16(a, 0.0))"
GREATER = "cvt.u8.u16(selp.u16(1, 0, setp.gt.{t}(a, b)))"
WHERE = "selp.f32(b, c, setp.ne.u16(cvt.u16.u8(a), 0))"
MAX_NAN = "selp.f64(nan, max.f64(a, b), setp.nan.f64(a, b))"
ALL_F16 = np.arange(1 << 16, dtype=np.uint16)


def _f32_patterns(n: int, seed: int) -> np.ndarray:
    """Random f32 patterns with the classes a comparison turns on: zeros of both signs, infinities,
    NaNs, equal pairs (the caller repeats some)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x[:8] = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x3F800000, 0x00000001]
    return x


def test_leaky_relu_f16_reference_is_numpys_where_on_every_half(db):
    """Every f16 pattern: the reference's bits are ``np.where(x > 0, x, x * float16(0.01))``."""
    ref = parse_reference(LEAKY_F16, db)
    x = ALL_F16.view(np.float16)
    with np.errstate(all="ignore"):
        want = np.where(x > 0, x, x * np.float16(0.01)).view(np.uint16)
    got = np.asarray(ref.expected([ALL_F16]))
    nan = np.isnan(x)
    assert ref.fmt.name == "b16" and (got[~nan] == want[~nan]).all()
    assert np.isnan(got[nan].view(np.float16)).all()


def test_comparison_where_and_nan_maximum_references_are_numpys(db):
    a, b = _f32_patterns(4000, 1), _f32_patterns(4000, 2)
    b[100:200] = a[100:200]  # equal operands, where gt and ge part
    fa, fb = a.view(np.float32), b.view(np.float32)
    with np.errstate(invalid="ignore"):
        assert (np.asarray(parse_reference(GREATER.format(t="f32"), db).expected([a, b]))
                == (fa > fb).astype(np.uint8)).all()
    c = np.random.default_rng(3).integers(0, 256, 4000, dtype=np.uint64).astype(np.uint8)
    c[:50] = 0
    got = np.asarray(parse_reference(WHERE, db).expected([c, a, b]))
    assert (got == np.where(c != 0, a, b)).all()
    rng = np.random.default_rng(4)
    specials = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1.5]
    x = np.concatenate([rng.standard_normal(2000) * 1e3, rng.choice(specials, 400), [0.0, -0.0, 1.5]])
    y = np.concatenate([rng.standard_normal(2000) * 1e3, rng.choice(specials, 400), [-0.0, 0.0, 1.5]])
    got = np.asarray(parse_reference(MAX_NAN, db).expected([x.view(np.uint64), y.view(np.uint64)])).view(np.float64)
    nan = np.isnan(x) | np.isnan(y)
    assert np.isnan(got[nan]).all()
    # numpy's maximum leaves the sign of max(+0, -0) to the platform: the values are compared, and
    # PTX's max of the zeros (+0) apart
    assert (got[~nan] == np.maximum(x[~nan], y[~nan])).all()
    assert not np.signbit(got[-3]) and not np.signbit(got[-2])


CLASS_TESTS = {"isnan": ("notanumber", np.isnan), "isinf": ("infinite", np.isinf)}
CLASS_REF = "cvt.u8.u16(selp.u16(1, 0, testp.{cls}.f32(a)))"


@pytest.mark.parametrize("test", sorted(CLASS_TESTS))
def test_class_test_references_are_numpys_and_the_kernels_test_that_class(db, test):
    """libdevice's isnan/isinf (setp on |x| in Triton's PTX) against testp: the reference's bits
    are numpy's classification; the kernel verifies on every class (subnormals, the zeros, the
    infinities, NaNs of every payload) and the other class's test is refuted exactly where numpy's
    two tests differ."""
    cls, numpy_test = CLASS_TESTS[test]
    x = _f32_patterns(4000, 7)
    x[8:16] = [0x7F800001, 0xFFFFFFFF, 0x7F7FFFFF, 0x00800000, 0x007FFFFF, 0x80000001, 0xFF7FFFFF, 0x7FBFFFFF]
    ref = parse_reference(CLASS_REF.format(cls=cls), db)
    assert ref.fmt.name == "u8" and [f.name for f in ref.operand_formats] == ["f32"]
    want = numpy_test(x.view(np.float32)).astype(np.uint8)
    assert (np.asarray(ref.expected([x])) == want).all()
    path = str(TRITON / f"{test}_f32.ptx")
    out = verify_ptx(path, f"{test}_kernel", CLASS_REF.format(cls=cls), db=db, cases=3000, processes=False)
    assert out.verdict == "verified" and not out.exhaustive and out.unknown_count == 0, out
    other = "infinite" if cls == "notanumber" else "notanumber"
    p = compiled.prepare(path, f"{test}_kernel", CLASS_REF.format(cls=other), db=db)
    bad = compiled.run_inputs(p, [x.astype(np.uint64)]).bad
    f = x.view(np.float32)
    differ = np.isnan(f) != np.isinf(f)
    assert differ.sum() > 10 and (bad == differ).all()


def test_leaky_relu_f16_kernel_verifies_exhaustively_and_a_moved_threshold_is_found_exactly(db):
    out = verify_ptx(str(TRITON / "leaky_relu_f16_v.ptx"), "leaky_relu_kernel", LEAKY_F16, db=db,
                     exhaustive=True, processes=False)
    assert out.verdict == "verified" and out.exhaustive and out.inputs_checked == 1 << 16
    moved = LEAKY_F16.replace("setp.gt.f16(a, 0.0)", "setp.gt.f16(a, 0.5)")
    out = verify_ptx(str(TRITON / "leaky_relu_f16_v.ptx"), "leaky_relu_kernel", moved, db=db,
                     exhaustive=True, processes=False)
    x = ALL_F16.view(np.float16)
    with np.errstate(all="ignore"):
        differ = (x > 0) & (x <= 0.5) & (x * np.float16(0.01) != x)
    assert out.verdict == "counterexample" and out.misrounded_count == int(differ.sum())
    assert sorted(int(m[0]) for m in out.misrounded) == np.flatnonzero(differ).tolist()


@pytest.mark.parametrize("stem,entry,against", [
    ("leaky_relu_f32", "leaky_relu_kernel", "selp.f32(a, mul.rn.f32(a, 0.00999999977648258209228515625), "
                                            "setp.gt.f32(a, 0.0))"),
    ("leaky_relu_bf16", "leaky_relu_kernel", "selp.b16(a, mul.rn.bf16(a, 0.010009765625), setp.gt.bf16(a, 0.0))"),
    ("relu_f16_v", "relu_kernel", "selp.b16(a, 0, setp.gt.f16(a, 0.0))"),
    ("greater_f32", "greater_kernel", GREATER.format(t="f32")),
    ("greater_f16_v", "greater_kernel", GREATER.format(t="f16")),
    ("where_f32", "where_kernel", WHERE),
    ("maximum_nan_f64_v", "maximum_nan_kernel", MAX_NAN),
])
def test_choosing_kernels_verify_against_their_choices(db, stem, entry, against):
    out = verify_ptx(str(TRITON / f"{stem}.ptx"), entry, against, db=db, cases=3000, processes=False)
    assert out.verdict in ("verified", "no counterexample") and out.unknown_count == 0, out


@pytest.mark.parametrize("stem,entry,wrong", [
    ("greater_f32", "greater_kernel", "cvt.u8.u16(selp.u16(1, 0, setp.ge.f32(a, b)))"),
    ("greater_f16_v", "greater_kernel", GREATER.format(t="f16").replace("gt", "gtu")),  # NaN compares true
    ("where_f32", "where_kernel", "selp.f32(c, b, setp.ne.u16(cvt.u16.u8(a), 0))"),
    ("maximum_nan_f64_v", "maximum_nan_kernel", "max.f64(a, b)"),
])
def test_another_choice_is_a_counterexample(db, stem, entry, wrong):
    out = verify_ptx(str(TRITON / f"{stem}.ptx"), entry, wrong, db=db, cases=3000, processes=False)
    assert out.verdict == "counterexample" and out.misrounded_count > 0


@pytest.mark.parametrize("expr,message", [
    ("setp.gt.f32(a, b)", "the expression is a predicate"),
    ("selp.f32(a, b, c)", "c fills selp.f32's predicate operand"),
    ("selp.f32(a, b, 2)", "literal 2 is outside pred"),
    ("selp.f32(a, b, setp.gt.f16(a, b))", "a is f32 where it first fills an operand"),
    ("add.rn.f32(a, setp.gt.f32(a, b))", "add.rn.f32 takes f32 as operand b; this operand is pred"),
])
def test_predicate_misuse_is_a_located_usage_error(db, expr, message):
    with pytest.raises(UsageError) as err:
        parse_reference(expr, db)
    # located: by column, or (a predicate result) by the whole expression, quoted
    assert message in err.value.message
    assert "column" in err.value.message or f"'{expr}'" in err.value.message


def test_predicate_literals_and_bits_positions(db):
    a = _f32_patterns(100, 6)
    assert (np.asarray(parse_reference("selp.f32(a, 0.0, True)", db).expected([a])) == a).all()
    assert (np.asarray(parse_reference("selp.f32(a, 0.0, 0)", db).expected([a])) == 0).all()
    # a float fills a bits position of its width, and bits fill a float position
    absolute = np.asarray(parse_reference("and.b32(a, 0x7fffffff)", db).expected([a]))
    assert (absolute == (a & 0x7FFFFFFF)).all()
    as_float = parse_reference("add.rn.f32(and.b32(a, 0x7fffffff), 0.0)", db)
    assert as_float.fmt.name == "f32" and [f.name for f in as_float.operand_formats] == ["b32"]
    # an operand in bits and float positions is the float (bits give way, as to a signedness)
    either = parse_reference("selp.b32(a, and.b32(a, 0x7fffffff), setp.gt.f32(a, 0.0))", db)
    assert [f.name for f in either.operand_formats] == ["f32"]
    with np.errstate(invalid="ignore"):
        want = np.where(a.view(np.float32) > 0, a, a & 0x7FFFFFFF)
    assert (np.asarray(either.expected([a])) == want).all()


def test_cli_verifies_a_choice_and_refuses_a_predicate_result(capsys):
    path = str(TRITON / "leaky_relu_f16_v.ptx")
    assert main(["verify", path, "--entry", "leaky_relu_kernel", "--against", LEAKY_F16, "--exhaustive"]) == 0
    assert "VERIFIED" in capsys.readouterr().out
    assert main(["verify", path, "--entry", "leaky_relu_kernel", "--against", "setp.gt.f16(a, 0.0)"]) == 2
    err = capsys.readouterr().err
    assert "the expression is a predicate" in err and "Traceback" not in err
