"""Classes of equal elements (tilecheck.verify.slicing.Signatures): in an exhaustive run only a
class's first element runs every input, so two elements share a class only where they compute the
same function of their operands. What decides whether a write happens -- a guard, a branch -- is
part of that function where it depends on data: elements that differ only there are two classes
(each runs every input), elements that branch alike stay one, and an element whose guard reads
another element's operand is not elementwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]

# two halves per thread, each abs.f16 of its own element, each followed by a zeroing that its
# {ZERO0}/{ZERO1} spells (a guarded move, or a branch around an unguarded one)
TEMPLATE = """.version 8.0
.target sm_90
.address_size 64

.visible .entry k_abs2(.param .u64 k_abs2_a, .param .u64 k_abs2_o, .param .u32 k_abs2_n)
{{
  .reg .pred %p<8>;
  .reg .b16 %rs<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [k_abs2_a];
  ld.param.u64 %rd2, [k_abs2_o];
  ld.param.u32 %r1, [k_abs2_n];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mul.lo.s32 %r5, %r2, %r3;
  shl.b32 %r6, %r5, 1;
  add.s32 %r7, %r6, %r4;
  add.s32 %r8, %r7, %r3;
  mul.wide.s32 %rd11, %r7, 2;
  add.s64 %rd12, %rd3, %rd11;
  setp.ge.s32 %p1, %r7, %r1;
  @%p1 bra SECOND;
  ld.global.b16 %rs1, [%rd12];
  abs.f16 %rs2, %rs1;
{ZERO0}
  add.s64 %rd7, %rd4, %rd11;
  st.global.b16 [%rd7], %rs2;
SECOND:
  setp.ge.s32 %p3, %r8, %r1;
  @%p3 bra DONE;
  mul.wide.s32 %rd8, %r8, 2;
  add.s64 %rd9, %rd3, %rd8;
  ld.global.b16 %rs3, [%rd9];
  abs.f16 %rs4, %rs3;
{ZERO1}
  add.s64 %rd10, %rd4, %rd8;
  st.global.b16 [%rd10], %rs4;
DONE:
  ret;
}}
"""


def _guarded(src: str, dst: str, pred: str, value: int) -> str:
    """Zero ``dst`` where ``src`` holds ``value``, by a guarded move."""
    return f"  setp.eq.u16 {pred}, {src}, {value};\n  @{pred} mov.b16 {dst}, 0;"


def _branched(src: str, dst: str, pred: str, value: int) -> str:
    """Zero ``dst`` where ``src`` holds ``value``, by a branch around an unguarded move."""
    label = f"SKIP{pred[2:]}"
    return f"  setp.ne.u16 {pred}, {src}, {value};\n  @{pred} bra {label};\n  mov.b16 {dst}, 0;\n{label}:"


def _kernel(tmp_path: Path, zero, value0: int, value1: int) -> Path:
    # zeroing +0 (0x0000) keeps abs.f16 exact; zeroing 0x5ba0 (244.0), an input no position
    # sample of an exhaustive 16-bit run holds (they are the first 4096), misrounds it
    path = tmp_path / "k.ptx"
    path.write_text(TEMPLATE.format(ZERO0=zero("%rs1", "%rs2", "%p2", value0),
                                    ZERO1=zero("%rs3", "%rs4", "%p4", value1)))
    return path


def _classes(db, path: Path) -> int:
    p = compiled.prepare(str(path), "k_abs2", "abs.f16", db=db)
    return [g.representative for g in p.abi.layout.groups].count(True)


@pytest.mark.parametrize("zero", [_guarded, _branched], ids=["guard", "branch"])
def test_elements_that_differ_only_in_a_data_guard_are_two_classes(db, tmp_path, zero):
    # element 0 exact everywhere, element 1 wrong at 0x5ba0 alone: sharing one class, the exhaustive
    # run verified the kernel (element 1 never saw 0x5ba0)
    path = _kernel(tmp_path, zero, 0, 0x5BA0)
    assert _classes(db, path) == 2
    o = compiled.verify_ptx(str(path), "k_abs2", "abs.f16", db=db, exhaustive=True)
    assert o.exhaustive and o.verdict == "counterexample"
    assert o.misrounded_count == 1 and [int(x) for x in o.misrounded[0]] == [0x5BA0]


@pytest.mark.parametrize("zero", [_guarded, _branched], ids=["guard", "branch"])
def test_elements_that_branch_alike_on_their_own_data_stay_one_class(db, tmp_path, zero):
    path = _kernel(tmp_path, zero, 0, 0)
    assert _classes(db, path) == 1
    o = compiled.verify_ptx(str(path), "k_abs2", "abs.f16", db=db, exhaustive=True)
    assert o.exhaustive and o.verdict == "verified"


def test_the_same_guard_on_another_comparison_is_another_class(db, tmp_path):
    path = _kernel(tmp_path, _guarded, 0x5BA0, 0x5BA0)
    assert _classes(db, path) == 1
    text = path.read_text().replace("setp.eq.u16 %p4, %rs3, 23456", "setp.ne.u16 %p4, %rs3, 23456")
    path.write_text(text)
    assert _classes(db, path) == 2


def test_a_guard_on_another_elements_operand_is_not_elementwise(db, tmp_path, capsys):
    # element 1's zeroing asks element 0's operand (%rs1 is loaded before either store)
    path = _kernel(tmp_path, _guarded, 0x5BA0, 0x5BA0)
    text = path.read_text().replace("  setp.ge.s32 %p1, %r7, %r1;\n",
                                    "  ld.global.b16 %rs6, [%rd12];\n  setp.ge.s32 %p1, %r7, %r1;\n")
    text = text.replace("setp.eq.u16 %p4, %rs3, 23456", "setp.eq.u16 %p4, %rs6, 23456")
    path.write_text(text)
    code = main(["verify", str(path), "--against", "abs.f16", "--exhaustive"])
    err = capsys.readouterr().err
    assert code == 2 and "not elementwise" in err and "deciding a guard, branch or address" in err, err


def test_a_guard_operand_is_an_operand(db, tmp_path):
    # out[i] = b[i] != 0 ? a[i] : +0 reads b only in a guard: both buffers are operands
    text = TEMPLATE.replace("k_abs2_a, .param .u64 k_abs2_o", "k_abs2_a, .param .u64 k_abs2_b, .param .u64 k_abs2_o")
    text = text.replace("  cvta.to.global.u64 %rd4, %rd2;\n",
                        "  cvta.to.global.u64 %rd4, %rd2;\n  ld.param.u64 %rd13, [k_abs2_b];\n"
                        "  cvta.to.global.u64 %rd14, %rd13;\n")
    select = ("  add.s64 %rd15, %rd14, {off};\n  ld.global.b16 %rs5, [%rd15];\n"
              "  setp.eq.u16 {p}, %rs5, 0;\n  mov.b16 {dst}, {src};\n  @{p} mov.b16 {dst}, 0;")
    text = text.replace("  abs.f16 %rs2, %rs1;\n{ZERO0}", select.format(off="%rd11", p="%p2", dst="%rs2", src="%rs1"))
    text = text.replace("  abs.f16 %rs4, %rs3;\n{ZERO1}", select.format(off="%rd8", p="%p4", dst="%rs4", src="%rs3"))
    path = tmp_path / "select.ptx"
    path.write_text(text.format())
    against = "selp.b16(0, a, setp.eq.b16(b, 0))"
    p = compiled.prepare(str(path), "k_abs2", against, db=db)
    assert p.abi.layout.operands == ["k_abs2_a", "k_abs2_b"] and [g.representative for g in p.abi.layout.groups].count(True) == 1
    o = compiled.verify_ptx(str(path), "k_abs2", against, db=db, cases=3000, seed=1)
    assert o.verdict == "verified"
    o = compiled.verify_ptx(str(path), "k_abs2", "selp.b16(0, a, setp.ne.b16(b, 0))", db=db, cases=3000, seed=1)
    assert o.verdict == "counterexample"


def test_nvcc_h2div_elements_keep_one_class_through_their_fix_up_branches(db):
    # __h2div's halves each branch on their own quotient (the fix-up path): the paths into each
    # half's result are named by their branches' predicates, equal for the eight halves
    p = compiled.prepare(str(ROOT / "examples" / "cuda" / "half2_uint4.ptx"), "k_h2div_uint4", "div.rn.f16", db=db)
    assert len(p.abi.layout.groups) == 8
    assert [g.representative for g in p.abi.layout.groups].count(True) == 1


def _loop(x: str, r: str, counter: str, pred: str, label: str, zero_at: int = 0, trips: int = 3,
          start: int = 0) -> str:
    """``r`` = ``x`` doubled by a loop counting from ``start`` up to ``trips`` (8 x for 0 to 3),
    zeroed inside it where ``x`` holds ``zero_at`` (harmless at +0)."""
    return (f"  mov.b16 {r}, {x};\n  mov.u32 {counter}, {start};\n{label}:\n  add.rn.f16 {r}, {r}, {r};\n"
            f"  setp.eq.u16 %q{pred[2:]}, {x}, {zero_at};\n  @%q{pred[2:]} mov.b16 {r}, 0;\n"
            f"  add.u32 {counter}, {counter}, 1;\n  setp.lt.u32 {pred}, {counter}, {trips};\n"
            f"  @{pred} bra {label};")


def _loop_kernel(tmp_path: Path, second: dict) -> Path:
    # each element in a loop of its own (libdevice's sinf holds one per element: the Payne-Hanek
    # reduction), the second's as ``second`` changes it
    text = TEMPLATE.replace(".reg .pred %p<8>;", ".reg .pred %p<8>;\n  .reg .pred %q<8>;")
    text = text.replace("  abs.f16 %rs2, %rs1;\n{ZERO0}", _loop("%rs1", "%rs2", "%r10", "%p2", "LOOP0"))
    text = text.replace("  abs.f16 %rs4, %rs3;\n{ZERO1}", _loop("%rs3", "%rs4", "%r11", "%p4", "LOOP1", **second))
    path = tmp_path / "loop.ptx"
    path.write_text(text.replace("{{", "{").replace("}}", "}"))
    return path


def test_elements_computed_by_equal_loops_are_one_class(db, tmp_path):
    # (each loop's values used to match nothing: every element ran every input)
    path = _loop_kernel(tmp_path, {})
    p = compiled.prepare(str(path), "k_abs2", "mul.rn.f16(a, 8.0)", db=db)
    assert [g.representative for g in p.abi.layout.groups].count(True) == 1
    o = compiled.verify_ptx(str(path), "k_abs2", "mul.rn.f16(a, 8.0)", db=db, exhaustive=True)
    assert o.exhaustive and o.verdict == "verified"


@pytest.mark.parametrize("second", [{"zero_at": 0x5BA0}, {"trips": 4}, {"start": 1}],
                         ids=["body", "trips", "entering"])
def test_loops_that_differ_in_body_trips_or_entering_values_are_two_classes(db, tmp_path, second):
    path = _loop_kernel(tmp_path, second)
    p = compiled.prepare(str(path), "k_abs2", "mul.rn.f16(a, 8.0)", db=db)
    assert [g.representative for g in p.abi.layout.groups].count(True) == 2
    o = compiled.verify_ptx(str(path), "k_abs2", "mul.rn.f16(a, 8.0)", db=db, exhaustive=True)
    assert o.exhaustive and o.verdict == "counterexample"
    if "zero_at" in second:  # wrong at 0x5ba0 alone, which only a run of every input at element 1 meets
        assert o.misrounded_count == 1 and [int(x) for x in o.misrounded[0]] == [0x5BA0]


def test_triton_sin_and_cos_vector_elements_are_one_class(db):
    # eight copies of libdevice's sinf (cosf) a thread, each with its Payne-Hanek loop
    for fn in ("sin", "cos"):
        p = compiled.prepare(str(ROOT / "examples" / "triton" / f"{fn}_f32_v.ptx"), f"{fn}_kernel",
                             f"{fn}.approx.f32", db=db)
        assert len(p.abi.layout.groups) == 8
        assert [g.representative for g in p.abi.layout.groups].count(True) == 1


def test_a_loop_with_a_second_way_out_is_not_named(db, tmp_path):
    # leaving from inside the body (where x is +0, its result already 0) is no simple loop: its
    # elements' values match nothing, each element a class of its own, and still verified
    path = _loop_kernel(tmp_path, {})
    text = path.read_text()
    for q, label in (("%q2", "LOOP0"), ("%q4", "LOOP1")):
        text = text.replace(f"  @{q} mov.b16", f"  @{q} bra {label}_OUT;\n  @{q} mov.b16")
        text = text.replace(f"  @%p{q[2:]} bra {label};\n", f"  @%p{q[2:]} bra {label};\n{label}_OUT:\n")
    path.write_text(text)
    assert "LOOP1_OUT:" in text and "bra LOOP0_OUT" in text
    p = compiled.prepare(str(path), "k_abs2", "mul.rn.f16(a, 8.0)", db=db)
    assert [g.representative for g in p.abi.layout.groups].count(True) == 2
    o = compiled.verify_ptx(str(path), "k_abs2", "mul.rn.f16(a, 8.0)", db=db, exhaustive=True)
    assert o.exhaustive and o.verdict == "verified"
