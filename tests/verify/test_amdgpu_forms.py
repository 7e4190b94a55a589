"""``tilecheck verify`` on the AMD instruction forms: the ``amdgpu-form`` items and their checks."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from tilecheck.amdgpu import contract as rcp_model
from tilecheck.amdgpu.encoding import llvm_mc
from tilecheck.cli import main
from tilecheck.errors import UnknownFormError
from tilecheck.model.semantics import NumpyBackend
from tilecheck.spec.amdgpu import amdgpu_forms
from tilecheck.spec.database import load_database
from tilecheck.verify import amdgpu_exact, amdgpu_forms as handler
from tilecheck.verify.checks import Context
from tilecheck.verify.targets import Item, resolve

DB = load_database()
FORMS = amdgpu_forms(DB)


def _checks(name: str, seed: int = 0) -> dict:
    item = Item("amdgpu-form", name, FORMS[name])
    return {c.name: c for c in handler.amdgpu_form_checks(item, Context(db=DB, seed=seed))}


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


N_FORMS = 95  # 13 of the division macro, 82 element-wise ones (spec/amdgpu/README.md §2)


def test_every_amd_form_of_the_spec_is_counted():
    assert len(FORMS) == N_FORMS


def _records_vectors(form) -> bool:
    return any(v.form == form.name for v in DB.extras["amdgpu"]["families"][form.family].vectors)


def _records_encodings(form) -> bool:
    return any(e.asm.split()[0].removesuffix("_e32").removesuffix("_e64") == form.name
               for e in DB.extras["amdgpu"]["families"][form.family].encodings)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_amd_form_item_passes(name):
    checks = _checks(name)
    assert list(checks) == ["examples", "oracle", "encoding"]
    form = FORMS[name]
    for check in ("examples", "oracle"):
        c = checks[check]
        if check == "oracle" and c.skipped is not None:
            # only families without an independent reference here, and the skip says where they are tested
            assert form.family in ("v_max", "v_min", "v_cmp", "v_cmp_class", "v_frexp_mant", "v_frexp_exp")
            assert "test_elementwise_specs.py" in c.skipped
            continue
        has_cases = check == "oracle" or _records_vectors(form) or form.variant("observed").contract is not None
        assert c.skipped is None and (c.cases > 0) == has_cases, (check, c.details[:4])
        assert c.mismatches == 0 and c.failures == 0, (check, c.details[:4])
        assert c.details and str(c.cases) in c.details[0]  # says how many cases and what they establish
    enc = checks["encoding"]
    # without llvm-mc the check says why; with it, every recorded encoding of the form assembles as recorded
    assert (enc.skipped is not None) == (llvm_mc()[0] is None or not _records_encodings(form)), enc.skipped
    assert enc.failures == 0, enc.details


def test_encodings_assemble_as_recorded():
    mc, why = llvm_mc()
    if mc is None:
        pytest.skip(why)
    total = 0
    for name in FORMS:
        enc = _checks(name)["encoding"]
        assert (enc.skipped is None) == _records_encodings(FORMS[name]) and enc.failures == 0, (name, enc.details)
        total += enc.cases
    assert total >= 15


def test_oracle_holds_on_other_seeds():
    for seed in (1, 2):
        for name in FORMS:
            c = _checks(name, seed)["oracle"]
            assert c.mismatches == 0 and c.failures == 0, (name, seed, c.details[:4])


def _no_gmpy2(monkeypatch):
    # a base install: `import gmpy2` raises ImportError
    monkeypatch.setitem(sys.modules, "gmpy2", None)
    assert not amdgpu_exact.have_mpfr()


def test_without_gmpy2_the_arithmetic_oracle_still_judges(monkeypatch):
    _no_gmpy2(monkeypatch)
    for name in ("v_fma_f64", "v_fma_f32", "v_mul_f64", "v_mul_f32"):
        c = _checks(name)["oracle"]
        assert c.skipped is None and c.cases > 0 and c.mismatches == 0 and c.failures == 0, (name, c.details[:3])
        assert "gmpy2 absent" in c.details[0] and "exact rationals" in c.details[0]


def _one_ulp_up_fma_f32(monkeypatch):
    original = NumpyBackend.float_arith

    def mutant(self, fmt, op, rm, args, scale):
        out = original(self, fmt, op, rm, args, scale)
        if op == "fma" and fmt.name == "f32":
            finite = ~fmt.is_nan(out) & ~fmt.is_inf(out) & ~fmt.is_zero(out)
            out = np.where(finite, out + np.uint64(1), out)
        return out

    monkeypatch.setattr(NumpyBackend, "float_arith", mutant)


def test_an_fma_one_ulp_off_fails_the_oracle_through_the_cli(capsys, monkeypatch):
    _one_ulp_up_fma_f32(monkeypatch)
    code, out, _ = _cli(capsys, "verify", "v_fma_f32")
    assert code == 1 and "FAILED" in out and "oracle:" in out


def test_an_fma_one_ulp_off_fails_without_gmpy2_too(monkeypatch):
    _one_ulp_up_fma_f32(monkeypatch)
    _no_gmpy2(monkeypatch)
    assert _checks("v_fma_f32")["oracle"].mismatches > 0


def test_a_fixup_passing_a_nan_quotient_fails_the_oracle(capsys, monkeypatch):
    # the observed V_DIV_FIXUP turns an Inf/NaN quotient with ordinary operands into the overflow
    # value; a model that passes the NaN through (the manual's text) must be caught
    original = handler.evaluate

    def mutant(form, variant="observed", mode=None, **ops):
        out = original(form, variant, mode, **ops)
        if form.name == "v_div_fixup_f32" and variant == "observed":
            nan = form.fmt.is_nan(ops["S0"]) & ~form.fmt.is_nan(ops["S1"]) & ~form.fmt.is_nan(ops["S2"])
            out = dict(out, D=np.where(nan, ops["S0"], out["D"]))
        return out

    monkeypatch.setattr(handler, "evaluate", mutant)
    code, out, _ = _cli(capsys, "verify", "v_div_fixup_f32")
    assert code == 1 and "oracle:" in out


def test_a_contract_that_allows_everything_fails_the_oracle(capsys, monkeypatch):
    monkeypatch.setattr(rcp_model, "allowed", lambda form, variant, r, x, **_: np.ones(np.shape(r), dtype=bool))
    code, out, _ = _cli(capsys, "verify", "v_rcp_f32")
    assert code == 1 and "exact contract False" in out


def test_verify_amdgpu_json_lists_every_form(capsys):
    code, out, err = _cli(capsys, "verify", "amdgpu", "--sequence-cases", "200", "--json", "-")
    assert code == 0, err[-2000:]
    data = json.loads(out)
    forms = [i for i in data["items"] if i["kind"] == "amdgpu-form"]
    assert sorted(i["name"] for i in forms) == sorted(FORMS) and len(forms) == N_FORMS
    assert all(i["ok"] and [c["name"] for c in i["checks"]] == ["examples", "oracle", "encoding"] for i in forms)
    assert data["totals"]["kinds"] == {"amdgpu-form": N_FORMS, "sequence": 3}
    assert f"{N_FORMS + 3} items, 0 failed" in err and f": {N_FORMS} AMD forms, 3 sequences" in err


def test_targets_resolve_amd_forms_and_families():
    everything = resolve([], DB)
    assert sum(1 for i in everything if i.kind == "amdgpu-form") == N_FORMS
    assert [i.name for i in resolve(["v_fma_f32"], DB)] == ["v_fma_f32"]
    assert {i.name for i in resolve(["v_div_scale"], DB)} == {"v_div_scale_f32", "v_div_scale_f64"}
    assert all(i.kind == "amdgpu-form" for i in resolve(["v_div_scale", "v_rcp_f64"], DB))
    with pytest.raises(UnknownFormError, match="did you mean v_fma_f32"):
        resolve(["v_fma_f3"], DB)
    with pytest.raises(UnknownFormError, match="did you mean"):
        resolve(["div.rn.f33"], DB)


def test_without_llvm_mc_the_encoding_check_says_why(monkeypatch):
    monkeypatch.delenv("TILECHECK_LLVM_MC", raising=False)
    monkeypatch.setenv("PATH", "")
    enc = _checks("v_fma_f64")["encoding"]
    assert enc.skipped and "llvm-mc-19 not installed" in enc.skipped and enc.failures == 0


def test_a_wrong_recorded_encoding_fails(monkeypatch):
    mc, why = llvm_mc()
    if mc is None:
        pytest.skip(why)
    from dataclasses import replace

    family = DB.extras["amdgpu"]["families"]["v_fma"]
    good = [e for e in family.encodings if e.asm.startswith("v_fma_f32")]
    bad = replace(good[0], bytes=good[0].bytes[:-1] + (0x00,))
    rejected = replace(good[0], asm="v_fma_f32 v5, v1")  # too few operands: llvm-mc rejects the line
    monkeypatch.setitem(DB.extras["amdgpu"]["families"], "v_fma", replace(family, encodings=(*good, bad, rejected)))
    enc = _checks("v_fma_f32")["encoding"]
    assert enc.cases == len(good) + 2 and enc.failures == 2, enc.details
    assert any("rejected" in d for d in enc.details) and any("recorded [" in d for d in enc.details)
