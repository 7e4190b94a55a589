"""``tilecheck prove``: the query language and the tractable queries (proofs in f16 and reduced
formats, counterexamples), an unknown answer at a time limit, and the exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest

z3 = pytest.importorskip("z3")

from tilecheck.errors import UnknownFormError, UsageError  # noqa: E402
from tilecheck.spec.database import load_database
from tilecheck.smt import prove  # noqa: E402


def answer(name_or_query, timeout=60, **kw):
    named = prove.NAMED.get(name_or_query)
    if named:
        built = prove.build(named.query, named.assume, dict(named.var), db=load_database())
    else:
        built = prove.build(name_or_query, kw.get("assume", ()), kw.get("var", {}), db=load_database())
    return prove.solve(built, timeout)


@pytest.mark.parametrize("name", ["f16.div-by-4", "ptx.div-by-4.f32", "e3m3.div-via-e5m9"])
def test_tractable_proofs(name):
    out = answer(name)
    assert out.status == "proved", out


@pytest.mark.parametrize("name", ["e3m3.div-via-e4m6", "e3m2.fma-via-e4m6"])
def test_counterexamples_are_real(name):
    out = answer(name)
    assert out.status == "counterexample", out
    assert out.assignment and out.values
    # the two compared sides differ in the reported model
    lhs, rhs = out.values[0][1], out.values[1][1]
    assert lhs != rhs


def test_counterexample_checked_against_the_model():
    from tilecheck.model.api import evaluate

    out = answer("fma.rn.f16(a, b, c) == add.rn.f16(mul.rn.f16(a, b), c)",
                 assume=["is_normal(a)", "is_normal(b)", "is_normal(c)"])
    assert out.status == "counterexample"
    v = {name: int(shown.split()[0], 16) for name, shown in out.assignment}
    fused = int(evaluate("fma.rn.f16", v["a"], v["b"], v["c"]))
    split = int(evaluate("add.rn.f16", int(evaluate("mul.rn.f16", v["a"], v["b"])), v["c"]))
    assert fused != split
    assert out.values[0][1].startswith(f"0x{fused:04x}") and out.values[1][1].startswith(f"0x{split:04x}")


def test_timeouts_are_unknown_never_proved():
    built = prove.build(prove.NAMED["f16.div-via-f32"].query, (), dict(prove.NAMED["f16.div-via-f32"].var), db=load_database())
    out = prove.solve(built, timeout=0.5)
    assert out.status == "unknown"
    assert out.status != "proved"


def test_query_errors():
    with pytest.raises(UsageError, match="syntax error"):
        prove.build("div.rn.f32(x, ", db=load_database())
    with pytest.raises(UnknownFormError, match="no PTX form uses .f33; did you mean div.rn.f32"):
        prove.build("div.rn.f33(x, y) == x", db=load_database())
    with pytest.raises(UsageError, match="cannot tell the (operands' )?format"):
        prove.build("add(rn, a, b) == add(rn, b, a)", db=load_database())
    with pytest.raises(UsageError, match="not part of the query language"):
        prove.build("[x for x in y]", db=load_database())
    with pytest.raises(UsageError, match="not exactly representable"):
        prove.build("div.rn.f32(x, 0.1) == x", db=load_database())
    with pytest.raises(UsageError, match="unknown format"):
        prove.build("add(rn, a, b) == a", var_formats={"a": "f8", "b": "f8"}, db=load_database())


def run_cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "tilecheck", "prove", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_cli_exit_codes():
    proved = run_cli("f16.div-by-4")
    assert proved.returncode == 0 and "proved" in proved.stdout, proved.stdout + proved.stderr
    refuted = run_cli("add(rn, a, b) == add(rn, b, a) and a == b", "--var", "a=e3m2", "--var", "b=e3m2")
    assert refuted.returncode == 1 and "counterexample" in refuted.stdout
    unknown = run_cli("f16.div-via-f32", "--timeout", "0.5")
    assert unknown.returncode == 4 and "unknown" in unknown.stdout and "not a proof" in unknown.stdout
    usage = run_cli("div.rn.f32(x")
    assert usage.returncode == 2 and "syntax error" in usage.stderr
    listed = run_cli("--list")
    assert listed.returncode == 0 and "amdgpu.fdiv64" in listed.stdout


def test_sequence_counterexample_found_by_the_solver():
    """Z3 confirms the campaign's finding on its own: with d = 0x3fffffff it picks the reciprocal
    0.5 (inside the 1-ulp contract) and the f32 macro returns -0.5 for -1/d."""
    out = answer("amdgpu.fdiv32.all-ones-denominator", timeout=120)
    assert out.status == "counterexample", out
    shown = dict(out.values)
    assert any(v.startswith("0xbf000000") for v in shown.values())
    assert any(v.startswith("0xbf000001") for v in shown.values())
    assert any(label.startswith("amdgpu.fdiv32: r") for label, _ in out.assignment)
