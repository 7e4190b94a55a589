"""Every floating-point arithmetic and conversion instruction Triton 3.9 emits for float16, bfloat16,
float32 and float64 elementwise kernels (a / b, 1 / x, div_rn, sqrt, sqrt_rn, rsqrt, fma, a * b + c,
+, -, *, abs, minimum, maximum, -x, tl.exp, tl.exp2 and .to() between the four types, scalar and
vectorised; the list is
OPCODES below, collected from ``triton.compile`` output for sm_90), run by the simulator's plan on edge
and random bit patterns and compared with an independent computation: MPFR (gmpy2) at the
destination format's precision and exponent range for every correctly rounded result, numpy for the
bit operations. Nothing here evaluates the spec model.

NaN results are compared by class (NaN or not): the ISA leaves most NaN encodings unspecified. The
approximate instructions (div.full.f32, sqrt.approx.ftz.f32, rsqrt.approx.*, ex2.approx.*) are run under
``approx="reference"``, where the plan returns the correctly rounded value under the form's
flush-to-zero setting; that reference is compared with MPFR here, on inputs inside each form's
ordinary range.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import RunContext, compile_function

pytest.importorskip("gmpy2", reason="gmpy2 (the MPFR oracle, in the [test] extra) is not installed")
from support.mpfr_oracle import (FORMATS, WIDTH, check, decode, edge_bits, encode,  # noqa: E402
                                 oracle_scalar, rounded)

# every FP opcode in Triton 3.9's sm_90 PTX of the kernels above (integer address arithmetic, loads,
# stores, setp and bar.sync omitted: the kernel tests run them)
OPCODES = """add.bf16 add.bf16x2 add.f16 add.f16x2 add.f32 add.f64 sub.bf16 sub.bf16x2 sub.f16 sub.f16x2 sub.f32
sub.f64 mul.bf16 mul.bf16x2 mul.f16 mul.f16x2 mul.f32 mul.f64 fma.rn.bf16 fma.rn.bf16x2 fma.rn.f16 fma.rn.f16x2
fma.rn.f32 fma.rn.f64 min.bf16 min.bf16x2 min.f16 min.f16x2 min.f32 min.f64 max.bf16 max.bf16x2 max.f16
max.f16x2 max.f32 max.f64 cvt.f32.bf16 cvt.f32.f16 cvt.f64.bf16 cvt.f64.f16 cvt.f64.f32 cvt.rn.bf16.f16
cvt.rn.bf16.f32 cvt.rn.bf16.f64 cvt.rn.f16.bf16 cvt.rn.f16.f32 cvt.rn.f16.f64 cvt.rn.f32.f64
cvt.rn.bf16x2.f32 cvt.rn.f16x2.f32 div.full.f32 div.rn.f32 div.rn.f64 sqrt.approx.ftz.f32 sqrt.rn.f32
sqrt.rn.f64 rsqrt.approx.ftz.f32 rsqrt.approx.f64 and.b16 and.b32 and.b64 xor.b16 xor.b32 xor.b64
ex2.approx.f32 ex2.approx.ftz.f32""".split()
# not emitted by Triton for these kernels but their neighbours (the ISA's spellings of -x, |x| and
# NaN-propagating min/max)
NEIGHBOURS = ["neg.f16", "neg.bf16", "abs.f16", "abs.bf16", "neg.f16x2", "abs.bf16x2", "neg.f32", "neg.f64",
              "min.NaN.f32", "max.NaN.f16", "min.NaN.bf16x2", "max.NaN.f16x2"]

N = 6000


def run(db, opcode: str, dst_w: int, srcs: list[np.ndarray], src_w: list[int]) -> np.ndarray:
    """The plan's results of ``opcode %d, %a0, ...`` on lanes of operand bits (approx="reference")."""
    params = ", ".join(f".param .b{w} p{k}" for k, w in enumerate(src_w))
    regs = "".join(f" .reg .b{w} %a{k};\n ld.param.b{w} %a{k}, [p{k}];\n" for k, w in enumerate(src_w))
    text = (f".version 9.0\n.target sm_90\n.address_size 64\n"
            f".visible .func (.param .b{dst_w} r) f({params})\n{{\n .reg .b{dst_w} %d;\n{regs}"
            f" {opcode} %d, {', '.join(f'%a{k}' for k in range(len(src_w)))};\n"
            f" st.param.b{dst_w} [r], %d;\n ret;\n}}\n")
    plan = compile_function(parse_module(text, "op.ptx").function("f"), db, "op.ptx")
    lanes = plan.new_lanes(len(srcs[0]))
    for k, v in enumerate(srcs):
        lanes.params[f"p{k}"] = v.astype(np.uint64)
    plan.run(lanes, RunContext(approx="reference"))
    assert lanes.size == len(srcs[0])  # reference: one result per input, no forks
    return lanes.params["r"] & np.uint64((1 << dst_w) - 1)


def _arity(base: str) -> int:
    return {"fma": 3, "add": 2, "sub": 2, "mul": 2, "div": 2, "min": 2, "max": 2, "and": 2, "xor": 2}.get(base, 1)


def _in_range(opcode: str, fmt: str, xs: list[float]) -> bool:
    """Inputs inside the ordinary range of the approximate forms (where their reference is the
    correctly rounded result): div.full.f32 is documented for divisors up to 2^126 in magnitude."""
    if opcode == "div.full.f32":
        return abs(xs[1]) <= 2.0 ** 126 or xs[1] != xs[1]
    return True


SCALAR = [o for o in OPCODES + NEIGHBOURS if o.split(".")[-1] in FORMATS and not o.startswith("cvt")]


@pytest.mark.parametrize("opcode", SCALAR)
def test_scalar_fp_instruction_matches_mpfr(db, opcode):
    fmt = opcode.split(".")[-1]
    base = opcode.split(".")[0]
    rng = np.random.default_rng(zlib.crc32(opcode.encode()))
    k = _arity(base)
    srcs = [edge_bits(fmt, rng, N) for _ in range(k)]
    for j in range(1, k):  # every edge against every edge in the first rows
        e = 17
        srcs[j][: e * e] = np.tile(srcs[j][:e], e)
        srcs[0][: e * e] = np.repeat(srcs[0][:e].copy(), e)
    got = [int(g) for g in run(db, opcode, WIDTH[fmt], srcs, [WIDTH[fmt]] * k)]
    keep = [i for i in range(N) if _in_range(opcode, fmt, [decode(int(s[i]), fmt) for s in srcs])]
    want = [oracle_scalar(opcode, fmt, [int(s[i]) for s in srcs]) for i in keep]
    check([got[i] for i in keep], want, fmt, opcode, [s[keep] for s in srcs])


PACKED = [o for o in OPCODES + NEIGHBOURS if o.split(".")[-1] in ("f16x2", "bf16x2") and not o.startswith("cvt")]


@pytest.mark.parametrize("opcode", PACKED)
def test_packed_fp_instruction_is_elementwise_mpfr(db, opcode):
    fmt = opcode.split(".")[-1][:-2]
    base = opcode.split(".")[0]
    rng = np.random.default_rng(zlib.crc32(opcode.encode()))
    k = _arity(base)
    lo = [edge_bits(fmt, rng, N) for _ in range(k)]
    hi = [rng.permutation(x) for x in lo]
    srcs = [(h.astype(np.uint32) << np.uint32(16)) | lo_.astype(np.uint32) for h, lo_ in zip(hi, lo)]
    got = run(db, opcode, 32, srcs, [32] * k)
    scalar = opcode[: -len("x2")]
    for half, parts in ((0, lo), (16, hi)):
        g = [int(x) >> half & 0xFFFF for x in got]
        want = [oracle_scalar(scalar, fmt, [int(p[i]) for p in parts]) for i in range(N)]
        check(g, want, fmt, f"{opcode} ({'upper' if half else 'lower'} half)", parts)


CVT = [o for o in OPCODES if o.startswith("cvt") and "x2" not in o]


@pytest.mark.parametrize("opcode", CVT)
def test_conversion_matches_mpfr(db, opcode):
    dst, src = opcode.split(".")[-2:]
    rng = np.random.default_rng(zlib.crc32(opcode.encode()))
    a = edge_bits(src, rng, N)
    if WIDTH[src] > WIDTH[dst]:  # values around the destination's range too (overflow, subnormals)
        lim = {"f16": 2.0 ** 17, "bf16": 2.0 ** 129, "f32": 2.0 ** 129}[dst]
        lim = min(lim, 2.0 ** 127) if src == "f32" else lim  # within the source's own range
        vals = rng.uniform(-1, 1, N // 3) * (lim ** rng.uniform(-1.2, 1, N // 3))
        a[N // 3: 2 * N // 3] = [encode(float(np.float32(v)) if src == "f32" else float(v), src) for v in vals]
    got = [int(g) for g in run(db, opcode, WIDTH[dst], [a], [WIDTH[src]])]
    want = []
    for x in a:
        v = decode(int(x), src)
        want.append(None if v != v else encode(rounded(dst, "cvt", v), dst))
    check(got, want, dst, opcode, [a])


@pytest.mark.parametrize("opcode", ["cvt.rn.f16x2.f32", "cvt.rn.bf16x2.f32"])
def test_packing_conversion_puts_the_first_source_in_the_upper_half(db, opcode):
    fmt = opcode.split(".")[2][:-2]
    rng = np.random.default_rng(5)
    a, b = edge_bits("f32", rng, N), rng.permutation(edge_bits("f32", rng, N))
    got = run(db, opcode, 32, [a, b], [32, 32])
    for half, src in ((16, a), (0, b)):
        g = [int(x) >> half & 0xFFFF for x in got]
        want = [None if decode(int(x), "f32") != decode(int(x), "f32") else
                encode(rounded(fmt, "cvt", decode(int(x), "f32")), fmt) for x in src]
        check(g, want, fmt, f"{opcode} ({'upper' if half else 'lower'} half)", [src])


@pytest.mark.parametrize("opcode", [o for o in OPCODES if o.startswith(("and.", "xor."))])
def test_the_bit_operations_of_abs_and_neg(db, opcode):
    """Triton writes |x| as ``and`` with the magnitude mask and -x as ``xor`` with the sign bit."""
    w = int(opcode.split(".")[1][1:])
    rng = np.random.default_rng(w)
    dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[w]
    a = rng.integers(0, np.iinfo(dt).max, N, dtype=np.uint64, endpoint=True).astype(dt)
    m = np.array([(1 << (w - 1)) - 1, 1 << (w - 1)] * (N // 2), dtype=dt)
    got = run(db, opcode, w, [a, m], [w, w]).astype(dt)
    want = (a & m) if opcode.startswith("and") else (a ^ m)
    assert np.array_equal(got, want)


def test_the_opcode_list_is_covered():
    covered = set(SCALAR) | set(PACKED) | set(CVT) | {"cvt.rn.f16x2.f32", "cvt.rn.bf16x2.f32"} | {
        o for o in OPCODES if o.startswith(("and.", "xor."))}
    assert set(OPCODES) <= covered
