"""Per-thread local memory in compiled PTX: ``.local`` arrays (nvcc ``-G`` stack frames), their
addresses, ``cvta.local``, ``ld/st.local`` and generic loads and stores that land in them.

The debug build of the corpus (examples/cuda/half_variants_debug.ptx, nvcc -G) must give the same
misrounded inputs as the optimised build of the same source: the frames only move values around.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import ExecutionError
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import compile_function
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "examples" / "cuda"
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _write(tmp_path, body: str, name: str = "k.ptx") -> str:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return str(path)


def test_debug_build_uses_local_frames():
    text = (CUDA / "half_variants_debug.ptx").read_text()
    assert ".local .align" in text and "cvta.local.u64" in text and "[%SP+" in text


@pytest.mark.parametrize("entry,against,cases", [
    ("k_hsqrt_f16_grid_stride", "sqrt.rn.f16", None),
    ("k_hdiv_f16_size_t", "div.rn.f16", 3000),
    ("k_div_operator_f16x2", "div.rn.f16", 3000),
    ("hdiv_f16_ref", "div.rn.f16", 3000),
])
def test_debug_build_misrounds_exactly_what_the_optimised_build_does(db, entry, against, cases):
    kw = dict(exhaustive=True) if cases is None else dict(cases=cases)
    debug = compiled.verify_ptx(str(CUDA / "half_variants_debug.ptx"), entry, against, db=db, **kw)
    plain = compiled.verify_ptx(str(CUDA / "half_variants.ptx"), entry, against, db=db, **kw)
    assert debug.inputs_checked == plain.inputs_checked
    assert debug.misrounded == plain.misrounded and plain.misrounded


SWAP = """
.visible .func (.param .b32 r) swap_sub(.param .b32 a, .param .b32 b)
{
  .local .align 4 .b8 depot[8];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .f32 %f<5>;
  mov.u64 %SPL, depot;
  cvta.local.u64 %SP, %SPL;
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  st.f32 [%SP+0], %f1;
  st.local.f32 [%SPL+4], %f2;
  ld.local.f32 %f3, [%SPL+0];
  ld.f32 %f4, [%SP+4];
  sub.rn.f32 %f3, %f4, %f3;
  st.param.f32 [r], %f3;
  ret;
}
"""


def _run_func(db, path: str, name: str, **params) -> np.ndarray:
    plan = compile_function(parse_module(Path(path).read_text(), path).function(name), db, path)
    n = len(next(iter(params.values())))
    lanes = plan.new_lanes(n)
    for k, v in params.items():
        lanes.params[k] = np.asarray(v, dtype=np.uint64)
    from tilecheck.sim.plan import RunContext
    plan.run(lanes, RunContext())
    return lanes.params["r"]


def test_local_and_generic_accesses_of_one_frame(tmp_path, db):
    """Values stored through the generic address and through .local come back from either."""
    path = _write(tmp_path, SWAP)
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 32, 2000, dtype=np.uint64)
    b = rng.integers(0, 1 << 32, 2000, dtype=np.uint64)
    got = _run_func(db, path, "swap_sub", a=a, b=b)
    from tilecheck.model import api
    want = api.evaluate(db.resolve("sub.rn.f32"), b.astype(np.uint32), a.astype(np.uint32))
    assert np.array_equal(got.astype(np.uint32), want)


def test_each_inlined_call_has_its_own_frame(tmp_path, db):
    """Two calls of a function with a frame, the second while the first's result is still needed."""
    body = SWAP.replace(".visible .func (.param .b32 r) swap_sub", ".func (.param .b32 r) swap_sub") + """
.visible .func (.param .b32 r) twice(.param .b32 a, .param .b32 b)
{
  .local .align 4 .b8 mine[4];
  .reg .f32 %f<6>;
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  {
  .param .b32 p0;
  .param .b32 p1;
  .param .b32 ret0;
  st.param.f32 [p0], %f1;
  st.param.f32 [p1], %f2;
  call.uni (ret0), swap_sub, (p0, p1);
  ld.param.f32 %f3, [ret0];
  }
  st.local.f32 [mine], %f3;
  {
  .param .b32 p0;
  .param .b32 p1;
  .param .b32 ret0;
  st.param.f32 [p0], %f2;
  st.param.f32 [p1], %f1;
  call.uni (ret0), swap_sub, (p0, p1);
  ld.param.f32 %f4, [ret0];
  }
  ld.local.f32 %f3, [mine];
  add.rn.f32 %f5, %f3, %f4;
  st.param.f32 [r], %f5;
  ret;
}
"""
    path = _write(tmp_path, body)
    fn = parse_module(Path(path).read_text(), path).function("twice")
    assert len(fn.frames) == 3 and len({f.name for f in fn.frames}) == 3
    x = np.array([0x3F800000, 0x40000000], dtype=np.uint64)  # 1.0, 2.0
    y = np.array([0x40400000, 0x3F800000], dtype=np.uint64)  # 3.0, 1.0
    got = _run_func(db, path, "twice", a=x, b=y)
    # (b - a) + (a - b) = +0 for these exact operands
    assert got.tolist() == [0, 0]
    assert _run_func(db, path, "swap_sub", a=x, b=y).tolist() == [0x40000000, 0xBF800000]


MIXED = """
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .local .align 2 .b8 frame[2];
  .reg .pred %p1;
  .reg .b16 %rs<4>;
  .reg .f32 %f<3>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<9>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 2;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u16 %rs1, [%rd4];
  mov.u64 %rd5, frame;
  cvta.local.u64 %rd6, %rd5;
  st.u16 [%rd6], %rs1;
  and.b16 %rs2, %rs1, 1;
  setp.eq.s16 %p1, %rs2, 1;
  selp.b64 %rd7, %rd6, %rd4, %p1;
  ld.u16 %rs3, [%rd7];
  cvt.f32.f16 %f1, %rs3;
  sqrt.rn.f32 %f2, %f1;
  cvt.rn.f16.f32 %rs3, %f2;
  add.s64 %rd8, %rd2, %rd3;
  st.u16 [%rd8], %rs3;
  ret;
}
"""


def test_generic_loads_split_between_local_and_global_lanes(tmp_path, db):
    """Odd inputs are read back from the frame, even ones from the input buffer, in one generic
    load; RN32 then RN16 of a square root is correctly rounded, so every input verifies."""
    path = _write(tmp_path, MIXED)
    out = compiled.verify_ptx(path, "k", "sqrt.rn.f16", db=db, exhaustive=True)
    assert out.verdict == "verified" and out.inputs_checked == 1 << 16
    # a mutant: the frame holds x & 1 instead of x, so exactly the lanes that read it go wrong
    wrong = MIXED.replace("st.u16 [%rd6], %rs1;", "st.u16 [%rd6], %rs2;")
    out = compiled.verify_ptx(_write(tmp_path, wrong, "wrong.ptx"), "k", "sqrt.rn.f16", db=db, exhaustive=True)
    assert out.verdict == "counterexample"
    assert out.misrounded and all(x & 1 for (x,) in out.misrounded)
    # a mutant: the frame's slot read one byte off (misaligned) is a located execution error
    bad = MIXED.replace("ld.u16 %rs3, [%rd7];", "ld.u16 %rs3, [%rd7+1];")
    with pytest.raises(ExecutionError, match=r"bad\.ptx"):
        compiled.verify_ptx(_write(tmp_path, bad, "bad.ptx"), "k", "sqrt.rn.f16", db=db, cases=200)


def test_access_beyond_the_frame_is_a_located_error(tmp_path, db, capsys):
    text = SWAP.replace("st.local.f32 [%SPL+4], %f2;", "st.local.f32 [%SPL+8], %f2;")
    path = _write(tmp_path, text)
    assert main(["verify", path, "--entry", "swap_sub", "--against", "sub.rn.f32", "--cases", "100"]) == 2
    err = capsys.readouterr().err
    assert "k.ptx:" in err and "local memory access outside" in err and "Traceback" not in err


def test_local_declaration_in_an_inner_scope_is_unsupported(tmp_path, db, capsys):
    text = SWAP.replace("  .local .align 4 .b8 depot[8];\n", "  {\n  .local .align 4 .b8 inner[4];\n  }\n"
                        "  .local .align 4 .b8 depot[8];\n")
    path = _write(tmp_path, text)
    assert main(["verify", path, "--entry", "swap_sub", "--against", "sub.rn.f32", "--cases", "10"]) == 2
    assert "unsupported local declaration" in capsys.readouterr().err


SCALAR_BY_POINTER = """
.visible .func hsqrt_by_pointer(.param .b64 a, .param .b64 out)
{
  .reg .b16 %rs<3>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [out];
  ld.u16 %rs1, [%rd1];
  cvt.f32.f16 %f1, %rs1;
  sqrt.approx.ftz.f32 %f2, %f1;
  cvt.rn.f16.f32 %rs2, %f2;
  st.u16 [%rd2], %rs2;
  ret;
}
.visible .func (.param .b16 r) hsqrt_by_value(.param .b16 a)
{
  .reg .b16 %rs<3>;
  .reg .f32 %f<3>;
  ld.param.b16 %rs1, [a];
  cvt.f32.f16 %f1, %rs1;
  sqrt.approx.ftz.f32 %f2, %f1;
  cvt.rn.f16.f32 %rs2, %f2;
  st.param.b16 [r], %rs2;
  ret;
}
"""


def test_scalar_operands_and_result_by_pointer(tmp_path, db):
    """``void f(const __half* a, __half* out)``: one element per pointer, found by running it; the
    same misrounded inputs as the by-value function of the same body."""
    path = _write(tmp_path, SCALAR_BY_POINTER)
    by_pointer = compiled.verify_ptx(path, "hsqrt_by_pointer", "sqrt.rn.f16", db=db, exhaustive=True)
    by_value = compiled.verify_ptx(path, "hsqrt_by_value", "sqrt.rn.f16", db=db, exhaustive=True)
    assert by_pointer.abi == ".func (operands and result by pointer)" and by_value.abi == ".func"
    assert by_pointer.misrounded == by_value.misrounded and by_value.misrounded
