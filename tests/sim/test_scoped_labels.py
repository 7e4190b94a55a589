"""Labels are scoped like registers: the same label in sibling ``{ }`` blocks (inline asm inlined
twice: CUTLASS's ``LAB_WAIT:``) names two places, and a branch goes to the one of its own scope;
the same label twice in one scope is refused, located, as ptxas refuses it."""

from __future__ import annotations

import pytest

from tilecheck import ptxas
from tilecheck.cli import main
from tilecheck.errors import ToolNotFoundError

HEAD = (".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 a, .param .u64 o)\n{\n"
        "  .reg .pred %p<2>;\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<5>;\n  .reg .b32 %r<4>;\n"
        "  ld.param.u64 %rd1, [a];\n  ld.param.u64 %rd2, [o];\n  mov.u32 %r1, %tid.x;\n"
        "  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd1, %rd1, %rd3;\n  add.s64 %rd2, %rd2, %rd3;\n"
        "  ld.global.f32 %f1, [%rd1];\n")
# |a| (negate unless a > 0), then + 1 unless the result is > 1: each step skips itself with a
# branch to a label L1 of its own block
SIBLINGS = HEAD + (
    "  {\n  setp.gt.f32 %p1, %f1, 0f00000000;\n  @%p1 bra L1;\n  neg.f32 %f1, %f1;\n  L1:\n  }\n"
    "  {\n  setp.gt.f32 %p1, %f1, 0f3F800000;\n  @%p1 bra L1;\n  add.rn.f32 %f1, %f1, 0f3F800000;\n  L1:\n  }\n"
    "  st.global.f32 [%rd2], %f1;\n  ret;\n}\n")
X = "selp.f32(a, neg.f32(a), setp.gt.f32(a, 0.0))"
STEPS = f"selp.f32({X}, add.rn.f32({X}, 1.0), setp.gt.f32({X}, 1.0))"


def _ptxas_accepts(text: str) -> bool | None:
    try:
        return ptxas.assemble(text, "compute_90", parse_only=True).ok
    except ToolNotFoundError:
        return None


def test_a_label_of_each_sibling_scope_is_its_own(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(SIBLINGS)
    assert _ptxas_accepts(SIBLINGS) in (True, None)
    # a branch of the first block that went to the second block's L1 would skip the + 1
    # (2^-32 -> 2^-32, not 1): a counterexample on every small positive input
    code = main(["verify", str(path), "--entry", "k", "--against", STEPS, "--cases", "3000"])
    out, err = capsys.readouterr()
    assert code == 0 and "NO COUNTEREXAMPLE" in out, out + err


@pytest.mark.parametrize("where", ["outer", "inner"])
def test_a_label_twice_in_one_scope_is_refused_where_it_repeats(tmp_path, capsys, where):
    twice = "  L1:\n  L1:\n" if where == "outer" else "  {\n  L1:\n  neg.f32 %f1, %f1;\n  L1:\n  }\n"
    text = HEAD + twice + "  st.global.f32 [%rd2], %f1;\n  ret;\n}\n"
    path = tmp_path / "k.ptx"
    path.write_text(text)
    assert _ptxas_accepts(text) in (False, None)
    assert main(["verify", str(path), "--entry", "k", "--against", "neg.f32", "--cases", "8"]) == 2
    err = capsys.readouterr().err
    line = 18 if where == "outer" else 20
    assert f"k.ptx:{line}:3: error: label 'L1' defined twice in one scope (first at line {line - 1 if where == 'outer' else 18})" in err, err
