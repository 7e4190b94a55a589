"""Compiled-PTX reports say what they mean: a sampled run finds "no counterexample in N sampled
inputs" (only an exhaustive run is VERIFIED, in the text and in the JSON); the sampling breakdown
adds up to N; UNKNOWN lists its first unknown inputs with why each is unknown; a counterexample
shows the registers on the data-flow path from the loads to the result, one per line; misrounded
inputs are counted by class (in value; a NaN's payload; a zero's sign), a class printed only when
it holds inputs, the count in value leading; and the contracts' sign rule is printed next to the
ulp reading."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tilecheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "examples" / "cuda"
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

HSQRT = """
.visible .func (.param .b16 r) good_hsqrt(.param .b16 a)
{
  .reg .b16 %rs<3>;
  .reg .f32 %f<3>;
  ld.param.b16 %rs1, [a];
  cvt.f32.f16 %f1, %rs1;
  sqrt.rn.f32 %f2, %f1;
  cvt.rn.f16.f32 %rs2, %f2;
  st.param.b16 [r], %rs2;
  ret;
}
"""


def _kernel(body: str) -> str:
    """An elementwise f32 kernel out[i] = f(a[i], b[i]) whose body computes %f4 from %f1, %f2."""
    return HEADER + f"""
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 out)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<6>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r3, %r1, %r2, %r3;
  mul.wide.u32 %rd4, %r3, 4;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  ld.global.f32 %f2, [%rd6];
{body}
  st.global.f32 [%rd7], %f4;
  ret;
}}
"""


def _run(capsys, *argv):
    """(exit code, JSON report, text report) of one ``tilecheck verify FILE.ptx`` run."""
    code = main(["verify", *map(str, argv), "--json", "-"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return code, json.loads(cap.out), cap.err


def _verdict_line(text: str) -> str:
    return [line for line in text.splitlines() if line.startswith("verdict: ")][-1]


def test_only_an_exhaustive_run_is_verified(tmp_path, capsys):
    path = tmp_path / "h.ptx"
    path.write_text(HEADER + HSQRT)
    code, data, text = _run(capsys, path, "--entry", "good_hsqrt", "--against", "sqrt.rn.f16")
    assert code == 0 and data["exhaustive"] and data["verdict"] == "verified"
    assert _verdict_line(text).startswith("verdict: VERIFIED: no counterexample in all 65536 inputs (exhaustive)")
    code, data, text = _run(capsys, path, "--entry", "good_hsqrt", "--against", "sqrt.rn.f16", "--cases", "2000")
    assert code == 0 and not data["exhaustive"] and data["verdict"] == "no-counterexample"
    assert data["inputs"] == "2000 sampled inputs"
    line = _verdict_line(text)
    assert line.startswith("verdict: NO COUNTEREXAMPLE in 2000 sampled inputs (not exhaustive)")
    assert "VERIFIED" not in text
    code, data, text = _run(capsys, path, "--entry", "good_hsqrt", "--against", "sqrt.rn.f16", "--input", "0x3c00")
    assert code == 0 and data["verdict"] == "no-counterexample"
    assert _verdict_line(text).startswith("verdict: NO COUNTEREXAMPLE in the 1 given input")


def test_the_sampling_breakdown_adds_up_to_the_inputs_checked(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(_kernel("  div.rn.f32 %f4, %f1, %f2;"))
    code, data, text = _run(capsys, path, "--entry", "k", "--against", "div.rn.f32", "--cases", "3000")
    assert code == 0 and data["inputs_checked"] == 3000
    assert sum(data["sampling"].values()) == 3000 and set(data["sampling"]) == {"special", "hard", "uniform"}
    m = re.search(r"inputs checked: 3000 \(sampled: special (\d+) \+ hard (\d+) \+ uniform (\d+)\)", text)
    assert m and sum(map(int, m.groups())) == 3000


def test_unknown_lists_its_unknown_inputs_and_why(capsys):
    """``__fdividef`` (div.approx.f32 without .ftz): a subnormal divisor is bounded by nothing."""
    path = CUDA / "float.ptx"
    line = next(k for k, text in enumerate(path.read_text().splitlines(), 1)
                if "div.approx.f32" in text and k > 15)
    code, data, text = _run(capsys, path, "--entry", "k_fdividef", "--against", "div.approx.f32", "--cases", "3000")
    assert code == 4 and data["verdict"] == "unknown" and data["unknown_count"] > 3
    assert len(data["unknown_inputs"]) == 3
    for u in data["unknown_inputs"]:
        (why,) = u["reasons"]
        assert why["line"] == line and why["instruction"].startswith("div.approx.f32")
        divisor = int(why["operands"][1], 16) & 0x7FFFFFFF
        assert 0 < divisor < 0x00800000, u  # subnormal: the contract's domain rule bounds nothing
        assert "subnormal" in why["why"] and "§9.7.3.8" in why["why"]
        assert f"({', '.join(u['inputs'])}): line {line}: div.approx.f32" in text
    assert f"unknown inputs: {data['unknown_count']} (" in text and "the first 3:" in text
    assert re.search(rf"verdict: UNKNOWN: {data['unknown_count']} of 3000 sampled inputs reach a contract that "
                     r"leaves them unjudged \(why: listed above\)", text)
    # the repro of one of them says the same
    a, b = data["unknown_inputs"][0]["inputs"]
    code, one, text = _run(capsys, path, "--entry", "k_fdividef", "--against", "div.approx.f32", "--input", f"{a},{b}")
    assert code == 4 and one["unknown_inputs"][0]["reasons"] == data["unknown_inputs"][0]["reasons"]


def test_a_counterexample_shows_the_registers_on_the_path_to_the_result(capsys):
    code, data, text = _run(capsys, CUDA / "half.ptx", "--entry", "k_hdiv_f16", "--against", "div.rn.f16",
                            "--input", "0xa147,0x53ab")
    assert code == 1
    (cex,) = data["counterexamples"]
    regs = cex["registers"]
    path = cex["register_path"]
    assert list(regs) == [r["register"] for r in path]
    # from the loaded operands to the stored result: the operands, the reciprocal, the quotient
    assert [(r["value"], r["written"][0].split(": ")[1].split()[0]) for r in path[:2]] == \
        [("0xa147", "ld.global.u16"), ("0x53ab", "ld.global.u16")]
    assert any("rcp.approx.ftz.f32" in w for r in path for w in r["written"])
    assert path[-1]["value"] == cex["got"]["hex"] and "cvt.rn.f16.f32" in path[-1]["written"][0]
    # the lane took the fast path: the FMA correction's registers, never written, are not shown
    assert not [r for r in path if any("fma.rn.f32" in w for w in r["written"])], path
    # address arithmetic and the thread index are not on the path
    assert not [r for r in regs if r.startswith("%rd") or r in ("%r1", "%r2", "%r3", "%r4")], regs
    assert all(r["written"] and all(re.match(r"line \d+: ", w) for w in r["written"]) for r in path)
    # one register per line, each with its value and the instructions writing it
    block = text.split("registers on the path from the loads to the result:\n", 1)[1].split("    repro:")[0]
    shown = block.rstrip("\n").splitlines()
    assert len(shown) == len(path)
    for r, line in zip(path, shown):
        assert re.fullmatch(rf"\s+{re.escape(r['register'])}\s+= {r['value']}\s+\(line \d+: .+\)", line), line


@pytest.mark.parametrize("body,classes,headline", [
    # correctly rounded, but a -0 quotient comes back +0 (-0 + +0 = +0): only a zero's sign
    ("  div.rn.f32 %f3, %f1, %f2;\n  add.rn.f32 %f4, %f3, 0f00000000;", {"zero_sign"}, "all"),
    # truncated quotients, the zeros' signs kept: only in value
    ("  div.rz.f32 %f4, %f1, %f2;", {"value"}, "value"),
    # both: the value count leads
    ("  div.rz.f32 %f3, %f1, %f2;\n  add.rn.f32 %f4, %f3, 0f00000000;", {"value", "zero_sign"}, "value"),
])
def test_misrounded_inputs_are_counted_by_class_the_value_count_leading(tmp_path, capsys, body, classes, headline):
    path = tmp_path / "k.ptx"
    path.write_text(_kernel(body))
    code, data, text = _run(capsys, path, "--entry", "k", "--against", "div.rn.f32", "--cases", "4000")
    assert code == 1 and data["verdict"] == "counterexample"
    got = data["misrounded_classes"]
    assert set(got) == classes and all(got.values()) and sum(got.values()) == data["misrounded_count"]
    assert data["misrounded_by_value_count"] == got.get("value", 0)
    assert data["headline"]["counts"] == headline
    assert data["headline"]["misrounded"] == (got["value"] if headline == "value" else data["misrounded_count"])
    # a class line only where the class holds inputs
    assert ("    in value:" in text) == ("value" in classes)
    assert "value" not in classes or f"    in value: {got['value']}\n" in text
    assert ("only by the sign of a zero (both results zeros)" in text) == ("zero_sign" in classes)
    assert "payload of a NaN" not in text  # f32 results are compared as NaNs by class: that class cannot occur
    verdict = _verdict_line(text)
    if classes == {"value"}:
        assert f"{got['value']} of 4000 sampled inputs misrounded, all in value" in verdict
    elif "value" in classes:
        assert f"{got['value']} of 4000 sampled inputs misrounded in value" in verdict
        assert f"{data['misrounded_count']} misrounded in all: {got['zero_sign']} more only by the sign" in verdict
    else:
        assert "none in value" in verdict and f"{got['zero_sign']} only by the sign of a zero" in verdict
    # a value misrounding is the first counterexample shown where there is one
    first = data["counterexamples"][0]
    zero = {"0x00000000", "0x80000000"}
    assert ({first["got"]["hex"], first["expected"]["hex"]} <= zero) == ("value" not in classes)


def test_a_nan_payload_is_a_class_only_where_the_reference_judges_payloads(tmp_path, capsys):
    """rcp.approx.ftz.f64's contract fixes its NaN (0x7fffffff00000000): an IEEE reciprocal's
    quieted input NaN is misrounded by payload only."""
    path = tmp_path / "r.ptx"
    path.write_text(HEADER + """
.visible .func (.param .f64 r) f(.param .f64 a)
{
  .reg .f64 %fd<3>;
  ld.param.f64 %fd1, [a];
  rcp.rn.f64 %fd2, %fd1;
  st.param.f64 [r], %fd2;
  ret;
}
""")
    code, data, text = _run(capsys, path, "--entry", "f", "--against", "rcp.approx.ftz.f64", "--cases", "2000")
    assert code == 1 and data["misrounded_classes"].get("nan_payload", 0) > 0
    assert sum(data["misrounded_classes"].values()) == data["misrounded_count"]
    assert f"    only by the payload of a NaN (both results NaNs): {data['misrounded_classes']['nan_payload']}" in text
    # against IEEE rcp.rn.f64 (NaNs by class) the same code is correctly rounded: no class at all
    code, data, text = _run(capsys, path, "--entry", "f", "--against", "rcp.rn.f64", "--cases", "2000")
    assert code == 0 and data["misrounded_classes"] == {} and "payload of a NaN" not in text


def test_the_sign_rule_is_reported_next_to_the_ulp_reading(tmp_path, capsys, db):
    rule = getattr(db, "sign_rule", None)
    if rule is None:
        pytest.skip("the spec database states no sign rule")
    path = tmp_path / "k.ptx"
    path.write_text(_kernel("  div.approx.f32 %f4, %f1, %f2;"))
    code, data, text = _run(capsys, path, "--entry", "k", "--against", "div.approx.f32", "--cases", "500")
    assert data["sign_rule"] == rule.short and data["ulp_reading"] == "either"
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if "ulp reading: either" in line)
    assert lines[at + 1].strip() == rule.describe()
    # the forms' report too: on the contracts line, and in its JSON
    code = main(["verify", "div.approx.f32", "--cases", "20", "--json", "-"])
    cap = capsys.readouterr()
    assert f"contracts: ulp bounds read as either (--ulp-reading); {rule.describe()}" in cap.err
    assert json.loads(cap.out)["meta"]["sign_rule"] == rule.short
