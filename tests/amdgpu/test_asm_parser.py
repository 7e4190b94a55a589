"""The AMDGCN assembly front end (tilecheck.amdgpu.asm) on the committed llc-19 fixtures.

``fixtures/asm/*.ll`` are the sources; ``regen.sh`` compiled them for gfx90a, gfx942 and gfx1100
into the committed ``*.s``, so only the optional llvm-mc re-assembly test needs LLVM.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tilecheck.amdgpu.asm import (INVENTORY, AsmSyntaxError, Literal, SReg, Special, SrcMod, SymbolRef,
                                  VReg, mnemonics, parse_asm, parse_asm_file, parse_instruction)
from tilecheck.amdgpu.asm_types import AReg, FuncOperand, TtmpReg
from tilecheck.errors import UsageError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "asm"
TARGETS = ("gfx90a", "gfx942", "gfx1100")
FILES = sorted(FIXTURES.glob("*.s"))
KERNELS = {"fdiv_f16", "fdiv_f32", "fdiv_f32_ftz", "fdiv_f64", "sqrt_f32", "sqrt_f64", "sqrt_f16",
           "fma_f32", "fma_f64", "fma_v2f16", "rcp_call"}
DESCRIPTOR_FIELDS = (".amdhsa_float_denorm_mode_32", ".amdhsa_float_denorm_mode_16_64",
                     ".amdhsa_float_round_mode_32", ".amdhsa_float_round_mode_16_64",
                     ".amdhsa_kernarg_size", ".amdhsa_user_sgpr_kernarg_segment_ptr",
                     ".amdhsa_ieee_mode", ".amdhsa_dx10_clamp")


def module(stem: str, target: str):
    return parse_asm_file(FIXTURES / f"{stem}.{target}.s")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_fixtures_exist_for_every_target():
    assert {p.name for p in FILES} == {f"{s}.{t}.s" for s in ("elementwise", "modifiers") for t in TARGETS} | {
        "triton_like.gfx942.s"}


@pytest.mark.parametrize("target", TARGETS)
def test_module_structure(target):
    m = module("elementwise", target)
    assert m.target == f"amdgcn-amd-amdhsa--{target}" and m.processor == target
    assert m.code_object_version == 5
    assert {k.name for k in m.kernels} == KERNELS
    helper = m.function("scaled_rcp")
    assert not helper.is_kernel and helper.descriptor is None and helper.globl
    assert helper.instructions[-1].mnemonic == "s_setpc_b64"
    for k in m.kernels:
        assert k.globl and k.instructions[-1].mnemonic == "s_endpgm"
        assert all(f in k.descriptor for f in DESCRIPTOR_FIELDS), k.name
        # the bounds check branches to the kernel's only label, just before the end of the program
        (label, index), = k.labels.items()
        assert re.fullmatch(r"\.LBB\d+_2", label)
        assert {i.mnemonic for i in k.instructions[index:]} <= {"s_nop", "s_sendmsg", "s_endpgm"}
        assert k.label_locations[label].line < k.instructions[index].line
        branch = next(i for i in k.instructions if i.mnemonic == "s_cbranch_execz")
        assert branch.operands == (SymbolRef(label, label),)
    # the call's relocations are symbol expressions of the helper
    call = module("elementwise", target).function("rcp_call")
    rel = [op for i in call.instructions for op in i.operands if isinstance(op, SymbolRef)]
    assert {op.text for op in rel} >= {"scaled_rcp@rel32@lo+4", "scaled_rcp@rel32@hi+12"}
    assert {op.name for op in rel if "@" in op.text} == {"scaled_rcp"}


def division_macro(kernel):
    """The instructions between the kernel's last global_load and its global_store."""
    insts = kernel.instructions
    last_load = max(n for n, i in enumerate(insts) if i.mnemonic.startswith("global_load"))
    store = next(n for n, i in enumerate(insts) if i.mnemonic.startswith("global_store"))
    loads = [i for i in insts if i.mnemonic.startswith("global_load")]
    return loads, insts[last_load + 1:store]


@pytest.mark.parametrize("target", TARGETS)
def test_f32_division_macro(target):
    loads, macro = division_macro(module("elementwise", target).function("fdiv_f32"))
    names = [i.mnemonic for i in macro if i.mnemonic.endswith("_f32")]  # the rest is address math
    assert sorted(names) == sorted(["v_div_scale_f32", "v_div_scale_f32", "v_rcp_f32", "v_fma_f32",
                                    "v_fmac_f32", "v_mul_f32", "v_fma_f32", "v_fmac_f32", "v_fma_f32",
                                    "v_div_fmas_f32", "v_div_fixup_f32"])
    assert names[0] == "v_div_scale_f32" and names[-2:] == ["v_div_fmas_f32", "v_div_fixup_f32"]
    by = {}
    for i in macro:
        by.setdefault(i.mnemonic, []).append(i)
    loaded = [i.operands[0] for i in loads]
    assert all(isinstance(r, VReg) and r.count == 1 for r in loaded)
    fixup = by["v_div_fixup_f32"][0]
    num, den = fixup.operands[3], fixup.operands[2]  # v_div_fixup_f32 q, quotient, denominator, numerator
    assert {num, den} == set(loaded)
    scales = by["v_div_scale_f32"]
    assert {s.operands[2:] for s in scales} == {(den, den, num), (num, den, num)}
    # the numerator's scale writes vcc (wave64) or vcc_lo (wave32): v_div_fmas reads it
    vcc = "vcc_lo" if target == "gfx1100" else "vcc"
    assert next(s for s in scales if s.operands[2] == num).operands[1] == Special(vcc)
    den_scale = next(s for s in scales if s.operands[2] == den)
    assert den_scale.operands[1] in (SReg(0, 2), SReg(2, 2), Special("null")), den_scale.text
    rcp = by["v_rcp_f32"][0]
    assert rcp.encoding == "_e32" and rcp.operands[1] == den_scale.operands[0]
    # e = 1 - d*r: the first fma negates the scaled denominator and adds the inline constant 1.0
    err = by["v_fma_f32"][0]
    assert isinstance(err.operands[1], SrcMod) and err.operands[1].neg and not err.operands[1].abs
    assert err.operands[1].base == den_scale.operands[0]
    assert err.operands[3] == Literal(1.0, 0) and err.operands[3].is_inline
    assert str(err) == f"v_fma_f32 {err.operands[0]}, -{den_scale.operands[0]}, {rcp.operands[0]}, 1.0"
    fmas = by["v_div_fmas_f32"][0]
    assert len(fmas.operands) == 4 and fixup.operands[1] == fmas.operands[0]
    assert all(f.encoding == "_e32" for f in by["v_fmac_f32"])


def test_f32_division_macro_exact_gfx942():
    k = module("elementwise", "gfx942").function("fdiv_f32")
    _, macro = division_macro(k)
    assert [i.text for i in macro[:2]] == ["v_lshl_add_u64 v[0:1], s[4:5], 0, v[0:1]", "s_waitcnt vmcnt(0)"]
    first = macro[2]
    assert (first.mnemonic, first.encoding, first.operands) == (
        "v_div_scale_f32", "", (VReg(2), SReg(0, 2), VReg(7), VReg(7), VReg(6)))
    assert (first.line, first.col) == (137, 2)  # after the tab
    assert first.location.path.endswith("elementwise.gfx942.s")
    fma = macro[5]
    assert fma.text == "v_fma_f32 v5, -v2, v3, 1.0"
    assert fma.operands == (VReg(5), SrcMod("neg", VReg(2)), VReg(3), Literal(1.0, 0))


@pytest.mark.parametrize("target", TARGETS)
def test_denormal_attribute_changes_the_descriptor(target):
    m = module("elementwise", target)
    ieee, ftz = m.function("fdiv_f32").descriptor, m.function("fdiv_f32_ftz").descriptor
    assert ieee[".amdhsa_float_denorm_mode_32"] == 3 and ftz[".amdhsa_float_denorm_mode_32"] == 0
    assert ieee[".amdhsa_float_denorm_mode_16_64"] == ftz[".amdhsa_float_denorm_mode_16_64"] == 3
    assert ieee[".amdhsa_float_round_mode_32"] == ftz[".amdhsa_float_round_mode_32"] == 0
    # with f32 denormals flushed the macro switches them on around its fmas and back off
    switch = {"s_setreg_imm32_b32", "s_denorm_mode"}
    assert not switch & set(mnemonics(_only(m, "fdiv_f32")))
    modes = [i for i in m.function("fdiv_f32_ftz").instructions if i.mnemonic in switch]
    assert len(modes) == 2
    if target == "gfx1100":
        assert [i.operands for i in modes] == [(Literal(15),), (Literal(12),)]
    else:
        hw = FuncOperand("hwreg", ("HW_REG_MODE", 4, 2))
        assert [i.operands for i in modes] == [(hw, Literal(3)), (hw, Literal(0))]
        assert str(hw) == "hwreg(HW_REG_MODE, 4, 2)"


def _only(m, name):
    """A module holding just one function (for per-function inventories)."""
    from tilecheck.amdgpu.asm import AsmModule
    return AsmModule(m.path, m.target, m.code_object_version, [m.function(name)])


@pytest.mark.parametrize("target", TARGETS)
def test_ieee_mode_and_kernargs(target):
    m = module("modifiers", target)
    assert m.function("clamp_omod").descriptor[".amdhsa_ieee_mode"] == 0   # "amdgpu-ieee"="false"
    assert m.function("fdiv_abs").descriptor[".amdhsa_ieee_mode"] == 1
    e = module("elementwise", target)
    for name, n_offset in (("fdiv_f32", 24), ("fma_f32", 32), ("sqrt_f32", 16)):
        k = e.function(name)
        explicit = [a for a in k.args if not a.value_kind.startswith("hidden_")]
        assert [(a.name, a.offset, a.size) for a in explicit][-1] == ("n", n_offset, 4)
        assert all(a.value_kind == "global_buffer" and a.address_space == "global" and a.size == 8
                   for a in explicit[:-1])
        assert [a.offset for a in explicit[:-1]] == list(range(0, n_offset, 8))
        assert explicit[-1].value_kind == "by_value"
        assert k.descriptor[".amdhsa_kernarg_size"] == k.metadata[".kernarg_segment_size"]
        assert k.descriptor[".amdhsa_user_sgpr_kernarg_segment_ptr"] == 1


@pytest.mark.parametrize("target", TARGETS)
def test_wavefront_size(target):
    for stem in ("elementwise", "modifiers"):
        for k in module(stem, target).kernels:
            assert k.wavefront_size == (32 if target == "gfx1100" else 64), k.name
            assert (k.descriptor.get(".amdhsa_wavefront_size32") == 1) == (target == "gfx1100")


def test_modifiers_fixture():
    m9, m11 = module("modifiers", "gfx942"), module("modifiers", "gfx1100")
    absdiv = m9.function("fdiv_abs")
    fixup = next(i for i in absdiv.instructions if i.mnemonic == "v_div_fixup_f32")
    assert fixup.operands[2:] == (SrcMod("abs", VReg(2)), SrcMod("neg", SrcMod("abs", VReg(1))))
    assert fixup.operands[3].neg and fixup.operands[3].abs and fixup.operands[3].base == VReg(1)
    assert not fixup.operands[2].neg and fixup.operands[2].abs
    co = {i.text: i for i in m9.function("clamp_omod").instructions}
    assert co["v_fma_f32 v3, v1, v2, 1.0 clamp"].modifiers == {"clamp": True}
    assert co["v_mul_f32_e64 v1, v1, v2 mul:2"].modifiers == {"mul": 2}
    assert co["v_add_f32_e64 v1, v3, v1 div:2"].modifiers == {"div": 2}
    dpp = next(i for i in m9.function("dpp_shift").instructions if i.encoding == "_dpp")
    assert dpp.mnemonic == "v_add_u32"
    assert dpp.modifiers == {"row_shr": 1, "row_mask": 0xF, "bank_mask": 0xF, "bound_ctrl": 1}
    assert str(dpp.modifiers["row_mask"]) == "0xf"
    sdwa = next(i for i in m9.function("half_hi").instructions if i.encoding == "_sdwa")
    assert sdwa.modifiers == {"dst_sel": "DWORD", "dst_unused": "UNUSED_PAD", "src0_sel": "DWORD",
                              "src1_sel": "WORD_1"}
    lds = m9.function("lds_cache").instructions
    assert next(i for i in lds if i.mnemonic == "ds_read_b32").modifiers == {"offset": 16}
    assert next(i for i in lds if i.mnemonic == "global_load_dword" and i.modifiers).modifiers == {"nt": True}
    assert next(i for i in lds if i.mnemonic == "global_store_dword").modifiers == {"sc0": True, "sc1": True}
    gfx90a = module("modifiers", "gfx90a").function("lds_cache").instructions
    assert next(i for i in gfx90a if i.modifiers.get("glc")).modifiers == {"glc": True, "slc": True}
    g11 = m11.function("lds_cache").instructions
    assert next(i for i in g11 if i.mnemonic == "global_load_b32" and i.modifiers).modifiers == {"slc": True,
                                                                                                "dlc": True}
    wait = next(i for i in m11.function("lds_cache").instructions if i.mnemonic == "s_waitcnt_vscnt")
    assert wait.operands == (Special("null"), Literal(0, 16))
    pk = next(i for i in module("elementwise", "gfx942").function("fma_v2f16").instructions
              if i.mnemonic == "v_pk_fma_f16")
    assert pk.modifiers == {"op_sel": (1, 0, 0), "op_sel_hi": (0, 1, 1), "neg_lo": (0, 1, 0), "neg_hi": (0, 1, 0)}


def test_waitcnt_and_delay_alu_fields_are_modifiers():
    m = module("elementwise", "gfx1100").function("scaled_rcp")
    wait, scale = m.instructions[0], m.instructions[1]
    assert wait.operands == () and wait.modifiers == {"vmcnt": 0, "expcnt": 0, "lgkmcnt": 0}
    assert scale.operands[1] == Special("null") and scale.operands[4] == Literal(1.0, 0)
    delay = m.instructions[2]
    assert delay.modifiers == {"instid0": "VALU_DEP_1", "instskip": "SKIP_2", "instid1": "VALU_DEP_1"}
    assert delay.render() == delay.text


def test_vopd_pair():
    insts = [i for i in module("elementwise", "gfx1100").function("sqrt_f64").instructions if i.dual]
    (pair,) = insts
    assert pair.mnemonic == pair.dual.mnemonic == "v_dual_cndmask_b32"
    assert pair.operands == (VReg(3), VReg(5), VReg(3)) and pair.dual.operands == (VReg(2), VReg(4), VReg(2))
    assert pair.dual.col == pair.col + pair.text.index(":: ") + 3
    assert mnemonics(_only(module("elementwise", "gfx1100"), "sqrt_f64"))["v_dual_cndmask_b32"] == 2


def _operand_text(inst) -> str:
    """The operand part of the source statement: after the mnemonic, before the modifiers."""
    rest = inst.text[len(inst.name):]
    rest = rest.split("::")[0]
    return rest


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_round_trip(path):
    """str() of every operand, joined, gives back the source text (modulo whitespace), and so
    does the whole statement rebuilt from its fields."""
    m = parse_asm_file(path)
    count = 0
    for f in m.functions:
        for inst in f.instructions:
            count += 1
            ops = squash(",".join(str(op) for op in inst.operands))
            assert squash(_operand_text(inst)).startswith(ops), inst.text
            assert squash(inst.render()) == squash(inst.text), (inst.text, inst.render())
    assert count == sum(1 for line in path.read_text().splitlines() if re.match(r"(?:\t|.*\*/ )[a-z]", line))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_rendered_statements_reassemble_to_the_same_bytes(path):
    """llvm-mc encodes each statement rebuilt from the parse exactly as the original line."""
    from tilecheck.amdgpu.encoding import llvm_mc
    mc, why = llvm_mc()
    if mc is None:
        pytest.skip(why)
    m = parse_asm_file(path)
    insts = [i for f in m.functions for i in f.instructions]

    mattr = ",".join(("+" if on else "-") + name for name, on in m.features.items())
    prelude = [f".set {k}, {v}" for k, v in m.symbols.items()]

    def encode(lines):
        done = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={m.processor}", f"-mattr={mattr}",
                               "-show-encoding"], input="\n".join(prelude + lines) + "\n",
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and not done.stderr.strip(), done.stderr[:2000]
        return re.findall(r"encoding: \[([^\]]*)\]", done.stdout)

    original = encode([i.text for i in insts])
    assert len(original) == len(insts)
    assert encode([i.render() for i in insts]) == original


def test_triton_like_module():
    """Hand-written in the shape Triton's gfx942 output has: a target id with features, ``.set``
    constants, ``.loc``/``.file`` and ``.Ltmp`` labels in the body, MFMA on AGPRs, buffer and DPP
    forms, ``//`` and ``/* */`` comments, DWARF data after the function."""
    m = module("triton_like", "gfx942")
    assert (m.processor, m.features) == ("gfx942", {"sramecc": True, "xnack": False})
    assert m.symbols == {"V_LDS1": "4096"}
    (k,) = m.functions
    assert k.is_kernel and k.metadata is None and k.args == [] and k.wavefront_size == 64
    by = {i.name: i for i in k.instructions}
    mfma = by["v_mfma_f32_32x32x8_f16"]
    assert mfma.operands == (AReg(0, 16), VReg(0, 2), VReg(2, 2), AReg(0, 16))
    assert mfma.modifiers == {"cbsz": 1, "abid": 2, "blgp": 3}
    assert by["buffer_load_dwordx4"].modifiers == {"offen": True}
    assert by["buffer_load_dwordx4"].operands[3] == Literal(0)
    assert by["v_add_u32_e32"].operands[1] == SymbolRef("V_LDS1", "V_LDS1")
    assert by["global_load_dword"].modifiers == {"offset": -16}
    assert by["v_mov_b32_dpp"].modifiers == {"quad_perm": (1, 0, 3, 2), "row_mask": 0xF, "bank_mask": 0xF}
    assert by["s_getreg_b32"].operands[1] == FuncOperand("hwreg", ("HW_REG_MODE",))
    assert by["v_mov_b32_e32"].operands[1] == FuncOperand("lit", (Literal(1.0, 0),))
    assert by["s_mov_b64"].operands == (Special("exec"), Literal(-1))
    exp = by["v_exp_f32_e32"]  # after a block comment that began on the line before
    assert (exp.line, exp.col) == (33, 16)
    assert set(k.labels) == {".Lfunc_begin0", ".Ltmp0", ".LBB0_2", ".Ltmp1"}
    assert k.instructions[k.labels[".LBB0_2"]].mnemonic == "s_endpgm"


# --- single statements --------------------------------------------------------------------------

@pytest.mark.parametrize("text,operands", [
    ("v_add_f32_e64 v1, neg(v2), abs(v3)", (VReg(1), SrcMod("neg", VReg(2), True), SrcMod("abs", VReg(3), True))),
    ("v_mul_f32_e64 v1, -|v2|, neg(abs(s[4:5]))",
     (VReg(1), SrcMod("neg", SrcMod("abs", VReg(2))), SrcMod("neg", SrcMod("abs", SReg(4, 2), True), True))),
    ("v_mov_b32_e32 v0, 0.15915494", (VReg(0), Literal(0.15915494, 0))),
    ("v_mov_b32_e32 v0, -4.0", (VReg(0), Literal(-4.0, 0))),
    ("v_mov_b32_e32 v0, 0x3f800000", (VReg(0), Literal(0x3F800000, 16))),
    ("v_mov_b32_e32 v0, -16", (VReg(0), Literal(-16))),
    ("s_mov_b64 exec, ttmp[4:5]", (Special("exec"), TtmpReg(4, 2))),
    ("s_mov_b32 m0, exec_hi", (Special("m0"), Special("exec_hi"))),
    ("v_accvgpr_read_b32 v1, a[0:3]", (VReg(1), AReg(0, 4))),
    ("v_add_f16_e32 v1.h, v2.l, v3", (VReg(1, 1, "h"), VReg(2, 1, "l"), VReg(3))),
])
def test_statement_operands(text, operands):
    inst = parse_instruction(text)
    assert inst.operands == operands
    assert squash(inst.render()) == squash(text)


def test_inline_constants():
    for text in ("1.0", "-1.0", "0.5", "-0.5", "2.0", "-2.0", "4.0", "-4.0", "0.15915494", "64", "-16"):
        lit = parse_instruction(f"v_mov_b32 v0, {text}").operands[1]
        assert lit.is_inline and str(lit) == text
    assert not parse_instruction("v_mov_b32 v0, 0x4f800000").operands[1].is_inline
    assert not parse_instruction("v_mov_b32 v0, 3.0").operands[1].is_inline


@pytest.mark.parametrize("name,mnemonic,encoding", [
    ("v_rcp_f32_e32", "v_rcp_f32", "_e32"), ("v_add_f32_e64", "v_add_f32", "_e64"),
    ("v_mul_f16_sdwa", "v_mul_f16", "_sdwa"), ("v_mov_b32_dpp", "v_mov_b32", "_dpp"),
    ("v_add_f32_e64_dpp", "v_add_f32", "_e64_dpp"), ("v_div_scale_f32", "v_div_scale_f32", ""),
])
def test_encoding_suffix(name, mnemonic, encoding):
    inst = parse_instruction(f"{name} v0, v1")
    assert (inst.mnemonic, inst.encoding, inst.name) == (mnemonic, encoding, name)


def test_unknown_mnemonics_are_not_errors():
    inst = parse_instruction("v_frobnicate_f32 v1, v2 quad_perm:[3,2,1,0] dim:SQ_RSRC_IMG_2D")
    assert inst.mnemonic == "v_frobnicate_f32"
    assert inst.modifiers == {"quad_perm": (3, 2, 1, 0), "dim": "SQ_RSRC_IMG_2D"}


# --- located errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("text,col,message", [
    ("v_add_f32 v1, v[5:4], v2", 15, "malformed register range"),
    ("v_add_f32 v1, v[5:", 16, "malformed register range: unterminated v["),
    ("v_add_f32 v1, @v2, v3", 15, "unknown operand token '@'"),
    ("v_add_f32 v1, |v2, v3", 15, "unterminated |...|"),
    ("v_add_f32 v1, vcx, v3", 15, "unknown operand 'vcx'"),
    ("global_load_dword v1, v0, s[2:3] glcc", 34, "unknown modifier 'glcc'"),
    ("v_pk_fma_f16 v2, v8, v9, v10 op_sel:[1,x,0]", 40, "expected a number"),
    ("v_add_f32 v1, v2, 0x1fz", 19, "malformed number '0x1fz'"),
    ("v_add_f32 v1, --v2, v3", 15, "two negations"),
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2, 3", 25, "unterminated '('"),
    ("s_setreg_imm32_b32 frob(1), 3", 20, "unknown operand function 'frob'"),
    ("ds_read_b32 v1, v0 offset:16 offset:8", 30, "repeated modifier"),
])
def test_statement_errors_are_located(text, col, message):
    src = (FIXTURES / "elementwise.gfx942.s").read_text().splitlines()
    lineno = next(n for n, line in enumerate(src, 1) if line.startswith("\tv_fma_f32 v5, -v2, v3, 1.0"))
    src[lineno - 1] = "\t" + text + "   ; a comment"
    with pytest.raises(AsmSyntaxError) as info:
        parse_asm("\n".join(src), "k.s")
    err = info.value
    assert isinstance(err, UsageError) and err.exit_code == 2
    assert (err.location.path, err.location.line, err.location.column) == ("k.s", lineno, col + 1), str(err)
    assert message in err.message
    assert str(err).startswith(f"k.s:{lineno}:{col + 1}: error: ")


BASE = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.text
\t.globl k
\t.type k,@function
k:
\ts_endpgm
.Lfunc_end0:
"""


def test_unterminated_descriptor():
    text = BASE + "\t.amdhsa_kernel k\n\t\t.amdhsa_kernarg_size 8\n"
    with pytest.raises(AsmSyntaxError, match="unterminated .amdhsa_kernel k") as info:
        parse_asm(text, "u.s")
    assert str(info.value.location) == "u.s:8:2"
    text = BASE + "\t.amdhsa_kernel k\n\t\t.amdhsa_kernarg_size 8\n\t.text\n\ts_endpgm\n"
    with pytest.raises(AsmSyntaxError, match="unterminated .amdhsa_kernel k") as info:
        parse_asm(text, "u.s")
    assert str(info.value.location) == "u.s:8:2"


def test_descriptor_for_an_unknown_kernel():
    with pytest.raises(AsmSyntaxError, match="no function 'q'") as info:
        parse_asm(BASE + "\t.amdhsa_kernel q\n\t.end_amdhsa_kernel\n", "u.s")
    assert str(info.value.location) == "u.s:8:2"


def test_second_descriptor_for_a_kernel():
    text = BASE + "\t.amdhsa_kernel k\n\t.end_amdhsa_kernel\n\t.amdhsa_kernel k\n\t.end_amdhsa_kernel\n"
    with pytest.raises(AsmSyntaxError, match="a second .amdhsa_kernel k") as info:
        parse_asm(text, "u.s")
    assert str(info.value.location) == "u.s:10:2"


def test_unterminated_and_malformed_metadata():
    with pytest.raises(AsmSyntaxError, match="unterminated .amdgpu_metadata") as info:
        parse_asm(BASE + "\t.amdgpu_metadata\n---\namdhsa.kernels: []\n", "u.s")
    assert str(info.value.location) == "u.s:8:2"
    with pytest.raises(AsmSyntaxError, match="malformed .amdgpu_metadata YAML") as info:
        parse_asm(BASE + "\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: [k\n...\n\t.end_amdgpu_metadata\n",
                  "u.s")
    assert str(info.value.location) == "u.s:12:1"  # the flow sequence [k is still open at "..."
    with pytest.raises(AsmSyntaxError, match="malformed .amdgpu_metadata YAML") as info:
        parse_asm(BASE + "\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: k\n   .x: 1\n...\n"
                         "\t.end_amdgpu_metadata\n", "u.s")
    assert str(info.value.location) == "u.s:12:4"  # the misindented key


def test_instruction_outside_a_function():
    with pytest.raises(AsmSyntaxError, match="outside a function") as info:
        parse_asm("\t.text\n  s_nop 0\n", "u.s")
    assert str(info.value.location) == "u.s:2:3"


def test_minimal_module_and_inventory():
    m = parse_asm(BASE + "\t.amdhsa_kernel k\n\t\t.amdhsa_next_free_vgpr max(1, k.num_vgpr)\n"
                         "\t.end_amdhsa_kernel\n\t.set k.num_vgpr, 3\n", "m.s")
    k = m.function("k")
    assert k.is_kernel and k.descriptor == {".amdhsa_next_free_vgpr": "max(1, k.num_vgpr)"}
    assert m.symbols == {"k.num_vgpr": "3"} and k.wavefront_size == 64 and k.args == []
    e = module("elementwise", "gfx942")
    counts = INVENTORY["mnemonics"](e)
    assert counts["v_div_scale_f32"] >= 2 and counts["v_div_fixup_f32"] >= 1 and counts["s_endpgm"] == 11
    assert mnemonics(e, encoding=True)["v_rcp_f32_e32"] == counts["v_rcp_f32"]
    assert set(INVENTORY) == {"mnemonics", "encodings", "modifiers", "operands"}
    assert INVENTORY["operands"](e)["SrcMod:neg"] > 0


def test_the_llc_corpus_parses_whole():
    """Every kernel of examples/amdgpu (llc-19 for gfx90a, gfx942, gfx1100) reads with its
    descriptor, and the f32 division kernels hold the division macro."""
    from pathlib import Path

    from tilecheck.amdgpu.asm import parse_asm_file

    root = Path(__file__).resolve().parents[2] / "examples" / "amdgpu"
    files = sorted(root.glob("*.s"))
    assert len(files) == 3
    for path in files:
        module = parse_asm_file(str(path))
        assert len(module.kernels) >= 38 and all(k.descriptor for k in module.kernels)
        names = [i.mnemonic for i in module.function("fdiv_f32").instructions]
        for op in ("v_div_scale_f32", "v_rcp_f32", "v_div_fmas_f32", "v_div_fixup_f32"):
            assert op in names, (path.name, op)
