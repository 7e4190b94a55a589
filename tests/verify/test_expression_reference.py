"""``tilecheck verify FILE.ptx --against EXPR``: expression references.

The fixtures ``fixtures/muladd_{fmad,nofmad}.ptx`` are nvcc 13.0's PTX of ``fixtures/muladd.cu``
with ``-fmad=true`` (one ``fma.rn.f32``) and ``-fmad=false`` (``mul.rn.f32`` then ``add.rn.f32``);
the f16 division kernel in them converts to f32, divides and rounds back. Checked here: an
expression equal to a one-op reference gives that reference's outcome; the multiply-then-add
reference finds the fma kernel's misroundings and verifies the -fmad=false one; the expression's
bits agree with numpy float32/float16 arithmetic (no model code); bad expressions are exit 2
with the column, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.errors import UsageError
from tilecheck.verify import compiled
from tilecheck.verify.expression import ExpressionReference

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FMAD = FIXTURES / "muladd_fmad.ptx"
NOFMAD = FIXTURES / "muladd_nofmad.ptx"
HALF = ROOT / "examples" / "cuda" / "half.ptx"
MULADD = "add.rn.f32(mul.rn.f32(a, b), c)"
HDIV_VIA_F32 = "cvt.rn.f16.f32(div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b)))"


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main(["verify", *map(str, argv), "--json", "-"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return code, json.loads(cap.out)


def _same_outcome(a: dict, b: dict) -> None:
    """Two runs' JSON agree on everything but the reference's text and the time."""
    for key in ("verdict", "inputs_checked", "sampling", "misrounded_count", "misrounded_by_value_count",
                "misrounded_inputs", "lanes_run", "exhaustive"):
        assert a[key] == b[key], key
    assert [c["expected"] for c in a["counterexamples"]] == [c["expected"] for c in b["counterexamples"]]


# ---------------------------------------------------------------------------------------------
# an expression equal to a one-op reference


@pytest.mark.parametrize("path,entry,one_op,expr", [
    (HALF, "k_hdiv_f16", "div.rn.f16", HDIV_VIA_F32),           # f32 division rounded to f16 is correctly rounded
    (FMAD, "k_div_via_f32_f16", "div.rn.f16", HDIV_VIA_F32),
    (ROOT / "examples" / "cuda" / "float.ptx", "k_fdiv_rn", "div.rn.f32", "div.rn.f32(a, b)"),
    (FMAD, "k_muladd_f32", "fma.rn.f32", "fma.rn.f32(a, b, c)"),
    (ROOT / "examples" / "cuda" / "float.ptx", "k_fdividef", "div.approx.f32", "div.approx.f32(a, b)"),
])
def test_an_expression_equal_to_a_one_op_reference_gives_its_outcome(capsys, path, entry, one_op, expr):
    code_a, a = _json(capsys, path, "--entry", entry, "--against", one_op, "--cases", "3000")
    code_b, b = _json(capsys, path, "--entry", entry, "--against", expr, "--cases", "3000")
    assert code_a == code_b and b["against"] == expr
    _same_outcome(a, b)
    assert a["sampling"].get("hard", 0) > 0  # the operation's hard cases are in both mixes


def test_the_half_division_expression_finds_what_div_rn_f16_finds_exhaustively_on_a_slice(db):
    """The first 2^17 inputs of the exhaustive enumeration (two divisors, every dividend)."""
    runs = [compiled.verify_ptx(str(HALF), "k_hdiv_f16", ref, db=db, exhaustive=True, limit=1 << 17, threads=1,
                                processes=False) for ref in ("div.rn.f16", HDIV_VIA_F32)]
    assert runs[0].inputs_checked == runs[1].inputs_checked == 1 << 17
    assert runs[0].misrounded_count == runs[1].misrounded_count and runs[0].misrounded == runs[1].misrounded
    assert runs[0].verdict == runs[1].verdict


# ---------------------------------------------------------------------------------------------
# -fmad: multiply then add, against one fma


def test_multiply_then_add_finds_the_misroundings_of_the_fma_kernel(capsys):
    code, out = _json(capsys, FMAD, "--entry", "k_muladd_f32", "--against", MULADD, "--cases", "4000")
    assert code == 1 and out["verdict"] == "counterexample"
    assert out["misrounded_by_value_count"] > 0
    c = out["counterexamples"][0]
    a, b, cc = (np.array([int(i["hex"], 16)], dtype=np.uint32).view(np.float32) for i in c["inputs"])
    with np.errstate(all="ignore"):
        two_roundings = (a * b + cc).view(np.uint32)[0]  # numpy float32: two roundings, no contraction
    assert int(c["expected"]["hex"], 16) == int(two_roundings) != int(c["got"]["hex"], 16)
    assert f"--against '{MULADD}'" in c["repro"]
    # the repro reproduces (the quoted expression is one argument)
    args = ["verify", str(FMAD), "--entry", "k_muladd_f32", "--against", MULADD, "--input",
            ",".join(i["hex"] for i in c["inputs"])]
    assert main(args) == 1
    capsys.readouterr()


def test_multiply_then_add_verifies_the_no_fmad_kernel_and_fma_refutes_it(capsys):
    code, out = _json(capsys, NOFMAD, "--entry", "k_muladd_f32", "--against", MULADD, "--cases", "4000")
    assert code == 0 and out["verdict"] == "no-counterexample"
    code, out = _json(capsys, NOFMAD, "--entry", "k_muladd_f32", "--against", "fma.rn.f32(a, b, c)", "--cases", "4000")
    assert code == 1 and out["misrounded_by_value_count"] > 0


def test_operands_are_named_in_parameter_order(db, capsys):
    """The names sorted are the operands in parameter order, wherever they are written:
    ``add.rn.f32(c, mul.rn.f32(a, b))`` is buffer 2 + buffer 0 * buffer 1 -- what the kernel
    computes -- and ``add.rn.f32(a, mul.rn.f32(b, c))`` is not."""
    ref = compiled.parse_reference("add.rn.f32(mul.rn.f32(x, y), z)", db)
    assert [v.name for v in ref.variables] == ["x", "y", "z"]
    ref = compiled.parse_reference("add.rn.f32(c, mul.rn.f32(a, b))", db)
    assert [v.name for v in ref.variables] == ["a", "b", "c"]
    code, _ = _json(capsys, NOFMAD, "--entry", "k_muladd_f32", "--against", "add.rn.f32(mul.rn.f32(x, y), z)",
                    "--cases", "2000")
    assert code == 0
    code, _ = _json(capsys, NOFMAD, "--entry", "k_muladd_f32", "--against", "add.rn.f32(c, mul.rn.f32(a, b))",
                    "--cases", "2000")
    assert code == 0
    code, _ = _json(capsys, NOFMAD, "--entry", "k_muladd_f32", "--against", "add.rn.f32(a, mul.rn.f32(b, c))",
                    "--cases", "2000")
    assert code == 1


def test_an_expression_reference_checks_a_func(tmp_path, capsys):
    path = tmp_path / "f.ptx"
    path.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .func (.param .b32 r) f(.param .b32 a, .param .b32 b, .param .b32 c)\n{\n"
                    " .reg .f32 %f<5>;\n ld.param.f32 %f1, [a];\n ld.param.f32 %f2, [b];\n ld.param.f32 %f3, [c];\n"
                    " fma.rn.f32 %f4, %f1, %f2, %f3;\n st.param.f32 [r], %f4;\n ret;\n}\n")
    code, out = _json(capsys, path, "--entry", "f", "--against", "fma.rn.f32(a, b, c)", "--cases", "2000")
    assert code == 0 and out["abi"] == ".func"
    code, out = _json(capsys, path, "--entry", "f", "--against", MULADD, "--cases", "2000")
    assert code == 1


# ---------------------------------------------------------------------------------------------
# the expression's bits, independently


def _f32_bits(rng, n):
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    # mostly moderate exponents (products and sums stay normal), some of every kind
    bits[: n // 2] = (bits[: n // 2] & np.uint32(0x807FFFFF)) | (rng.integers(100, 150, n // 2, dtype=np.uint32) << 23)
    return bits


def _agree(fmt, got, want):
    nan = lambda x: (x & fmt.magnitude_mask) > fmt.exponent_mask  # noqa: E731
    return (got == want) | (nan(got) & nan(want))


def test_expression_bits_agree_with_numpy_arithmetic(db):
    rng = np.random.default_rng(22)
    a, b, c = (_f32_bits(rng, 5000) for _ in range(3))
    ref = compiled.parse_reference(MULADD, db)
    assert isinstance(ref, ExpressionReference) and ref.fmt.name == "f32" and ref.arity == 3
    fa, fb, fc = (x.view(np.float32) for x in (a, b, c))
    with np.errstate(all="ignore"):
        want = (fa * fb + fc).view(np.uint32)
    got = ref.expected([a, b, c])
    assert got.dtype == np.uint32 and _agree(ref.fmt, got, want).all()
    assert ref.judge(want, [a, b, c], got).all()

    h = compiled.parse_reference(HDIV_VIA_F32, db)
    x, y = (rng.integers(0, 1 << 16, 5000, dtype=np.uint64).astype(np.uint16) for _ in range(2))
    with np.errstate(all="ignore"):
        want = (x.view(np.float16).astype(np.float32) / y.view(np.float16).astype(np.float32)) \
            .astype(np.float16).view(np.uint16)
    assert _agree(h.fmt, h.expected([x, y]), want).all()


def test_fma_expression_bits_agree_with_exact_fractions(db):
    """fma rounds once: the exact a*b + c (Python fractions) rounded to nearest, ties to even, by
    the format's scalar exact conversion (no model code)."""
    rng = np.random.default_rng(7)
    a, b, c = (_f32_bits(rng, 300)[:150] for _ in range(3))  # the moderate half: finite, normal
    ref = compiled.parse_reference("fma.rn.f32(a, b, c)", db)
    got = ref.expected([a, b, c])
    f32 = ref.fmt
    for x, y, z, r in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist()):
        exact = f32.to_fraction(x) * f32.to_fraction(y) + f32.to_fraction(z)
        if exact:  # an exact zero's sign is the rounding's business, not this check's
            assert r == f32.from_fraction(exact), (hex(x), hex(y), hex(z))


def test_literals_and_negation(db):
    ref = compiled.parse_reference("div.rn.f32(1.0, -a)", db)
    a = np.array([0x40000000, 0x3F800000], dtype=np.uint32)  # 2, 1
    assert ref.expected([a]).tolist() == [0xBF000000, 0xBF800000]  # -0.5, -1


def test_the_mix_uses_the_hard_cases_of_the_outermost_operation(db):
    rng = np.random.default_rng(0)
    ref = compiled.parse_reference(HDIV_VIA_F32, db)
    assert ref.operation == ("div", "rn")
    _, drawn = ref.sample_mix(1000, rng)
    assert drawn["hard"] > 0
    ref = compiled.parse_reference(MULADD, db)  # an add of three operands: no construction fits
    _, drawn = ref.sample_mix(1000, rng)
    assert drawn["hard"] == 0 and drawn["edge"] > 0 and drawn["uniform"] > 0


def test_reference_operand_formats(db):
    assert [f.name for f in compiled.parse_reference("div.rn.f16", db).operand_formats] == ["f16", "f16"]
    assert [f.name for f in compiled.parse_reference("fma.rn.f32", db).operand_formats] == ["f32"] * 3
    assert [f.name for f in compiled.parse_reference("rcp.approx.f32", db).operand_formats] == ["f32"]
    assert [f.name for f in compiled.parse_reference(HDIV_VIA_F32, db).operand_formats] == ["f16", "f16"]


# ---------------------------------------------------------------------------------------------
# bad expressions: exit 2, located, no traceback


@pytest.mark.parametrize("expr,message", [
    ("div.rn.f32(a", "--against (column 11): syntax error"),
    ("mad.rn.f32(a, b, c)", "--against (column 1): mad.rn.f32 is not a form of the spec database"),
    ("fma.rn.f32(a, b, c, d)", "--against (column 1): fma.rn.f32 takes 3 operand(s), got 4"),
    ("add.rn.f32(ex2.approx.f16x2(a), c)", "--against (column 12): ex2.approx.f16x2 is a packed form (2 lanes)"),
    ("cvt.f32.f16(mul.rn.f32(a, b))", "--against (column 13): cvt.f32.f16 takes f16 as operand a; this operand is f32"),
    ("frob(a, b)", "--against (column 1): unknown function 'frob'"),
    ("lg2.rn.f32", "--against 'lg2.rn.f32' is not a PTX form: lg2 has no correctly rounded form"),
    ("add(rn, a, b)", "--against (column 1): unknown function 'add'"),
    ("add.rn.f32(a, b) < c", "--against (column 1): a reference computes one value"),
    ("add.rn.f32(a, 0.1)", "--against (column 15): literal '0.1' is not exactly representable in f32"),
    ("add.rn.f32(a, cvt.f32.f16(a))", "--against (column 27): a is f32 where it first fills an operand (column 12) "
                                      "and f16 here"),
    ("setp.lt.f32(a, b)", "the expression is a predicate; a kernel stores values"),
    ("selp.f32(a, b, c)", "--against (column 16): c fills selp.f32's predicate operand"),
    ("testp.finite.f32(a)", "the expression is a predicate; a kernel stores values"),
    ("add.rn.f32(testp.finite.f32(a), b)", "--against (column 12): add.rn.f32 takes f32 as operand a; this operand is pred"),
    ("setp.eq.f32", "--against 'setp.eq.f32' gives a predicate, which no buffer holds: say how the kernel stores it, "
                    "e.g. 'selp.u32(1, 0, setp.eq.f32(a, b))'"),
    ("testp.notanumber.f32", "'selp.u32(1, 0, testp.notanumber.f32(a))'"),
    ("popc.b32", "--against 'popc.b32': unknown instruction 'popc.b32'; did you mean"),
    ("add.rn.f16x2", "--against 'add.rn.f16x2' is a packed form (2 lanes)"),
    ("cvt.rn.satfinite.e4m3x2.f32(a, b)", "--against (column 1): cvt.rn.satfinite.e4m3x2.f32 takes 1 operand(s) (in a "
                                          "reference, one lane of the packed conversion: one f32 element), got 2"),
    ("add.rn.f16x2(a, b)", "--against (column 1): add.rn.f16x2 is a packed form"),
    ("div.rn.f32(a, b)[0]", "--against (column 1): Subscript is not part of the query language"),
    ("cvt.rn.f16.f32(a)", "k_muladd_f32 reads 3 buffer(s); cvt.rn.f16.f32(a) takes 1 operand(s)"),
    ("div.rn.f32(1.0, 2.0)", "the expression names no operand"),
])
def test_bad_expressions_are_located_usage_errors(capsys, expr, message):
    code = main(["verify", str(FMAD), "--entry", "k_muladd_f32", "--against", expr, "--cases", "100"])
    cap = capsys.readouterr()
    assert code == 2, cap.out + cap.err
    assert "Traceback" not in cap.err and cap.out == ""
    assert message in cap.err, cap.err


def test_a_reference_of_another_type_than_the_kernel_is_refused_before_running(db):
    with pytest.raises(UsageError, match="the reference is f16"):
        compiled.prepare(str(FMAD), "k_muladd_f32", "fma.rn.f16(a, b, c)", db=db)


# ---------------------------------------------------------------------------------------------
# an approximate outermost call: its contract applied to the exact values of its arguments

EXP = ROOT / "examples" / "triton" / "exp_f32.ptx"
LOG2E = "1.44269502162933349609375"  # log2(e) rounded to float32: the 0f3FB8AA3B Triton multiplies by


def test_an_approximate_outermost_call_judges_by_its_contract_on_the_exact_arguments(db):
    """``ex2.approx.f32(mul.rn.f32(a, LOG2E))``: the expected value is RN(2^p) and the accepted
    results are exactly what ex2.approx.f32's contract allows for p, the product computed here by
    numpy's float32 multiply (correctly rounded: no model code)."""
    from tilecheck.model import api

    ref = compiled.parse_reference(f"ex2.approx.f32(mul.rn.f32(a, {LOG2E}))", db)
    assert ref.contract and ref.outer.name == "ex2.approx.f32" and ref.arity == 1
    rng = np.random.default_rng(9)
    a = rng.integers(0, 1 << 32, 2000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(all="ignore"):
        p = (a.view(np.float32) * np.float32(float(LOG2E))).view(np.uint32)
    expected = ref.expected([a])
    assert np.array_equal(expected, np.asarray(api.reference("ex2.approx.f32", p)))
    for step in (-3, -2, 0, 1, 2, 3):
        got = (expected.astype(np.int64) + step).astype(np.uint32)
        want = np.asarray(api.allowed("ex2.approx.f32", got, p))
        assert np.array_equal(ref.judge(got, [a], expected), want), step


@pytest.mark.parametrize("text, shortcut", [
    (f"ex2.approx.f32(mul.rn.f32(a, {LOG2E}))", True),  # one approximate call, outermost, bounded everywhere
    (f"cvt.rn.f16.f32(ex2.approx.f32(mul.rn.f32(cvt.f32.f16(a), {LOG2E})))", False),  # enumerated inside
    ("ex2.approx.f16(mul.rn.f16(a, 1.0))", False),  # its relative bound says nothing below 2^-14
    ("div.approx.f32(a, mul.rn.f32(b, 1.0))", False),  # a domain rule bounds nothing (subnormal divisor)
])
def test_unknown_skips_the_sets_only_where_no_input_can_be_unknown(db, text, shortcut):
    """``unknown`` answers without working out the sets only where the expression cannot leave an
    input unknown; wherever it answers, it agrees with the full computation."""
    ref = compiled.parse_reference(text, db)
    assert ref._always_bounded is shortcut
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 1 << f.width, 4000, dtype=np.uint64).astype(f.uint) for f in ref.operand_formats]
    for col, f in zip(cols, ref.operand_formats):  # zeros, infinities, NaNs, subnormals among them
        col[:4] = [0, f.inf, f.canonical_nan, 1]
    full = ref._accepted(None, cols, "either")[1]
    assert np.array_equal(ref.unknown(cols), full)
    assert full.any() != shortcut or text.startswith("cvt")


@pytest.mark.parametrize("text", [
    "div.full.f32(1.0, add.rn.f32(ex2.approx.f32(mul.rn.f32(a, -1.44269502162933349609375)), 1.0))",
    f"ex2.approx.f32(mul.rn.f32(a, {LOG2E}))",
    "ex2.approx.f16(mul.rn.f16(a, 1.0))",  # unknown inputs among them
    "add.rn.f32(mul.rn.f32(a, b), c)",  # exact
])
def test_judging_forked_lanes_by_input_agrees_with_judging_each_lane(db, text):
    """``judge_at`` (each input's sets once, each (input, result) pair once) gives what ``judge``
    gives on the operands repeated per lane, for results inside, at the edge of and outside the
    sets, several lanes per input as a forked kernel has them."""
    ref = compiled.parse_reference(text, db)
    rng = np.random.default_rng(5)
    n = 3000
    cols = [rng.integers(0, 1 << f.width, n, dtype=np.uint64).astype(f.uint) for f in ref.operand_formats]
    for col, f in zip(cols, ref.operand_formats):
        col[:4] = [0, f.inf, f.canonical_nan, 1]
    index = np.concatenate([rng.permutation(n) for _ in range(4)])
    expected = ref.expected(cols)
    step = rng.integers(-3, 4, index.size)
    got = (expected[index].astype(np.int64) + step).astype(ref.fmt.uint)
    lanes = [c[index] for c in cols]
    want = ref.judge(got, lanes, expected[index])
    assert np.array_equal(ref.judge_at(got, cols, index), want)
    assert want.any() and not want.all()


def test_tl_exp_verifies_against_its_lowering_and_not_against_the_flushing_form(capsys):
    code, doc = _json(capsys, EXP, "--entry", "exp_kernel", "--against", f"ex2.approx.f32(mul.rn.f32(a, {LOG2E}))",
                      "--cases", "4000")
    assert code == 0 and doc["verdict"] == "no-counterexample", doc["verdict"]
    code, doc = _json(capsys, EXP, "--entry", "exp_kernel", "--against",
                      f"ex2.approx.ftz.f32(mul.rn.f32(a, {LOG2E}))", "--cases", "4000")
    # .ftz flushes the subnormal results of large negative inputs the kernel keeps
    assert code == 1 and doc["misrounded_count"] > 0


def test_an_approximate_call_inside_an_expression_is_its_set_of_results(capsys):
    """ex2 times log2(e) is not tl.exp's e^x (the product rounds after the approximation): a
    counterexample, not a refusal."""
    code, doc = _json(capsys, EXP, "--entry", "exp_kernel", "--against", f"mul.rn.f32(ex2.approx.f32(a), {LOG2E})",
                      "--cases", "2000")
    assert code == 1 and doc["misrounded_count"] > 0


SIGMOID = ROOT / "examples" / "triton" / "sigmoid_f32.ptx"
SIGMOID_LOWERED = "div.full.f32(1.0, add.rn.f32(ex2.approx.f32(mul.rn.f32(a, -1.44269502162933349609375)), 1.0))"


def test_tl_sigmoid_is_its_composition_of_contracts(capsys):
    """Two approximations in a row (ex2, then div.full.f32 of one by one plus it): the kernel
    returns one of the composition's results; with the correctly rounded division outside, some
    quotient is one the reference does not allow."""
    code, doc = _json(capsys, SIGMOID, "--entry", "sigmoid_kernel", "--against", SIGMOID_LOWERED, "--cases", "6000")
    assert code == 0 and doc["verdict"] == "no-counterexample", doc["verdict"]
    code, doc = _json(capsys, SIGMOID, "--entry", "sigmoid_kernel", "--against",
                      SIGMOID_LOWERED.replace("div.full.f32", "div.rn.f32", 1), "--cases", "6000")
    assert code == 1 and doc["misrounded_count"] > 0


EXP_UP = ROOT / "examples" / "triton" / "exp_up_f16.ptx"
EXP_UP_LOWERED = f"cvt.rn.f16.f32(ex2.approx.f32(mul.rn.f32(cvt.f32.f16(a), {LOG2E})))"


def test_the_set_of_a_converted_approximation_is_every_half_its_results_round_to(db):
    """``cvt.rn.f16.f32(ex2.approx.f32(..))`` accepts exactly the halves that some binary32 value
    within 2 ulp of the correctly rounded 2^p rounds to. Independent: MPFR gives RN(2^p) in
    binary32, the allowed values are the patterns two either side (the ISA's "2 ulp from correctly
    rounded"), and numpy's float32 -> float16 cast rounds them; the reference enumerates through
    the spec's contract and the model's conversion."""
    import gmpy2
    ref = compiled.parse_reference(EXP_UP_LOWERED, db)
    halves = np.arange(65536, dtype=np.uint16)
    x = halves.view(np.float16).astype(np.float64)
    # normal binary32 and float16 results, away from overflow: the 2 ulp reading needs no table
    pick = halves[np.isfinite(x) & (x > -9.5) & (x < 10.5)][::7]
    p32 = (pick.view(np.float16).astype(np.float32) * np.float32(1.44269502162933349609375)).astype(np.float32)
    with gmpy2.context(precision=24):  # normal results: 24 bits round as binary32 does
        rn = np.array([np.float32(float(gmpy2.exp2(gmpy2.mpfr(float(v))))) for v in p32],
                      dtype=np.float32).view(np.uint32)
    candidates = (rn[:, None].view(np.float32).astype(np.float16).view(np.uint16).astype(np.int64)
                  + np.arange(-3, 4)[None, :]).astype(np.uint16)
    for i in range(pick.size):
        allowed = set((rn[i].astype(np.int64) + np.arange(-2, 3)).astype(np.uint32).view(np.float32)
                      .astype(np.float16).view(np.uint16).tolist())
        got = ref.judge(candidates[i], [np.full(7, pick[i], dtype=np.uint16)], np.zeros(7, dtype=np.uint16))
        assert [bool(g) for g in got] == [int(c) in allowed for c in candidates[i]], hex(int(pick[i]))
    assert not ref.unknown([pick]).any()


def test_tl_exp_on_halves_verifies_exhaustively_against_its_lowering(capsys):
    code, doc = _json(capsys, EXP_UP, "--entry", "exp_up_kernel", "--against", EXP_UP_LOWERED)
    assert code == 0 and doc["verdict"] == "verified" and doc["exhaustive"] and doc["inputs_checked"] == 65536


EXP2_HALF = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b16 r) exp2_half(.param .b16 a)
{
  .reg .b16 %h<3>;
  .reg .f32 %f<3>;
  ld.param.b16 %h1, [a];
  cvt.f32.f16 %f1, %h1;
  ex2.approx.ftz.f32 %f2, %f1;
  cvt.rn.f16.f32 %h2, %f2;
  st.param.b16 [r], %h2;
  ret;
}
"""


@pytest.mark.parametrize("against", ["ex2.approx.f16", "ex2.approx.f16(a)", "neg.f16(neg.f16(ex2.approx.f16(a)))"])
def test_where_the_reference_bounds_nothing_the_input_is_unknown(capsys, tmp_path, against):
    """2^x through binary32, rounded to a half, against ex2.approx.f16, whose relative bound says
    nothing where 2^x is subnormal in float16 (x < -14): those inputs are unknown (exit 4), not
    verified, though the kernel's own instruction is bounded everywhere; elsewhere the kernel is
    within the bound. The count is numpy's count of finite halves below -14."""
    path = tmp_path / "exp2_half.ptx"
    path.write_text(EXP2_HALF)
    code, doc = _json(capsys, path, "--entry", "exp2_half", "--against", against)
    x = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float64)
    assert code == 4 and doc["verdict"] == "unknown"
    assert doc["unknown_count"] == int((np.isfinite(x) & (x < -14)).sum()) and doc["misrounded_count"] == 0
    reasons = doc["unknown_inputs"][0]
    assert reasons["reasons"] == [] and ("relative bound" in reasons["reference"]
                                         or "bounds nothing" in reasons["reference"])


def test_operands_keep_ptx_order_copysign(db):
    """PTX's copysign.f32 d, a, b is b's magnitude with a's sign; Triton's libdevice.copysign(x, y)
    emits copysign.f32 d, y, x: so the reference is copysign.f32(b, a), and the bare form (a, b)
    differs wherever the two signs differ and the magnitudes are not equal -- counted here with numpy."""
    path = str(ROOT / "examples" / "triton" / "copysign_f32.ptx")
    right = compiled.verify_ptx(path, "copysign_kernel", "copysign.f32(b, a)", db=db, cases=2000)
    assert right.verdict_word == "no-counterexample"
    rows = []
    wrong = compiled.verify_ptx(path, "copysign_kernel", "copysign.f32", db=db, cases=2000, misrounded=rows.append)
    found = np.concatenate(rows) if rows else np.zeros((0, 2), dtype=np.uint64)
    x, y = found[:, 0].astype(np.uint32), found[:, 1].astype(np.uint32)
    kernel = (x & 0x7FFFFFFF) | (y & 0x80000000)  # C's copysign(x, y)
    bare = (y & 0x7FFFFFFF) | (x & 0x80000000)    # PTX's copysign.f32 applied to (x, y)
    assert wrong.misrounded_count == found.shape[0] > 1000 and np.all(kernel != bare)


@pytest.mark.parametrize("called,exact", [
    ("div.rn.f16(a, b)", "cvt.rn.f16.f64(div.rn.f64(cvt.f64.f16(a), cvt.f64.f16(b)))"),
    ("sqrt.rn.bf16(a)", "cvt.rn.bf16.f64(sqrt.rn.f64(cvt.f64.bf16(a)))"),
])
def test_a_rounding_ptx_lacks_is_refused_with_its_exact_spelling(capsys, called, exact):
    """PTX has no f16/bf16 division or square root: inside an expression the refusal says how to
    write one exactly in forms PTX has (through f64, where the second rounding is innocuous)."""
    assert main(["verify", str(HALF), "--entry", "k_hdiv_f16", "--against", called, "--cases", "10"]) == 2
    assert f"write it as {exact}" in capsys.readouterr().err


def test_the_exact_spelling_misrounds_what_the_bare_reference_does():
    """The spelling the refusal suggests judges nvcc's __hdiv as div.rn.f16 does, input for input."""
    sets = []
    for against in ("div.rn.f16", "cvt.rn.f16.f64(div.rn.f64(cvt.f64.f16(a), cvt.f64.f16(b)))"):
        rows = []
        o = compiled.verify_ptx(str(HALF), "k_hdiv_f16", against, db=compiled.load_database(), cases=20000,
                                misrounded=rows.append)
        assert o.misrounded_count > 0
        sets.append(np.concatenate(rows))
    assert np.array_equal(sets[0], sets[1])
