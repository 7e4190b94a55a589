"""Whole elementwise kernels (tilecheck.verify.layout): Triton's unrolled and 128-bit vector
blocks and CUDA written for speed verify exactly as the one-element-per-thread build of the same
operation does -- the same misrounded inputs on the same sample, found through every element
position -- and what is not elementwise, or not what the layout found, is a located error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton"
CUDA = ROOT / "examples" / "cuda"


def _outcome(db, path: Path, entry: str, against: str, cases: int = 4000):
    return compiled.verify_ptx(str(path), entry, against, db=db, cases=cases, seed=3)


# (kernel with several elements per thread, its one-element-per-thread twin, entry, reference,
# elements per thread)
TWINS = [
    (TRITON / "div_f16_v.ptx", TRITON / "div_f16.ptx", "div_kernel", "div.rn.f16", 8),
    (TRITON / "div_f16_b512_w2.ptx", TRITON / "div_f16.ptx", "div_kernel", "div.rn.f16", 8),
    (TRITON / "div_f16_b512_w2_v.ptx", TRITON / "div_f16.ptx", "div_kernel", "div.rn.f16", 8),
    (TRITON / "div_bf16_v.ptx", TRITON / "div_bf16.ptx", "div_kernel", "div.rn.bf16", 8),
    (TRITON / "div_f32_v.ptx", TRITON / "div_f32.ptx", "div_kernel", "div.rn.f32", 8),
    (TRITON / "div_f32_v.ptx", TRITON / "div_f32.ptx", "div_kernel", "div.full.f32", 8),
    (TRITON / "div_f64_v.ptx", TRITON / "div_f64.ptx", "div_kernel", "div.rn.f64", 8),
    # two halves per thread in one 32-bit access, the count in elements: a thread holds a pair
    (TRITON / "div_f16_b256_w4_v.ptx", TRITON / "div_f16.ptx", "div_kernel", "div.rn.f16", 2),
    # BLOCK 16384 on one warp: 512 floats (2 KiB) per thread, more than the discovery tries unprompted
    (TRITON / "div_f32_b16384_w1_v.ptx", TRITON / "div_f32.ptx", "div_kernel", "div.rn.f32", 512),
]


@pytest.mark.parametrize("many,one,entry,against,per", TWINS, ids=lambda x: getattr(x, "name", str(x)))
def test_a_multi_element_kernel_misrounds_exactly_what_its_scalar_twin_does(db, many, one, entry, against, per):
    cases = 4000 if per <= 8 else 800  # (a sampled input runs at every one of a thread's elements)
    o_many = _outcome(db, many, entry, against, cases)
    o_one = _outcome(db, one, entry, against, cases)
    assert f"{per} elements per thread" in o_many.abi
    assert (o_many.verdict, o_many.misrounded_count, o_many.misrounded_by_value) == \
        (o_one.verdict, o_one.misrounded_count, o_one.misrounded_by_value)
    assert sorted(map(tuple, o_many.misrounded)) == sorted(map(tuple, o_one.misrounded))


def test_elements_cut_down_together_keep_their_places_in_the_vector_store(db, tmp_path):
    # elements 2 and 3 of the first 128-bit store exact (div.rn.f32), the others div.full.f32:
    # those two meet no approximate instruction, so they run in one cut-down kernel whose store
    # keeps its four slots (those of elements 0 and 1 zeroed), each element at its own place
    text = (TRITON / "div_f32_v.ptx").read_text()
    for reg in ("%r19", "%r20"):
        text = text.replace(f"div.full.f32 \t{reg},", f"div.rn.f32 \t{reg},")
    assert text.count("div.rn.f32") == 2
    mutant = tmp_path / "div_f32_v_two_exact.ptx"
    mutant.write_text(text)
    o_many = _outcome(db, mutant, "div_kernel", "div.rn.f32")
    o_one = _outcome(db, TRITON / "div_f32.ptx", "div_kernel", "div.rn.f32")
    assert o_many.verdict_word == "counterexample"  # the six div.full.f32 elements misround as before
    assert sorted(map(tuple, o_many.misrounded)) == sorted(map(tuple, o_one.misrounded))
    # the exact pair's cut-down kernel: one run, the whole vector store
    p = compiled.prepare(str(mutant), "div_kernel", "div.rn.f32", db=db)
    shared = [g for g in p.abi.layout.groups if len(g.atoms) == 2]
    assert len(shared) == 1
    stores = [st.instr for st in shared[0].plan.steps if st.instr.opcode.startswith("st.global")]
    assert [i.opcode for i in stores] == ["st.global.v4.b32"]


def test_an_unrolled_grid_stride_loop_misrounds_what_the_loop_of_one_store_does(db):
    # #pragma unroll 4 on a grid-stride loop: four stores a thread, the k-th at element
    # i + k x (gridDim.x x blockDim.x); each input is judged in every copy of the loop body
    unrolled = _outcome(db, CUDA / "grid_stride.ptx", "k_fdividef_grid_stride_unroll4", "div.rn.f32")
    plain = _outcome(db, CUDA / "grid_stride.ptx", "k_fdividef_grid_stride", "div.rn.f32")
    assert "a grid-stride loop" in unrolled.abi and "4 elements per thread" in unrolled.abi
    assert unrolled.verdict_word == "counterexample"
    assert sorted(map(tuple, unrolled.misrounded)) == sorted(map(tuple, plain.misrounded))
    assert _outcome(db, CUDA / "grid_stride.ptx", "k_fdiv_grid_stride_unroll4", "div.rn.f32").verdict_word \
        == "no-counterexample"


def test_an_unrolled_grid_stride_loop_over_pairs_counts_pairs(db):
    # h2sqrt on __nv_bfloat162 (n2 counts pairs), unrolled twice: two stores of two elements each,
    # the k-th at pair i + k x the grid's threads; the same verdict as the one-pair-per-thread h2sqrt
    o = compiled.verify_ptx(str(CUDA / "grid_stride.ptx"), "k_h2sqrt_bf16_grid_stride_unroll2", "sqrt.rn.bf16", db=db)
    assert "a grid-stride loop" in o.abi and "counting vectors of 2" in o.abi and "4 elements per thread" in o.abi
    assert o.verdict_word == "verified" and o.exhaustive
    twin = compiled.verify_ptx(str(CUDA / "half.ptx"), "k_h2sqrt_bf16", "sqrt.rn.bf16", db=db)
    assert twin.verdict_word == "verified"


def test_a_wrong_copy_of_an_unrolled_grid_stride_loop_is_caught(db, tmp_path):
    # the third copy of the IEEE loop divides b by a
    text = (CUDA / "grid_stride.ptx").read_text()
    start = text.index(".entry k_fdiv_grid_stride_unroll4")
    body = text[start:]
    old = "div.rn.f32 \t%f9, %f8, %f7;"
    assert old in body
    mutant = tmp_path / "gs_mutant.ptx"
    mutant.write_text(text[:start] + body.replace(old, "div.rn.f32 \t%f9, %f7, %f8;", 1))
    o = _outcome(db, mutant, "k_fdiv_grid_stride_unroll4", "div.rn.f32")
    assert o.verdict_word == "counterexample" and o.misrounded_count > 3000


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_a_packed_comparison_selects_each_element_by_its_own_lane(db, fmt):
    # tl.where(x > 0, x, 0) on 16-bit vectors: setp.gt.f16x2 %p2|%p3 compares two elements at once,
    # %p2 the low one, %p3 the high one, and each selp takes its own element's predicate
    o = compiled.verify_ptx(str(TRITON / f"relu_{fmt}_v.ptx"), "relu_kernel", f"max.{fmt}(a, 0.0)", db=db)
    assert o.verdict_word == "verified" and o.exhaustive and o.inputs_checked == 1 << 16


def test_a_select_by_the_other_lanes_predicate_is_not_elementwise(tmp_path, capsys):
    # the mutant selects the high element by the low lane's comparison: element 1's value decides
    # element 0's, which a run shows
    text = (TRITON / "relu_f16_v.ptx").read_text()
    old = "selp.b16 \t%rs3, %rs2, 0x0000, %p3;"
    assert old in text
    mutant = tmp_path / "relu_swapped.ptx"
    mutant.write_text(text.replace(old, "selp.b16 \t%rs3, %rs2, 0x0000, %p2;"))
    code = main(["verify", str(mutant), "--entry", "relu_kernel", "--against", "max.f16(a, 0.0)"])
    err = capsys.readouterr().err
    assert code == 2 and "not elementwise" in err and "as a run shows" in err, err


def test_each_cut_down_kernel_loads_only_its_element_word(db):
    # the 128-bit loads of eight halves become, in element k's kernel, one 32-bit load of the word
    # holding it (the other words are never read there)
    p = compiled.prepare(str(TRITON / "div_f16_v.ptx"), "div_kernel", "div.rn.f16", db=db)
    for k, group in enumerate(p.abi.layout.groups):
        loads = [st.instr for st in group.plan.steps if st.instr.opcode.startswith("ld.global")]
        assert [i.opcode for i in loads] == ["ld.global.b32", "ld.global.b32"]
        assert {i.operands[1].offset for i in loads} == {4 * (k // 2)}


def test_the_vector_half_kernel_finds_the_known_counterexample_at_every_element(db):
    # (0x0111, 0x0667) misrounds through div.full.f32 RN-2ulp (README); a sampled run puts every
    # input at every element position (8 runs of elements, each in its cut-down function)
    p = compiled.prepare(str(TRITON / "div_f16_v.ptx"), "div_kernel", "div.rn.f16", db=db)
    layout = p.abi.layout
    assert layout.per_thread == 8 and len(layout.groups) == 8
    assert [g.representative for g in layout.groups].count(True) == 1  # one class of equal expressions
    # each group's function holds one of the eight div.full.f32
    assert all(sum(st.approximate == "div.full.f32" for st in g.plan.steps) == 1 for g in layout.groups)
    ops = [np.array([0x0111, 0x3C00, 0x0111], dtype=np.uint16), np.array([0x0667, 0x3C00, 0x0667], dtype=np.uint16)]
    res = compiled.run_block(p.plan, p.abi, p.ref, ops, p.ctx_args)
    assert res.bad.tolist() == [True, False, True]


CUDA_KERNELS = [
    ("unroll4.ptx", "k_fdiv_unroll4", "div.rn.f32", "4 elements per thread"),
    ("float4_div.ptx", "k_fdiv_float4", "div.rn.f32", "counting vectors of 4"),
    ("one_cta.ptx", "k_fdiv_one_cta", "div.rn.f32", "one CTA per launch"),
]


@pytest.mark.parametrize("name,entry,against,shape", CUDA_KERNELS)
def test_cuda_written_for_speed_verifies(capsys, name, entry, against, shape):
    code = main(["verify", str(CUDA / name), "--entry", entry, "--against", against, "--cases", "3000",
                 "--json", "-"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["verdict"] == "no-counterexample"
    assert shape in out["abi"]


def test_uint4_of_half2_kernel_misrounds_what_hdiv_does(db):
    many = _outcome(db, CUDA / "half2_uint4.ptx", "k_h2div_uint4", "div.rn.f16")
    one = _outcome(db, CUDA / "half.ptx", "k_hdiv_f16", "div.rn.f16")
    assert "8 elements per thread" in many.abi
    assert many.misrounded_count == one.misrounded_count > 0
    assert sorted(map(tuple, many.misrounded)) == sorted(map(tuple, one.misrounded))


def _edited(tmp_path, name: str, old: str, new: str, count: int = 1) -> Path:
    text = (TRITON / name).read_text()
    assert text.count(old) >= count
    path = tmp_path / name
    path.write_text(text.replace(old, new, count))
    return path


def _refusal(capsys, path: Path, against: str = "div.rn.f16") -> str:
    code = main(["verify", str(path), "--entry", "div_kernel", "--against", against, "--cases", "200"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    return err


def test_swapped_halves_are_not_elementwise(tmp_path, capsys):
    # element 0 stored from element 1's quotient: out[i] is not f(a[i], b[i])
    path = _edited(tmp_path, "div_f16_v.ptx", "cvt.rn.f16x2.f32 \t%r9, %r37, %r36",
                   "cvt.rn.f16x2.f32 \t%r9, %r36, %r37")
    err = _refusal(capsys, path)
    assert "not elementwise" in err and f"{path.name}:" in err


def test_a_neighbour_read_is_not_elementwise(tmp_path, capsys):
    # b read 16 bytes on: element i divided by b[i + 8]
    path = _edited(tmp_path, "div_f16_v.ptx", "[ %rd2 + 0 ]", "[ %rd2 + 16 ]")
    err = _refusal(capsys, path)
    assert "not elementwise" in err and "element 8 of" in err


def _fixture_refusal(capsys, name: str, entry: str, against: str = "div.rn.f16") -> str:
    """The located refusal (exit 2) of fixtures/NAME against ``against``."""
    path = Path(__file__).resolve().parent / "fixtures" / name
    code = main(["verify", str(path), "--entry", entry, "--against", against, "--cases", "200"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and f"{name}:" in err
    return err


def test_a_reversed_operand_is_not_elementwise(capsys):
    # Triton's a[i] / b[n - 1 - i], one element per thread: every b element is read, by the wrong
    # thread; a permutation of the elements is no elementwise kernel (fixtures/triton_rev_f16.ptx)
    err = _fixture_refusal(capsys, "triton_rev_f16.ptx", "rev_kernel")
    assert "not elementwise" in err and "from element 255 of rev_kernel_param_1" in err


def test_two_result_buffers_are_named(capsys):
    # out = a / b and out2 = a * b from one kernel (fixtures/triton_two_outputs_f16_v.ptx): the
    # refusal names both buffers, not a replication of elements over threads
    err = _fixture_refusal(capsys, "triton_two_outputs_f16_v.ptx", "two_kernel")
    assert "writes 2 buffers (two_kernel_param_2, two_kernel_param_3)" in err


def test_a_vector_body_with_a_scalar_tail_is_refused_naming_the_tail(capsys):
    # tests/verify/fixtures/half2_tail.cu (nvcc 13.0 -arch=sm_90): a thread stores two halves, or
    # near the count one; the one-element store never runs while every thread has its two
    path = Path(__file__).parent / "fixtures" / "half2_tail.ptx"
    code = main(["verify", str(path), "--entry", "h2_fma_tail", "--against", "fma.rn.f16"])
    err = capsys.readouterr().err
    assert code == 2 and "never ran" in err and "scalar tail" in err and "Traceback" not in err, err


def test_a_reduction_is_refused_as_not_elementwise(capsys):
    # Triton's tl.sum over a block (fixtures/triton_sum_f32.ptx): its warp shuffles say why
    err = _fixture_refusal(capsys, "triton_sum_f32.ptx", "sum_kernel", "add.rn.f32")
    assert "shfl.sync.bfly.b32" in err and "not elementwise" in err


def test_a_matrix_product_is_refused_naming_the_tensor_core_instruction(capsys):
    # Triton's tl.dot (fixtures/triton_dot_f16_f32.ptx): mma.sync says why it is not elementwise
    err = _fixture_refusal(capsys, "triton_dot_f16_f32.ptx", "dot_kernel", "fma.rn.f32")
    assert "mma.sync.aligned.m16n8k16" in err and "tensor cores (tl.dot)" in err and "not elementwise" in err


def test_an_unguarded_store_is_reported_as_not_bounded(tmp_path, db):
    path = _edited(tmp_path, "div_f16_v.ptx", "@%p1 st.global.v4.b32", "st.global.v4.b32")
    o = compiled.verify_ptx(str(path), "div_kernel", "div.rn.f16", db=db, cases=500)
    assert "NOT bounded by div_kernel_param_3" in o.abi


def test_the_bound_of_triton_vectors_is_reported(db):
    p = compiled.prepare(str(TRITON / "div_f16_b512_w2.ptx"), "div_kernel", "div.rn.f16", db=db)
    assert p.abi.layout.bounded == 1  # scalar accesses: masked element by element
    p = compiled.prepare(str(TRITON / "div_f16_v.ptx"), "div_kernel", "div.rn.f16", db=db)
    assert p.abi.layout.bounded == 8  # tt.divisibility on the count: whole vectors


def test_a_store_in_a_loop_over_elements_is_refused(db):
    text = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 o)
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [o];
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, 0;
  shl.b32 %r4, %r1, 1; mad.lo.s32 %r4, %r2, 512, %r4;
$L:
  add.s32 %r5, %r4, %r3;
  mul.wide.s32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  sqrt.rn.f32 %f2, %f1;
  st.global.f32 [%rd5], %f2;
  add.s32 %r3, %r3, 1;
  setp.lt.s32 %p1, %r3, 2;
  @%p1 bra $L;
  ret;
}
"""
    from tilecheck.sim.frontend import parse_module
    from tilecheck.sim.plan import compile_function
    plan = compile_function(parse_module(text, "loop.ptx").function("k"), db, "loop.ptx")
    ref = compiled.parse_reference("sqrt.rn.f32", db)
    with pytest.raises(UnsupportedPtxError) as exc:
        compiled.find_abi(plan, ref, "loop.ptx")
    assert "loop" in str(exc.value) or "elementwise" in str(exc.value)


def test_stated_parameter_roles(capsys, tmp_path):
    path = TRITON / "div_f16_v.ptx"
    base = ["verify", str(path), "--entry", "div_kernel", "--against", "div.rn.f16", "--cases", "500"]
    assert main(base + ["--params", "in,in,out,n,-,-", "--json", "-"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert "unused: div_kernel_param_4, div_kernel_param_5" in out["abi"]
    assert "--params in,in,out,n,-,-" in out["counterexamples"][0]["repro"]
    # what the run finds must agree with what is stated
    assert main(base + ["--params", "in,out,in,n,-,-"]) == 2
    assert "running the kernel, it reads div_kernel_param_0, div_kernel_param_1" in capsys.readouterr().err
    # a parameter stated unused is 0 (a null pointer): one the kernel reads is refused where it is read
    assert main(base + ["--params", "in,-,out,n,-,-"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "div_f16_v.ptx" in err
    assert "states div_kernel_param_1 unused, but the kernel reads it (line " in err, err
    for bad, why in (("in,in,out,n", "4 role(s) for the 6"), ("in,in,out,x,-,-", "'x' is not a role"),
                     ("in,in,in,n,-,-", "exactly one parameter is 'out'"),
                     ("in,in,out,in,-,-", "neither a 64-bit pointer nor a floating-point value"),
                     ("in,in,n,out,-,-", "not a 64-bit pointer")):
        assert main(base + ["--params", bad]) == 2
        assert why in capsys.readouterr().err
    assert main(["verify", "div.rn.f32", "--params", "in,out"]) == 2
    assert "--params states the parameters of a kernel" in capsys.readouterr().err


def test_a_block_smaller_than_the_cta_misrounds_exactly_what_the_block_128_kernel_does(db):
    # BLOCK 64 on 128 threads: threads 64..127 hold replicas of 0..63 and their stores are masked
    # off; the CTAs' elements are 64 apart. The same division per element as BLOCK 128's kernel,
    # so the same misrounded inputs on the same sample -- and the same lanes judged: the threads
    # that store nothing are no lanes of the verdict
    small = compiled.verify_ptx(str(TRITON / "div_f16_b64_w4.ptx"), "div_kernel", "div.rn.f16", db=db, cases=2000,
                                seed=0)
    full = compiled.verify_ptx(str(TRITON / "div_f16.ptx"), "div_kernel", "div.rn.f16", db=db, cases=2000, seed=0)
    assert "128 threads per CTA (64 of them store, the others store nothing), 64 elements per CTA" in small.abi
    assert "bounded by div_kernel_param_3" in small.abi
    assert full.misrounded_count > 0 and small.verdict == full.verdict == "counterexample"
    assert sorted(map(tuple, small.misrounded)) == sorted(map(tuple, full.misrounded))
    assert (small.misrounded_count, small.misrounded_by_value, small.lanes_run) == \
        (full.misrounded_count, full.misrounded_by_value, full.lanes_run)


def test_idle_threads_with_two_elements_each_misround_what_the_scalar_kernel_does(tmp_path, db):
    # div_f16_b256_w4_v.ptx edited to BLOCK 128 on 128 threads, two halves per 32-bit access:
    # threads 0..63 store elements 2t, 2t+1 of their CTA's 128, threads 64..127 (their replicas)
    # are masked off as Triton masks them
    path = _edited(tmp_path, "div_f16_b256_w4_v.ptx", "shl.b32 \t%r5, %r4, 8;", "shl.b32 \t%r5, %r4, 7;")
    text = path.read_text()
    for old, new in [("and.b32 \t%r9, %r8, 254;", "and.b32 \t%r9, %r8, 126;"),
                     ("@%p1 st.global.b32", "and.b32 \t%r17, %r7, 64;\n\tsetp.eq.b32 \t%p2, %r17, 0;\n\t"
                                            "and.pred \t%p3, %p2, %p1;\n\t@%p3 st.global.b32"),
                     (".reg .pred \t%p<2>;", ".reg .pred \t%p<4>;"), (".reg .b32 \t%r<17>;", ".reg .b32 \t%r<18>;")]:
        assert text.count(old) == 1
        text = text.replace(old, new)
    path.write_text(text)
    pair = compiled.verify_ptx(str(path), "div_kernel", "div.rn.f16", db=db, cases=2000, seed=0)
    one = compiled.verify_ptx(str(TRITON / "div_f16.ptx"), "div_kernel", "div.rn.f16", db=db, cases=2000, seed=0)
    assert "2 elements per thread, 128 threads per CTA (64 of them store, the others store nothing), 128 " \
           "elements per CTA" in pair.abi
    assert one.misrounded_count > 0
    assert sorted(map(tuple, pair.misrounded)) == sorted(map(tuple, one.misrounded))
    assert pair.lanes_run == 2 * one.lanes_run  # each input at both elements, on the storing threads only


def test_a_block_smaller_than_the_cta_reproduces_the_known_counterexample(capsys):
    code = main(["verify", str(TRITON / "div_f16_b64_w4.ptx"), "--entry", "div_kernel", "--against", "div.rn.f16",
                 "--input", "0xde54,0xb363"])
    out = capsys.readouterr().out
    assert code == 1 and "RN-2ulp" in out and "got 0x66da" in out


_MASK = "and.pred \t%p2, %p3, %p1;"  # div_f16_b64_w4.ptx: threads 64..127 store nothing


def _masked(tmp_path, extra: str) -> Path:
    """div_f16_b64_w4.ptx with ``extra`` after the store's mask (%p0 is free; %p2 guards the store)."""
    return _edited(tmp_path, "div_f16_b64_w4.ptx", _MASK, _MASK + "\n\t" + extra)


def test_a_masked_store_skipping_an_element_nobody_else_stores_is_refused(tmp_path, capsys):
    # thread 5 of every CTA is masked off too: the same threads idle in every CTA, but element 5
    # (and 69) of the CTA's range is stored by no thread
    path = _masked(tmp_path, "setp.ne.b32 \t%p0, %r5, 5;\n\tand.pred \t%p2, %p2, %p0;")
    err = _refusal(capsys, path)
    assert "65 of the 128 threads of a CTA store nothing (from thread 5" in err
    assert "no thread stores element 5 of CTA 0's range (0 .. 63)" in err


def test_threads_idle_in_one_cta_only_are_refused(tmp_path, capsys):
    # element 69 (thread 5 of CTA 1) is skipped: CTA 1's idle threads are not CTA 0's, and no
    # launch of one CTA at a time reads this kernel (its CTAs store different elements)
    path = _masked(tmp_path, "setp.ne.b32 \t%p0, %r6, 69;\n\tand.pred \t%p2, %p2, %p0;")
    err = _refusal(capsys, path)
    assert "thread 5 of a CTA stores elements in CTA 0 and nothing in CTA 1" in err
    # the same on BLOCK 128, where every thread stores but thread 72 of CTA 1 (element 200)
    path = _edited(tmp_path, "div_f16.ptx", "@%p1 st.global.b16",
                   "setp.ne.b32 \t%p2, %r6, 200;\n\tand.pred \t%p2, %p2, %p1;\n\t@%p2 st.global.b16")
    path.write_text(path.read_text().replace("%p<2>", "%p<3>"))
    err = _refusal(capsys, path)
    assert "thread 72 of a CTA stores elements in CTA 0 and nothing in CTA 1" in err


def test_idle_threads_with_a_count_in_other_units_are_refused(tmp_path, capsys):
    # the bound compares twice the element index with the count (a count in bytes): at a count of
    # the storing threads' elements only CTA 0 stores
    path = _edited(tmp_path, "div_f16_b64_w4.ptx", "setp.lt.s32 \t%p1, %r6, %r3;",
                   "shl.b32 \t%r10, %r6, 1;\n\tsetp.lt.s32 \t%p1, %r10, %r3;")
    err = _refusal(capsys, path)
    assert "with the count at 128 (the 64 threads that store, 1 element each, in 2 CTAs) they store elements " \
           "0 .. 63 (64 of them), not 0 .. 127" in err and "count other units" in err


def test_replicas_that_store_are_refused(tmp_path, capsys):
    # the replicas' stores not masked off: every element stored by two threads
    path = _edited(tmp_path, "div_f16_b64_w4.ptx", _MASK, "and.pred \t%p2, %p1, %p1;")
    err = _refusal(capsys, path)
    assert "element 0 is stored by 2 threads" in err


@pytest.mark.parametrize("extra,why", [
    # element 200 (thread 8 of CTA 3) skipped: past the two CTAs the layout was found on
    ("setp.ne.b32 \t%p0, %r6, 200;\n\tand.pred \t%p2, %p2, %p0;", "thread 8 of CTA 3 stores nothing"),
    # thread 64 of CTA 3, a replica, stores: a value no verdict would judge
    ("setp.eq.b32 \t%p0, %r4, 64;\n\tsetp.eq.b32 \t%p3, %r1, 3;\n\tand.pred \t%p0, %p0, %p3;\n\t"
     "or.pred \t%p2, %p2, %p0;", "thread 64 of CTA 3, one of the threads that store nothing, stores"),
], ids=["judged-thread-stores-nothing", "idle-thread-stores"])
def test_a_larger_launch_keeps_the_threads_that_store(tmp_path, capsys, extra, why):
    path = _masked(tmp_path, extra)
    code = main(["verify", str(path), "--entry", "div_kernel", "--against", "div.rn.f16", "--cases", "2000"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "with 32 CTAs, the store at line" in err and why in err


def test_a_thread_storing_another_element_is_not_elementwise(tmp_path, capsys):
    path = _edited(tmp_path, "div_f16.ptx", "st.global.b16 [ %rd3 + 0 ]", "st.global.b16 [ %rd3 + 2 ]")
    err = _refusal(capsys, path)
    assert "store elements 1 .. 256 (256 of them), not 0 .. 255" in err


@pytest.mark.parametrize("many,one,entry,against", [
    (TRITON / "convert_s32_f32_v.ptx", TRITON / "convert_s32_f32.ptx", "convert_kernel", "cvt.rn.f32.s32"),
    (TRITON / "widen_f16_f32_v.ptx", TRITON / "widen_f16_f32.ptx", "widen_kernel", "cvt.f32.f16(a)"),
])
def test_elements_with_no_choices_run_alone_and_one_stands_for_its_class(db, many, one, entry, against):
    # no approximate instruction: each element is its own cut-down group, and the eight equal
    # expressions form one class whose first group runs every input (the others sampled positions)
    p = compiled.prepare(str(many), entry, against, db=db)
    groups = p.abi.layout.groups
    assert len(groups) == 8 and all(len(g.atoms) == 1 for g in groups)
    assert [g.represents for g in groups] == [-1] + [0] * 7
    o_many, o_one = _outcome(db, many, entry, against), _outcome(db, one, entry, against)
    assert (o_many.verdict, o_many.misrounded_count) == (o_one.verdict, o_one.misrounded_count)


@pytest.mark.parametrize("old,new", [
    ("mov.u32 \t%r4, %ctaid.x;", "mov.u32 \t%r4, %ctaid.y;"),    # tl.program_id(1)
    ("mov.u32 \t%r7, %tid.x;", "mov.u32 \t%r7, %tid.z;"),        # a 3-D block
    ("mov.u32 \t%r4, %ctaid.x;", "mov.u32 \t%r4, %nctaid.y;"),   # the grid's rows
])
def test_a_kernel_reading_a_second_dimension_is_refused_where_it_reads_it(db, tmp_path, capsys, old, new):
    # the simulator launches 1-D grids of 1-D blocks (y and z 0): only a first row would run, and
    # a verdict would cover rows never run
    path = _edited(tmp_path, "div_f32.ptx", old, new)
    err = _refusal(capsys, path, "div.full.f32")
    special = new.split(", ")[1].rstrip(";")
    assert f"{path.name}:33:" in err or f"{path.name}:38:" in err, err
    assert f".entry div_kernel reads {special}" in err and "multi-dimensional" in err
    with pytest.raises(UnsupportedPtxError):  # --params (the user's roles) does not lift it
        compiled.prepare(str(path), "div_kernel", "div.full.f32", db=db, params="in,in,out,n,-,-")


def test_a_kernel_that_loads_nothing_says_so(tmp_path, capsys):
    # the load deleted: it stores what its registers held before (a constant), from no input
    path = _edited(tmp_path, "sqrt_f16_up.ptx", "\t@%p1 ld.global.b16 { %rs1 }, [ %rd1 + 0 ];\n", "")
    code = main(["verify", str(path), "--against", "sqrt.rn.f16", "--cases", "50"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert ".entry sqrt_up_kernel reads no buffer; sqrt.rn.f16 takes 1 operand(s)" in err, err
