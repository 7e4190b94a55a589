"""Guards on the loaded PTX spec database: counts, spellings, gates, contracts, NaN policies.

The counts are exact on purpose: a form that silently disappears (a typo in an axis, a dropped
group) or appears must fail here. They are read from the raw YAML (:mod:`support.inventory`), so
adding a form to a family file needs no change here.
"""

from __future__ import annotations

import itertools

import pytest
from support.inventory import ptx_example_count, ptx_form_counts, ptx_illegal_count, ptx_lenient_spellings

from tilecheck.spec import registry
from tilecheck.spec.database import load_database, spelling_key, split_spelling
from tilecheck.spec.types import PTX_TYPES

APPROXIMATE = {
    "div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32",
    "rcp.approx.f32", "rcp.approx.ftz.f32", "rcp.approx.ftz.f64",
    "sqrt.approx.f32", "sqrt.approx.ftz.f32",
    "rsqrt.approx.f32", "rsqrt.approx.ftz.f32", "rsqrt.approx.f64", "rsqrt.approx.ftz.f64",
    "ex2.approx.f32", "ex2.approx.ftz.f32", "ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16",
    "ex2.approx.ftz.bf16x2", "lg2.approx.f32", "lg2.approx.ftz.f32",
    # bounds documented, not modelled yet (every finite non-zero input unknown)
    "sin.approx.f32", "sin.approx.ftz.f32", "cos.approx.f32", "cos.approx.ftz.f32", "tanh.approx.f32",
    "tanh.approx.f16", "tanh.approx.f16x2", "tanh.approx.bf16", "tanh.approx.bf16x2",
}
PROVISIONAL = {"rcp.approx.ftz.f64", "rsqrt.approx.f64", "rsqrt.approx.ftz.f64"}


def test_family_and_form_counts(db):
    ptx = {name: fam for name, fam in db.families.items() if fam.isa == "ptx"}
    expected = ptx_form_counts()
    assert expected and all(expected.values())  # guard the guard: families with forms were read
    assert {name: len(fam.forms) for name, fam in ptx.items()} == expected
    assert len(db.ptx_forms()) == sum(expected.values())
    assert db.kernel_forms()  # the arithmetic and memory forms (kinds with single-instruction kernels)


def test_every_form_name_reparses_to_itself(db):
    for form in db.ptx_forms():
        opcode, mods, type_ = split_spelling(form.name)
        assert (opcode, mods, type_) == (form.opcode, form.modifiers, form.type), form.name
        assert db.resolve(form.name) is form
        verdict = db.verdict(form.name)
        assert verdict.legal and verdict.form is form, form.name
        assert form.name.replace(".NaN.", ".nan.") == form.name.lower() and ".." not in form.name


def test_spellings_are_unique_up_to_qualifier_order(db):
    keys = [spelling_key(f.name) for f in db.ptx_forms()]
    assert len(keys) == len(set(keys))


def test_qualifier_order_is_free_except_opcode_qualifiers(db):
    assert db.verdict("div.ftz.rn.f32", "sm_90").form is db.forms["div.rn.ftz.f32"]
    assert db.verdict("add.sat.ftz.rz.f32", "sm_90").form is db.forms["add.rz.ftz.sat.f32"]
    wrong = db.verdict("div.ftz.full.f32", "sm_90")
    assert not wrong.legal and "must directly follow 'div'" in wrong.reason
    assert db.resolve("div.ftz.full.f32") is None
    assert db.verdict("div.full.ftz.f32", "sm_90").legal


def test_gates_are_sane(db):
    known_sm = {10, 13, 20, 53, 75, 80, 90, 100}
    for form in db.kernel_forms():  # gates of the function forms: tests/spec/test_surround_specs.py
        assert form.target.sm in known_sm, form.name
        assert (1, 0) <= form.target.ptx <= (9, 0), form.name
        if form.type == "f32x2":
            assert (form.target.sm, form.target.ptx) == (100, (8, 6)), form.name
        if form.type in ("f16", "f16x2"):
            expected = (75, (7, 0)) if form.family in ("ex2", "tanh") else (53, (4, 2))
            assert (form.target.sm, form.target.ptx) == expected, form.name
        if form.type in ("bf16", "bf16x2"):
            expected = (80, (7, 0)) if form.family == "fma" else (90, (7, 8))
            assert (form.target.sm, form.target.ptx) == expected, form.name
        if "v8" in form.modifiers or (form.family in ("ld", "st") and "v4" in form.modifiers
                                      and form.type.endswith("64")):
            assert (form.target.sm, form.target.ptx) == (100, (8, 8)), form.name
    # spot checks straight from the ISA notes
    gate = {n: (db.forms[n].target.sm, db.forms[n].target.ptx_text) for n in (
        "rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64", "div.rn.f64", "div.rz.f64", "rcp.rz.f64",
        "fma.rn.f32", "fma.rn.f64", "add.rm.f32", "add.ftz.f32", "div.approx.f32")}
    assert gate == {
        "rcp.approx.ftz.f64": (20, "2.1"), "rsqrt.approx.ftz.f64": (20, "4.0"), "div.rn.f64": (13, "1.4"),
        "div.rz.f64": (20, "1.4"), "rcp.rz.f64": (20, "2.0"), "fma.rn.f32": (20, "2.0"),
        "fma.rn.f64": (13, "1.4"), "add.rm.f32": (20, "1.0"), "add.ftz.f32": (10, "1.4"),
        "div.approx.f32": (10, "1.4")}


def test_target_gates_in_verdicts(db):
    assert not db.verdict("add.rn.f32x2", "sm_90").legal
    assert db.verdict("add.rn.f32x2", "sm_100").legal
    assert not db.verdict("add.rn.bf16", "sm_80").legal
    assert db.verdict("fma.rn.bf16", "sm_80").legal
    for name in ("sm_80", "sm_90", "sm_100"):
        assert db.min_version(db.forms["div.rn.f32"], name) == db.targets[name].min_ptx
    assert db.min_version(db.forms["ld.global.v8.f32"], "sm_100") == (8, 8)


def test_every_approximate_form_has_a_contract(db):
    approximate = {f.name for f in db.ptx_forms() if f.kind == "contract"}
    assert approximate == APPROXIMATE
    for form in db.ptx_forms():
        entry = registry.ENTRIES[form.semantics.key]
        assert entry.kind == form.kind, form.name
        if form.kind == "contract":
            c = form.contract
            assert c is not None and c.source and c.notes, form.name
            if c.bound.kind == "absolute":
                # an absolute bound: sin and cos by the operand's magnitude, the 16-bit tanh forms
                # throughout, each decided by its function's model (no rule leaves them unjudged)
                assert c.operation in ("sin", "cos", "tanh"), form.name
                assert bool(c.bound.ranges) == (c.operation != "tanh"), form.name
                assert not any(r.result == "unmodelled" for r in c.rules), form.name
            else:
                assert (c.ulp is not None) != (c.relative_log2 is not None), form.name
            assert c.specials, form.name
            assert any(s.operands[0] == "nan" for s in c.specials), form.name
        else:
            assert form.contract is None, form.name
    assert {f.name for f in db.ptx_forms() if f.contract and f.contract.provisional} == PROVISIONAL
    bounds = {f.name: (f.contract.ulp, f.contract.relative_log2) for f in db.ptx_forms() if f.contract}
    assert bounds["rcp.approx.f32"] == (1, None)
    assert bounds["div.approx.f32"] == (2, None) and bounds["div.full.ftz.f32"] == (2, None)
    assert bounds["sqrt.approx.f32"] == (None, -23)
    assert bounds["rsqrt.approx.ftz.f32"] == (None, -22.9)
    assert bounds["rsqrt.approx.f64"] == (1, None)


def test_nan_policies(db):
    for form in db.kernel_forms():
        nan = form.nan
        if form.family in ("ld", "st"):
            assert nan.policy == "none", form.name
        elif form.name in ("rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64"):
            assert (nan.policy, nan.bits) == ("canonical", 0x7FFFFFFF00000000)
        elif form.type == "f64":
            assert (nan.policy, nan.bits) == ("propagate", 0x7FFFFFFFFFFFFFFF), form.name
        elif form.element_format == "f32":
            assert (nan.policy, nan.bits) == ("unspecified", 0x7FFFFFFF), form.name
        else:
            assert form.element_format in ("f16", "bf16")
            assert (nan.policy, nan.bits) == ("unspecified", 0x7FFF), form.name


def test_operand_registers(db):
    assert [o.register_type for o in db.forms["add.rn.f16x2"].operands] == ["b32"] * 3
    assert [o.register_type for o in db.forms["fma.rn.f32x2"].operands] == ["b64"] * 4
    assert [o.register_type for o in db.forms["mul.bf16"].operands] == ["b16"] * 3
    ld = db.forms["ld.global.v4.f32"]
    assert [(o.role, o.registers) for o in ld.operands] == [("dst", 4), ("addr", 1)]
    st = db.forms["st.global.v2.f64"]
    assert [(o.role, o.registers) for o in st.operands] == [("addr", 1), ("src", 2)]
    for form in db.kernel_forms():
        for o in form.operands:
            if o.role != "addr":
                assert o.register_type == PTX_TYPES[form.type].register, form.name


def test_semantics_parameters_follow_the_spelling(db):
    for form in db.kernel_forms():
        params = form.semantics.params
        if "ftz" in params:
            assert params["ftz"] == ("ftz" in form.modifiers or form.name.endswith("approx.ftz.f64")), form.name
        if "sat" in params:
            assert params["sat"] == ("sat" in form.modifiers), form.name
        if "rounding" in params:
            rnd = [m for m in form.modifiers if m in registry.ROUNDINGS]
            # no rounding modifier means round to nearest (add/sub/mul and half precision)
            assert params["rounding"] == (rnd[0] if rnd else "rn"), form.name


def test_illegal_spellings(db):
    lenient = set()
    count = 0
    for family in db.families.values():
        if family.isa != "ptx":
            continue
        for ill in family.illegal:
            count += 1
            assert db.resolve(ill.spelling) is None, ill.spelling
            verdict = db.verdict(ill.spelling, "sm_100")
            assert not verdict.legal and verdict.reason == ill.reason, ill.spelling
            if ill.ptxas_accepts:
                lenient.add(ill.spelling)
                assert ill.ptxas is None
            else:
                assert ill.ptxas, f"{ill.spelling}: record ptxas's message"
    # read from the raw YAML; tests/spec/test_ptxas_agreement.py checks that ptxas accepts each
    assert lenient == ptx_lenient_spellings() and "st.global.v8.b16" in lenient
    assert count == ptx_illegal_count() > 0


def test_examples_cover_the_forms(db):
    for name in APPROXIMATE:
        assert db.forms[name].examples, f"{name} has no example"
    for family in ("div", "rcp", "sqrt", "add", "sub", "mul", "fma"):
        forms = [f for f in db.families[family].forms if f.kind == "exact"]
        examples = [(f, e) for f in forms for e in f.examples]
        assert len(examples) >= 10, family
        # a directed-rounding case and a subnormal case in every exact family
        assert any(set(f.modifiers) & {"rz", "rm", "rp"} for f, _ in examples), family
        assert any(_has_subnormal(f, e) for f, e in examples), family
    total = sum(len(f.examples) for f in db.ptx_forms())
    assert total == ptx_example_count() > 0


def _has_subnormal(form, example) -> bool:
    elem = form.element_format
    bits = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}[elem]
    width = 1 + sum(bits)
    lanes = form.lanes
    for value in (*example.operands, example.result):
        for lane in range(lanes):
            x = (value >> (lane * width)) & ((1 << width) - 1)
            mag = x & ((1 << (width - 1)) - 1)
            if 0 < mag < (1 << bits[1]):
                return True
    return False


@pytest.mark.parametrize("family", sorted(ptx_form_counts()))
def test_family_files_are_self_consistent(db, family):
    fam = db.families[family]
    assert fam.path == f"spec/ptx/{family}.yaml"
    assert fam.reference.document.startswith("PTX ISA")
    groups = {f.group for f in fam.forms}
    for a, b in itertools.combinations(fam.forms, 2):
        assert a.name != b.name
    assert all(f.location.path == fam.path and f.location.line > 0 for f in fam.forms)
    assert groups


def test_variant_targets_share_their_base_gates(db):
    """An arch- or family-specific target (sm_90a, sm_100f) judges every form like its base
    target; defaults (the gpu backend's device target, kernel_target) never pick a variant."""
    from tilecheck.diff.backends import kernel_target

    variants = [t for t in db.targets.values() if t.variant]
    assert {"sm_90a", "sm_100a", "sm_100f", "sm_120a"} <= {t.name for t in variants}
    for tinfo in variants:
        assert tinfo.base in db.targets and tinfo.name == f"{tinfo.base}{tinfo.variant}"
        assert tinfo.min_ptx >= db.target(tinfo.base).min_ptx
        for form in db.ptx_forms():
            assert db.verdict(form.name, tinfo.name).legal == db.verdict(form.name, tinfo.base).legal, form.name
    assert kernel_target(db, db.form("add.rn.f32x2")) == "sm_100"
    assert kernel_target(db, db.form("add.rn.f32x2"), "sm_100a") == "sm_100a"
