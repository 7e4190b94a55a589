"""Messages about PTX name PTX text, never the parser's internal objects.

Malformed operands of every kind (vector braces, an address, an immediate, a special register or a
bare name where something else is expected; malformed vectors, addresses and literals) go through
the public paths: ``tilecheck verify FILE.ptx --entry ... --against ...`` (the compiled-code front
end and the plan compiler; located ``FILE:line:col: error:``, exit 2) and ``tilecheck.sim.execute``
(the simulator of emitted PTX). Each message must quote the PTX as written and show no
``Reg(``/``Vec(``/``Imm(``-style repr, nor a name the front end made unique (``%r1#3``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.sim import PtxError, execute
from tilecheck.sim.frontend import Instr, parse_module
from tilecheck.sim.parser import Addr, Imm, Reg, Special, Symbol, Vec, parse_ptx, ptx_text

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "examples").glob("*/*.ptx"))
NODES = ("Reg", "Vec", "Imm", "Addr", "Symbol", "Special", "Instr", "Statement", "Label", "Param")
INTERNAL = re.compile(r"\b(?:" + "|".join(NODES) + r")\(|\w#\d|\w@\d")

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
# an elementwise square root the verifier accepts when the line under test is harmless (the guard
# test below); that line is line 20, column 3
KERNEL = (".visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)\n{\n"
          "  .reg .b16 %rs<3>;\n  .reg .f32 %f<4>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
          "  ld.param.u64 %rd1, [k_param_0];\n  ld.param.u64 %rd2, [k_param_1];\n"
          "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %ntid.x;\n  mov.u32 %r3, %tid.x;\n"
          "  mad.lo.s32 %r1, %r1, %r2, %r3;\n  mul.wide.s32 %rd3, %r1, 4;\n"
          "  add.s64 %rd1, %rd1, %rd3;\n  add.s64 %rd2, %rd2, %rd3;\n"
          "  ld.global.f32 %f1, [%rd1];\n"
          "  {line}\n"
          "  sqrt.rn.f32 %f1, %f1;\n  st.global.f32 [%rd2], %f1;\n  ret;\n}\n")
LINE, COL = 20, 3


def _assert_ptx_text(message: str, *fragments: str) -> None:
    assert not INTERNAL.search(message), f"an internal object in the message: {message}"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


# (the malformed line, what the message must say): one row per kind of operand in a wrong place
VERIFY_CASES = [
    # several registers in braces where a scalar access takes one (Triton's one-element `{ %rs1 }`
    # is that register: tests/sim/test_triton_ptx.py)
    ("ld.global.b16 { %rs1, %rs2 }, [ %rd1 + 0 ];", "2 registers in braces '{ %rs1, %rs2 }'"),
    ("st.global.b16 [ %rd2 + 0 ], { %rs1, %rs2 };", "2 registers in braces '{ %rs1, %rs2 }'"),
    ("add.rn.f32 %f3, { %f1, %f2 }, %f2;", "unsupported operand '{ %f1, %f2 }'"),
    # an address where a register is expected
    ("add.rn.f32 [%rd1], %f1, %f2;", "expected a register, got '[%rd1]'"),
    ("add.rn.f32 %f3, [%rd1+4], %f2;", "unsupported operand '[%rd1+4]'"),
    # an immediate where an address or a register is expected
    ("ld.global.f32 %f2, 16;", "'ld.global.f32'"),
    ("st.global.f32 0f3F800000, %f1;", "'st.global.f32'"),
    ("mov.b32 7, %r1;", "expected a register, got '7'"),
    # a special register, a bare name, an unknown parameter
    ("mov.u32 %tid.x, %r1;", "expected a register, got '%tid.x'"),
    ("add.rn.f32 %f3, nowhere, %f2;", "unsupported operand 'nowhere'"),
    ("ld.param.u64 %rd1, [k_param_9];", "ld.param from unknown parameter 'k_param_9'"),
    # operands the parser cannot read
    ("ld.global.f32 %f2, [%rd1*4];", "unsupported address '[%rd1*4]'"),
    ("mov.b32 %r1, 0f3F80;", "float literal '0f3F80' needs 8 hex digits"),
    ("mov.u32 %r1, %tid.w;", "unsupported special register '%tid.w'"),
    ("mov.u32 %r1, %foo.x;", "unknown special register '%foo.x'"),
    ("mov.u32 %r1, 5q;", "cannot parse operand '5q'"),
    ("add.rn.f32 %f3, %f1, ;", "empty operand"),
    ("add.rn.f32 %f3, %f1, %f9;", "undeclared register '%f9'"),
    # statements with no instruction (ptxas: "syntax error")
    (";", "an empty statement (a ';' with no instruction before it)"),
    ("@%p1 ;", "a guard with no instruction after it ('@%p1')"),
]


def test_the_kernel_verifies_without_the_malformed_line(tmp_path, capsys):
    """Guard: each error below comes from the line under test, not from the kernel around it."""
    path = tmp_path / "k.ptx"
    path.write_text(HEADER + KERNEL.replace("{line}", "mov.b32 %r1, %r2;"), encoding="utf-8")
    code = main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32", "--input", "0x40800000"])
    out, err = capsys.readouterr()
    assert code == 0, out + err


@pytest.mark.parametrize("line, fragment", VERIFY_CASES, ids=[c[0] for c in VERIFY_CASES])
def test_verify_names_the_ptx_text_of_a_malformed_operand(tmp_path, capsys, line, fragment):
    path = tmp_path / "k.ptx"
    path.write_text(HEADER + KERNEL.replace("{line}", line), encoding="utf-8")
    code = main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"{path}:{LINE}:{COL}: error: "), err
    _assert_ptx_text(err, fragment)


def test_verify_names_a_scope_local_register_as_the_ptx_spells_it(tmp_path, capsys):
    """A register declared inside an inline-asm scope is renamed apart internally; a message about
    it shows the name the PTX gives it."""
    line = "{ .reg .b32 t; add.rn.f32 %f3, { t }, %f2; }"
    path = tmp_path / "k.ptx"
    path.write_text(HEADER + KERNEL.replace("{line}", line), encoding="utf-8")
    assert main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32"]) == 2
    err = capsys.readouterr().err
    _assert_ptx_text(err, "unsupported operand '{ t }'")


SIM_KERNEL = (".visible .entry k(.param .u64 k_param_0)\n{\n"
              "  .reg .f32 %f<4>;\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n  .reg .pred %p<2>;\n"
              "  ld.param.u64 %rd1, [k_param_0];\n  {line}\n  ret;\n}\n")

SIM_CASES = [
    ("add.rn.f32 [%rd1], %f1, %f2;", "the destination must be a register, got '[%rd1]'"),
    ("add.rn.f32 %f3, [%rd1+4], %f2;", "unsupported operand '[%rd1+4]'"),
    ("mov.b64 %rd1, { %r1, [%rd1] };", "pack sources must be registers, got '[%rd1]'"),
    ("ld.global.f32 %f1, 16;", "needs an address operand [..], got '16'"),
    ("ld.param.u64 %rd1, 5;", "needs an address operand [..], got '5'"),
    ("setp.lt.f32 5, %f1, %f2;", "expected a predicate register destination, got '5'"),
    ("selp.b32 %r1, %r2, %r2, [%rd1];", "expected a predicate, got '[%rd1]'"),
    ("mov.b32 %r1, 0f3F80;", "float literal '0f3F80' needs 8 hex digits"),
    ("mov.u32 %r1, %foo.x;", "unknown special register '%foo.x'"),
]


@pytest.mark.parametrize("line, fragment", SIM_CASES, ids=[c[0] for c in SIM_CASES])
def test_the_simulator_names_the_ptx_text_of_a_malformed_operand(db, line, fragment):
    with pytest.raises(PtxError) as info:
        execute(HEADER + SIM_KERNEL.replace("{line}", line), "k", [np.zeros(4, np.float32)], db=db, source="m.ptx")
    assert info.value.line == 11
    _assert_ptx_text(str(info.value), "m.ptx: line 11: ", fragment)


# ---- the render function itself ----------------------------------------------------------------


@pytest.mark.parametrize("node, text", [
    (Reg("%r1"), "%r1"),
    (Reg("%r1#3"), "%r1"),                      # scope-local, renamed apart
    (Reg("%r1#3@2"), "%r1"),                    # and then inlined
    (Reg("%p1|%p2#4"), "%p1|%p2"),              # setp's two destinations
    (Special("%tid.x"), "%tid.x"),
    (Imm("0f3F800000", 0x3F800000, 32), "0f3F800000"),
    (Imm("-7", -7), "-7"),
    (Symbol("param0#5"), "param0"),
    (Vec((Reg("%r1"), Reg("%r2"))), "{%r1, %r2}"),   # built by code: spelled from the items
    (Vec((Reg("%rs1"),), "{ %rs1 }"), "{ %rs1 }"),   # parsed: spelled as written
    (Addr(Reg("%rd1"), 0), "[%rd1]"),
    (Addr(Reg("%rd1"), 8), "[%rd1+8]"),
    (Addr(Reg("%rd1"), -8), "[%rd1-8]"),
    (Addr(Symbol("k_param_0"), 4, "[k_param_0+4]"), "[k_param_0+4]"),
    ((Symbol("a"), Symbol("b#1")), "(a, b)"),
])
def test_ptx_text_spells_every_operand_node(node, text):
    assert ptx_text(node) == text
    if not isinstance(node, tuple):
        assert str(node) == text and repr(node) == repr(text) and f"{node!r}" == repr(text)


def test_the_spelling_is_display_only():
    """Equality and hashing ignore the kept spelling: `{ %r1 }` and `{%r1}` are the same operand."""
    assert Vec((Reg("%r1"),), "{ %r1 }") == Vec((Reg("%r1"),)) and hash(Vec((Reg("%r1"),), "{ %r1 }")) == hash(
        Vec((Reg("%r1"),)))
    assert Addr(Reg("%rd1"), 4, "[ %rd1 + 4 ]") == Addr(Reg("%rd1"), 4)
    assert Reg("%r1") != Symbol("%r1")


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_corpus_operand_shows_as_its_ptx_text(path):
    """The class, on real compiler output: every operand of every instruction of the committed
    corpus (nvcc, LLVM; inline-asm scopes renamed apart) shows as text that the instruction's PTX
    contains, and no operand shows as an internal object."""
    module = parse_module(path.read_text(encoding="utf-8"), str(path))
    seen = 0
    for fn in module.functions.values():
        for item in fn.body:
            if not isinstance(item, Instr) or item.opcode.startswith("call"):
                continue  # (a call's parameter lists span lines; their names are plain strings)
            for op in item.operands:
                shown = repr(op)
                assert not INTERNAL.search(shown), (item.line, item.text, shown)
                assert ptx_text(op).replace(" ", "") in item.text.replace(" ", ""), (item.line, item.text, shown)
                seen += 1
    assert seen > 0


def test_the_emitted_ptx_parser_keeps_the_spelling_too():
    module = parse_ptx(HEADER + SIM_KERNEL.replace("{line}", "mov.b64 %rd2, { %r1, %r2 };"))
    (stmt,) = [s for s in module.kernel("k").statements if s.opcode == "mov.b64"]
    assert repr(stmt.operands[1]) == "'{ %r1, %r2 }'" and stmt.operands[1] == Vec((Reg("%r1"), Reg("%r2")))


def test_a_parameter_declared_twice_is_refused_where_it_repeats(tmp_path, capsys):
    """ptxas: "Duplicate definition of variable": the second declaration is located."""
    text = HEADER + KERNEL.replace("{line}", "mov.b32 %r1, %r2;").replace(
        "(.param .u64 k_param_0, .param .u64 k_param_1)", "(.param .u64 k_param_0,\n .param .u64 k_param_0)")
    path = tmp_path / "k.ptx"
    path.write_text(text, encoding="utf-8")
    assert main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:5:2: error: parameter 'k_param_0' declared twice"), err


@pytest.mark.parametrize("again", [".reg .f32 %f2;", ".reg .b32 %f<2>;"], ids=["one", "range"])
def test_a_register_declared_twice_in_one_scope_is_refused_where_it_repeats(tmp_path, capsys, again):
    """ptxas: "Duplicate definition of variable" (the same name with another type would otherwise
    change what an instruction reads); a nested { } scope may declare it again."""
    text = HEADER + KERNEL.replace("{line}", "mov.b32 %r1, %r2;").replace(
        "  .reg .f32 %f<4>;\n", f"  .reg .f32 %f<4>;\n  {again}\n")
    path = tmp_path / "k.ptx"
    path.write_text(text, encoding="utf-8")
    assert main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and "declared twice in one scope" in err and "%f" in err, err
    nested = HEADER + KERNEL.replace("{line}", "{ .reg .f32 %f1; mov.f32 %f1, 0f3F800000; }")
    path.write_text(nested, encoding="utf-8")
    assert main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32", "--cases", "2000"]) in (0, 1)
