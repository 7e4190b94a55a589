"""Triton 3.9's conversions to and from the 8-bit floats, judged against the packed conversion each
one is (its lane's conversion: PTX has no scalar one).

Every committed kernel verifies against the form it emits, over every input where the source has 8
or 16 bits (f32 sampled here; the README's row is exhaustive); against the other 8-bit format, or
with a ``.relu`` it does not have, the same kernels are refuted with the counterexample a user can
rerun. Triton's float8e4nv-to-bfloat16 converts with a spelling the ISA does not define
(``cvt.bf16.f16``), run under each of its readings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilecheck.cli import main

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"


def _verify(capsys, stem: str, ref: str, *extra: str) -> tuple[int, dict]:
    code = main(["verify", str(TRITON / f"{stem}.ptx"), "--entry", "convert_kernel", "--against", ref, "--json", "-",
                 *extra])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


@pytest.mark.parametrize("stem,ref,inputs", [
    ("convert_f16_e4m3", "cvt.rn.satfinite.e4m3x2.f16x2", 1 << 16),
    ("convert_f16_e5m2_v", "cvt.rn.satfinite.e5m2x2.f16x2", 1 << 16),
    ("convert_bf16_e4m3", "cvt.rn.satfinite.e4m3x2.f32(cvt.f32.bf16(a))", 1 << 16),
    ("convert_e4m3_f16", "cvt.rn.f16x2.e4m3x2", 256),
    ("convert_e5m2_f16_v", "cvt.rn.f16x2.e5m2x2", 256),
    ("convert_e4m3_f32", "cvt.f32.f16(cvt.rn.f16x2.e4m3x2(a))", 256),
])
def test_every_input_of_the_narrow_sources_verifies(capsys, stem, ref, inputs):
    code, out = _verify(capsys, stem, ref, "--exhaustive")
    assert code == 0, out.get("verdict")
    assert out["exhaustive"] and out["inputs_checked"] == inputs


@pytest.mark.parametrize("stem,ref", [("convert_f32_e4m3", "cvt.rn.satfinite.e4m3x2.f32"),
                                      ("convert_f32_e4m3_v", "cvt.rn.satfinite.e4m3x2.f32"),
                                      ("convert_f32_e5m2", "cvt.rn.satfinite.e5m2x2.f32")])
def test_binary32_sources_verify_on_samples_and_edges(capsys, stem, ref):
    code, out = _verify(capsys, stem, ref, "--cases", "4096")
    assert code == 0, out.get("verdict")
    for bits in ("0x43e00000", "0x43e80000", "0x7f800000", "0xff800000", "0x7fc00000", "0x3a800000", "0x3a000000"):
        code, out = _verify(capsys, stem, ref, "--input", bits)  # 448, 464 (a tie), +-inf, NaN, 2^-10, 2^-11
        assert code == 0, (bits, out.get("verdict"))


def test_the_other_format_is_refuted(capsys):
    code, out = _verify(capsys, "convert_f16_e4m3", "cvt.rn.satfinite.e5m2x2.f16x2", "--input", "0x3c00")
    assert code == 1
    cex = out["counterexamples"][0]
    assert cex["got"]["hex"] == "0x38" and cex["expected"]["hex"] == "0x3c"  # 1.0 in E4M3, in E5M2


def test_a_relu_the_kernel_does_not_apply_is_refuted(capsys):
    code, out = _verify(capsys, "convert_f32_e4m3", "cvt.rn.satfinite.relu.e4m3x2.f32", "--input", "0xbf800000")
    assert code == 1 and out["counterexamples"][0]["got"]["hex"] == "0xb8"  # -1.0 kept where .relu gives +0


def test_e4m3_to_bfloat16_runs_its_undefined_conversion_under_every_reading(capsys):
    """Triton widens to f16, then cvt.bf16.f16: no rounding modifier, which the ISA requires and
    ptxas does without. It runs as any of the four roundings (the spec's reading); every E4M3 value
    is a bfloat16 exactly, so they agree and all 256 inputs verify."""
    code, out = _verify(capsys, "convert_e4m3_bf16", "cvt.rn.bf16.f32(cvt.f32.f16(cvt.rn.f16x2.e4m3x2(a)))",
                        "--exhaustive")
    assert code == 0 and out["inputs_checked"] == 256
    assert out["read_as"] and out["read_as"][0].startswith("cvt.bf16.f16 (read as any of cvt.rn.bf16.f16")
