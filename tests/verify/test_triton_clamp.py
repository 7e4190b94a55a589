"""Triton's ``tl.clamp(x, -1.0, 1.0)``: bounds of one magnitude become ``min.xorsign.abs``.

Triton 3.9 lowers a clamp whose bounds are ``-c`` and ``c`` to one ``min.xorsign.abs`` of ``x``
and ``c`` (examples/triton/clamp_*.ptx): the smaller magnitude, with the XOR of the two sign
bits. For every number that is ``max(-1, min(x, 1))``. For a NaN ``x`` it is not: ``min`` with
one NaN operand gives the other operand, ``1.0``, and the XOR puts the NaN's sign bit on it, so a
NaN with the sign bit clear clamps to ``+1.0`` and one with it set to ``-1.0``, where
``min(max(x, -1.0), 1.0)`` (``tl.minimum(tl.maximum(x, -1.0), 1.0)``, which Triton emits as
``max.f32`` then ``min.f32``) gives ``-1.0`` for every NaN.

The misrounded inputs against that reference are predicted here without the model: exactly the
NaNs whose sign bit is clear, read off the bit patterns; against ``min.xorsign.abs`` itself the
kernel verifies. The ISA's pseudocode for ``.xorsign.abs`` is checked against the model's forms
in tests/model/test_surround_oracles.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.verify import compiled

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
HALVES = {"f16": (5, 10), "bf16": (8, 7)}  # exponent and fraction bits


def _positive_nans(fmt: str) -> set[int]:
    """The bit patterns of the NaNs whose sign bit is clear: exponent all ones, fraction non-zero."""
    e, m = HALVES[fmt]
    top = ((1 << e) - 1) << m
    return {top | f for f in range(1, 1 << m)}


@pytest.mark.parametrize("stem,fmt", [("clamp_f16", "f16"), ("clamp_bf16", "bf16"), ("clamp_f16_v", "f16")])
def test_clamp_misrounds_exactly_the_nans_with_the_sign_bit_clear(db, stem, fmt):
    o = compiled.verify_ptx(str(TRITON / f"{stem}.ptx"), "clamp_kernel", f"min.{fmt}(max.{fmt}(a, -1.0), 1.0)",
                            db=db, exhaustive=True)
    assert o.exhaustive and o.inputs_checked == 1 << 16
    assert o.verdict_word == "counterexample"
    got = {int(x[0]) for x in o.misrounded}
    assert o.misrounded_count == len(got) == (1 << HALVES[fmt][1]) - 1
    assert got == _positive_nans(fmt)
    c = o.counterexamples[0]
    assert c["expected"]["hex"] == {"f16": "0xbc00", "bf16": "0xbf80"}[fmt]  # -1.0
    assert c["got"]["hex"] == {"f16": "0x3c00", "bf16": "0x3f80"}[fmt]       # +1.0


@pytest.mark.parametrize("stem,fmt", [("clamp_f16", "f16"), ("clamp_f16_v", "f16"), ("clamp_bf16", "bf16")])
def test_clamp_is_min_xorsign_abs_over_every_input(db, stem, fmt):
    o = compiled.verify_ptx(str(TRITON / f"{stem}.ptx"), "clamp_kernel", f"min.xorsign.abs.{fmt}(a, 1.0)", db=db,
                            exhaustive=True)
    assert o.verdict_word == "verified" and o.exhaustive


def test_float_clamp_gives_plus_one_for_a_positive_nan(capsys):
    nan_plus, nan_minus = "0x7fc00001", "0xffc00000"
    ref = "min.f32(max.f32(a, -1.0), 1.0)"
    code = main(["verify", str(TRITON / "clamp_f32.ptx"), "--entry", "clamp_kernel", "--against", ref,
                 "--input", nan_plus, "--json", "-"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "counterexample"
    case = out["counterexamples"][0]
    assert case["got"]["hex"] == "0x3f800000" and case["expected"]["hex"] == "0xbf800000"
    code = main(["verify", str(TRITON / "clamp_f32.ptx"), "--entry", "clamp_kernel", "--against", ref,
                 "--input", nan_minus, "--json", "-"])
    assert code == 0 and json.loads(capsys.readouterr().out)["verdict"] == "no-counterexample"


def test_float_clamp_sampled_misrounds_only_positive_nans(db):
    ref = "min.f32(max.f32(a, -1.0), 1.0)"
    o = compiled.verify_ptx(str(TRITON / "clamp_f32.ptx"), "clamp_kernel", ref, db=db, cases=4096)
    bits = np.array([int(x[0]) for x in o.misrounded], dtype=np.uint64)
    assert bits.size and o.misrounded_count == bits.size
    assert np.all((bits & 0x7F800000) == 0x7F800000) and np.all(bits & 0x007FFFFF) and not np.any(bits >> 31)


def test_the_xorsign_instruction_is_refused_below_sm86(tmp_path, capsys):
    text = (TRITON / "clamp_f32.ptx").read_text().replace(".target sm_90a", ".target sm_80")
    path = tmp_path / "clamp_sm80.ptx"
    path.write_text(text)
    code = main(["check", str(path)])
    assert code == 1
    assert "min.xorsign.abs.f32" in capsys.readouterr().out
