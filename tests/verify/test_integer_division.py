"""Integer ``div`` and ``rem`` (PTX ISA §9.7.1.8-9): the model against Python's integers, the
results the ISA leaves open (a zero divisor, the most negative value over -1, a signed remainder
of operands of different signs) accepted whatever they are, and kernels that divide -- nvcc's
``a / b`` and ``a % b``, Triton's ``a // b`` and ``a % b``, a grid-stride loop whose trip count is a
``div.u32`` -- run, with those inputs unknown and never verified."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.model import api
from tilecheck.verify.compiled import parse_reference, verify_ptx

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "examples" / "cuda"
TRITON = ROOT / "examples" / "triton"
TYPES = ("u16", "u32", "u64", "s16", "s32", "s64")


def _value(bits: int, width: int, signed: bool) -> int:
    return bits - (1 << width) if signed and bits >> (width - 1) else bits


def _operands(width: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random patterns plus the cases the ISA singles out: zero and small divisors, -1, the most
    negative value, operands of each sign."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 62, n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, n, dtype=np.uint64)
    b = rng.integers(0, 1 << 62, n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, n, dtype=np.uint64)
    mask = (1 << width) - 1
    a, b = a & np.uint64(mask), b & np.uint64(mask)
    special = [0, 1, 2, 3, 7, mask, mask - 1, 1 << (width - 1), (1 << (width - 1)) - 1]
    k = len(special)
    a[:k * k] = np.repeat(np.array(special, dtype=np.uint64), k)
    b[:k * k] = np.tile(np.array(special, dtype=np.uint64), k)
    b[k * k:k * k + 200] &= np.uint64(7)  # small divisors: quotients far from zero
    return a, b


@pytest.mark.parametrize("ptx_type", TYPES)
@pytest.mark.parametrize("op", ["div", "rem"])
def test_model_is_cs_division_and_leaves_open_what_the_isa_does(ptx_type, op):
    width, signed = int(ptx_type[1:]), ptx_type[0] == "s"
    a, b = _operands(width, 3000, width + (op == "rem"))
    form = f"{op}.{ptx_type}"
    got = np.asarray(api.evaluate(form, a, b)).astype(np.uint64).tolist()
    left_open = np.asarray(api.unspecified(form, a, b)).tolist()
    for x_bits, y_bits, g, o in zip(a.tolist(), b.tolist(), got, left_open):
        x, y = _value(x_bits, width, signed), _value(y_bits, width, signed)
        if y == 0:
            assert o, (form, x, y)
            continue
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # truncated toward zero
        r = x - y * q
        fits = -(1 << (width - 1)) <= q < (1 << (width - 1)) if signed else True
        floor_differs = op == "rem" and signed and r != 0 and (x < 0) != (y < 0)
        if not fits or floor_differs:
            assert o, (form, x, y)
            continue
        assert not o and g == (q if op == "div" else r) % (1 << width), (form, x, y, g)


def test_any_result_stands_where_the_isa_leaves_it_open():
    five, zero, one = np.uint32(5), np.uint32(0), np.uint32(1)
    assert all(api.allowed("div.u32", np.uint32(v), five, zero) for v in (0, 1, 0xFFFFFFFF))
    assert api.allowed("div.u32", np.uint32(5), five, one) and not api.allowed("div.u32", np.uint32(4), five, one)
    # -7 % 2: C's -1, a floored division's 1; either stands
    assert api.allowed("rem.s32", np.uint32(1), np.uint32(0xFFFFFFF9), np.uint32(2))
    assert api.allowed("rem.s32", np.uint32(0xFFFFFFFF), np.uint32(0xFFFFFFF9), np.uint32(2))
    assert api.unspecified_why("div.s32", 0x80000000, 0xFFFFFFFF).startswith("the most negative value")
    assert "division by zero" in api.unspecified_why("rem.u16", 3, 0)
    assert api.unspecified_why("div.s32", 7, 2) is None and api.unspecified_why("add.s32", 7, 0) is None


def test_an_expression_with_a_division_is_open_where_its_division_is(db):
    ref = parse_reference("add.s32(div.s32(a, b), 1)", db)
    a = np.array([7, 5, 0x80000000, 9], dtype=np.uint32)
    b = np.array([2, 0, 0xFFFFFFFF, 0xFFFFFFFD], dtype=np.uint32)
    assert ref.contract and ref.unknown([a, b]).tolist() == [False, True, True, False]
    assert ref.expected([a, b])[[0, 3]].tolist() == [4, 0xFFFFFFFE]  # 7/2 + 1, 9/-3 + 1
    assert "division by zero" in ref.open_why([a[1:], b[1:]])


@pytest.mark.parametrize("path,entry,against", [
    (CUDA / "int_div.ptx", "k_idiv_s32", "div.s32"),
    (CUDA / "int_div.ptx", "k_irem_u32", "rem.u32"),
    (TRITON / "floordiv_s32.ptx", "floordiv_kernel", "div.s32"),
    (TRITON / "mod_s32_v.ptx", "mod_kernel", "rem.s32"),
    (TRITON / "mod_u16.ptx", "mod_kernel", "rem.u16"),
])
def test_dividing_kernels_are_unknown_exactly_where_the_result_is_open(db, path, entry, against):
    out = verify_ptx(str(path), entry, against, db=db, cases=4000, processes=False)
    assert out.misrounded_count == 0 and out.unknown_count > 0 and out.verdict == "unknown", out
    for row in out.unknown_inputs:
        a, b = (int(v, 16) for v in row["inputs"])
        assert bool(api.unspecified(against, a, b)), row
        assert any("PTX ISA" in r["why"] or "most negative" in r["why"] for r in row["reasons"]), row


@pytest.mark.parametrize("path,entry,wrong", [
    (CUDA / "int_div.ptx", "k_idiv_s32", "div.u32"),
    (TRITON / "mod_s32_v.ptx", "mod_kernel", "div.s32"),
])
def test_another_division_is_a_counterexample(db, path, entry, wrong):
    out = verify_ptx(str(path), entry, wrong, db=db, cases=4000, processes=False)
    assert out.verdict == "counterexample" and out.misrounded_count > 0


def test_a_grid_stride_loop_counted_by_a_division_verifies(db):
    out = verify_ptx(str(CUDA / "grid_stride.ptx"), "k_fdiv_grid_stride_unroll4_counted", "div.rn.f32", db=db,
                     cases=3000, processes=False)
    assert out.verdict == "verified" and not out.exhaustive and out.unknown_count == 0


def test_cli_says_why_a_zero_divisor_is_unknown(capsys):
    code = main(["verify", str(CUDA / "int_div.ptx"), "--entry", "k_idiv_s32", "--against", "div.s32",
                 "--input", "5,0"])
    out, err = capsys.readouterr()
    assert code == 4, out + err
    assert "division by zero yields an unspecified, machine-specific value" in out


def test_a_lane_left_open_is_no_evidence_of_a_misrounding(capsys):
    """The kernel divides, the reference adds: at a zero divisor the kernel's result is open, so the
    input is unknown, not misrounded (whatever the representative is); elsewhere they differ."""
    path = str(CUDA / "int_div.ptx")
    assert main(["verify", path, "--entry", "k_idiv_s32", "--against", "add.s32", "--input", "5,0"]) == 4
    assert "division by zero" in capsys.readouterr().out
    assert main(["verify", path, "--entry", "k_idiv_s32", "--against", "add.s32", "--input", "12,3"]) == 1
