"""Values that pass through per-thread local memory in a kernel computing several elements per
thread (libdevice's sinf/cosf keep their Payne-Hanek reduction in a local array): the slices follow
each local load to the stores a discovery run saw it read, so such a kernel is judged element by
element; a load that reads another element's store is not elementwise; and a run whose local load
reads a store the discovery never saw it read is refused, not judged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import ExecutionError, UnsupportedPtxError
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton"
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# two elements a thread (2i and 2i + 1, bounded by n): a[2i] in %f1, a[2i + 1] in %f2, &o[2i] in %rd5,
# the local array's 32-bit address in %r10
PROLOGUE = """{
  .local .align 4 .b8 depot[16];
  .reg .pred %p<3>;
  .reg .b32 %r<20>;
  .reg .f32 %f<10>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [o];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  shl.b32 %r4, %r4, 1;
  add.s32 %r5, %r4, 1;
  setp.lt.s32 %p1, %r4, %r9;
  setp.lt.s32 %p2, %r5, %r9;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  @%p1 ld.global.f32 %f1, [%rd4];
  @%p2 ld.global.f32 %f2, [%rd4+4];
  mov.u32 %r10, depot;
"""

# two elements per thread, each stored to a local slot chosen by its own sign bit and read back,
# then doubled (out[i] = a[i] + a[i])
TWO_THROUGH_LOCAL = """.visible .entry k2(.param .u64 a, .param .u64 o, .param .u32 n)
""" + PROLOGUE + """  mov.b32 %r11, %f1;
  shr.u32 %r12, %r11, 31;
  shl.b32 %r12, %r12, 2;
  add.u32 %r13, %r10, %r12;
  st.local.f32 [%r13], %f1;
  ld.local.f32 %f3, [%r13];
  mov.b32 %r14, %f2;
  shr.u32 %r15, %r14, 31;
  shl.b32 %r15, %r15, 2;
  add.u32 %r16, %r10, %r15;
  st.local.f32 [%r16+8], %f2;
  ld.local.f32 %f4, [%r16+8];
  add.rn.f32 %f5, %f3, %f3;
  add.rn.f32 %f6, %f4, %f4;
  @%p1 st.global.f32 [%rd5], %f5;
  @%p2 st.global.f32 [%rd5+4], %f6;
  ret;
}"""


def _kernel(tmp_path, text: str) -> str:
    path = tmp_path / "k2.ptx"
    path.write_text(HEADER + text)
    return str(path)


def test_each_element_is_followed_through_its_own_local_slot(tmp_path, db):
    o = compiled.verify_ptx(_kernel(tmp_path, TWO_THROUGH_LOCAL), "k2", "add.rn.f32(a, a)", db=db, cases=3000)
    assert "2 elements per thread" in o.abi
    assert o.verdict_word == "no-counterexample"
    # the doubling is real: against a + a + a every finite non-zero input misrounds
    assert compiled.verify_ptx(_kernel(tmp_path, TWO_THROUGH_LOCAL), "k2", "mul.rn.f32(a, 3.0)", db=db,
                               cases=3000).verdict_word == "counterexample"


def test_reading_the_other_elements_slot_is_not_elementwise(tmp_path, capsys):
    bad = TWO_THROUGH_LOCAL.replace("ld.local.f32 %f4, [%r16+8];", "ld.local.f32 %f4, [%r13];")
    assert bad != TWO_THROUGH_LOCAL
    assert main(["verify", _kernel(tmp_path, bad), "--entry", "k2", "--against", "add.rn.f32(a, a)"]) == 2
    err = capsys.readouterr().err
    assert "not elementwise" in err and "stores element 1" in err and "from element 0" in err


def test_a_local_load_reading_a_store_the_discovery_never_saw_is_refused(tmp_path, db):
    # element 1 reads the array's first slot (element 0's where a[2i] >= 0) only when it is
    # exactly 1.0: never in the discovery's random data, always among the sampled special inputs
    # (an address chosen by element 0's own sign would be no elementwise kernel: refused before any run)
    rare = TWO_THROUGH_LOCAL.replace("ld.local.f32 %f4, [%r16+8];", """add.u32 %r17, %r16, 8;
  setp.eq.f32 %p0, %f2, 0f3F800000;
  selp.b32 %r18, %r10, %r17, %p0;
  ld.local.f32 %f4, [%r18];""")
    with pytest.raises(ExecutionError, match="never read from in the discovery run"):
        compiled.verify_ptx(_kernel(tmp_path, rare), "k2", "add.rn.f32(a, a)", db=db, cases=3000)


def test_a_local_load_the_discovery_never_ran_is_refused_where_it_runs(tmp_path, db):
    # element 1 re-reads the array's first slot (element 0's where a[2i] >= 0) only when it is
    # exactly 1.0 (never in the discovery's random data): the kernel is taken, its inputs without a
    # 1.0 judged, and a run in which that load runs is refused, never judged with an element the
    # slices did not follow
    rare = TWO_THROUGH_LOCAL.replace("  add.rn.f32 %f5, %f3, %f3;", """  setp.eq.f32 %p0, %f2, 0f3F800000;
  @%p0 ld.local.f32 %f4, [%r10];
  add.rn.f32 %f5, %f3, %f3;""")
    path = _kernel(tmp_path, rare)
    with pytest.raises(ExecutionError, match="never read from in the discovery run"):
        compiled.verify_ptx(path, "k2", "add.rn.f32(a, a)", db=db, cases=3000)
    p = compiled.prepare(path, "k2", "add.rn.f32(a, a)", db=db)
    fine = np.array([0x40000000, 0xbf800000, 0x3f800001, 0x7f7fffff], dtype=np.uint32)
    assert not compiled.run_inputs(p, [fine]).bad.any()


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_triton_sin_and_cos_vectors_judge_what_their_scalar_kernels_do(db, fn):
    # libdevice's sinf/cosf: 128-bit vectors (8 elements a thread, the reduction's local array
    # reused by each) against the one-element kernel: the same inputs misround against the identity
    # (sin(x) = x only for tiny x), and against the ISA's approximate forms nothing is judged wrong
    vec = compiled.verify_ptx(str(TRITON / f"{fn}_f32_v.ptx"), f"{fn}_kernel", "mul.rn.f32(a, 1.0)", db=db,
                              cases=3000, seed=5)
    one = compiled.verify_ptx(str(TRITON / f"{fn}_f32.ptx"), f"{fn}_kernel", "mul.rn.f32(a, 1.0)", db=db,
                              cases=3000, seed=5)
    assert "8 elements per thread" in vec.abi
    assert vec.misrounded_count == one.misrounded_count > 0
    assert sorted(map(tuple, vec.misrounded)) == sorted(map(tuple, one.misrounded))
    approx = compiled.verify_ptx(str(TRITON / f"{fn}_f32_v.ptx"), f"{fn}_kernel", f"{fn}.approx.f32", db=db,
                                 cases=3000, seed=5)
    assert approx.verdict == "unknown" and approx.misrounded_count == 0


def test_a_fork_past_the_memory_budget_is_refused_located(tmp_path, db, monkeypatch):
    # six approximate reciprocals whose choices all reach the result: each input forks into their
    # product; with the budget lowered the run stops at the fork that passes it, naming its line
    from tilecheck.sim import plan as plan_module

    body = "\n".join(f"  rcp.approx.f32 %f{k + 2}, %f{k + 1};\n  add.rn.f32 %f{k + 2}, %f{k + 2}, %f1;" for k in range(6))
    kernel = f""".visible .entry many(.param .u64 a, .param .u64 o)
{{
  .reg .b32 %r<4>;
  .reg .f32 %f<10>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [o];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r1, %r2, %r3, %r1;
  mul.wide.s32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
{body}
  st.global.f32 [%rd5], %f7;
  ret;
}}
"""
    path = _kernel(tmp_path, kernel)
    monkeypatch.setattr(plan_module, "LANE_BYTES", 1 << 20)
    with pytest.raises(ExecutionError, match=r"k2\.ptx:\d+:\d+: the allowed results .* refused rather than run out"):
        compiled.verify_ptx(path, "many", "rcp.approx.f32(a)", db=db, cases=4000, processes=False)


def test_a_local_store_between_another_elements_store_and_load_keeps_the_function_whole(tmp_path, db):
    # as written, each element is cut down alone; with element 1's store moved between element 0's
    # store and load, element 0's cut-down function would drop a store that could overwrite what
    # its load reads (not in these runs: the slots differ, but nothing static says so): whole
    apart = compiled.prepare(_kernel(tmp_path, TWO_THROUGH_LOCAL), "k2", "add.rn.f32(a, a)", db=db)
    assert len(apart.abi.layout.groups) == 2
    store1 = "  st.local.f32 [%r16+8], %f2;\n"
    interleaved = TWO_THROUGH_LOCAL.replace(store1, "").replace("  ld.local.f32 %f3, [%r13];\n", "")
    interleaved = interleaved.replace("  ld.local.f32 %f4, [%r16+8];\n",
                                      store1 + "  ld.local.f32 %f3, [%r13];\n  ld.local.f32 %f4, [%r16+8];\n")
    assert interleaved.index("st.local.f32 [%r13]") < interleaved.index(store1) < interleaved.index("ld.local.f32 %f3")
    p = compiled.prepare(_kernel(tmp_path, interleaved), "k2", "add.rn.f32(a, a)", db=db)
    assert len(p.abi.layout.groups) == 1 and len(p.abi.layout.groups[0].atoms) == 2
    assert compiled.verify_ptx(_kernel(tmp_path, interleaved), "k2", "add.rn.f32(a, a)", db=db,
                               cases=2000).verdict_word == "no-counterexample"


# element 0's value is read back after a block laid out before it, which stores element 1 into the
# same slot when element 0 is exactly 1.0 (never in the discovery's random data); nothing in the
# instruction order puts that store between element 0's store and load, the control flow does
OUT_OF_ORDER = """.visible .entry k3(.param .u64 a, .param .u64 o, .param .u32 n)
""" + PROLOGUE.replace("%p<3>", "%p<4>") + """  bra.uni $start;
$cold:
  st.local.f32 [%r10], %f2;
  bra.uni $back;
$start:
  st.local.f32 [%r10+8], %f2;
  st.local.f32 [%r10], %f1;
  setp.eq.f32 %p3, %f1, 0f3F800000;
  @%p3 bra.uni $cold;
$back:
  ld.local.f32 %f3, [%r10];
  ld.local.f32 %f4, [%r10+8];
  add.rn.f32 %f5, %f3, %f3;
  add.rn.f32 %f6, %f4, %f4;
  @%p1 st.global.f32 [%rd5], %f5;
  @%p2 st.global.f32 [%rd5+4], %f6;
  ret;
}
"""


def test_a_store_reached_out_of_order_on_data_is_not_elementwise(tmp_path, db):
    # the cold path stores a[2i + 1] into element 0's slot between element 0's store and load: on
    # a[2i + 1] (element 0 then reads element 1's operand) or on a[2i] (a branch on element 0's
    # operand decides where element 1's store runs), an element depends on another's operand
    path = tmp_path / "k3.ptx"
    path.write_text(HEADER + OUT_OF_ORDER.replace("setp.eq.f32 %p3, %f1,", "setp.eq.f32 %p3, %f2,"))
    with pytest.raises(UnsupportedPtxError, match="not elementwise: thread 0 stores element 0 .*deciding a guard"):
        compiled.prepare(str(path), "k3", "add.rn.f32(a, a)", db=db)
    path.write_text(HEADER + OUT_OF_ORDER)
    with pytest.raises(UnsupportedPtxError, match="not elementwise: thread 0 stores element 1 .*deciding a guard"):
        compiled.prepare(str(path), "k3", "add.rn.f32(a, a)", db=db)
