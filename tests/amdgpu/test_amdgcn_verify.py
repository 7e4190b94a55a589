"""``tilecheck verify FILE.s``: the AMDGCN simulator and verifier on the committed llc and Triton corpora.

Each test runs the real compiler output (examples/amdgpu) or a copy edited to break one property,
so a verdict can only pass if the simulator follows the code: a swapped operand is caught, a kernel
that reads its neighbour's element is refused as not elementwise, an instruction the simulator does
not know is a located error (exit 2).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tilecheck.amdgpu.steps import UnsupportedAmdgcnError
from tilecheck.errors import UsageError
from tilecheck.verify.amdgcn import prepare, verify_amdgcn

ROOT = Path(__file__).resolve().parents[2]
LLC = ROOT / "examples" / "amdgpu"
TRITON = LLC / "triton"


@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1100"])
@pytest.mark.parametrize("entry,ref", [("fma_f32", "fma.rn.f32"), ("fma_f64", "fma.rn.f64"),
                                       ("fma_f32_ftz", "fma.rn.ftz.f32")])
def test_llc_fma_kernels_verify(db, target, entry, ref):
    o = verify_amdgcn(str(LLC / f"arith_{target}.s"), entry, ref, db=db, cases=400)
    assert o.verdict == "verified" and o.misrounded_count == 0 and o.inputs_checked == 400
    assert "wave" + ("32" if target == "gfx1100" else "64") in o.abi


def test_triton_layout_duplicate_lanes(db):
    """Triton's BLOCK 128 on 4 wave64s: two lanes per element, only one stores; the count bounds."""
    p = prepare(str(TRITON / "fma_f32.s"), "fma_kernel", "fma.rn.f32", db=db)
    assert p.elements_per_group == 128 and p.group_size == 256
    assert [r for _, r in p.roles] == ["in", "in", "in", "out", "n", "-", "-"]


def test_fusion_is_seen(db):
    """FP fusion on: one fma, which the unfused reading refutes with concrete inputs."""
    o = verify_amdgcn(str(TRITON / "mul_add_f32_fused.s"), "mul_add_kernel", "add.rn.f32(mul.rn.f32(a, b), c)",
                      db=db, cases=2000)
    assert o.verdict == "counterexample" and o.misrounded_by_value > 0
    c = o.counterexamples[0]
    assert c["expected"]["hex"] != c["got"]["hex"] and "--input" in c["repro"]
    again = verify_amdgcn(str(TRITON / "mul_add_f32_fused.s"), "mul_add_kernel", "fma.rn.f32", db=db, cases=2000)
    assert again.verdict == "verified"


def _edited(tmp_path: Path, source: Path, old: str, new: str, kernel: str = "fma_f32") -> str:
    """A copy of ``source`` with ``old`` replaced by ``new`` inside ``kernel``'s body only."""
    text = source.read_text()
    start = text.index(f"\n{kernel}:")
    end = text.index(".Lfunc_end", start)
    body = text[start:end]
    assert old in body
    out = tmp_path / source.name
    out.write_text(text[:start] + body.replace(old, new, 1) + text[end:])
    return str(out)


def test_swapped_operand_is_a_counterexample(db, tmp_path):
    # fma_f32 on gfx942: v_fmac_f32_e32 v2, v6, v7 (c += a * b); make it a * b - c
    path = _edited(tmp_path, LLC / "arith_gfx942.s", "v_fmac_f32_e32 v2, v6, v7\n\tglobal_store_dword",
                   "v_fma_f32 v2, v6, v7, -v2\n\tglobal_store_dword")
    o = verify_amdgcn(path, "fma_f32", "fma.rn.f32", db=db, cases=300)
    assert o.verdict == "counterexample"


def test_neighbour_element_reads_past_the_end(db, tmp_path):
    # read a[i + 1]: the last element's load leaves the buffer of n elements
    path = _edited(tmp_path, LLC / "arith_gfx942.s", "global_load_dword v6, v[2:3], off\n\tglobal_load_dword v7",
                   "global_load_dword v6, v[2:3], off offset:4\n\tglobal_load_dword v7")
    with pytest.raises(UsageError, match="4 byte.s. past the end of parameter a"):
        prepare(path, "fma_f32", "fma.rn.f32", db=db)


def test_unknown_instruction_is_located(db, tmp_path):
    path = _edited(tmp_path, LLC / "arith_gfx942.s", "v_fmac_f32_e32 v2, v6, v7\n\tglobal_store_dword",
                   "v_mfma_f32_4x4x1f32 v[0:3], v6, v7, v[0:3]\n\tglobal_store_dword")
    with pytest.raises(UnsupportedAmdgcnError) as err:
        prepare(path, "fma_f32", "fma.rn.f32", db=db)
    assert err.value.location.line > 0 and "v_mfma" in str(err.value)


def test_missing_bound_check_is_refused(db, tmp_path):
    # drop the i < n guard: every lane of the partial workgroup stores, past the count
    path = _edited(tmp_path, LLC / "arith_gfx942.s", "s_load_dword s3, s[0:1], 0x20\n\tv_lshl_or_b32 v0, s2, 8, v0\n"
                   "\ts_waitcnt lgkmcnt(0)\n\tv_cmp_gt_u32_e32 vcc, s3, v0",
                   "s_load_dword s3, s[0:1], 0x20\n\tv_lshl_or_b32 v0, s2, 8, v0\n"
                   "\ts_waitcnt lgkmcnt(0)\n\tv_cmp_le_u32_e32 vcc, 0, v0")
    with pytest.raises(UsageError, match="past the end of parameter"):
        prepare(path, "fma_f32", "fma.rn.f32", db=db)


def test_cli_exit_codes(tmp_path):
    cmd = [sys.executable, "-m", "tilecheck", "verify", str(LLC / "arith_gfx942.s"), "--entry", "fma_f32",
           "--against"]
    ok = subprocess.run(cmd + ["fma.rn.f32", "--cases", "200"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "NO COUNTEREXAMPLE" in ok.stdout
    bad = subprocess.run(cmd + ["div.rn.f32(a, b, c)", "--cases", "200"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    nokernel = subprocess.run(cmd[:5] + ["--entry", "nope", "--against", "fma.rn.f32"], capture_output=True, text=True)
    assert nokernel.returncode == 2 and "no kernel named" in nokernel.stderr
    missing = subprocess.run(cmd[:4] + [str(tmp_path / "absent.s"), "--entry", "k", "--against", "fma.rn.f32"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "internal error" not in missing.stderr


def test_triton_vector_layout(db):
    """Four halves per thread through 64-bit accesses, packed again by v_pack_b32_f16; the count
    must be a whole number of vectors (Triton's tt.divisibility on n)."""
    p = prepare(str(TRITON / "div_f16_v.s"), "div_kernel", "div.rn.f16", db=db)
    assert p.elements_per_group == 1024 and len(p.classes) == 4 and p.count_granule > 1
    assert "a multiple of" in p.abi


def test_wrong_half_is_not_elementwise(db, tmp_path):
    # element 2 (the high half of v2's neighbour register) made to read a's element 3
    path = _edited(tmp_path, TRITON / "div_f16_v.s", "v_lshrrev_b32_e32 v8, 16, v4",
                   "v_lshrrev_b32_e32 v8, 16, v5", kernel="div_kernel")
    with pytest.raises(UsageError, match="not elementwise"):
        prepare(path, "div_kernel", "div.rn.f16", db=db)


def test_vopd_pairs_run(db):
    """gfx1100's f64 square root ends in a VOPD pair (v_dual_cndmask_b32 :: v_dual_cndmask_b32)."""
    p = prepare(str(LLC / "arith_gfx1100.s"), "sqrt_f64", "sqrt.rn.f64", db=db)
    assert p.elements_per_group == 256 and "wave32" in p.abi


def test_undocumented_bound_is_unknown(db):
    """V_SQRT_F16 has no documented bound (the spec's is provisional): unknown, exit 4, unless
    --approx provisional judges under it."""
    o = verify_amdgcn(str(LLC / "arith_gfx942.s"), "sqrt_f16", "sqrt.rn.f16", db=db, input_=["0x3c01"])
    assert o.verdict == "unknown" and o.exit_code == 4 and o.misrounded_count == 0
    assert "provisional" in o.unknown_inputs[0]["reasons"][0]["why"]
    judged = verify_amdgcn(str(LLC / "arith_gfx942.s"), "sqrt_f16", "sqrt.rn.f16", db=db, cases=512,
                           approx="provisional")
    assert judged.verdict == "counterexample"


def test_triton_bf16_fma_double_rounds(db):
    """Triton's bf16 tl.fma on gfx942: an f32 fma rounded to bf16 by hand, a double rounding."""
    o = verify_amdgcn(str(TRITON / "fma_bf16.s"), "fma_kernel", "fma.rn.bf16", db=db, input_=["0x4040", "0x42ae", "0x3080"])
    assert o.verdict == "counterexample"
    c = o.counterexamples[0]
    assert (c["expected"]["hex"], c["got"]["hex"]) == ("0x4383", "0x4382")


def test_flat_accesses(db, tmp_path):
    """flat_load/flat_store (a 64-bit VGPR address, no SGPR base) run as the global forms."""
    path = _edited(tmp_path, LLC / "arith_gfx942.s", "global_load_dword v6, v[2:3], off", "flat_load_dword v6, v[2:3]")
    text = Path(path).read_text()
    start = text.index("\nfma_f32:")
    Path(path).write_text(text[:start] + text[start:].replace("global_store_dword v[0:1], v2, off",
                                                              "flat_store_dword v[0:1], v2", 1))
    assert verify_amdgcn(path, "fma_f32", "fma.rn.f32", db=db, cases=200).verdict == "verified"


@pytest.mark.parametrize("reading,choices", [("exact", 4), ("correctly-rounded", 3), ("either", 4)])
def test_ulp_reading_reaches_the_contract_forks_and_the_report(db, reading, choices):
    """--ulp-reading: V_RCP_F32's allowed reciprocals of 8192 (a power of two: the exact reading
    allows two steps below and one above, the correctly-rounded one step either way), in the lanes
    run, the counterexample's list of allowed values, and the readings applied per contract form."""
    o = verify_amdgcn(str(LLC / "arith_gfx942.s"), "fdiv_f16", "div.rn.f16", db=db, ulp_reading=reading,
                      input_=["0x0c00", "0x7000"])
    assert o.lanes_run == choices
    assert o.readings["v_rcp_f32"] == reading
    cx = o.counterexamples[0]
    assert cx["approximate_choices"][0]["allowed"].count("0x") == choices
    assert ("--ulp-reading" in cx["repro"]) == (reading != "either")  # the repro runs under the same reading
