"""The PTX inside CUDA C++ inline asm (:mod:`tilecheck.legality.inline_asm`): statements found
outside comments and literals, templates concatenated and decoded, operands substituted by
constraint, instructions split and located at their first character in the C++ file, and malformed
input reported as :class:`UsageError` with ``path:line:col``."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tilecheck.errors import UsageError
from tilecheck.legality.inline_asm import CONSTRAINT_REGISTERS, AsmInstruction, extract

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cuda" / "inline_asm.cu"


def one(text: str):
    """The single statement of ``text``."""
    statements = extract(text, "k.cu")
    assert len(statements) == 1, statements
    return statements[0]


def at(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based (line, column) of the ``nth`` occurrence of ``needle`` in ``text``."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_tvm_style_helper():
    src = ("__device__ __forceinline__ float div_rn(float a, float b) { float d; "
           'asm("div.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }\n')
    st = one(src)
    assert (st.line, st.col) == at(src, "asm(")
    assert st.template == "div.rn.f32 %0, %1, %2;"
    assert st.outputs == (("=f", "d"),) and st.inputs == (("f", "a"), ("f", "b"))
    assert st.problem is None and st.macro is None
    assert st.instructions == (AsmInstruction("div.rn.f32", ("%f0", "%f1", "%f2"), None, 1, at(src, "div.rn")[1],
                                              "div.rn.f32 %0, %1, %2", 1),)


def test_multiline_scoped_predicate():
    src = ("__device__ unsigned sel(unsigned c, unsigned y) {\n  unsigned x;\n"
           '  asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %1, 0;\\n\\t@p mov.b32 %0, %2;\\n}\\n"'
           ' : "=r"(x) : "r"(c), "r"(y));\n  return x;\n}\n')
    st = one(src)
    assert st.template == "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %1, 0;\n\t@p mov.b32 %0, %2;\n}\n"
    setp, mov = st.instructions  # the braces and the .reg declaration are not instructions
    assert (setp.opcode, setp.operands, setp.guard) == ("setp.ne.b32", ("p", "%r1", "0"), None)
    assert (mov.opcode, mov.operands, mov.guard, mov.text) == ("mov.b32", ("%r0", "%r2"), "@p", "@p mov.b32 %0, %2")
    # each located past its escapes: the \t before it is two characters of the file
    assert (setp.line, setp.col) == at(src, "setp.ne")
    assert (mov.line, mov.col) == at(src, "@p mov")
    assert setp.statement_line == mov.statement_line == 3


def test_cutlass_vector_load():
    src = ('__device__ uint4 ldg(const void* ptr) { uint4 v;\n'
           '  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"\n'
           '               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)\n'
           '               : "l"(ptr));\n  return v; }\n')
    st = one(src)
    assert st.outputs == (("=r", "v.x"), ("=r", "v.y"), ("=r", "v.z"), ("=r", "v.w"))
    assert st.inputs == (("l", "ptr"),)
    (ld,) = st.instructions
    assert ld.opcode == "ld.global.nc.v4.u32"
    assert ld.operands == ("{%r0, %r1, %r2, %r3}", "[%rd4]")
    assert (ld.line, ld.col) == (2, 17)


def test_named_operands_and_nested_expressions():
    # clang CUDA accepts %[name]; nvcc 13.0 fails on it ("symbolic operand reference not
    # supported"), which is why the example file does not use it
    src = ('asm("add.s32 %[out], %[a], %1;\\n\\tmov.b32 %0, %[out];" : [out] "=r"(x)'
           ' : [a] "r"(f(a, g(b, c))), "r"(std::max(y, z)) : "memory", "cc");')
    st = one(src)
    assert st.outputs == (("=r", "x"),)
    assert st.inputs == (("r", "f(a, g(b, c))"), ("r", "std::max(y, z)"))
    assert st.clobbers == ("memory", "cc")
    add, mov = st.instructions
    assert add.operands == ("%r0", "%r1", "%r1") and add.text == "add.s32 %[out], %[a], %1"
    assert mov.operands == ("%r0", "%r0")


def test_macro_with_continuation_lines():
    src = ("#include <asm/types.h>\n"
           "#define DIV_RN(d, a, b) \\\n"
           '  asm("div.rn.f32 %0, " \\\n'
           '      "%1, %2;" : "=f"(d) : "f"(a), "f"(b))\n'
           "__device__ float f(float a) { float d; DIV_RN(d, a, 2.0f); return d; }\n")
    st = one(src)
    assert st.macro == "DIV_RN" and st.problem is None
    assert (st.line, st.col) == (3, 3)
    assert st.template == "div.rn.f32 %0, %1, %2;"
    (div,) = st.instructions
    assert (div.opcode, div.operands, div.line, div.col) == ("div.rn.f32", ("%f0", "%f1", "%f2"), 3, 8)


def test_macro_that_cannot_be_expanded_is_reported_with_a_problem():
    src = ('#define LD(r, p) asm volatile("ld.global.u32 %0, [" #p "];" : "=r"(r))\n'
           "#define PTX_ADD \"add.u32 %0, %0, 1;\"\n"
           "__device__ void g(unsigned& x) { asm volatile(PTX_ADD : \"+r\"(x)); }\n")
    first, second = extract(src, "k.cu")
    assert first.macro == "LD" and first.instructions == () and "'#'" in first.problem
    assert second.macro is None and second.instructions == () and "'PTX_ADD'" in second.problem
    assert second.outputs == (("+r", "x"),)  # the operands are still read


def test_comments_and_strings_are_not_statements():
    src = ('// asm("x")\n'
           '/* asm volatile("y;"); */\n'
           'const char* s = "asm(";\n'
           "const char* t = \"\\\" __asm__ __volatile__(\\\"z;\\\");\";\n"
           "int my_asm(int); int v = my_asm(3) + asm_count;\n"
           # a digit separator is not a char literal: the asm after it is code
           "char c = '(';  int big = 1'000; __device__ void k() { asm volatile(\"membar.gl;\"); }\n")
    (st,) = extract(src, "k.cu")
    assert (st.line, st.col) == (6, 55) and [i.opcode for i in st.instructions] == ["membar.gl"]


@pytest.mark.parametrize("spelling", ["asm", "asm volatile", "__asm__", "__asm", "__asm__ __volatile__",
                                      "asm __volatile__", "__asm__ volatile"])
def test_every_spelling(spelling):
    st = one(f'void f() {{ {spelling} ("trap;"); }}')
    assert (st.col, [i.opcode for i in st.instructions]) == (12, ["trap"])


def test_percent_percent_is_one_percent():
    src = ('asm volatile("{\\n\\t.reg .u32 %%t0;\\n\\tmov.u32 %%t0, %%laneid;\\n\\t'
           'add.u32 %0, %%t0, %1;\\n\\t@%%p1 bra $L1;\\n}" : "=r"(x) : "r"(y));')
    mov, add, bra = one(src).instructions
    assert mov.operands == ("%t0", "%laneid") and mov.text == "mov.u32 %%t0, %%laneid"
    assert add.operands == ("%r0", "%t0", "%r1")
    assert (bra.guard, bra.opcode, bra.operands) == ("@%p1", "bra", ("$L1",))


def test_location_of_a_template_split_across_literals():
    src = ("__device__ float fma3(float a, float b, float c) {\n"
           "  float d, e;\n"
           "  asm(\"mul.rn.f32 %0, %2, %3;\\n\\t\"\n"  # line 3
           "      \"add.rn.f32 %0, %0, %4;\"\n"  # line 4: the instruction at the literal's start
           "      \"\\t\\tneg.f32 \"  \"%1, %0;\"\n"  # line 5: after two escapes, split mid-instruction
           "      \"\\n\" \"   abs.f32 %1, %1;\"\n"  # line 6: in the second literal of the line
           "      : \"=f\"(d), \"=f\"(e) : \"f\"(a), \"f\"(b), \"f\"(c));\n"
           "  return e;\n}\n")
    st = one(src)
    located = [(i.opcode, i.line, i.col) for i in st.instructions]
    assert located == [("mul.rn.f32", 3, 8), ("add.rn.f32", 4, 8), ("neg.f32", 5, 12), ("abs.f32", 6, 16)]
    assert [(i.line, i.col) for i in st.instructions] == [at(src, "mul.rn"), at(src, "add.rn"),
                                                          at(src, "neg.f32"), at(src, "abs.f32")]
    assert st.instructions[2].text == "neg.f32 %1, %0" and st.instructions[2].operands == ("%f1", "%f0")


def test_raw_string_template():
    src = 'asm volatile(R"ptx(\n  cvt.rn.f16.f32 %0, %1; // round\n)ptx" : "=h"(h) : "f"(x));\n'
    (cvt,) = one(src).instructions
    assert (cvt.opcode, cvt.operands, (cvt.line, cvt.col)) == ("cvt.rn.f16.f32", ("%h0", "%f1"), (2, 3))


def test_template_comments_labels_and_multiline_instructions():
    src = ('asm volatile("{ // scope\\n"\n'
           '  "LOOP:\\n\\t"\n'
           '  "fma.rn.f32 %0, /* x */ %1,\\n\\t\\t%2, %0;\\n"\n'
           '  "@!p bra LOOP; }" : "+f"(acc) : "f"(x), "f"(y));\n')
    fma, bra = one(src).instructions
    assert fma.operands == ("%f0", "%f1", "%f2", "%f0")  # the instruction goes on past the newline
    assert fma.text == "fma.rn.f32 %0, %1, %2, %0" and (fma.line, fma.col) == (3, 4)
    assert (bra.guard, bra.opcode, bra.operands, bra.line) == ("@!p", "bra", ("LOOP",), 4)


def test_constraint_table():
    st = one('asm("x.op %0, %1, %2, %3, %4, %5, %6, %7;" : "=h"(a), "+l"(b), "=&d"(c)'
             ' : "q"(d), "n"(0x10), "n"(N), "n"(-3), "c"(e));')
    (op,) = st.instructions
    assert op.operands == ("%h0", "%rd1", "%fd2", "%q3", "0x10", "0", "-3", "%r7")
    assert {letter for letter in CONSTRAINT_REGISTERS} >= set("hrlqfdn")
    for letter, (prefix, meaning) in CONSTRAINT_REGISTERS.items():
        assert len(letter) == 1 and meaning and (prefix is None or prefix.startswith("%"))


def test_empty_output_section_and_clobbers_only():
    st = one('asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");')
    assert st.outputs == () and st.inputs == (("l", "p"), ("r", "v")) and st.clobbers == ("memory",)
    assert st.instructions[0].operands == ("[%rd0]", "%r1")
    st = one('asm volatile("bar.sync 0;" ::: "memory");')
    assert (st.inputs, st.clobbers, st.instructions[0].operands) == ((), ("memory",), ("0",))


def test_problems_keep_what_can_be_read():
    st = one('asm("add.u32 %0, %1, %3;" : "=r"(x) : "m"(y));')
    assert "'%3'" in st.problem and "'m'" in st.problem
    assert st.instructions[0].operands == ("%r0", "%1", "%3")
    st = one('asm volatile(\n#if FAST\n "ex2.approx.f32 %0, %1;"\n#else\n "ex2.approx.ftz.f32 %0, %1;"\n'
             '#endif\n : "=f"(y) : "f"(x));\n')
    assert st.instructions == () and "preprocessor" in st.problem and st.inputs == (("f", "x"),)


@pytest.mark.parametrize("src,where,what", [
    ('void f() {\n  asm("mov.b32 %0, %1;" : "=r"(x) : "r"(y);\n  g();\n}\n', "k.cu:2:3", "';' at 2:43"),
    ('void f() {\n  asm volatile("trap;"\n', "k.cu:2:3", "no ')'"),
    ('void f() {\n  asm("mov.b32 %0, %1; : "=r"(x));\n}\n', "k.cu:2:29", "unterminated string"),
    ('void f() {\n  asm("trap;"); /* never closed\n', "k.cu:2:17", "unterminated /*"),
    ('auto s = R"x(never closed";\n', "k.cu:1:10", "unterminated raw string"),
])
def test_malformed_input_is_a_usage_error(src, where, what):
    with pytest.raises(UsageError) as info:
        extract(src, "k.cu")
    assert str(info.value).startswith(where + ": error: ") and what in str(info.value)


def test_stray_quote_outside_asm_is_forgiven():
    src = "#error don't build this\n__device__ void k() { asm volatile(\"exit;\"); }\n"
    assert [i.opcode for i in one(src).instructions] == ["exit"]


def test_truncated_input_never_raises_anything_but_usage_error():
    text = EXAMPLE.read_text()
    for end in range(0, len(text), 3):
        try:
            extract(text[:end], "cut.cu")
        except UsageError:
            pass


# --- the example file -------------------------------------------------------------------------

EXPECTED = [  # (opcode, operands, guard, macro) in file order
    ("div.rn.f32", ("%f0", "%f1", "%f2"), None, None),
    ("rcp.approx.ftz.f64", ("%fd0", "%fd1"), None, None),
    ("cvt.rn.bf16x2.f32", ("%r0", "%f1", "%f2"), None, None),
    ("ld.global.nc.v4.u32", ("{%r0, %r1, %r2, %r3}", "[%rd4]"), None, None),
    ("setp.ne.b32", ("p", "%r1", "0"), None, None),
    ("mov.b32", ("%r0", "%r2"), "@p", None),
    ("mov.u32", ("%r0", "%laneid"), None, None),
    ("add.u32", ("%r0", "%r0", "%r1"), None, None),
    ("div.rn.f32", ("%f0", "%f1", "%f2"), None, "DIV_RN_F32"),
]


def test_example_file():
    text = EXAMPLE.read_text()
    statements = extract(text, str(EXAMPLE))
    assert all(st.problem is None for st in statements)
    found = [(i.opcode, i.operands, i.guard, st.macro) for st in statements for i in st.instructions]
    assert found == EXPECTED
    lines = text.splitlines()
    for st in statements:
        assert lines[st.line - 1][st.col - 1:].startswith(("asm", "__asm"))
        for i in st.instructions:  # each location is the instruction's first character in the file
            assert lines[i.line - 1][i.col - 1:].startswith(i.text.split()[0])
            assert i.statement_line == st.line <= i.line
    # Windows line ends: the same instructions at the same places (a \ before \r\n still splices)
    crlf = [(i, st.macro) for st in extract(text.replace("\n", "\r\n")) for i in st.instructions]
    assert crlf == [(i, st.macro) for st in statements for i in st.instructions]


# nvcc's register prefixes for the ones CONSTRAINT_REGISTERS names
_NVCC_KIND = {"rs": "b16", "h": "b16", "r": "b32", "rd": "b64", "f": "f32", "fd": "f64", "rq": "b128", "q": "b128"}


def _kinds(instruction: str) -> str:
    """An instruction with each numbered register replaced by its kind (names differ, kinds must not)."""
    return re.sub(r"%(rs|rd|fd|rq|r|f|h|q)\d+\b", lambda m: "<" + _NVCC_KIND[m.group(1)] + ">",
                  " ".join(instruction.split()))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the example")
def test_example_matches_what_nvcc_emits(tmp_path):
    """Every helper called from one kernel: the PTX nvcc pastes between its inline-asm markers
    is, register kinds and all, what the extraction gives."""
    user = tmp_path / "use.cu"
    user.write_text(f'#include "{EXAMPLE}"\n'
                    'extern "C" __global__ void k(const float* a, const double* b, const uint4* p, unsigned* o,\n'
                    '                             float* f, double* g) {\n'
                    '  int i = threadIdx.x; float d;\n'
                    '  f[i] = div_rn(a[i], a[i + 1]); g[i] = rcp_approx(b[i]); o[i] = pack_bf16x2(a[i], a[i + 2]);\n'
                    '  uint4 v = ldg_nc_v4(p + i); o[i + 1] = select_nonzero(v.x, v.y, v.z) + v.w;\n'
                    '  o[i + 2] = lane_plus(i); DIV_RN_F32(d, a[i], 3.0f); f[i + 1] = d; }\n')
    ptx = tmp_path / "use.ptx"
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", str(user), "-o", str(ptx)], check=True, capture_output=True)
    emitted = []
    for block in re.findall(r"// begin inline asm\n(.*?)// end inline asm", ptx.read_text(), re.S):
        for part in block.split(";"):
            part = part.strip().strip("{}").strip()
            if part and not part.startswith("."):
                emitted.append(_kinds(part))
    ours = [_kinds(" ".join(filter(None, (i.guard, i.opcode, ", ".join(i.operands)))))
            for st in extract(EXAMPLE.read_text(), str(EXAMPLE)) for i in st.instructions]
    assert Counter(emitted) == Counter(ours) and len(ours) == len(EXPECTED)
