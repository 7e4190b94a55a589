"""Kernels whose operands have another width (or format) than their result.

Triton's ``x.to(tl.float32)``, ``a.to(tl.float32) / b.to(tl.float32)`` stored as float32,
``(a / b).to(tl.float16)`` on float32 operands and a float16 times a float32
(examples/triton/*_f16_f32*.ptx, *_f32_f16*.ptx), checked against expressions whose operands are
the kernel's buffers with their own formats. Each buffer holds elements of its operand's width,
the exhaustive enumeration spans the operands' widths together, and what does not fit is a
located usage error (exit 2).

The misrounded inputs of ``a.to(tl.float32) / b.to(tl.float32)`` against the correctly rounded
f32 quotient are predicted independently: its ``div.full.f32`` (2 ulp) allows values beside the
correctly rounded one for every quotient of two finite non-zero float16 values (always a normal
binary32 number), and only the special-value table decides the others (a zero, an infinity or a
NaN operand), so the misrounded inputs are exactly those with both operands finite and non-zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton"
STAGED = Path(__file__).resolve().parent / "fixtures" / "triton_widen_f16_f32_v.ptx"
# Triton 3.9, sm_90a, BLOCK 1024, 4 warps, tt.divisibility 16: a.to(tl.float32) / b.to(tl.float32)
# (the division before the layout conversion through shared memory); it and the widening kernel
# of x.to(tl.float32) with two elements of their first ld.shared swapped by hand (not elementwise)
STAGED_AFTER_ARITHMETIC = Path(__file__).resolve().parent / "fixtures" / "triton_div_up_f16_f32_v.ptx"
STAGED_SWAPPED = Path(__file__).resolve().parent / "fixtures" / "triton_widen_swapped_f16_f32_v.ptx"
STAGED_AFTER_ARITHMETIC_SWAPPED = Path(__file__).resolve().parent / "fixtures" / "triton_div_up_swapped_f16_f32_v.ptx"
# Triton 3.9 (same options): tl.sqrt(a.to(tl.float32)) on 128-bit vectors (the halves through shared
# memory, then eight sqrt.approx.ftz.f32 per thread) and its scalar build (BLOCK 128, no shared memory)
SQRT_UP_V = Path(__file__).resolve().parent / "fixtures" / "triton_sqrt_up_f16_f32_v.ptx"
SQRT_UP = Path(__file__).resolve().parent / "fixtures" / "triton_sqrt_up_f16_f32.ptx"
# ... and the a / b kernel with a neg.f32 added by hand after its first ld.shared: arithmetic on both sides
STAGED_BOTH_SIDES = Path(__file__).resolve().parent / "fixtures" / "triton_div_up_both_sides_f16_f32_v.ptx"
DIV_UP = "div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))"
DIV_DOWN = "cvt.rn.f16.f32(div.rn.f32(a, b))"


def test_a_widening_kernel_verifies_over_every_input(capsys):
    code = main(["verify", str(TRITON / "widen_f16_f32.ptx"), "--entry", "widen_kernel", "--against", "cvt.f32.f16(a)",
                 "--json", "-"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["verdict"] == "verified" and out["exhaustive"] and out["inputs_checked"] == 1 << 16


def test_half_operands_and_a_float_result_misround_where_predicted(db):
    o = compiled.verify_ptx(str(TRITON / "div_up_f16_f32.ptx"), "div_up_kernel", DIV_UP, db=db, cases=4000)
    p = compiled.prepare(str(TRITON / "div_up_f16_f32.ptx"), "div_up_kernel", DIV_UP, db=db)
    assert p.abi.operands_width == [16, 16] and p.abi.width == 32
    assert p.domain == 1 << 32
    a, b = compiled.sampled_inputs(p.ref, 4000, 0)[0]
    assert a.dtype == np.uint16 and b.dtype == np.uint16

    def finite_nonzero(x):
        mag = x & 0x7FFF
        return (mag != 0) & (mag < 0x7C00)

    want = {(int(x), int(y)) for x, y in zip(a, b) if finite_nonzero(x) and finite_nonzero(y)}
    got = {tuple(case) for case in o.misrounded}
    assert o.inputs_checked == 4000 and got == want and o.misrounded_by_value == len(want)
    # the counterexample reads its operands as float16 and its result as float32
    cex = o.counterexamples[0]
    assert len(cex["inputs"][0]["hex"]) == 6 and len(cex["expected"]["hex"]) == 10
    assert "--input 0x" in cex["repro"]


def test_an_exhaustive_block_of_half_operands(db):
    """The first 2^16 inputs of the exhaustive enumeration: one divisor (operand b = 0), every
    dividend; the second block: b = 1 (the smallest subnormal), where every finite non-zero
    dividend misrounds."""
    p = compiled.prepare(str(TRITON / "div_up_f16_f32.ptx"), "div_up_kernel", DIV_UP, db=db)
    tally = compiled.run_range(p, 0, 2 << 16)
    a = np.arange(1 << 16)
    finite = ((a & 0x7FFF) != 0) & ((a & 0x7FFF) < 0x7C00)
    assert tally.checked == 2 << 16 and tally.misrounded == int(finite.sum())


def test_float_operands_and_a_half_result_scalar_and_vector_agree(db):
    scalar = compiled.verify_ptx(str(TRITON / "div_down_f32_f16.ptx"), "div_down_kernel", DIV_DOWN, db=db, cases=20000)
    vector = compiled.verify_ptx(str(TRITON / "div_down_f32_f16_v.ptx"), "div_down_kernel", DIV_DOWN, db=db,
                                 cases=20000)
    assert scalar.verdict == "counterexample" and scalar.misrounded
    assert sorted(map(tuple, scalar.misrounded)) == sorted(map(tuple, vector.misrounded))
    assert "8 elements per thread" in vector.abi


def test_operands_of_two_formats(db, capsys):
    path = str(TRITON / "mul_mixed_f16_f32.ptx")
    ok = compiled.verify_ptx(path, "mul_mixed_kernel", "mul.rn.f32(cvt.f32.f16(a), b)", db=db, cases=4000)
    assert ok.verdict == "verified" and not ok.exhaustive
    # another rounding of the same product is refuted: the comparison can fail
    rz = compiled.verify_ptx(path, "mul_mixed_kernel", "mul.rz.f32(cvt.f32.f16(a), b)", db=db, cases=4000)
    assert rz.verdict == "counterexample"
    # the formats swapped: operand a (the first buffer) holds float16, not float32
    code = main(["verify", path, "--entry", "mul_mixed_kernel", "--against", "mul.rn.f32(a, cvt.f32.f16(b))"])
    err = capsys.readouterr().err
    assert code == 2 and "reads 16-bit elements of mul_mixed_kernel_param_0" in err and "Traceback" not in err


def test_a_repro_input_of_two_widths(capsys):
    code = main(["verify", str(TRITON / "div_down_f32_f16.ptx"), "--entry", "div_down_kernel", "--against", DIV_DOWN,
                 "--input", "0x80000002,0x01ffffff"])
    out = capsys.readouterr().out
    # float32 operands, a float16 result: the quotient is just over half of float16's smallest subnormal
    # in magnitude, so -2^-24 (0x8001) is correctly rounded; div.full.f32 may return 2^-25 or less
    assert code == 1 and "inputs 0x80000002 (" in out and "expected 0x8001" in out


def test_elements_staged_through_shared_memory_are_followed(capsys):
    """Triton's vectorised widening kernel passes each half to another thread through dynamic
    shared memory (``.extern .shared``: stored as 32-bit words, read as halves): every byte read is
    followed back through the thread and store that wrote it to the global load of the element
    the reading thread stores, so the kernel verifies over all 2^16 inputs; against |x| it misrounds
    exactly the 31,744 halves with the sign bit set that are neither NaN nor -0 (0x8001 .. 0xfc00,
    counted here, not by the model), and -0 only by its sign."""
    code = main(["verify", str(STAGED), "--entry", "widen_kernel", "--against", "cvt.f32.f16(a)", "--json", "-"])
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert code == 0 and doc["verdict"] == "verified" and doc["exhaustive"] and "Traceback" not in cap.err
    code = main(["verify", str(STAGED), "--entry", "widen_kernel", "--against", "abs.f32(cvt.f32.f16(a))",
                 "--json", "-"])
    doc = json.loads(capsys.readouterr().out)
    negative = [x for x in range(0x8000, 0x10000) if (x & 0x7FFF) <= 0x7C00 and x != 0x8000]
    assert code == 1 and doc["misrounded_by_value_count"] == len(negative) == 31744
    assert doc["misrounded_count"] == len(negative) + 1


def test_elements_computed_before_shared_memory_are_judged_where_they_are_computed(capsys):
    """The 128-bit a.to(tl.float32) / b.to(tl.float32) divides in the load layout and passes the
    quotients through shared memory to the threads that store them: each st.shared item stands for
    the element its reader stores, so the same sampled inputs misround exactly as in the scalar
    build (examples/triton/div_up_f16_f32.ptx, no shared memory), and the kernel is within
    div.full.f32's own contract on every one of them."""
    ref = "div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))"
    code, doc = _verify_json(capsys, STAGED_AFTER_ARITHMETIC, "k", ref)
    code_s, doc_s = _verify_json(capsys, TRITON / "div_up_f16_f32.ptx", "div_up_kernel", ref)
    assert code == code_s == 1
    assert doc["misrounded_count"] == doc_s["misrounded_count"] > 0
    assert doc["misrounded_inputs"] == doc_s["misrounded_inputs"]
    code, doc = _verify_json(capsys, STAGED_AFTER_ARITHMETIC, "k", "div.full.f32(cvt.f32.f16(a), cvt.f32.f16(b))")
    assert code == 0 and doc["verdict"] == "no-counterexample"


def test_approximate_instructions_after_shared_memory_run_one_element_at_a_time(capsys):
    """Eight sqrt.approx.ftz.f32 per thread after the halves come through shared memory: each
    element runs in its own cut-down kernel (the staging stores kept in all of them), so choices
    never multiply (the whole kernel would fork 3^8 ways per input); over all 2^16 inputs the
    vector build misrounds exactly as the scalar build does, and is within its own contract."""
    ref = "sqrt.rn.f32(cvt.f32.f16(a))"
    code, doc = _verify_json(capsys, SQRT_UP_V, "k", ref, "--exhaustive")
    code_s, doc_s = _verify_json(capsys, SQRT_UP, "k", ref, "--exhaustive")
    assert code == code_s == 1 and doc["exhaustive"] and doc_s["exhaustive"]
    assert doc["misrounded_count"] == doc_s["misrounded_count"] > 0
    assert doc["misrounded_inputs"] == doc_s["misrounded_inputs"]
    assert doc["lanes_run"] < 8 * doc_s["lanes_run"]
    code, doc = _verify_json(capsys, SQRT_UP_V, "k", "sqrt.approx.ftz.f32(cvt.f32.f16(a))", "--exhaustive")
    assert code == 0 and doc["verdict"] == "verified"


def _verify_json(capsys, path, entry, ref, *options):
    code = main(["verify", str(path), "--entry", entry, "--against", ref, *(options or ("--cases", "8000")),
                 "--json", "-"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return code, json.loads(cap.out)


@pytest.mark.parametrize("path,words", [
    (STAGED_SWAPPED, ["not elementwise: thread 0 stores element 0", "from element 1", "through shared memory"]),
    (STAGED_AFTER_ARITHMETIC_SWAPPED, ["not elementwise: thread 0 stores element 0", "from element 1"]),
    (STAGED_BOTH_SIDES, ["comes from shared memory", "after computing it", "arithmetic on both sides is not followed"]),
])
def test_elements_through_shared_memory_that_cannot_be_followed_are_refused_located(capsys, path, words):
    """A layout conversion that hands a thread another element, before or after the arithmetic, and
    arithmetic on both sides of shared memory are refused, located, exit 2."""
    ref = "div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))" if "div_up" in path.name else "cvt.f32.f16(a)"
    code = main(["verify", str(path), "--entry", "k", "--against", ref])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.startswith(f"{path}:")
    for w in words:
        assert w in err, (w, err)
