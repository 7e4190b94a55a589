"""``tilecheck verify`` on the forms around the arithmetic: cvt, setp, min/max, selp, testp, integer
and logic operations, memory forms of every state space and cvta run and pass, and a model that
rounds a conversion the wrong way, compares NaNs the wrong way or orders signed zeros the wrong way
is caught (exit 1) -- by the oracle check and by the kernel the simulator runs through the model."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.model import instructions
from tilecheck.spec.database import load_database

DB = load_database()


def _run(capsys, *args):
    code = main(["verify", *args, "--backend", "cpu", "--json", "-"])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.mark.parametrize("family", ["cvt", "setp", "min", "max", "selp", "testp", "shr", "mad", "and", "ld", "st",
                                    "cvta", "mov", "copysign"])
def test_family_runs_and_passes(capsys, family):
    code, report = _run(capsys, family)
    assert code == 0, [i for i in report["items"] if not i["ok"]][:3]
    names = {i["name"] for i in report["items"]}
    assert names == {f.name for f in DB.families[family].forms}
    for item in report["items"]:
        checks = {c["name"].split("(")[0]: c for c in item["checks"]}
        form = DB.forms[item["name"]]
        if form.kind == "function" and form.family != "cvta":
            assert checks["oracle"]["skipped"] is None and checks["oracle"]["cases"] >= 64, item["name"]
            assert checks["differential"]["skipped"] is None, item["name"]
            assert "judged by" in checks["differential"]["details"][0]


def test_cases_option_reaches_the_forms_around_the_arithmetic(capsys):
    code, report = _run(capsys, "cvt.rn.f16.f32", "--cases", "500")
    (item,) = report["items"]
    oracle = next(c for c in item["checks"] if c["name"] == "oracle")
    assert code == 0 and oracle["cases"] == 500


def _mutant(monkeypatch, key, wrap):
    original = instructions.IMPLEMENTATIONS[key]
    monkeypatch.setitem(instructions.IMPLEMENTATIONS, key, wrap(original))


def _failed_checks(report) -> dict:
    return {i["name"]: sorted(c["name"].split("(")[0] for c in i["checks"] if c["mismatches"]) for i in report["items"]
            if not i["ok"]}


def test_a_conversion_rounding_the_wrong_way_is_caught(capsys, monkeypatch):
    def wrap(original):
        def run(xp, form, args, p):
            if p.get("rounding") == "rn":
                p = {**p, "rounding": "rz"}
            return original(xp, form, args, p)
        return run

    _mutant(monkeypatch, "cvt.float", wrap)
    code, report = _run(capsys, "cvt.rn.f16.f32", "cvt.rn.bf16.f32", "cvt.rz.f16.f32")
    assert code == 1
    failed = _failed_checks(report)
    assert set(failed) == {"cvt.rn.f16.f32", "cvt.rn.bf16.f32"}
    assert all({"differential", "oracle"} <= set(checks) for checks in failed.values())


def test_a_comparison_true_on_nan_is_caught(capsys, monkeypatch):
    def wrap(original):
        def run(xp, form, args, p, destinations=1):
            if p.get("cmp") == "ne":
                p = {**p, "cmp": "neu"}  # ordered != made true on NaN, as C's != is
            return original(xp, form, args, p, destinations)
        return run

    _mutant(monkeypatch, "cmp.setp", wrap)
    code, report = _run(capsys, "setp.ne.f32", "setp.ne.f64", "setp.eq.f32")
    assert code == 1
    assert set(_failed_checks(report)) == {"setp.ne.f32", "setp.ne.f64"}


def test_min_max_with_signed_zeros_swapped_is_caught(capsys, monkeypatch):
    def wrap(original):
        def run(xp, form, args, p):
            out = np.asarray(original(xp, form, args, p)).copy()
            a, b = (np.asarray(x).astype(np.uint64) for x in args)
            fmt = form.format
            zeros = ((a & np.uint64(fmt.magnitude_mask)) == 0) & ((b & np.uint64(fmt.magnitude_mask)) == 0) & (a != b)
            return np.where(zeros, out ^ np.uint64(fmt.sign_mask), out)  # min(-0, +0) = +0, max = -0
        return run

    _mutant(monkeypatch, "float.min", wrap)
    _mutant(monkeypatch, "float.max", wrap)
    code, report = _run(capsys, "min.f32", "max.f64", "min.ftz.f32", "min.f16")
    assert code == 1
    assert set(_failed_checks(report)) == {"min.f32", "max.f64", "min.ftz.f32", "min.f16"}


def test_a_predicated_kernel_that_overwrites_masked_threads_is_caught(capsys, monkeypatch):
    from tilecheck.emit import function_kernel

    original = function_kernel.build

    def unguarded(form, target, version, predicated, name):
        ptx, params = original(form, target, version, predicated, name)
        return re.sub(rf"@%p\d+ {re.escape(form.name)} ", f"{form.name} ", ptx), params

    monkeypatch.setattr(function_kernel, "build", unguarded)
    code, report = _run(capsys, "abs.s32")
    assert code == 1
    diff = next(c for c in report["items"][0]["checks"] if c["name"].startswith("differential"))
    assert any("masked-off" in d for d in diff["details"])


def test_a_packed_conversion_rounding_the_wrong_way_is_caught_and_reported_by_lane(capsys, monkeypatch):
    def wrap(original):
        def run(xp, form, args, p):
            return original(xp, form, args, {**p, "rounding": "rz"} if p.get("rounding") == "rn" else p)
        return run

    _mutant(monkeypatch, "cvt.pack", wrap)
    code, report = _run(capsys, "cvt.rn.f16x2.f32")
    assert code == 1
    oracle = next(c for c in report["items"][0]["checks"] if c["name"] == "oracle")
    assert oracle["mismatches"] and " | " in oracle["details"][1]  # both lanes described
