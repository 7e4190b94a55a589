"""Guards on the function forms (cvt, setp, selp, mov, abs, neg, min, max, ...): operand types, NaN
policies, semantics parameters that follow the spelling, gates from the measured set."""

from __future__ import annotations

from support.inventory import ptx_form_counts

from tilecheck.spec.types import PTX_TYPES


def _function_forms(db):
    return [f for f in db.ptx_forms() if f.kind == "function"]


def test_operand_types_and_registers(db):
    forms = _function_forms(db)
    # every expanded form is a function form or one of another registry kind (arithmetic, memory)
    others = [f for f in db.ptx_forms() if f.kind != "function"]
    assert len(forms) == sum(ptx_form_counts().values()) - len(others)
    assert {f.kind for f in others} == {"exact", "contract", "memory"}
    for form in forms:
        for o in form.operands:
            assert o.ptx_type in PTX_TYPES and o.register_type == PTX_TYPES[o.ptx_type].register, form.name
        assert form.name.split(".")[-1] == form.type == form.sources[0].ptx_type or form.family in ("selp",), form.name
    cvt = db.forms["cvt.rn.f16.f32"]
    assert [(o.ptx_type, o.register_type) for o in cvt.operands] == [("f16", "b16"), ("f32", "f32")]
    assert [o.ptx_type for o in db.forms["setp.lt.and.f32"].operands] == ["pred", "f32", "f32", "pred"]
    assert [o.ptx_type for o in db.forms["setp.lt.f32"].operands] == ["pred", "f32", "f32"]
    assert [o.ptx_type for o in db.forms["mul.wide.s32"].operands] == ["s64", "s32", "s32"]
    assert [o.ptx_type for o in db.forms["mad.wide.u16"].operands] == ["u32", "u16", "u16", "u32"]
    assert [o.ptx_type for o in db.forms["shr.s64"].operands] == ["s64", "s64", "u32"]
    assert [o.ptx_type for o in db.forms["selp.f32"].operands] == ["f32", "f32", "f32", "pred"]


def test_nan_policies_follow_the_destination(db):
    canonical = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF, "e4m3": 0x7F, "e5m2": 0x7F}
    for form in _function_forms(db):
        d = form.destinations[0]
        if form.family in ("mov", "selp") or d.element_format is None or form.name == "abs.f64":
            assert form.nan.policy == "none", form.name
        else:
            assert (form.nan.policy, form.nan.bits) == ("unspecified", canonical[d.element_format]), form.name


def test_semantics_parameters_follow_the_spelling(db):
    for form in _function_forms(db):
        p = form.semantics.params
        for flag in ("ftz", "sat", "relu", "satfinite"):
            if flag in p and not (flag == "sat" and form.semantics.key == "cvt.to_int"):
                assert p[flag] == (flag in form.modifiers), form.name
        if "nan" in p:
            assert p["nan"] == ("NaN" in form.modifiers), form.name
        if form.family == "cvt" and "rounding" in p:
            rnd = [m for m in form.modifiers if m in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi")]
            assert p["rounding"] == (rnd[0] if rnd else ""), form.name
        if "cmp" in p:
            assert p["cmp"] == form.modifiers[0], form.name


def test_measured_gates(db):
    """Spot checks of the gates ptxas 13.0 enforces (lowest .target, lowest .version there)."""
    gate = {n: (db.forms[n].target.sm, db.forms[n].target.ptx_text) for n in (
        "cvt.rn.f16.f32", "cvt.f32.bf16", "cvt.rn.bf16.f32", "cvt.rn.bf16.f16", "cvt.rn.satfinite.f16.f32",
        "setp.lt.f16", "setp.lt.bf16", "setp.lt.ftz.f32", "abs.f16", "neg.f16", "min.NaN.f32", "max.relu.s32",
        "copysign.f32", "testp.normal.f64", "cvta.to.global.u64", "cvta.param.u64", "mov.f64")}
    assert gate == {
        "cvt.rn.f16.f32": (10, "1.0"), "cvt.f32.bf16": (80, "7.1"), "cvt.rn.bf16.f32": (80, "7.0"),
        "cvt.rn.bf16.f16": (90, "7.8"), "cvt.rn.satfinite.f16.f32": (70, "8.1"), "setp.lt.f16": (53, "4.2"),
        "setp.lt.bf16": (90, "7.8"), "setp.lt.ftz.f32": (10, "1.4"), "abs.f16": (53, "6.5"), "neg.f16": (53, "5.1"),
        "min.NaN.f32": (80, "7.0"), "max.relu.s32": (90, "8.0"), "copysign.f32": (20, "2.0"),
        "testp.normal.f64": (20, "2.0"), "cvta.to.global.u64": (20, "2.0"), "cvta.param.u64": (70, "7.7"),
        "mov.f64": (13, "1.2")}


def test_case_and_order_rules(db):
    assert db.verdict("min.NaN.f32", "sm_90").legal
    assert not db.verdict("min.nan.f32", "sm_90").legal  # ptxas is case-sensitive
    assert db.verdict("cvt.f16.rn.f32", "sm_90").form is db.forms["cvt.rn.f16.f32"]  # qualifier order is free
    assert not db.verdict("cvta.global.to.u64", "sm_90").legal  # .to belongs to the opcode
    assert db.verdict("cvt.rn.f32.bf16", "sm_90").reason.startswith("bf16 -> f32 is an exact widening")


def test_eval_command_refuses_function_forms_with_a_pointer(capsys):
    from tilecheck.cli import main

    assert main(["eval", "cvt.rn.f16.f32", "1.5"]) == 2
    assert "tilecheck.model.api.evaluate" in capsys.readouterr().err
