"""Single-instruction kernels of the forms around the arithmetic and of every memory state space:
cvt, setp (both destinations), selp, integer and logic operations (:mod:`tilecheck.emit.function_kernel`),
``.local``/``.param``/generic/``.nc`` memory forms (:mod:`tilecheck.emit.kernel`), ``cvta``
(:mod:`tilecheck.emit.cvta_kernel`). ptxas builds every one to a cubin for sm_90 and sm_100 and
parses it on every other base target from sm_75."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from emit_helpers import TARGETS, opcode_of

from tilecheck import ptxas
from tilecheck.emit import function_kernel, kernel_name, single_instruction_kernel
from tilecheck.emit.kernel import no_kernel_reason
from tilecheck.errors import EmitError, IllegalFormError, ToolNotFoundError


CUBIN_TARGETS = ("sm_90", "sm_100")
"""Where every kernel is built to a cubin (the default target and the newest with every form);
every other base target from sm_75 parses them (ptxas -arch=compute_XX)."""


def _around(db):
    forms = [f for f in db.ptx_forms() if not db.in_kernel_pipeline(f)]
    assert len(forms) > 1800  # guard: cvt, setp, ... and the memory forms of the other spaces
    return forms


def _instruction_lines(ptx: str) -> list[str]:
    return [line.strip() for line in ptx.splitlines() if line.strip() and not line.strip().startswith(("//", "."))]


def test_every_form_has_a_kernel_on_every_legal_target(db):
    total = 0
    for target in TARGETS:
        for form in _around(db):
            if not db.verdict(form.name, target).legal:
                with pytest.raises(IllegalFormError):
                    single_instruction_kernel(form, target, db=db)
                continue
            if no_kernel_reason(form) is not None:
                with pytest.raises(EmitError, match="32-bit address"):
                    single_instruction_kernel(form, target, db=db)
                continue
            for predicated in (False, True):
                k = single_instruction_kernel(form, target, predicated=predicated, db=db)
                version = db.min_version(form, target)
                assert k.version == f"{version[0]}.{version[1]}" and k.target == target
                assert k.name == kernel_name(form.name, predicated) and f".entry {k.name}(" in k.ptx
                ops = [opcode_of(line) for line in _instruction_lines(k.ptx)]
                under_test = [g for g, op, _ in ops if op == form.name]
                assert under_test, (form.name, target)
                # a predicated kernel guards the instruction under test (cvta's harness may use its
                # spelling too: every kernel converts its buffer pointers with cvta.to.global.u64)
                assert any(g is not None for g in under_test) == predicated, (form.name, predicated)
                total += 1
    assert total > 2 * 3 * 1700


def test_function_kernel_abi(db):
    k = single_instruction_kernel("setp.ltu.and.f32", "sm_90", predicated=True, db=db)
    assert [(p.name, p.role, p.dtype) for p in k.params] == [
        ("param_src_a", "source", np.dtype(np.uint32)), ("param_src_b", "source", np.dtype(np.uint32)),
        ("param_src_c", "source", np.dtype(np.uint32)), ("param_out", "output", np.dtype(np.uint32)),
        ("param_out_q", "output", np.dtype(np.uint32)), ("param_mask", "mask", np.dtype(np.uint32)),
        ("param_n", "count", None)]
    assert "setp.ltu.and.f32 %p" in k.ptx and "|%p" in k.ptx
    # scalar half setp has no second destination (ptxas rejects p|q there)
    assert not function_kernel.two_destinations(db.forms["setp.lt.f16"])
    assert [p.name for p in single_instruction_kernel("setp.lt.f16", "sm_90", db=db).params].count("param_out_q") == 0
    k = single_instruction_kernel("cvt.rn.f16.f32", "sm_90", db=db)
    assert [p.dtype for p in k.params if p.dtype is not None] == [np.dtype(np.uint32), np.dtype(np.uint16)]
    k = single_instruction_kernel("cvt.rzi.s8.f32", "sm_90", db=db)
    assert "st.global.u8" in k.ptx and k.params[1].dtype == np.dtype(np.uint8)
    k = single_instruction_kernel("shl.b64", "sm_90", db=db)
    assert [p.dtype for p in k.params if p.role == "source"] == [np.dtype(np.uint64), np.dtype(np.uint32)]


def test_memory_kernels_use_their_own_state_space(db):
    local = single_instruction_kernel("ld.local.v2.f32", "sm_90", db=db).ptx
    assert ".local .align 8 .b8 tc_local[8];" in local and "ld.local.v2.f32 {" in local
    param = single_instruction_kernel("st.param.v4.u32", "sm_90", predicated=True, db=db).ptx
    # the store under test runs in the callee: ptxas refuses a predicated st.param to a call argument
    assert ".func (.param .align 16 .b8 tc_echo_ret[16]) tc_st_param_v4_u32_pred_echo(" in param
    assert "call.uni (tc_ret), tc_st_param_v4_u32_pred_echo, (tc_arg, tc_old, tc_mask);" in param
    assert "@%p1 st.param.v4.u32 [tc_echo_ret]" in param
    generic = single_instruction_kernel("ld.u32", "sm_90", db=db).ptx
    assert "[param_src_a];\n    add.s64" in generic  # the memory pointer stays generic: no cvta.to.global
    nc = single_instruction_kernel("ld.global.nc.v4.f32", "sm_90", db=db).ptx
    assert "ld.global.nc.v4.f32 {" in nc


def test_32_bit_cvta_has_no_kernel_and_says_why(db):
    for name in ("cvta.shared.u32", "cvta.to.global.u32"):
        with pytest.raises(EmitError, match="32-Bit compilation is no longer supported"):
            single_instruction_kernel(name, "sm_90", db=db)


@pytest.mark.parametrize("predicated", [False, True], ids=["plain", "pred"])
def test_every_kernel_is_accepted_by_ptxas(db, predicated):
    try:
        ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")
    batches = defaultdict(list)
    for target in CUBIN_TARGETS:
        for form in _around(db):
            if db.verdict(form.name, target).legal and no_kernel_reason(form) is None:
                k = single_instruction_kernel(form, target, predicated=predicated, db=db)
                batches[(k.version, target)].append(k)
    failures = []
    for (version, target), kernels in sorted(batches.items()):
        module = f".version {version}\n.target {target}\n.address_size 64\n"
        entries = "".join("\n" + k.ptx.split(".address_size 64\n", 1)[1] for k in kernels)
        result = ptxas.assemble(module + entries, target)  # to a cubin: parse-only passes 32-bit cvta
        if not result.ok:
            failures.append(f"{target} .version {version}: {result.output[:2000]}")
    assert not failures, "\n".join(failures)
    assert sum(len(v) for v in batches.values()) > len(CUBIN_TARGETS) * 1700


def test_every_kernel_parses_on_every_other_base_target(db):
    """The other base targets from sm_75 (ptxas 13's oldest) up, parse-only: a kernel per legal form."""
    try:
        ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")
    others = [t.name for t in db.targets.values() if not t.variant and t.sm >= 75 and t.name not in CUBIN_TARGETS]
    assert len(others) >= 5
    failures, total = [], 0
    for target in others:
        batches = defaultdict(list)
        for form in _around(db):
            if db.verdict(form.name, target).legal and no_kernel_reason(form) is None:
                for predicated in (False, True):
                    k = single_instruction_kernel(form, target, predicated=predicated, db=db)
                    batches[k.version].append(k)
        for version, kernels in sorted(batches.items()):
            total += len(kernels)
            module = f".version {version}\n.target {target}\n.address_size 64\n"
            entries = "".join("\n" + k.ptx.split(".address_size 64\n", 1)[1] for k in kernels)
            result = ptxas.assemble(module + entries, f"compute_{target[3:]}", parse_only=True)
            if not result.ok:
                failures.append(f"{target} .version {version}: {result.output[:2000]}")
    assert not failures, "\n".join(failures)
    assert total > len(others) * 2 * 1700
