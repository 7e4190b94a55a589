"""An approximate instruction whose bound no document states (the spec's ``provisional: true``,
rsqrt.approx.f64 that Triton's ``tl.math.rsqrt`` on float64 lowers to) makes the inputs it decides
unknown (exit 4), never a verdict; ``--approx provisional`` judges them under the spec's bound."""

from __future__ import annotations

import json
from pathlib import Path

from tilecheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
RSQRT64 = ROOT / "examples" / "triton" / "rsqrt_f64.ptx"


def _run(capsys, *extra) -> tuple[int, dict]:
    code = main(["verify", str(RSQRT64), "--entry", "rsqrt_kernel", "--cases", "400", "--json", "-", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_a_bound_no_document_states_gives_unknown(capsys):
    for against in ("rsqrt.rn.f64", "rsqrt.approx.f64"):
        code, out = _run(capsys, "--against", against)
        assert code == 4 and out["verdict"] == "unknown", against
        assert out["unknown_count"] > 0 and out["misrounded_count"] == 0
        assert "provisional" in json.dumps(out["unknown_inputs"])


def test_special_cases_stay_judged(capsys):
    # rsqrt(+inf) = +0 is in the ISA's table: that input is decided, not unknown
    code = main(["verify", str(RSQRT64), "--entry", "rsqrt_kernel", "--against", "rsqrt.rn.f64",
                 "--input", "0x7ff0000000000000", "--json", "-"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["unknown_count"] == 0


def test_provisional_bounds_on_request(capsys):
    code, out = _run(capsys, "--against", "rsqrt.rn.f64", "--approx", "provisional")
    assert code == 1 and out["unknown_count"] == 0 and out["misrounded_by_value_count"] > 0
    code, out = _run(capsys, "--against", "rsqrt.approx.f64", "--approx", "provisional")
    assert code == 0
