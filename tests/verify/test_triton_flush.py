"""Triton's ``.ftz`` lowerings on values a user does not expect flushed.

Triton 3.9 emits ``cvt.rmi.ftz.f32.f32`` for float32 ``tl.floor`` and ``cvt.rpi.ftz.f32.f32`` for
``tl.ceil``: a subnormal input is read as a zero of its sign, so ``floor`` of a negative subnormal
is -0.0 where the floor is -1.0, and ``ceil`` of a positive subnormal +0.0 where it is +1.0. On
bfloat16, ``tl.sqrt`` and ``tl.math.rsqrt`` (refused on 16-bit types, so written on the widened
value) are ``sqrt.approx.ftz.f32``/``rsqrt.approx.ftz.f32``: a bfloat16 subnormal stays subnormal in
float32 (the formats share their exponent range) and is flushed, so its root is a zero (or an
infinity) of its sign where the correctly rounded result is a normal number (or a NaN for a negative
input). On float16 the same kernels are unaffected: every half is normal in float32. libdevice's
``rcp_rn`` on float32 is ``rcp.rn.ftz.f32`` (Triton links libdevice for flush-to-zero).

The misrounded sets are predicted here from the bit patterns alone (the subnormals of a sign),
without the model; the float64 floor and ceil (no ``.ftz``), and ``tl.sqrt_rn`` on bfloat16
(``sqrt.rn.f32``, no flush) verify.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.verify import compiled

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"


def _bf16_subnormals() -> set[int]:
    """Every bfloat16 subnormal, both signs: exponent field zero, fraction non-zero."""
    return {sign | f for sign in (0, 0x8000) for f in range(1, 1 << 7)}


@pytest.mark.parametrize("stem,entry,ref", [("sqrt_bf16_up", "sqrt_up_kernel", "sqrt.rn.bf16"),
                                            ("rsqrt_bf16_up", "rsqrt_up_kernel", "rsqrt.rn.bf16")])
def test_bfloat16_roots_misround_exactly_the_subnormals(db, stem, entry, ref):
    o = compiled.verify_ptx(str(TRITON / f"{stem}.ptx"), entry, ref, db=db, exhaustive=True)
    assert o.exhaustive and o.inputs_checked == 1 << 16
    got = {int(x[0]) for x in o.misrounded}
    assert o.misrounded_count == len(got) == 254
    assert got == _bf16_subnormals()


def test_bfloat16_sqrt_rn_keeps_the_subnormals(db):
    o = compiled.verify_ptx(str(TRITON / "sqrt_rn_bf16_up.ptx"), "sqrt_rn_up_kernel", "sqrt.rn.bf16", db=db,
                            exhaustive=True)
    assert o.verdict_word == "verified" and o.exhaustive


@pytest.mark.parametrize("op,mode,flushed_sign,expected", [("floor", "rmi", 1, "0xbf800000"),
                                                          ("ceil", "rpi", 0, "0x3f800000")])
def test_float_floor_and_ceil_flush_the_subnormals_of_one_sign(db, capsys, op, mode, flushed_sign, expected):
    ptx, entry, ref = str(TRITON / f"{op}_f32.ptx"), f"{op}_kernel", f"cvt.{mode}.f32.f32"
    # the sign whose subnormals round away from zero misrounds: -0.0 or +0.0 instead of -1.0 or +1.0
    for frac in (0x000001, 0x400000, 0x7FFFFF):
        bits = (flushed_sign << 31) | frac
        code = main(["verify", ptx, "--entry", entry, "--against", ref, "--input", hex(bits), "--json", "-"])
        out = json.loads(capsys.readouterr().out)
        assert code == 1 and out["verdict"] == "counterexample"
        case = out["counterexamples"][0]
        assert case["expected"]["hex"] == expected
        assert case["got"]["hex"] == f"{flushed_sign << 31:#010x}"
        # the other sign's subnormals floor (ceil) to a zero anyway: flushing changes nothing there
        other = ((1 - flushed_sign) << 31) | frac
        code = main(["verify", ptx, "--entry", entry, "--against", ref, "--input", hex(other), "--json", "-"])
        assert code == 0, capsys.readouterr().out
        capsys.readouterr()
    o = compiled.verify_ptx(ptx, entry, ref, db=db, cases=4096)
    bits = np.array([int(x[0]) for x in o.misrounded], dtype=np.uint64)
    assert bits.size and o.misrounded_count == bits.size
    # every misrounded sampled input is a subnormal of that sign
    assert np.all((bits & 0x7F800000) == 0) and np.all(bits & 0x007FFFFF) and np.all((bits >> 31) == flushed_sign)


@pytest.mark.parametrize("op,mode", [("floor", "rmi"), ("ceil", "rpi")])
def test_double_floor_and_ceil_do_not_flush(db, op, mode):
    o = compiled.verify_ptx(str(TRITON / f"{op}_f64.ptx"), f"{op}_kernel", f"cvt.{mode}.f64.f64", db=db, cases=4096)
    assert o.verdict_word == "no-counterexample"


def _verdict(capsys, ref: str, bits: int) -> tuple[int, dict]:
    code = main(["verify", str(TRITON / "fast_log2_f32.ptx"), "--entry", "fast_log2_kernel", "--against", ref,
                 "--input", hex(bits), "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


def test_fast_log2f_flushes_subnormals_and_is_unknown_only_near_one(db, capsys):
    """libdevice.fast_log2f is one lg2.approx.ftz.f32. Classes from the bit patterns alone: a
    subnormal input (either sign) is flushed, -Inf, where lg2.approx.f32 wants log2 (about -130) or
    a NaN; near 1 the absolute bound 2^-22 allows more results than are enumerated, judged all the
    same (against its own form the kernel's set is the reference's; against lg2.approx.f32 every
    one of them is allowed there too), and at 1 itself, under .ftz, values of both signs without
    the subnormals between them (unknown, exit 4); elsewhere the kernel is its contract."""
    for bits in (0x00000001, 0x007FFFFF, 0x80000001):
        code, out = _verdict(capsys, "lg2.approx.f32", bits)
        assert code == 1 and out["counterexamples"][0]["got"]["hex"] == "0xff800000"
        code, out = _verdict(capsys, "lg2.approx.ftz.f32", bits)
        assert code == 0, out["verdict"]
    for bits in (0x41000000, 0x3F000000, 0x40000000, 0x7F7FFFFF, 0x00800000, 0x3E000001):
        for ref in ("lg2.approx.ftz.f32", "lg2.approx.f32"):
            code, out = _verdict(capsys, ref, bits)
            assert code == 0, (ref, hex(bits), out["verdict"])
    code, out = _verdict(capsys, "lg2.approx.ftz.f32", 0x3F800000)
    assert code == 4 and "reaches zero" in json.dumps(out["unknown_inputs"])
    # 0.944: a few dozen values within 2^-22, more than are enumerated: against another form the
    # kernel's set lies within that form's; against lg2.approx.ftz.f32 itself it is the reference's
    # (identity.py)
    code, out = _verdict(capsys, "lg2.approx.f32", 0x3F71C19F)
    assert code == 0, out["verdict"]
    code, out = _verdict(capsys, "lg2.approx.f32", 0x3F800000)
    assert code == 4 and "reaches zero" in json.dumps(out["unknown_inputs"])
    code, out = _verdict(capsys, "lg2.approx.ftz.f32", 0x3F71C19F)
    assert code == 0, out["verdict"]
    # sampled: every misrounded input against the unflushed form is a subnormal
    o = compiled.verify_ptx(str(TRITON / "fast_log2_f32.ptx"), "fast_log2_kernel", "lg2.approx.f32", db=db, cases=4096)
    bits = np.array([int(x[0]) for x in o.misrounded], dtype=np.uint64)
    assert bits.size and o.misrounded_count == bits.size
    assert np.all((bits & 0x7F800000) == 0) and np.all(bits & 0x007FFFFF)


def _rcp_flushed(bits: np.ndarray) -> np.ndarray:
    """Where ``rcp.rn.ftz.f32`` differs from ``rcp.rn.f32``, read off the bit patterns: a subnormal
    k x 2^-149 with k > 2^21 (its reciprocal is finite, the flushed operand's an infinity), or a
    finite normal above 2^126 (its reciprocal is subnormal, and flushed)."""
    magnitude = bits & 0x7FFFFFFF
    return ((magnitude > (1 << 21)) & (magnitude < (1 << 23))) | ((magnitude > 0x7E800000) & (magnitude < 0x7F800000))


def test_libdevice_rcp_rn_misrounds_exactly_the_flushed_inputs(db):
    """libdevice.rcp_rn on float32 is rcp.rn.ftz.f32: against rcp.rn.f32 it misrounds exactly the
    predicted inputs (the subnormals around both ends of the flushed range and either side of
    2^21 x 2^-149, a sample of the others, both signs), and nothing against rcp.rn.ftz.f32."""
    rng = np.random.default_rng(7)
    positive = np.concatenate([np.arange(0, 4096), np.arange((1 << 21) - 4096, (1 << 21) + 4096),
                               rng.integers(0, 1 << 23, 60_000), rng.integers(1 << 23, 0x7F800000, 60_000),
                               np.arange(0x7E7FFFF0, 0x7E800010), 0x7F7FFFF0 + np.arange(32)]).astype(np.uint32)
    bits = np.concatenate([positive, positive | np.uint32(0x80000000)])
    for ref, expect in (("rcp.rn.f32", _rcp_flushed(bits)), ("rcp.rn.ftz.f32", np.zeros(bits.size, dtype=bool))):
        p = compiled.prepare(str(TRITON / "rcp_rn_f32.ptx"), "rcp_rn_kernel", ref, db=db)
        res = compiled.run_inputs(p, [bits])
        assert (np.asarray(res.bad) == expect).all(), ref
        assert (np.asarray(res.by_value) == expect).all(), ref
