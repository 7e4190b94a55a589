"""Spellings ptxas accepts that the ISA does not define, run as any of the forms the spec records
they may mean (``reading``): ``cvt.bf16.f16`` (no rounding modifier, which f16 to bf16 needs) is any
of ``cvt.{rn,rz,rm,rp}.bf16.f16``; ``cvt.rn.f32.bf16`` (a rounding on an exact widening) is
``cvt.f32.bf16``. Where the readings agree the code is judged as usual; where they differ every
result is allowed to the code, so a reference that takes one of them is not guaranteed."""

from __future__ import annotations

import json

import pytest

from tilecheck.cli import main
from tilecheck.errors import SpecError

from support.elementwise_ptx import elementwise_kernel

BF16_OF_F16 = "  .reg .b16 %h<2>;\n  ld.global.b16 %h1, [%rd4];\n  cvt.bf16.f16 %h1, %h1;\n  st.global.b16 [%rd5], %h1;"


def _verify(capsys, tmp_path, body: str, ref: str, *extra: str) -> tuple[int, dict]:
    path = elementwise_kernel(tmp_path, body, element_bytes=2)
    code = main(["verify", path, "--against", ref, "--json", "-", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_readings_that_agree_verify(capsys, tmp_path):
    # 1.0 and 2^-14 are bfloat16 values exactly: every rounding gives them
    for bits in ("0x3c00", "0x0400"):
        code, out = _verify(capsys, tmp_path, BF16_OF_F16, "cvt.rn.bf16.f16", "--input", bits)
        assert code == 0, (bits, out["verdict"])
        assert out["lanes_run"] == 1  # one result: nothing forked


def test_readings_that_differ_are_every_one_allowed(capsys, tmp_path):
    # f16 0x0105 (261 x 2^-24) lies between two bfloat16 values: rn and rm round down, rp up
    code, out = _verify(capsys, tmp_path, BF16_OF_F16, "cvt.rn.bf16.f16", "--input", "0x0105")
    assert code == 1 and out["lanes_run"] == 2
    assert out["counterexamples"][0]["got"]["hex"] == "0x3783" and out["counterexamples"][0]["expected"]["hex"] == "0x3782"
    code, out = _verify(capsys, tmp_path, BF16_OF_F16, "cvt.rn.bf16.f16", "--input", "0x0105", "--approx", "reference")
    assert code == 0  # the first reading alone: rn


def test_a_rounding_on_an_exact_widening_is_the_widening(capsys, tmp_path):
    # bf16 in, f32 out: the output address is computed here (4-byte elements; %r2 and %rd7 are free)
    body = ("  .reg .b16 %h<2>;\n  ld.global.b16 %h1, [%rd4];\n  cvt.rz.f32.bf16 %r2, %h1;\n"
            "  mul.wide.u32 %rd7, %r1, 4;\n  add.s64 %rd7, %rd2, %rd7;\n  st.global.b32 [%rd7], %r2;")
    path = elementwise_kernel(tmp_path, body, element_bytes=2)
    code = main(["verify", path, "--against", "cvt.f32.bf16", "--exhaustive", "--json", "-"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["inputs_checked"] == 1 << 16 and out["read_as"] == []


def test_lint_still_reports_the_spelling(capsys, tmp_path):
    main(["check", elementwise_kernel(tmp_path, BF16_OF_F16, element_bytes=2)])
    out = capsys.readouterr()
    assert "error[PX005]" in out.out + out.err


@pytest.mark.parametrize("entry,why", [
    ("{spelling: cvt.bf16.f16, reason: r, ptxas: m, reading: [cvt.rn.bf16.f16]}", "a reading is for a spelling ptxas accepts"),
    ("{spelling: cvt.bf16.f16, reason: r, ptxas_accepts: true, reading: [cvt.rq.bf16.f16]}", "is no form of the database"),
])
def test_a_wrong_reading_is_a_located_spec_error(tmp_path, entry, why):
    import shutil
    from pathlib import Path

    from tilecheck.spec.database import load_database

    root = Path(__file__).resolve().parents[2] / "spec"
    copy = tmp_path / "spec"
    shutil.copytree(root, copy)
    cvt = copy / "ptx" / "cvt.yaml"
    text = cvt.read_text()
    start = text.index("  - {spelling: cvt.bf16.f16,")
    end = text.index("\n", start)
    cvt.write_text(text[:start] + "  - " + entry + text[end:])
    with pytest.raises(SpecError, match=why) as err:
        load_database(copy)
    assert "cvt.yaml:" in str(err.value)
