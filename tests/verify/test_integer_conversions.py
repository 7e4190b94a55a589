"""References with integer operands or results: ``cvt`` between integers and floats.

Triton's ``x.to(tl.int32)`` on float32 is one ``cvt.rzi.s32.f32`` and ``x.to(tl.float32)`` on int32
one ``cvt.rn.f32.s32`` (examples/triton/convert_*.ptx); a reference names such a conversion as a
form (``--against cvt.rzi.s32.f32``) or inside an expression (``cvt.rn.f16.f32(cvt.rn.f32.s32(a))``).
Integer values are compared bit for bit (no NaN or zero classes) and given as decimal or hex.

The expected values here come from numpy's own conversions and Python integers (no model code):
int to float by numpy's cast (round to nearest even), float to int by truncation toward zero with
PTX's saturation and NaN to 0. The kernels' verdicts and their misrounded inputs are predicted
from those; the converse, a reference of another rounding, must find exactly the inputs where the
two roundings differ.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.errors import OperandError, UsageError
from tilecheck.formats import INTEGER_FORMATS
from tilecheck.inputs.generators import integer_edge_biased
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton"


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main(["verify", *map(str, argv), "--json", "-"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err and "internal error" not in cap.err
    return code, json.loads(cap.out)


def _truncated(x: np.ndarray, fmt, wide_source: bool = False) -> np.ndarray:
    """x (float64) toward zero, saturated to ``fmt``'s range: the bits (PTX cvt.rzi). A NaN gives 0,
    or 1 << (N-1) where the source is f64 (``wide_source``) or the result 64 bits wide
    (reference/ptx-surroundings.md)."""
    out = []
    for v in x.tolist():
        if v != v:
            out.append(1 << (fmt.width - 1) if wide_source or fmt.width == 64 else 0)
            continue
        t = max(fmt.low, min(fmt.high, int(v) if abs(v) != float("inf") else (fmt.high if v > 0 else fmt.low)))
        out.append(fmt.from_int(t))
    return np.array(out, dtype=fmt.uint)


def _int_values(bits: np.ndarray, fmt) -> np.ndarray:
    return bits.astype(fmt.uint).view({16: np.int16, 32: np.int32, 64: np.int64}[fmt.width]) if fmt.signed \
        else bits.astype(fmt.uint)


# ---------------------------------------------------------------------------------------------
# the references' values, independently


@pytest.mark.parametrize("name,src,dst", [("cvt.rn.f32.s32", "s32", np.float32), ("cvt.rn.f16.s16", "s16", np.float16),
                                          ("cvt.rn.f64.s64", "s64", np.float64), ("cvt.rn.f32.u32", "u32", np.float32),
                                          ("cvt.rn.f16.s32", "s32", np.float16)])
def test_integer_to_float_references_round_as_numpy_does(db, name, src, dst):
    fmt = INTEGER_FORMATS[src]
    bits = integer_edge_biased(fmt, 20000, np.random.default_rng(7))
    ref = compiled.parse_reference(name, db)
    assert [f.name for f in ref.operand_formats] == [src]
    got = ref.expected([bits])
    values = _int_values(bits, fmt)
    with np.errstate(over="ignore"):  # (past 65504 a half rounds to infinity, as cvt.rn does)
        if dst is np.float16 and fmt.width == 32:
            # through float64 (exact for 32 bits): one rounding
            want = values.astype(np.float64).astype(np.float16)
        else:
            want = values.astype(dst)
    assert np.array_equal(got, want.view({np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dst]))


@pytest.mark.parametrize("name,src,dst", [("cvt.rzi.s32.f32", np.float32, "s32"), ("cvt.rzi.s16.f16", np.float16, "s16"),
                                          ("cvt.rzi.s64.f64", np.float64, "s64"), ("cvt.rzi.u32.f32", np.float32, "u32")])
def test_float_to_integer_references_truncate_and_saturate(db, name, src, dst):
    fmt = INTEGER_FORMATS[dst]
    width = np.dtype(src).itemsize * 8
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 1 << min(width, 62), 20000, dtype=np.uint64)
    if width == 64:
        bits |= rng.integers(0, 4, 20000, dtype=np.uint64) << np.uint64(62)
    bits = bits.astype({16: np.uint16, 32: np.uint32, 64: np.uint64}[width])
    ref = compiled.parse_reference(name, db)
    assert ref.fmt.name == dst and ref.fmt.integer
    got = ref.expected([bits])
    with np.errstate(invalid="ignore"):  # (signalling NaNs widen quietly)
        x = bits.view(src).astype(np.float64)
    assert np.array_equal(got, _truncated(x, fmt, wide_source=width == 64))


def test_the_integer_mix_holds_the_extremes_and_the_ties_of_rounding_to_float(db):
    fmt = INTEGER_FORMATS["s32"]
    bits = integer_edge_biased(fmt, 40000, np.random.default_rng(11))
    values = _int_values(bits, fmt).astype(np.int64)
    assert {fmt.low, fmt.high, 0, -1, 1 << 24, (1 << 24) + 1}.issubset(set(values.tolist()))
    big = np.abs(values[np.abs(values) > (1 << 25)])
    # an f32 tie: the bits below the 24-bit significand are exactly one half of its last place
    drop = np.floor(np.log2(big)).astype(np.int64) - 23
    low = big & ((1 << drop) - 1)
    assert np.count_nonzero(low == (1 << (drop - 1))) > 100


# ---------------------------------------------------------------------------------------------
# Triton's conversion kernels


@pytest.mark.parametrize("stem,against", [("convert_f16_s16", "cvt.rzi.s16.f16"), ("convert_s16_f16", "cvt.rn.f16.s16"),
                                          ("convert_f16_s16_v", "cvt.rzi.s16.f16"),
                                          ("convert_bf16_s32", "cvt.rzi.s32.bf16")])
def test_sixteen_bit_conversion_kernels_verify_exhaustively(capsys, stem, against):
    code, out = _json(capsys, TRITON / f"{stem}.ptx", "--entry", "convert_kernel", "--against", against)
    assert code == 0 and out["verdict"] == "verified" and out["exhaustive"] and out["inputs_checked"] == 1 << 16


@pytest.mark.parametrize("stem,against", [("convert_s32_f32", "cvt.rn.f32.s32"), ("convert_s32_f32_v", "cvt.rn.f32.s32"),
                                          ("convert_f32_s32", "cvt.rzi.s32.f32"), ("convert_s32_f16", "cvt.rn.f16.s32"),
                                          ("convert_f64_s64", "cvt.rzi.s64.f64"), ("convert_s64_f64", "cvt.rn.f64.s64"),
                                          ("convert_u32_f32", "cvt.rn.f32.u32"), ("convert_f32_u32", "cvt.rzi.u32.f32"),
                                          ("convert_s32_bf16", "cvt.rn.bf16.s32")])
def test_wider_conversion_kernels_show_no_counterexample_in_their_sample(capsys, stem, against):
    code, out = _json(capsys, TRITON / f"{stem}.ptx", "--entry", "convert_kernel", "--against", against,
                      "--cases", "4000")
    assert code == 0 and out["verdict"] == "no-counterexample" and out["inputs_checked"] == 4000


def test_another_rounding_finds_exactly_the_integers_it_rounds_otherwise(capsys):
    """int16 to float16 toward zero instead of to nearest, every input: the misrounded ones are
    those numpy's nearest cast puts farther from zero than the integer (|float16| > |x|)."""
    code, out = _json(capsys, TRITON / "convert_s16_f16.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.rz.f16.s16")
    x = np.arange(-(1 << 15), 1 << 15, dtype=np.int64)
    nearest = x.astype(np.float16).astype(np.float64)
    predicted = {int(v) & 0xFFFF for v in x[np.abs(nearest) > np.abs(x)]}
    assert code == 1 and out["exhaustive"] and out["misrounded_count"] == len(predicted) > 0
    assert {int(s[0], 16) for s in out["misrounded_inputs"]} == predicted


def test_rounding_to_nearest_instead_of_truncating_is_found_on_every_fraction(capsys):
    code, out = _json(capsys, TRITON / "convert_f16_s16.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.rni.s16.f16")
    h = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        x = h.view(np.float16).astype(np.float64)
    fmt = INTEGER_FORMATS["s16"]
    rni = np.array([0 if v != v else fmt.from_int(max(fmt.low, min(fmt.high, round(v))))
                    if abs(v) != float("inf") else fmt.from_int(fmt.high if v > 0 else fmt.low) for v in x.tolist()])
    predicted = set(np.flatnonzero(rni != _truncated(x, fmt)).tolist())
    assert code == 1 and out["misrounded_count"] == len(predicted) > 0
    assert {int(s[0], 16) for s in out["misrounded_inputs"]} == predicted


def test_an_expression_may_convert_through_an_integer(db):
    """A round trip float -> int -> float (what x.to(tl.int32).to(tl.float32) computes) is typed
    and computed; its operand is the float."""
    ref = compiled.parse_reference("cvt.rn.f32.s32(cvt.rzi.s32.f32(a))", db)
    assert [f.name for f in ref.operand_formats] == ["f32"] and ref.fmt.name == "f32"
    x = np.array([2.5, -2.5, 3e9, float("nan"), -0.75], dtype=np.float32)
    got = ref.expected([x.view(np.uint32)]).view(np.float32)
    assert got.tolist() == [2.0, -2.0, 2147483648.0, 0.0, 0.0]


@pytest.mark.parametrize("expr,message", [
    ("cvt.rn.f32.s32(-a)", "unary minus negates a float"),
    ("cvt.rn.f32.s32(1.5)", "takes an integer here"),
    ("add.rn.f32(cvt.rn.f32.s16(a), cvt.rn.f32.s16(70000))", "outside s16"),
    ("cvt.rn.f32.s32(inf)", "inf is no s32 value"),
    ("add.s32(a, 1.5)", "s32 takes an integer here"),
    ("cvt.rn.f32.s32(setp.lt.s32(a, b))", "takes s32 as operand a; this operand is pred"),
    ("cvt.rn.f32.s32(cvt.rzi.s16.f32(a))", "takes s32 as operand a; this operand is s16"),
])
def test_bad_integer_references_are_located_usage_errors(db, expr, message):
    with pytest.raises(UsageError) as err:
        compiled.parse_reference(expr, db)
    assert message in err.value.message and "column" in err.value.message


def test_a_negative_integer_literal_is_its_twos_complement(db):
    ref = compiled.parse_reference("add.rn.f32(a, cvt.rn.f32.s16(-32768))", db)
    got = ref.expected([np.array([0x3F800000], dtype=np.uint32)]).view(np.float32)
    assert got.tolist() == [-32767.0]


def test_integer_inputs_are_given_in_decimal_or_hex(capsys):
    kernel = ["verify", str(TRITON / "convert_s32_f32.ptx"), "--entry", "convert_kernel", "--against",
              "cvt.rn.f32.s32"]
    assert main(kernel + ["--input", "-16777217"]) == 0
    assert main(kernel + ["--input", "0xfeffffff"]) == 0
    capsys.readouterr()
    assert main(kernel + ["--input", "1.5"]) == 2
    assert "is not an integer" in capsys.readouterr().err
    assert main(kernel + ["--input", "4294967296"]) == 2
    assert "outside s32" in capsys.readouterr().err


def test_integer_formats_parse_and_print_their_values():
    s8, u16 = INTEGER_FORMATS["s8"], INTEGER_FORMATS["u16"]
    assert s8.parse_operand("-128") == 0x80 and s8.describe(0x80) == ("-128", "integer") and s8.hex(5) == "0x05"
    assert u16.parse_operand("0xffff") == 0xFFFF and u16.to_int(0xFFFF) == 65535
    with pytest.raises(OperandError):
        u16.parse_operand("-1")
    with pytest.raises(OperandError):
        s8.parse_operand("0x100")


# ---------------------------------------------------------------------------------------------
# bytes: ld/st of .b8/.u8/.s8, and prmt (Triton's sign extension of packed int8)


@pytest.mark.parametrize("path,entry,against", [
    (TRITON / "convert_u8_f32.ptx", "convert_kernel", "cvt.rn.f32.u8"),
    (TRITON / "convert_s8_f16_v.ptx", "convert_kernel", "cvt.rn.f16.s8"),       # ld.v2.b32 of 8 bytes, prmt
    (TRITON / "convert_s8_bf16.ptx", "convert_kernel", "cvt.rn.bf16.s16(cvt.s16.s8(a))"),
    (ROOT / "examples" / "cuda" / "int8_quant.ptx", "k_s8_to_f32_x4", "cvt.rn.f32.s8"),  # ld.global.nc.v4.u8
])
def test_byte_kernels_verify_over_all_256_inputs(capsys, path, entry, against):
    code, out = _json(capsys, path, "--entry", entry, "--against", against)
    assert code == 0 and out["verdict"] == "verified" and out["exhaustive"] and out["inputs_checked"] == 256


def test_a_byte_read_from_the_wrong_element_is_found(tmp_path, capsys):
    """The char4 kernel with the first two converted bytes swapped: an elementwise check must refuse
    it (the class analysis reads bytes, not the 16-bit registers they are loaded into)."""
    text = (ROOT / "examples" / "cuda" / "int8_quant.ptx").read_text()
    swapped = text.replace("cvt.s16.s8 \t%rs6, %rs1;", "cvt.s16.s8 \t%rs6, %rs2;", 1)
    assert swapped != text
    path = tmp_path / "swapped.ptx"
    path.write_text(swapped)
    assert main(["verify", str(path), "--entry", "k_s8_to_f32_x4", "--against", "cvt.rn.f32.s8"]) == 2
    assert "not elementwise" in capsys.readouterr().err


def _wraps_through(x: np.ndarray, narrow, wide) -> np.ndarray:
    """Triton's float -> 8-bit integer: toward zero into the 16-bit ``wide`` type (saturated there),
    then the low byte: the bits, in Python integers."""
    low = _truncated(x, wide)
    return np.array([narrow.from_int(narrow.to_int(int(v) & 0xFF)) for v in low.tolist()], dtype=narrow.uint)


def test_triton_float_to_int8_wraps_where_cvt_saturates(capsys):
    """x.to(tl.int8) on float32: cvt.rzi.s16.f32, then st.global.b8 of the low byte. Against the
    saturating cvt.rzi.s8.f32 the misrounded inputs are exactly those whose bytes differ (the
    sample's), and against the lowering's own composition nothing is."""
    code, out = _json(capsys, TRITON / "convert_f32_s8.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.rzi.s8.f32", "--cases", "20000")
    assert code == 1 and not out["exhaustive"] and out["misrounded_count"] > 0
    bad = np.array([int(r[0], 16) for r in out["misrounded_inputs"]], dtype=np.uint32)
    with np.errstate(invalid="ignore"):
        x = bad.view(np.float32).astype(np.float64)
    s8, s16 = INTEGER_FORMATS["s8"], INTEGER_FORMATS["s16"]
    assert np.all(_wraps_through(x, s8, s16) != _truncated(x, s8))
    assert np.all(np.abs(np.trunc(x)) >= 128)
    code, out = _json(capsys, TRITON / "convert_f32_s8.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.s8.s16(cvt.rzi.s16.f32(a))", "--cases", "20000")
    assert code == 0 and out["verdict"] == "no-counterexample"


def test_triton_half_to_uint8_wraps_past_255_exhaustively(capsys):
    code, out = _json(capsys, TRITON / "convert_f16_u8.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.rzi.u8.f16")
    h = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        x = h.view(np.float16).astype(np.float64)
    u8, u16 = INTEGER_FORMATS["u8"], INTEGER_FORMATS["u16"]
    predicted = set(np.flatnonzero(_wraps_through(x, u8, u16) != _truncated(x, u8)).tolist())
    assert code == 1 and out["exhaustive"] and out["misrounded_count"] == len(predicted) > 0
    assert {int(r[0], 16) for r in out["misrounded_inputs"]} == predicted
    code, out = _json(capsys, TRITON / "convert_f16_u8.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.u8.u16(cvt.rzi.u16.f16(a))")
    assert code == 0 and out["verdict"] == "verified"


def test_the_saturating_quantizer_differs_from_cvt_on_nans_only(capsys):
    """fminf(fmaxf(rintf(x), -128), 127): fmaxf drops a NaN, so NaN quantizes to -128, where
    cvt.rni.s8.f32 gives 0; every other sampled input agrees."""
    code, out = _json(capsys, ROOT / "examples" / "cuda" / "int8_quant.ptx", "--entry", "k_f32_to_s8_sat",
                      "--against", "cvt.rni.s8.f32", "--cases", "20000")
    bad = {int(r[0], 16) for r in out["misrounded_inputs"]}
    assert code == 1 and bad and all((b & 0x7FFFFFFF) > 0x7F800000 for b in bad)
    assert all(c["got"]["hex"] == "0x80" and c["expected"]["hex"] == "0x00" for c in out["counterexamples"])


def test_prmt_selects_and_sign_extends_bytes(db):
    """prmt.b32's generic form against the ISA's example and Python bytes (no model code)."""
    from tilecheck.model import api
    form = db.resolve("prmt.b32")
    rng = np.random.default_rng(2)
    a, b = (rng.integers(0, 1 << 32, 3000, dtype=np.uint64) for _ in range(2))
    c = rng.integers(0, 1 << 16, 3000, dtype=np.uint64)
    got = api.evaluate(form, a.astype(np.uint32), b.astype(np.uint32), c.astype(np.uint32)).tolist()
    for x, y, s, r in zip(a.tolist(), b.tolist(), c.tolist(), got):
        source = (x | (y << 32)).to_bytes(8, "little")
        want = bytes((0xFF if source[n & 7] & 0x80 else 0) if n & 8 else source[n & 7]
                     for n in ((s >> (4 * i)) & 0xF for i in range(4)))
        assert int(r) == int.from_bytes(want, "little")
    assert int(api.evaluate(form, np.uint32(0x03020100), np.uint32(0x07060504), np.uint32(0x7531))) == 0x07050301
    assert db.resolve("prmt.b32.f4e") is None  # the modes are not specified (unknown, not illegal)


_BYTE_KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 o, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [o];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvt.s64.s32 %rd3, %r5;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.LOAD %rs1, [%rd4];
    cvt.rn.f32.CONVERT %f1, %rs1;
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd5, %rd2, %rd5;
    st.global.f32 [%rd5], %f1;
DONE:
    ret;
}
"""


@pytest.mark.parametrize("load,convert,against,code", [
    ("s8", "s16", "cvt.rn.f32.s8", 0),   # the load sign-extends into the 16-bit register
    ("u8", "u16", "cvt.rn.f32.u8", 0),   # zero-extends
    ("b8", "u16", "cvt.rn.f32.u8", 0),   # .b8 zero-extends too
    ("u8", "s16", "cvt.rn.f32.s8", 1),   # zero-extended bytes read as signed 16-bit: 128..255 stay positive
    ("s8", "u16", "cvt.rn.f32.u8", 1),   # sign-extended bytes read as unsigned 16-bit: 128..255 become huge
])
def test_byte_loads_extend_by_their_type(tmp_path, capsys, load, convert, against, code):
    path = tmp_path / "byte.ptx"
    path.write_text(_BYTE_KERNEL.replace("LOAD", load).replace("CONVERT", convert))
    got, out = _json(capsys, path, "--entry", "k", "--against", against)
    assert got == code and out["exhaustive"] and out["inputs_checked"] == 256
    if code:  # exactly the 128 bytes with the top bit set
        assert sorted(int(r[0], 16) for r in out["misrounded_inputs"]) == list(range(128, 256))


def test_two_int8_per_thread_packed_after_a_mask_verify(capsys):
    """x.to(tl.int8) at BLOCK 256: each thread converts two floats to int16 and stores both low bytes
    in one st.global.b16, element 0's masked by ``and.b16 255`` before element 1's is or-ed in
    above it. The mask is what makes the stored bytes elementwise; the verdicts are those of the
    one-element kernel."""
    code, out = _json(capsys, TRITON / "convert_f32_s8_v_b256.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.s8.s16(cvt.rzi.s16.f32(a))", "--cases", "4000")
    assert code == 0 and out["verdict"] == "no-counterexample"
    code, out = _json(capsys, TRITON / "convert_f32_s8_v_b256.ptx", "--entry", "convert_kernel", "--against",
                      "cvt.rzi.s8.f32", "--cases", "4000")
    assert code == 1 and out["misrounded_count"] > 0
    bad = np.array([int(r[0], 16) for r in out["misrounded_inputs"]], dtype=np.uint32)
    with np.errstate(invalid="ignore"):
        x = bad.view(np.float32).astype(np.float64)
    s8, s16 = INTEGER_FORMATS["s8"], INTEGER_FORMATS["s16"]
    assert np.all(_wraps_through(x, s8, s16) != _truncated(x, s8))


def test_a_mask_that_keeps_a_neighbours_bit_is_not_elementwise(tmp_path, capsys):
    """The same kernel with the mask widened to 511: bit 8 of element 0's int16 now reaches element
    1's byte, so the slice must not read the mask as cutting element 0 off."""
    text = (TRITON / "convert_f32_s8_v_b256.ptx").read_text()
    widened = text.replace("and.b16 \t%rs7, %rs4, 255;", "and.b16 \t%rs7, %rs4, 511;", 1)
    assert widened != text
    path = tmp_path / "widened.ptx"
    path.write_text(widened)
    assert main(["verify", str(path), "--entry", "convert_kernel", "--against", "cvt.s8.s16(cvt.rzi.s16.f32(a))"]) == 2
    err = capsys.readouterr().err
    assert "not elementwise" in err and "element 1 of convert_kernel_param_1" in err and "Traceback" not in err


_WITNESS = re.compile(r"with element 1 of that buffer at (0x[0-9a-f]+), changing only element 0 from (0x[0-9a-f]+) "
                      r"to (0x[0-9a-f]+) changes the element stored from (0x[0-9a-f]+) to (0x[0-9a-f]+)")


@pytest.mark.parametrize("stem,source,against", [
    ("convert_f32_u8_v_b256", np.float32, "cvt.u8.u16(cvt.rzi.u16.f32(a))"),
    ("convert_f32_u8_v_b256", np.float32, "cvt.rzi.u8.f32"),
    ("convert_f16_u8_v_b256", np.float16, "cvt.u8.u16(cvt.rzi.u16.f16(a))"),
])
def test_unmasked_uint8_packing_is_refused_with_a_run_that_shows_it(capsys, stem, source, against):
    """x.to(tl.uint8) at BLOCK 256 or-s element 1's uint16 (shifted left 8) into element 0's
    without masking it: element 0's high byte lands on element 1's. The refusal names a run: the
    element-1 byte it reports before and after changing only element 0 is recomputed here from the
    lowering as Python integers (cvt.rzi.u16: toward zero, saturated, NaN to 0), no model code."""
    assert main(["verify", str(TRITON / f"{stem}.ptx"), "--entry", "convert_kernel", "--against", against]) == 2
    err = capsys.readouterr().err
    assert "not elementwise" in err and "Traceback" not in err
    found = _WITNESS.search(err)
    assert found, err
    own, was, now, before, after = (int(g, 16) for g in found.groups())
    uint = np.uint32 if source is np.float32 else np.uint16
    u16 = INTEGER_FORMATS["u16"]

    def to_u16(bits: int) -> int:
        return int(_truncated(np.array([bits], dtype=uint).view(source).astype(np.float64), u16)[0])

    def byte_1(element_0: int) -> int:  # (u16(e0) | u16(e1) << 8) >> 8, as st.global.b16 writes its second byte
        return ((to_u16(element_0) | (to_u16(own) << 8)) >> 8) & 0xFF

    assert (before, after) == (byte_1(was), byte_1(now)) and before != after
    assert to_u16(now) > 0xFF or to_u16(was) > 0xFF  # only an out-of-range element 0 leaks


@pytest.mark.parametrize("stem,right,wrong,src", [
    ("convert_s8_f32_v_b2048", "cvt.rn.f32.s8", "cvt.rn.f32.u8", None),       # converted, then through ldmatrix
    ("convert_f16_s64_v_b2048", "cvt.rzi.s64.f16", "cvt.rzi.u64.f16", "f16"),  # through ldmatrix, then converted
])
def test_kernels_that_pass_elements_by_ldmatrix_verify_exhaustively(capsys, stem, right, wrong, src):
    """BLOCK 2048 with aligned pointers: Triton's layout conversion between an 8- or 16-bit and a
    32- or 64-bit type stages each thread's elements in shared memory and reads them back with
    ldmatrix (each thread another's words). The kernels verify over every input; against the other
    signedness exactly the inputs the two conversions treat differently are found, predicted
    here from Python integers."""
    path = TRITON / f"{stem}.ptx"
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in path.read_text()
    code, out = _json(capsys, path, "--entry", "convert_kernel", "--against", right)
    assert code == 0 and out["verdict"] == "verified" and out["exhaustive"]
    code, out = _json(capsys, path, "--entry", "convert_kernel", "--against", wrong)
    bad = {int(r[0], 16) for r in out["misrounded_inputs"]}
    if src is None:  # a byte read as unsigned: exactly those with the top bit set convert otherwise
        predicted = set(range(128, 256))
    else:
        h = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
        with np.errstate(invalid="ignore"):
            x = h.view(np.float16).astype(np.float64)
        s64, u64 = INTEGER_FORMATS["s64"], INTEGER_FORMATS["u64"]
        predicted = set(np.flatnonzero(_truncated(x, s64) != _truncated(x, u64)).tolist())
    assert code == 1 and out["exhaustive"] and out["misrounded_count"] == len(predicted) > 0 and bad == predicted
