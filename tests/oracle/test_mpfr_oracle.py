"""The MPFR oracle: hand-computed vectors for every special rule, FTZ before/after rounding, and
property tests against the MPFR-free rational oracle on every IEEE-like format."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tilecheck.errors import OperandError, UsageError
from tilecheck.formats import ROUNDINGS, get_format
from tilecheck.oracle.mpfr import mpfr_context_parameters, mpfr_op
from tilecheck.oracle.rational import rational_op
from tilecheck.testing import strategies as tst
from tilecheck.testing.compare import describe_case

pytest.importorskip("gmpy2", reason="the MPFR oracle needs gmpy2 (pip install 'tilecheck[test]')")

ALL_FORMATS = ("f16", "bf16", "f32", "f64", "tf32", "e5m2")
OPS = ("add", "sub", "mul", "fma", "div", "sqrt", "rcp", "rsqrt")
ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1, "rsqrt": 1}

# f32 patterns used in the hand-computed tables
ONE, NEG_ONE, TWO, HALF, FOUR = 0x3F800000, 0xBF800000, 0x40000000, 0x3F000000, 0x40800000
PZ, NZ, PINF, NINF = 0x00000000, 0x80000000, 0x7F800000, 0xFF800000
MAXF, MINN, MINS, MAXS, DNAN = 0x7F7FFFFF, 0x00800000, 0x00000001, 0x007FFFFF, 0x7FC00000
S = 0x80000000
BELOW_ONE = 0x3F7FFFFF  # 1 - 2**-24


def test_context_parameters_follow_the_formats():
    assert mpfr_context_parameters("f16") == (11, -23, 16)
    assert mpfr_context_parameters("bf16") == (8, -132, 128)
    assert mpfr_context_parameters("f32") == (24, -148, 128)
    assert mpfr_context_parameters("f64") == (53, -1073, 1024)
    assert mpfr_context_parameters("tf32") == (11, -135, 128)
    assert mpfr_context_parameters("e5m2") == (3, -15, 16)


def _per_rounding(rn, rz, rm, rp):
    return dict(zip(ROUNDINGS, (rn, rz, rm, rp)))


# (op, operands, {rounding: expected}) -- f32, no FTZ
SPECIAL_TABLE = [
    # exact-zero sums: +0 except under rm
    ("add", (ONE, NEG_ONE), _per_rounding(PZ, PZ, NZ, PZ)),
    ("sub", (ONE, ONE), _per_rounding(PZ, PZ, NZ, PZ)),
    ("add", (PZ, NZ), _per_rounding(PZ, PZ, NZ, PZ)),
    ("add", (NZ, NZ), _per_rounding(NZ, NZ, NZ, NZ)),
    ("sub", (NZ, PZ), _per_rounding(NZ, NZ, NZ, NZ)),
    ("sub", (PZ, NZ), _per_rounding(PZ, PZ, PZ, PZ)),
    ("add", (MINS, MINS | S), _per_rounding(PZ, PZ, NZ, PZ)),
    ("fma", (ONE, NEG_ONE, ONE), _per_rounding(PZ, PZ, NZ, PZ)),
    ("fma", (PZ, TWO, NZ), _per_rounding(PZ, PZ, NZ, PZ)),
    ("fma", (NZ, TWO, NZ), _per_rounding(NZ, NZ, NZ, NZ)),
    ("fma", (NZ, NZ, PZ), _per_rounding(PZ, PZ, PZ, PZ)),
    ("fma", (NZ, ONE, ONE), _per_rounding(ONE, ONE, ONE, ONE)),
    # products and quotients: xor of signs
    ("mul", (NZ, TWO), _per_rounding(NZ, NZ, NZ, NZ)),
    ("mul", (NEG_ONE, NZ), _per_rounding(PZ, PZ, PZ, PZ)),
    ("div", (NEG_ONE, PINF), _per_rounding(NZ, NZ, NZ, NZ)),
    ("div", (NZ, NEG_ONE), _per_rounding(PZ, PZ, PZ, PZ)),
    ("div", (ONE, NZ), _per_rounding(NINF, NINF, NINF, NINF)),
    ("div", (NINF, TWO), _per_rounding(NINF, NINF, NINF, NINF)),
    ("rcp", (NZ,), _per_rounding(NINF, NINF, NINF, NINF)),
    ("rcp", (NINF,), _per_rounding(NZ, NZ, NZ, NZ)),
    ("rcp", (TWO,), _per_rounding(HALF, HALF, HALF, HALF)),
    # invalid operations: the default NaN
    ("div", (PZ, NZ), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("div", (PINF, NINF), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("add", (PINF, NINF), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("sub", (PINF, PINF), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("mul", (PZ, NINF), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("fma", (PINF, PZ, ONE), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("fma", (PINF, ONE, NINF), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("fma", (ONE, ONE, NINF), _per_rounding(NINF, NINF, NINF, NINF)),
    ("fma", (NINF, NEG_ONE, PINF), _per_rounding(PINF, PINF, PINF, PINF)),
    ("add", (PINF, MAXF | S), _per_rounding(PINF, PINF, PINF, PINF)),
    # square roots
    ("sqrt", (NZ,), _per_rounding(NZ, NZ, NZ, NZ)),
    ("sqrt", (NEG_ONE,), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("sqrt", (NINF,), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("sqrt", (MINS | S,), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("sqrt", (PINF,), _per_rounding(PINF, PINF, PINF, PINF)),
    ("sqrt", (FOUR,), _per_rounding(TWO, TWO, TWO, TWO)),
    ("sqrt", (TWO,), _per_rounding(0x3FB504F3, 0x3FB504F3, 0x3FB504F3, 0x3FB504F4)),
    ("rsqrt", (NZ,), _per_rounding(NINF, NINF, NINF, NINF)),  # IEEE rSqrt(-0) = -inf (MPFR: +inf)
    ("rsqrt", (PZ,), _per_rounding(PINF, PINF, PINF, PINF)),
    ("rsqrt", (PINF,), _per_rounding(PZ, PZ, PZ, PZ)),
    ("rsqrt", (NEG_ONE,), _per_rounding(DNAN, DNAN, DNAN, DNAN)),
    ("rsqrt", (FOUR,), _per_rounding(HALF, HALF, HALF, HALF)),
    # overflow: infinity or the largest finite number, per rounding direction
    ("mul", (MAXF, TWO), _per_rounding(PINF, MAXF, MAXF, PINF)),
    ("mul", (MAXF | S, TWO), _per_rounding(NINF, MAXF | S, NINF, MAXF | S)),
    ("add", (MAXF, 0x73000000), _per_rounding(PINF, MAXF, MAXF, PINF)),  # + half an ulp: tie to "even" 2**128
    ("add", (MAXF, 0x72FFFFFF), _per_rounding(MAXF, MAXF, MAXF, PINF)),  # just below half an ulp
    ("div", (ONE, 0x00000001), _per_rounding(PINF, MAXF, MAXF, PINF)),  # 2**149 overflows
    # underflow and subnormal rounding
    ("mul", (MINS, HALF), _per_rounding(PZ, PZ, PZ, MINS)),  # a tie: rn picks the even zero
    ("mul", (MINS | S, HALF), _per_rounding(NZ, NZ, MINS | S, NZ)),
    ("mul", (0x00000003, HALF), _per_rounding(0x2, 0x1, 0x1, 0x2)),
    ("mul", (MINS, 0x3F400000), _per_rounding(MINS, PZ, PZ, MINS)),
    ("add", (MAXS, MINS), _per_rounding(MINN, MINN, MINN, MINN)),
    ("div", (0x16A2028D, 0x5E89F6AE), _per_rounding(0x26, 0x25, 0x25, 0x26)),  # 37.58 * 2**-149
    ("mul", (BELOW_ONE, MINN), _per_rounding(MINN, MAXS, MAXS, MINN)),  # exact 2**-126 - 2**-150
]


@pytest.mark.parametrize("op, operands, expected", SPECIAL_TABLE,
                         ids=[f"{op}-{'-'.join(f'{x:08x}' for x in ops)}" for op, ops, _ in SPECIAL_TABLE])
def test_hand_computed_f32_vectors(op, operands, expected):
    for rounding, want in expected.items():
        got = mpfr_op(op, "f32", rounding, *operands)
        assert got == want, describe_case("f32", op, rounding, operands, got, want)


NAN_TABLE = [
    # (op, operands, kwargs, expected): the first NaN operand, quieted, wins
    ("add", (0x7F800001, 0x7FC00002), {}, 0x7FC00001),
    ("add", (ONE, 0xFF800005), {}, 0xFFC00005),
    ("fma", (PZ, PINF, 0x7FC00003), {}, 0x7FC00003),  # 0*inf with a NaN addend: the NaN
    ("fma", (0xFFA00000, PINF, 0x7FC00003), {}, 0xFFE00000),
    ("sqrt", (0xFFC01234,), {}, 0xFFC01234),
    ("rcp", (0x7F800001,), {}, 0x7FC00001),
    ("div", (PZ, PZ), {"nan": 0x7FFFFFFF}, 0x7FFFFFFF),  # nan= replaces invalid results only
    ("add", (0x7FA00000, ONE), {"nan": 0x7FFFFFFF}, 0x7FE00000),
    ("sqrt", (NEG_ONE,), {"nan": 0xFFC00000}, 0xFFC00000),
]


@pytest.mark.parametrize("op, operands, kwargs, expected", NAN_TABLE)
def test_nan_policy(op, operands, kwargs, expected):
    for rounding in ROUNDINGS:
        got = mpfr_op(op, "f32", rounding, *operands, **kwargs)
        assert got == expected, describe_case("f32", op, rounding, operands, got, expected, **kwargs)


# (fmt, op, rounding, operands, no_ftz, ftz_after, ftz_before)
FTZ_TABLE = [
    # a subnormal quotient is flushed either way
    ("f32", "div", "rn", (0x16A2028D, 0x5E89F6AE), 0x00000026, PZ, PZ),
    ("f32", "div", "rn", (0x96A2028D, 0x5E89F6AE), 0x80000026, NZ, NZ),
    # exact 2**-126 - 2**-150 (tiny before rounding) rounds to the smallest normal under rn/rp
    ("f32", "mul", "rn", (BELOW_ONE, MINN), MINN, MINN, PZ),
    ("f32", "mul", "rp", (BELOW_ONE, MINN), MINN, MINN, PZ),
    ("f32", "mul", "rz", (BELOW_ONE, MINN), MAXS, PZ, PZ),
    ("f32", "mul", "rn", (BELOW_ONE | S, MINN), MINN | S, MINN | S, NZ),
    ("f32", "mul", "rm", (BELOW_ONE | S, MINN), MINN | S, MINN | S, NZ),
    ("f32", "div", "rn", (BELOW_ONE, 0x7E800000), MINN, MINN, PZ),  # (1 - 2**-24) / 2**126
    ("f32", "fma", "rn", (0xB3800000, MINN, MINN), MINN, MINN, PZ),  # 2**-126 - 2**-150
    ("f16", "mul", "rn", (0x3BFF, 0x0400), 0x0400, 0x0400, 0x0000),
    ("f64", "mul", "rn", (0x3FEFFFFFFFFFFFFF, 0x0010000000000000), 0x0010000000000000,
     0x0010000000000000, 0x0000000000000000),
    ("bf16", "mul", "rn", (0x3F7F, 0x0080), 0x0080, 0x0080, 0x0000),
    # a subnormal result after rounding is flushed, with its sign
    ("f32", "mul", "rn", (HALF, MINN), 0x00400000, PZ, PZ),
    ("f32", "mul", "rn", (HALF | S, MINN), 0x80400000, NZ, NZ),
    ("f32", "mul", "rp", (MINS, HALF), MINS, PZ, PZ),
    ("f32", "mul", "rm", (MINS | S, HALF), MINS | S, NZ, NZ),
    # subnormal inputs are zeros of the same sign
    ("f32", "add", "rn", (MINS, MINS | S), PZ, PZ, PZ),
    ("f32", "add", "rm", (MINS, MINS | S), NZ, NZ, NZ),
    ("f32", "add", "rn", (MAXS, MINS), MINN, PZ, PZ),
    ("f32", "mul", "rn", (0x00400000, TWO), MINN, PZ, PZ),
    ("f32", "div", "rn", (ONE, 0x00400000), 0x7F000000, PINF, PINF),
    ("f32", "div", "rn", (ONE, 0x80000001), NINF, NINF, NINF),
    ("f32", "div", "rn", (MINS, MINS), ONE, DNAN, DNAN),  # 0/0 after flushing
    ("f32", "sqrt", "rn", (0x80000001,), DNAN, NZ, NZ),
    ("f32", "rsqrt", "rn", (0x80000001,), DNAN, NINF, NINF),
    ("f32", "rcp", "rn", (0x00000001,), PINF, PINF, PINF),
    ("f32", "fma", "rn", (MINS, PINF, ONE), PINF, DNAN, DNAN),  # 0*inf after flushing
    # normal results are untouched
    ("f32", "add", "rn", (MINN, MINS), 0x00800001, MINN, MINN),
    ("f32", "div", "rn", (ONE, 0x40400000), 0x3EAAAAAB, 0x3EAAAAAB, 0x3EAAAAAB),
]


@pytest.mark.parametrize("fmt, op, rounding, operands, plain, after, before", FTZ_TABLE)
def test_ftz_before_and_after_rounding(fmt, op, rounding, operands, plain, after, before):
    for ftz, tininess, want in ((False, "after", plain), (False, "before", plain),
                                (True, "after", after), (True, "before", before)):
        got = mpfr_op(op, fmt, rounding, *operands, ftz=ftz, tininess=tininess)
        assert got == want, describe_case(fmt, op, rounding, operands, got, want, ftz=ftz, tininess=tininess)


@pytest.mark.parametrize("call, error", [
    (lambda: mpfr_op("pow", "f32", "rn", 1, 2), UsageError),
    (lambda: mpfr_op("add", "f32", "rna", 1, 2), UsageError),
    (lambda: mpfr_op("add", "f32", "rn", 1), UsageError),
    (lambda: mpfr_op("sqrt", "f32", "rn", 1, 2), UsageError),
    (lambda: mpfr_op("add", "f16", "rn", 0x10000, 0), OperandError),
    (lambda: mpfr_op("add", "f16", "rn", -1, 0), OperandError),
    (lambda: mpfr_op("add", "f16", "rn", 1.0, 0), OperandError),
    (lambda: mpfr_op("add", "e4m3", "rn", 1, 2), UsageError),
    (lambda: mpfr_op("add", "f32", "rn", 1, 2, ftz=True, tininess="never"), UsageError),
    (lambda: mpfr_op("div", "f32", "rn", 0, 0, nan=0x3F800000), UsageError),
    (lambda: mpfr_op("div", "f32", "rn", 0, 0, nan="quiet"), UsageError),
])
def test_bad_arguments_raise(call, error):
    with pytest.raises(error):
        call()


def test_numpy_integers_are_accepted():
    np = pytest.importorskip("numpy")
    assert mpfr_op("add", "f16", "rn", np.uint16(0x3C00), np.uint16(0x3C00)) == 0x4000


# ---- property tests against the rational oracle ---------------------------------------------

def _finite(fmt):
    f = get_format(fmt)
    return tst.bits(f).filter(lambda b: (b & f.exponent_mask) != f.exponent_mask)


def _compare_all_roundings(fmt, op, operands):
    for rounding in ROUNDINGS:
        got = mpfr_op(op, fmt, rounding, *operands)
        want = rational_op(op, fmt, rounding, *operands)
        assert got == want, describe_case(fmt, op, rounding, operands, got, want)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("op", OPS)
def test_mpfr_agrees_with_rationals(fmt, op):
    @given(st.tuples(*[_finite(fmt)] * ARITY[op]))
    def check(operands):
        _compare_all_roundings(fmt, op, operands)

    check()


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_mpfr_agrees_with_rationals_on_hard_divisions(fmt):
    @given(tst.hard_division(fmt))
    def check(operands):
        _compare_all_roundings(fmt, "div", operands)

    check()


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_mpfr_agrees_with_rationals_on_hard_square_roots(fmt):
    @given(tst.hard_sqrt(fmt))
    def check(a):
        _compare_all_roundings(fmt, "sqrt", (a,))
        _compare_all_roundings(fmt, "rsqrt", (a,))

    check()


def _exact(f, op, values):
    """Exact result of a finite, non-exceptional case as a Fraction, or for sqrt/rsqrt the
    exact square of the result (enough to decide |result| < 2**emin)."""
    if op == "add":
        return values[0] + values[1]
    if op == "sub":
        return values[0] - values[1]
    if op == "mul":
        return values[0] * values[1]
    if op == "fma":
        return values[0] * values[1] + values[2]
    if op == "div":
        return values[0] / values[1]
    if op == "rcp":
        return 1 / values[0]
    raise AssertionError(op)


def _ftz_restated(f, op, rounding, operands, tininess):
    """FTZ semantics restated independently of mpfr.py: flush the inputs, round with the rational
    oracle, then flush by the exact value (before) or by the delivered result (after)."""
    flushed = tuple(b & f.sign_mask if 0 < (b & f.magnitude_mask) < f.min_normal else b for b in operands)
    values = [f.to_fraction(b) for b in flushed]
    if op in ("div", "rcp") and values[-1] == 0 or op in ("sqrt", "rsqrt") and values[0] <= 0:
        return rational_op(op, f, rounding, *flushed)  # exceptional: nothing to flush
    base = rational_op(op, f, rounding, *flushed)
    if (base & f.magnitude_mask) >= f.exponent_mask:
        return base  # overflow to infinity
    tiny_bound = Fraction(2) ** f.emin
    if tininess == "before":
        if op == "sqrt":
            tiny = values[0] < tiny_bound ** 2
        elif op == "rsqrt":
            tiny = values[0] > 1 / tiny_bound ** 2
        else:
            exact = _exact(f, op, values)
            tiny = exact != 0 and abs(exact) < tiny_bound
        return base & f.sign_mask if tiny else base
    return base & f.sign_mask if 0 < (base & f.magnitude_mask) < f.min_normal else base


@pytest.mark.parametrize("fmt", ("f16", "bf16", "f32", "f64"))
@pytest.mark.parametrize("op", OPS)
def test_ftz_matches_its_restatement(fmt, op):
    f = get_format(fmt)
    hard = tst.hard_cases(f, op).filter(
        lambda ops: all((b & f.exponent_mask) != f.exponent_mask for b in ops))

    @given(st.one_of(st.tuples(*[_finite(fmt)] * ARITY[op]), hard))
    def check(operands):
        for rounding in ROUNDINGS:
            for tininess in ("after", "before"):
                got = mpfr_op(op, f, rounding, *operands, ftz=True, tininess=tininess)
                want = _ftz_restated(f, op, rounding, operands, tininess)
                assert got == want, describe_case(f, op, rounding, operands, got, want, ftz=True,
                                                  tininess=tininess)

    check()
