"""The CUDA C++ rendering: one inline-asm helper per form, constraint letters and carriers,
``_pred_undef``/``_pred_keep`` variants, one helper call per instruction. (nvcc compiles the golden
``.cu`` files in ``tests/golden``.)"""

from __future__ import annotations

import re

import pytest

from emit_helpers import ROOT, expected_counts
from tilecheck.emit import emit_programs
from tilecheck.emit.cuda import CARRIER, form_helper, helper_name, pun


def _cuda(path, target, db, programs_of):
    return emit_programs(programs_of(path), target, "cuda", db=db)


def test_root_ratio_helpers(db, programs_of):
    text = _cuda(ROOT / "examples" / "root_ratio.py", "sm_90", db, programs_of)
    assert ('__forceinline__ __device__ void tc_div_rn_f32(float &d, float a, float b) {\n'
            '    asm volatile("div.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));\n}') in text
    assert 'asm volatile("ld.global.f32 %0, [%1];" : "=f"(d) : "l"(a) : "memory");' in text
    assert 'asm volatile("st.global.f32 [%0], %1;" : : "l"(a), "f"(b) : "memory");' in text
    assert text.count("__forceinline__ __device__ void ") == 4  # one helper per form used
    assert text.count("tc_div_rn_f32(r_") == 4 and text.count("tc_sqrt_rn_f32(r_") == 4
    assert "tc_div_rn_f32(r_0, r_0, __uint_as_float(0x40800000u));" in text
    assert 'extern "C" __global__ void __launch_bounds__(1) root_ratio(float *A, float *Out)' in text


def test_predicated_variants(db, programs_of):
    text = _cuda(ROOT / "examples" / "predicated_sqrt.py", "sm_90", db, programs_of)
    keep = re.search(r"void tc_sqrt_rn_f32_pred_keep\(float &d, float a, uint32_t pred\) \{\n\s+(.*)\n", text)
    undef = re.search(r"void tc_rcp_rn_f32_pred_undef\(float &d, float a, uint32_t pred\) \{\n\s+(.*)\n", text)
    assert keep and undef
    assert '"{ .reg .pred p; setp.ne.b32 p, %2, 0; @p sqrt.rn.f32 %0, %1; }" : "+f"(d) : "f"(a), "r"(pred)' in keep[1]
    assert '"{ .reg .pred p; setp.ne.b32 p, %2, 0; @p rcp.rn.f32 %0, %1; }" : "=f"(d) : "f"(a), "r"(pred)' in undef[1]
    assert "tc_sqrt_rn_f32(" not in text  # only the predicated variant is used


@pytest.mark.parametrize("path, form, letter", [
    ("examples/packed_f16x2.py", "add.rn.f16x2", "r"), ("examples/f64_div.py", "div.rn.f64", "d"),
    ("tests/programs/legal/bit_containers.py", "add.rn.f16", "h"),
    ("tests/programs/legal/f32x2_sm100.py", "add.rn.f32x2", "l")])
def test_constraint_letters(path, form, letter, db, programs_of):
    text = _cuda(ROOT / path, "sm_100", db, programs_of)
    line = [ln for ln in text.splitlines() if f'asm volatile("{form} ' in ln][0]
    assert f'"={letter}"(d)' in line and f'"{letter}"(a)' in line


@pytest.mark.parametrize("name", ["cta_vector", "warpgroup_fma", "warp_strided", "packed_f16x2"])
def test_one_helper_call_per_instruction(name, db, programs_of):
    (program,) = programs_of(ROOT / "examples" / f"{name}.py")
    text = _cuda(ROOT / "examples" / f"{name}.py", "sm_90", db, programs_of)
    kernel = text.split("__global__")[1]
    counts, _ = expected_counts(program, "sm_90", db)
    for form, n in counts.items():
        assert len(re.findall(rf"\b{helper_name(form)}(_pred_\w+)?\(", kernel)) == n


def test_bit_containers_use_puns_not_conversions(db, programs_of):
    text = _cuda(ROOT / "tests" / "programs" / "legal" / "bit_containers.py", "sm_90", db, programs_of)
    # r is a float32 buffer loaded through a uint32 view: the cell is a uint32_t, the f32 add sees its bits
    assert "__uint_as_float(r_0)" in text and "r_0 = (uint32_t)__float_as_uint(" in text


def test_every_form_helper_renders(db):
    for form in db.kernel_forms():
        for variant in ("", "_pred_undef", "_pred_keep"):
            text = form_helper(form, variant)
            registers = sum(o.registers for o in form.operands)
            refs = set(re.findall(r"%(\d+)", text.split('"')[1]))
            assert len(refs) == registers + (1 if variant else 0), (form.name, variant)
            assert ('"+' in text) == (variant == "_pred_keep" and any(o.role == "dst" for o in form.operands))


def test_carrier_table_matches_the_reference():
    assert CARRIER["f32"] == ("float", "f") and CARRIER["f64"] == ("double", "d")
    assert CARRIER["b16"] == ("uint16_t", "h") and CARRIER["b32"] == ("uint32_t", "r")
    assert CARRIER["b64"] == ("uint64_t", "l")
    assert pun("x", "uint32_t", "float") == "__uint_as_float(x)"
    assert pun("x", "double", "uint64_t") == "(uint64_t)__double_as_longlong(x)"
