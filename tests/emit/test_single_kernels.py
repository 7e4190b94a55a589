"""Single-instruction kernels: one per form and target, the documented ABI, ptxas acceptance of every
kernel, predicated and not (``emit/forms`` keeps one golden per family and type; the simulator runs
every form's kernel against the model in ``tests/sim/test_execute.py``)."""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import pytest
from emit_helpers import TARGETS, entry_bodies, opcode_of

from tilecheck import ptxas
from tilecheck.emit import kernel_name, single_instruction_kernel
from tilecheck.errors import EmitError, IllegalFormError, ToolNotFoundError, UnknownFormError, UsageError


def test_every_form_has_a_kernel_on_every_legal_target(db):
    forms = db.kernel_forms()
    assert len(forms) >= 300  # guard: the spec database expanded
    total = 0
    for target in TARGETS:
        for form in forms:
            if not db.verdict(form.name, target).legal:
                with pytest.raises(IllegalFormError):
                    single_instruction_kernel(form, target, db=db)
                continue
            k = single_instruction_kernel(form, target, db=db)
            version = db.min_version(form, target)
            assert k.version == f"{version[0]}.{version[1]}" and k.target == target
            assert k.name == kernel_name(form.name) and f".entry {k.name}(" in k.ptx
            (body,) = entry_bodies(k.ptx).values()
            assert [opcode_of(line)[1] for line in body].count(form.name) == 1
            total += 1
    assert total == sum(db.verdict(f.name, t).legal for f in forms for t in TARGETS)


def test_abi_parameters(db):
    k = single_instruction_kernel("fma.rn.f32", "sm_90", db=db)
    assert [(p.name, p.role, p.operand) for p in k.params] == [
        ("param_src_a", "source", "a"), ("param_src_b", "source", "b"), ("param_src_c", "source", "c"),
        ("param_out", "output", "d"), ("param_n", "count", None)]
    assert all(p.dtype == np.uint32 for p in k.params[:4]) and k.params[4].ptx_type == "u32"
    ld = single_instruction_kernel("ld.global.v4.b16", "sm_90", db=db)
    assert [(p.role, p.operand, p.per_thread, p.dtype) for p in ld.params[:2]] == [
        ("source", "a", 4, np.uint16), ("output", "d", 4, np.uint16)]
    st = single_instruction_kernel("st.global.v2.f64", "sm_90", predicated=True, db=db)
    assert [(p.name, p.role) for p in st.params] == [("param_src_b", "source"), ("param_out", "output"),
                                                     ("param_mask", "mask"), ("param_n", "count")]
    assert st.name == "tc_st_global_v2_f64_pred"


def test_predicated_kernel_preloads_the_destination(db):
    k = single_instruction_kernel("sqrt.rn.f32", "sm_90", predicated=True, db=db)
    (body,) = entry_bodies(k.ptx).values()
    i = next(i for i, line in enumerate(body) if opcode_of(line)[1] == "sqrt.rn.f32")
    guard, _, ops = opcode_of(body[i])
    assert guard == "@%p2"
    # the destination register was loaded from out (the old value) before the guarded instruction
    loads = [opcode_of(line)[2][0] for line in body[:i] if opcode_of(line)[1] == "ld.global.b32"]
    assert ops[0] in loads
    assert opcode_of(body[i + 1])[1] == "st.global.b32" and opcode_of(body[i + 1])[2][1] == ops[0]


def test_arguments_helper(db):
    k = single_instruction_kernel("div.rn.f32", "sm_90", db=db)
    a, b, out = (np.zeros(5, np.uint32) for _ in range(3))
    args = k.arguments([a, b], out)
    assert args[:3] == [a, b, out] and args[3] == np.uint32(5) and isinstance(args[3], np.uint32)
    with pytest.raises(UsageError):
        k.arguments([a], out)
    with pytest.raises(UsageError):
        k.arguments([a, np.zeros(5, np.uint16)], out)
    with pytest.raises(UsageError):
        k.arguments([a, b], out, mask=np.ones(5, np.uint32))


def test_unknown_and_illegal_forms(db):
    with pytest.raises(UnknownFormError):
        single_instruction_kernel("frobnicate.f32", "sm_90", db=db)
    with pytest.raises(IllegalFormError, match="sm_100"):
        single_instruction_kernel("add.rn.f32x2", "sm_90", db=db)
    with pytest.raises(IllegalFormError):
        single_instruction_kernel("rcp.approx.f64", "sm_90", db=db)


@pytest.mark.parametrize("predicated", [False, True], ids=["plain", "pred"])
def test_every_kernel_assembles(db, predicated):
    try:
        ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")
    batches = defaultdict(list)
    for target in TARGETS:
        for form in db.kernel_forms():
            if db.verdict(form.name, target).legal:
                k = single_instruction_kernel(form, target, predicated=predicated, db=db)
                batches[(k.version, target)].append(k)
    failures = []
    for (version, target), kernels in sorted(batches.items()):
        module = f".version {version}\n.target {target}\n.address_size 64\n"
        entries = "".join("\n" + k.ptx.split(".address_size 64\n", 1)[1] for k in kernels)
        result = ptxas.assemble(module + entries, f"compute_{target[3:]}", parse_only=True)
        if not result.ok:
            failures.append(f"{target} .version {version}: {result.output[:2000]}")
    assert not failures, "\n".join(failures)
    assert sum(len(v) for v in batches.values()) == sum(db.verdict(f.name, t).legal for f in db.kernel_forms()
                                                        for t in TARGETS) > 0


def test_kernel_names_are_unique(db):
    names = [kernel_name(f.name, p) for f in db.kernel_forms() for p in (False, True)]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"tc_[a-z0-9_]+", n) for n in names)


