"""The special-value tables of sin, cos and tanh, and the inputs no bound covers.

Special inputs (zeros, infinities, NaNs) take the ISA's tables exactly and nothing else; a wrong
result on one is a counterexample. sin and cos are bounded on [-100pi, 100pi] only ("no defined
error guarantees" beyond): a finite input there is unknown, never verified, and the reason says so.
The expected special results are written here from the ISA's tables, not computed by the model.
(The bounds themselves: tests/model/test_sincos.py and test_tanh.py, against MPFR.)
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


@pytest.mark.parametrize("name,x", [("sin.approx.f32", 0xC3E35DCB), ("cos.approx.f32", 0x43E35DCB),
                                    ("sin.approx.ftz.f32", 0x7F7FFFFF)])
def test_finite_inputs_beyond_100pi_are_unknown_not_judged(name, x):
    r = api.allowed_results(name, np.array([x], dtype=np.uint16 if "bf16" in name else np.uint32))
    assert bool(r.unbounded[0])


def _verify(capsys, bits: int) -> tuple[int, dict]:
    code = main(["verify", str(TRITON / "tanh_asm_f32.ptx"), "--entry", "tanh_asm_kernel", "--against",
                 "tanh.approx.f32", "--input", hex(bits), "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


def test_a_tanh_kernel_is_its_contract(capsys):
    for bits in (0x7F800000, 0x3F000000, 0x00000001, 0xC2C80000):  # +Inf (the table), 0.5, a subnormal, -100
        code, out = _verify(capsys, bits)
        assert code == 0, (hex(bits), out["verdict"])


def test_a_wrong_special_result_is_a_counterexample(capsys):
    """sin(+Inf) is a NaN by its table, tanh(+Inf) is 1.0 by its own: the fast_sinf kernel is refuted
    against tanh.approx.f32 on +Inf. On 0.5 too: sin.approx.ftz allows more results there than the
    simulator enumerates (sin(0.5) +- 2^-20.5), none of them within tanh's bound (tanh(0.5) = 0.462,
    +- 2^-11 of it), so whichever the instruction returns is refused (tilecheck.verify.identity).
    Near 0 sin's whole set lies within tanh's (at 2^-7 they differ by x^3/6 = 2^-23.6): verified;
    between, at 0.0535, the sets overlap in part: unknown, neither verified nor refuted."""
    args = ["verify", str(TRITON / "fast_sin_f32.ptx"), "--entry", "fast_sin_kernel", "--against", "tanh.approx.f32",
            "--json", "-", "--input"]
    assert main(args + ["0x7f800000"]) == 1
    assert json.loads(capsys.readouterr().out)["counterexamples"][0]["expected"]["hex"] == "0x3f800000"
    assert main(args + ["0x3f000000"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["counterexamples"][0]["got"]["hex"] == "0x3ef57744"  # RN(sin 0.5), one of the 45 allowed
    assert main(args + ["0x3c000000"]) == 0
    assert main(args + ["0x3d5b0000"]) == 4
    capsys.readouterr()
