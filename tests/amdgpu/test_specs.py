"""The AMD instruction specs: loading, the recorded vectors, documented vs observed differences."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.amdgpu.instructions import evaluate, lookup
from tilecheck.spec.amdgpu import amdgpu_forms, sequences
from tilecheck.spec.database import load_database

DB = load_database()
FORMS = amdgpu_forms(DB)
FAMILIES = DB.extras["amdgpu"]["families"]
VECTORS = [(fam.name, i, v) for fam in FAMILIES.values() for i, v in enumerate(fam.vectors)]

_CMP_PREDICATES = ("eq", "lg", "lt", "le", "gt", "ge", "o", "u", "neq", "nlg", "nlt", "nle", "ngt", "nge")
EXPECTED_FORMS = {"v_div_scale_f32", "v_div_scale_f64", "v_div_fmas_f32", "v_div_fmas_f64", "v_div_fixup_f16",
                  "v_div_fixup_f32", "v_div_fixup_f64", "v_rcp_f32", "v_rcp_f64", "v_fma_f32", "v_fma_f64",
                  "v_mul_f32", "v_mul_f64",
                  # the element-wise forms a wave simulator needs (tests/amdgpu/test_elementwise_specs.py)
                  "v_add_f16", "v_add_f32", "v_add_f64", "v_sub_f16", "v_sub_f32", "v_sub_f64", "v_subrev_f16",
                  "v_subrev_f32", "v_mul_f16", "v_fma_f16", "v_max_f16", "v_max_f32", "v_max_f64", "v_min_f16",
                  "v_min_f32", "v_min_f64", "v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16", "v_cvt_f32_f16",
                  "v_cvt_f16_f32", "v_cvt_f64_f32", "v_cvt_f32_f64", "v_ldexp_f16", "v_ldexp_f32", "v_ldexp_f64",
                  "v_frexp_mant_f32", "v_frexp_mant_f64", "v_frexp_exp_i32_f32", "v_frexp_exp_i32_f64",
                  "v_cmp_class_f16", "v_cmp_class_f32", "v_cmp_class_f64", "v_rcp_f16", "v_rsq_f16", "v_rsq_f32",
                  "v_rsq_f64", "v_sqrt_f16", "v_sqrt_f32", "v_sqrt_f64"} \
    | {f"v_cmp_{p}_{t}" for p in _CMP_PREDICATES for t in ("f16", "f32", "f64")}


def test_every_form_and_sequence_loaded_with_both_variants():
    assert set(FORMS) == EXPECTED_FORMS
    assert {"amdgpu.fdiv64", "amdgpu.fdiv32", "amdgpu.fdiv32.ftz"} <= set(sequences(DB))
    for form in FORMS.values():
        assert set(form.variants) == {"documented", "observed"}
        for v in form.variants.values():
            assert (v.program is None) != (v.contract is None)
    assert sum(len(f.encodings) for f in FAMILIES.values()) >= 15
    assert len(VECTORS) >= 15


def _operands(form, vector):
    out = {}
    for name, value in vector.operands:
        out[name] = np.array([value], dtype=bool if isinstance(value, bool) else np.uint64)
    return out


@pytest.mark.parametrize("family,index,vector", VECTORS, ids=lambda x: x if isinstance(x, (str, int)) else "")
def test_recorded_vectors_hold_for_their_variants(family, index, vector):
    form = FORMS[vector.form]
    for variant in vector.variants:
        out = evaluate(form, variant, dict(vector.mode), **_operands(form, vector))
        for name, want in vector.results:
            got = out[name][0] if np.ndim(out[name]) else out[name]
            assert (bool(got) if isinstance(want, bool) else int(got)) == want, (variant, name, vector.source)


def test_vectors_hold_in_the_z3_backend_too():
    z3 = pytest.importorskip("z3")
    from tilecheck.smt import fp
    from tilecheck.smt.amdgpu import encode_instruction

    for _, _, vector in VECTORS:
        form = FORMS[vector.form]
        for variant in vector.variants:
            out = encode_instruction(form, variant, dict(vector.operands), dict(vector.mode))
            for name, want in vector.results:
                if isinstance(want, bool):
                    assert z3.is_true(z3.simplify(out[name])) == want
                else:
                    assert fp.value_of(out[name]) == want, (vector.form, variant, name)


def f32(*v):
    return np.array(v, dtype=np.float32).view(np.uint32).astype(np.uint64)


def f64(*v):
    return np.array(v, dtype=np.float64).view(np.uint64)


def run_both(name, **ops):
    db = load_database()
    return (evaluate(name, "documented", db=db, **ops), evaluate(name, "observed", db=db, **ops))


def test_fmas_post_scale_direction_is_the_observed_difference():
    doc, obs = run_both("v_div_fmas_f64", S0=f64(0.0, 0.0), S1=f64(1.0, 1.0), S2=f64(0.75, 3.0),
                        VCC=np.array([True, True]))
    assert list(doc["D"].view(np.float64)) == [0.75 * 2.0 ** 64, 3.0 * 2.0 ** 64]
    assert list(obs["D"].view(np.float64)) == [0.75 * 2.0 ** -128, 3.0 * 2.0 ** 128]


def test_fmas_scale_is_fused_into_the_single_rounding():
    # (1 + 2^-52) * 2^-1022 * 2^-128 lands in the subnormal range: one rounding (observed) versus
    # the documented product of the rounded FMA with 2^64 (no subnormal there)
    s0 = f64(1.0 + 2.0 ** -52)
    s1 = f64(2.0 ** -1022)
    s2 = np.array([0x0008000000000001], dtype=np.uint64)  # subnormal addend: E(S2) = 0 -> 2^-128
    obs = evaluate("v_div_fmas_f64", "observed", S0=s0, S1=s1, S2=s2, VCC=np.array([True]), db=load_database())["D"]
    from fractions import Fraction

    from tilecheck.formats import get_format

    f = get_format("f64")
    exact = (f.to_fraction(int(s0[0])) * f.to_fraction(int(s1[0])) + f.to_fraction(int(s2[0]))) * Fraction(2) ** -128
    assert int(obs[0]) == f.from_fraction(exact, "rn")


def test_fixup_nan_quotient_and_underflow_differ():
    doc, obs = run_both("v_div_fixup_f32", S0=np.array([0x7fc00000], dtype=np.uint64), S1=f32(1.0), S2=f32(1.0))
    assert int(doc["D"][0]) == 0x7fc00000 and int(obs["D"][0]) == 0x7f800000
    # UNDERFLOW under round-up: observed gives the smallest subnormal, documented +0
    ops = dict(S0=f32(1.0), S1=f32(2.0 ** 100), S2=f32(2.0 ** -100))
    doc = evaluate("v_div_fixup_f32", "documented", {"round": "rp"}, db=load_database(), **ops)
    obs = evaluate("v_div_fixup_f32", "observed", {"round": "rp"}, db=load_database(), **ops)
    assert int(doc["D"][0]) == 0 and int(obs["D"][0]) == 1
    # NaN quotient under round-toward-zero: +-MAX, not Inf
    obs = evaluate("v_div_fixup_f64", "observed", {"round": "rz"}, S0=np.array([0x7ff8000000000000], dtype=np.uint64),
                   S1=f64(-1.0), S2=f64(1.0), db=load_database())
    assert int(obs["D"][0]) == 0xffefffffffffffff


def test_scale_numerator_tiny_threshold_differs_for_f32():
    # E(S2) = 24: observed (rocJITsu) scales by 2^64, the manual's threshold is 23
    n, d = f32(2.0 ** -103), f32(2.0 ** -20)
    doc, obs = run_both("v_div_scale_f32", S0=n, S1=d, S2=n)
    assert int(doc["D"][0]) == int(n[0]) and not doc["VCC"][0]
    assert np.float32(np.array([obs["D"][0]], dtype=np.uint32).view(np.float32)[0]) == np.float32(2.0 ** -39)
    assert not obs["VCC"][0]


def test_scale_vcc_is_computed_on_the_zero_path_only_when_observed():
    doc, obs = run_both("v_div_scale_f64", S0=f64(1.0), S1=f64(0.0), S2=f64(1.0))
    assert not doc["VCC"][0] and obs["VCC"][0]
    assert int(doc["D"][0]) == 0x7ff8000000000000 and int(obs["D"][0]) == 0xfff8000000000000


def test_mode_denormals_flush_inputs_and_outputs():
    tiny = np.array([0x00400000], dtype=np.uint64)  # f32 subnormal
    keep = evaluate("v_fma_f32", "observed", {"denorm": 3}, S0=tiny, S1=f32(1.0), S2=f32(0.0), db=load_database())
    flush_in = evaluate("v_fma_f32", "observed", {"denorm": 2}, S0=tiny, S1=f32(1.0), S2=f32(0.0), db=load_database())
    flush_out = evaluate("v_fma_f32", "observed", {"denorm": 1}, S0=tiny, S1=f32(1.0), S2=f32(0.0), db=load_database())
    assert int(keep["D"][0]) == 0x00400000 and int(flush_in["D"][0]) == 0 and int(flush_out["D"][0]) == 0


def test_lookup_errors():
    from tilecheck.errors import ApproximateFormError, UnknownFormError

    with pytest.raises(UnknownFormError, match="did you mean"):
        lookup("v_div_scale_f63", db=load_database())
    with pytest.raises(ApproximateFormError):
        evaluate("v_rcp_f64", "observed", S0=f64(3.0), db=load_database())
