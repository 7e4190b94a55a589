"""Integer arithmetic and bit logic as references (``--against add.s32``, ``mul.lo.s16``,
``cvt.s8.s16(add.s16(cvt.s16.s8(a), cvt.s16.s8(b)))``), on Triton's integer kernels
(examples/triton/{add,mul}_s*.ptx, maximum_u8.ptx): the references' values are checked here against
Python's integers, and the kernels against them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.verify.compiled import parse_reference, verify_ptx

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
INT8_ADD = "cvt.s8.s16(add.s16(cvt.s16.s8(a), cvt.s16.s8(b)))"
INT8_MUL = "cvt.s8.s16(mul.lo.s16(cvt.s16.s8(a), cvt.s16.s8(b)))"


def _signed(bits: np.ndarray, width: int) -> np.ndarray:
    v = bits.astype(np.int64)
    return np.where(v >= 1 << (width - 1), v - (1 << width), v)


@pytest.mark.parametrize("text,fn", [
    (INT8_ADD, lambda a, b: a + b), (INT8_MUL, lambda a, b: a * b),
    ("cvt.u8.u16(max.u16(cvt.u16.u8(a), cvt.u16.u8(b)))", None),
    # bits take any integer of their width: and.b16 of two s16 (Triton's int8 a & b)
    ("cvt.s8.s16(and.b16(cvt.s16.s8(a), cvt.s16.s8(b)))", lambda a, b: a & b),
])
def test_8_bit_references_are_the_wrapped_integer_results(db, text, fn):
    ref = parse_reference(text, db)
    a, b = (x.ravel().astype(np.uint64) for x in np.meshgrid(np.arange(256), np.arange(256)))
    got = np.asarray(ref.expected([a, b])).astype(np.int64)
    if fn is None:  # unsigned maximum
        want = np.maximum(a, b).astype(np.int64)
    else:
        want = fn(_signed(a, 8), _signed(b, 8)) & 0xFF
    assert ref.fmt.integer and (got == want).all()


@pytest.mark.parametrize("text,width,fn", [
    ("add.s32", 32, lambda a, b: a + b), ("mul.lo.s32", 32, lambda a, b: a * b),
    ("mul.hi.u32", 32, lambda a, b: (a * b) >> 32), ("min.s32", 32, min), ("sub.u16", 16, lambda a, b: a - b),
    ("shl.b32", 32, lambda a, b: a << min(b, 32)), ("and.b64", 64, lambda a, b: a & b),
    ("xor.b16", 16, lambda a, b: a ^ b),
])
def test_one_form_integer_references_against_python_integers(db, text, width, fn):
    ref = parse_reference(text, db)
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << min(width, 63), 500, dtype=np.uint64) << np.uint64(1 if width == 64 else 0)
    b = rng.integers(0, 1 << min(width, 63), 500, dtype=np.uint64)
    if text.startswith("shl"):
        b = b % np.uint64(40)
    got = np.asarray(ref.expected([a, b])).astype(np.uint64)
    signed = text.split(".")[-1].startswith("s")
    for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
        if signed:
            x, y = (v - (1 << width) if v >> (width - 1) else v for v in (x, y))
        assert g == fn(x, y) % (1 << width), (text, x, y)


@pytest.mark.parametrize("stem,entry,against,exhaustive", [
    ("add_s32", "add_kernel", "add.s32", False), ("mul_s32_v", "mul_kernel", "mul.lo.s32", False),
    ("add_s8_v", "add_kernel", INT8_ADD, True), ("mul_s8", "mul_kernel", INT8_MUL, True),
    ("maximum_u8", "maximum_kernel", "cvt.u8.u16(max.u16(cvt.u16.u8(a), cvt.u16.u8(b)))", True),
])
def test_triton_integer_kernels_verify(db, stem, entry, against, exhaustive):
    out = verify_ptx(str(TRITON / f"{stem}.ptx"), entry, against, db=db, cases=None if exhaustive else 3000,
                     processes=False)
    assert out.exit_code == 0 and out.misrounded_count == 0 and out.exhaustive is exhaustive
    assert out.inputs_checked == (65536 if exhaustive else 3000)


@pytest.mark.parametrize("stem,entry,wrong", [
    ("add_s32", "add_kernel", "sub.s32"), ("mul_s32_v", "mul_kernel", "mul.hi.s32"),
    ("add_s8_v", "add_kernel", "cvt.s8.s16(sub.s16(cvt.s16.s8(a), cvt.s16.s8(b)))"),
    ("mul_s8", "mul_kernel", "cvt.s8.s16(mul.hi.s16(cvt.s16.s8(a), cvt.s16.s8(b)))"),
])
def test_another_integer_operation_is_a_counterexample(db, stem, entry, wrong):
    out = verify_ptx(str(TRITON / f"{stem}.ptx"), entry, wrong, db=db, cases=3000, processes=False)
    assert out.verdict == "counterexample" and out.misrounded_count > 0


def test_integer_reference_errors_are_located_usage_errors(capsys):
    path = str(TRITON / "add_s32.ptx")
    assert main(["verify", path, "--entry", "add_kernel", "--against", "add.s8"]) == 2
    assert "not a PTX form" in capsys.readouterr().err
    assert main(["verify", path, "--entry", "add_kernel", "--against", "setp.lt.s32(a, b)"]) == 2
    assert "the expression is a predicate" in capsys.readouterr().err
    assert main(["verify", path, "--entry", "add_kernel", "--against", "add.s32(a, 1.5)"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_name_in_a_bits_position_and_a_signed_one_is_the_signed_operand(db):
    ref = parse_reference("and.b32(a, add.s32(a, b))", db)
    assert [f.name for f in ref.operand_formats] == ["s32", "s32"] and ref.fmt.name == "b32"
    a = np.array([0xFFFFFFFF, 5], dtype=np.uint64)
    b = np.array([1, 0xFFFFFFFE], dtype=np.uint64)
    assert np.asarray(ref.expected([a, b])).astype(np.uint64).tolist() == [0, 1]


def test_bits_and_an_integer_of_another_width_do_not_mix(db):
    with pytest.raises(Exception, match="takes b16 as operand a; this operand is s32"):
        parse_reference("and.b16(cvt.s32.s8(a), cvt.s16.s8(b))", db)
