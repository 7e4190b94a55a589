"""Approximate forms whose bounds the ISA documents but tilecheck does not model yet (sin, cos, tanh).

Their contracts judge the special-value table exactly and leave every finite non-zero input free
(the rule ``unmodelled``): such an input is unknown, never verified, and the reason says so; a
wrong result on a special input is refused. The expected special results are written here from the
ISA's tables, not computed by the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.model import api

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"

TABLES = {  # (operand, the ISA's result) per form
    "sin.approx.f32": [(0xFF800000, None), (0x80000000, 0x80000000), (0x00000000, 0x00000000), (0x7F800000, None)],
    "cos.approx.ftz.f32": [(0x80000000, 0x3F800000), (0x00000001, 0x3F800000), (0x7F800000, None)],
    "tanh.approx.f32": [(0xFF800000, 0xBF800000), (0x80000000, 0x80000000), (0x7F800000, 0x3F800000)],
    "tanh.approx.f16": [(0xFC00, 0xBC00), (0x7C00, 0x3C00), (0x8000, 0x8000)],
    "tanh.approx.bf16": [(0xFF80, 0xBF80), (0x7F80, 0x3F80)],
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_special_inputs_take_the_table_and_nothing_else(name):
    nan = {16: 0x7FFF, 32: 0x7FFFFFFF}[32 if "f32" in name else 16]
    for x, want in TABLES[name]:
        if want is None:  # a NaN, any NaN
            assert bool(api.allowed(name, nan, x)) and not bool(api.allowed(name, 0, x)), hex(x)
            continue
        assert bool(api.allowed(name, want, x)), hex(x)
        assert not bool(api.allowed(name, want ^ 1, x)) and not bool(api.allowed(name, nan, x)), hex(x)


@pytest.mark.parametrize("name,x", [("sin.approx.f32", 0x3F000000), ("cos.approx.f32", 0x43E35DCB),
                                    ("tanh.approx.f32", 0x3F000000), ("tanh.approx.bf16", 0x3F00)])
def test_finite_inputs_are_unknown_not_judged(name, x):
    r = api.allowed_results(name, np.array([x], dtype=np.uint16 if "bf16" in name else np.uint32))
    assert bool(r.unbounded[0])


def _verify(capsys, bits: int) -> tuple[int, dict]:
    code = main(["verify", str(TRITON / "tanh_asm_f32.ptx"), "--entry", "tanh_asm_kernel", "--against",
                 "tanh.approx.f32", "--input", hex(bits), "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


def test_a_tanh_kernel_is_judged_on_specials_and_unknown_elsewhere(capsys):
    code, out = _verify(capsys, 0x7F800000)  # tanh(+Inf) = 1.0 by the table: the instruction is its contract
    assert code == 0, out["verdict"]
    code, out = _verify(capsys, 0x3F000000)
    assert code == 4 and "does not model tanh yet" in json.dumps(out["unknown_inputs"])


def test_a_wrong_special_result_is_a_counterexample(capsys):
    """sin(+Inf) is a NaN by its table, tanh(+Inf) is 1.0 by its own: the fast_sinf kernel is refuted
    against tanh.approx.f32 on +Inf, and unknown, not refuted, on 0.5."""
    args = ["verify", str(TRITON / "fast_sin_f32.ptx"), "--entry", "fast_sin_kernel", "--against", "tanh.approx.f32",
            "--json", "-", "--input"]
    assert main(args + ["0x7f800000"]) == 1
    assert json.loads(capsys.readouterr().out)["counterexamples"][0]["expected"]["hex"] == "0x3f800000"
    assert main(args + ["0x3f000000"]) == 4
    capsys.readouterr()
