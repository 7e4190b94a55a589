"""Scalar expressions: typed constants and their bits, literals, arithmetic and comparison rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tilecheck.program import T
from tilecheck.tile.dtypes import DTYPES, lookup
from tilecheck.tile.exprs import BinOp, Compare, Const, ThreadIndex, as_expr


@pytest.mark.parametrize("const, dtype, bits", [
    (T.float32(4), None, 0x40800000),
    (T.float32(-0.0), None, 0x80000000),
    (T.float32(0.1), None, int(np.float32(0.1).view(np.uint32))),
    (T.float16(1), None, 0x3C00),
    (T.float16(65520), None, 0x7C00),            # rounds to +inf, as the f16 format says
    (T.bfloat16(1), None, 0x3F80),
    (T.float64(1 / 3), None, int(np.float64(1 / 3).view(np.uint64))),
    (T.float32(math.inf), None, 0x7F800000),
    (T.uint32(0x3C003C00), None, 0x3C003C00),
    (T.int32(-1), None, 0xFFFFFFFF),
    (Const.literal(2), DTYPES["float32"], 0x40000000),
    (Const.literal(0x7FC00000), DTYPES["uint32"], 0x7FC00000),
])
def test_constant_bits(const, dtype, bits):
    assert const.bits(dtype) == bits


def test_nan_constant_is_the_format_default_nan():
    from tilecheck.formats import get_format

    f32 = get_format("f32")
    assert T.float32(math.nan).bits() == f32.default_nan
    assert bool(f32.is_nan(np.array([T.float32(math.nan).bits()], dtype=np.uint32))[0])


def test_untyped_constant_needs_a_dtype_to_encode():
    with pytest.raises(ValueError, match="needs a dtype"):
        Const.literal(1.5).bits()


@pytest.mark.parametrize("const, fragment", [
    (T.uint32(-1), "does not fit uint32"),
    (T.int16(40000), "does not fit int16"),
    (T.uint32(1.5), "needs an integer"),
    (T.float32("x"), "needs a number"),
    (T.bool(2), "needs True/False"),
])
def test_typed_constant_problems_are_kept_on_the_node(const, fragment):
    (problem,) = const.problems()
    assert fragment in problem


def test_literals_and_numpy_scalars():
    assert as_expr(3).dtype is None and as_expr(True).dtype is T.bool
    assert as_expr(np.float32(2)).dtype is T.float32
    assert as_expr("text") is None
    assert lookup("float32") is T.float32 and lookup(T.uint16) is T.uint16 and lookup("f32") is None


def test_arithmetic_and_comparisons_build_nodes():
    lane = T.lane_id()
    expr = (1 + lane) * 2 < 8
    assert isinstance(expr, Compare) and expr.dtype is T.bool and expr.problems() == []
    assert isinstance(expr.lhs, BinOp) and isinstance(expr.lhs.lhs, BinOp)
    assert expr.lhs.lhs.lhs.value == 1 and isinstance(expr.lhs.lhs.rhs, ThreadIndex)
    both = (lane == 0) & (T.warp_id() != 1)
    assert both.dtype is T.bool and both.problems() == []
    assert (T.thread_id() % 2).dtype is T.int32


def test_expression_problems():
    assert "needs integer operands" in (T.float32(1) * 2).problems()[0]
    assert "mixes int32 and uint32" in (T.lane_id() + T.uint32(1)).problems()[0]
    assert "compares int32 with int64" in (T.lane_id() < T.int64(3)).problems()[0]
    assert (T.uint32(-5) + 1).problems() == ["-5 does not fit uint32 (range 0..4294967295)"]
