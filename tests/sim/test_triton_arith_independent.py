"""Every floating-point arithmetic and conversion instruction Triton 3.9 emits for float16, bfloat16,
float32 and float64 elementwise kernels (a / b, 1 / x, div_rn, sqrt, sqrt_rn, rsqrt, fma, a * b + c,
+, -, *, abs, minimum, maximum, -x and .to() between the four types, scalar and vectorised; the list is
OPCODES below, collected from ``triton.compile`` output for sm_90), run by the simulator's plan on edge
and random bit patterns and compared with an independent computation: MPFR (gmpy2) at the
destination format's precision and exponent range for every correctly rounded result, numpy for the
bit operations. Nothing here evaluates the spec model.

NaN results are compared by class (NaN or not): the ISA leaves most NaN encodings unspecified. The
approximate instructions (div.full.f32, sqrt.approx.ftz.f32, rsqrt.approx.*) are run under
``approx="reference"``, where the plan returns the correctly rounded value under the form's
flush-to-zero setting; that reference is compared with MPFR here, on inputs inside each form's
ordinary range.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import RunContext, compile_function
from tilecheck.spec.database import load_database

gmpy2 = pytest.importorskip("gmpy2", reason="gmpy2 (the MPFR oracle, in the [test] extra) is not installed")

# every FP opcode in Triton 3.9's sm_90 PTX of the kernels above (integer address arithmetic, loads,
# stores, setp and bar.sync omitted: the kernel tests run them)
OPCODES = """add.bf16 add.bf16x2 add.f16 add.f16x2 add.f32 add.f64 sub.bf16 sub.bf16x2 sub.f16 sub.f16x2 sub.f32
sub.f64 mul.bf16 mul.bf16x2 mul.f16 mul.f16x2 mul.f32 mul.f64 fma.rn.bf16 fma.rn.bf16x2 fma.rn.f16 fma.rn.f16x2
fma.rn.f32 fma.rn.f64 min.bf16 min.bf16x2 min.f16 min.f16x2 min.f32 min.f64 max.bf16 max.bf16x2 max.f16
max.f16x2 max.f32 max.f64 cvt.f32.bf16 cvt.f32.f16 cvt.f64.bf16 cvt.f64.f16 cvt.f64.f32 cvt.rn.bf16.f16
cvt.rn.bf16.f32 cvt.rn.bf16.f64 cvt.rn.f16.bf16 cvt.rn.f16.f32 cvt.rn.f16.f64 cvt.rn.f32.f64
cvt.rn.bf16x2.f32 cvt.rn.f16x2.f32 div.full.f32 div.rn.f32 div.rn.f64 sqrt.approx.ftz.f32 sqrt.rn.f32
sqrt.rn.f64 rsqrt.approx.ftz.f32 rsqrt.approx.f64 and.b16 and.b32 and.b64 xor.b16 xor.b32 xor.b64""".split()
# not emitted by Triton for these kernels but their neighbours (the ISA's spellings of -x, |x| and
# NaN-propagating min/max)
NEIGHBOURS = ["neg.f16", "neg.bf16", "abs.f16", "abs.bf16", "neg.f16x2", "abs.bf16x2", "neg.f32", "neg.f64",
              "min.NaN.f32", "max.NaN.f16", "min.NaN.bf16x2", "max.NaN.f16x2"]

# (precision, emin, emax) in MPFR's convention (x = m 2^e, 1/2 <= m < 1), subnormals included
FORMATS = {"f16": (11, -23, 16), "bf16": (8, -132, 128), "f32": (24, -148, 128), "f64": (53, -1073, 1024)}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
N = 6000


@pytest.fixture(scope="module")
def db():
    return load_database()


def decode(bits: int, fmt: str) -> float:
    """The value of ``bits`` in ``fmt`` as a Python float (exact: every value fits binary64)."""
    if fmt == "f16":
        return float(np.uint16(bits).view(np.float16))
    if fmt == "bf16":
        return float(np.uint32(bits << 16).view(np.float32))
    if fmt == "f32":
        return float(np.uint32(bits).view(np.float32))
    return float(np.uint64(bits).view(np.float64))


def encode(x: float, fmt: str) -> int:
    """The bits of ``x`` (already representable in ``fmt``)."""
    if fmt == "f16":
        return int(np.float16(x).view(np.uint16))
    if fmt == "bf16":
        v = int(np.float32(x).view(np.uint32))
        assert v & 0xFFFF == 0 or x != x
        return v >> 16
    if fmt == "f32":
        return int(np.float32(x).view(np.uint32))
    return int(np.float64(x).view(np.uint64))


def ctx(fmt: str):
    """An MPFR context for ``fmt``: its precision and exponent range, subnormals, round to nearest."""
    p, emin, emax = FORMATS[fmt]
    return gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=gmpy2.RoundToNearest)


def rounded(fmt: str, op: str, *xs: float) -> float:
    """``op`` on exact operands, rounded once to ``fmt`` (MPFR)."""
    exact = [gmpy2.mpfr(x, 53) for x in xs]
    with ctx(fmt):
        if op == "add":
            r = exact[0] + exact[1]
        elif op == "sub":
            r = exact[0] - exact[1]
        elif op == "mul":
            r = exact[0] * exact[1]
        elif op == "fma":
            r = gmpy2.fma(*exact)
        elif op == "div":
            r = exact[0] / exact[1]
        elif op == "sqrt":
            r = gmpy2.sqrt(exact[0])
        elif op == "rsqrt":
            # the ISA's table: rsqrt(-0) = -Inf (MPFR's rec_sqrt gives +Inf for both zeros)
            r = gmpy2.rec_sqrt(exact[0]) if xs[0] != 0 else gmpy2.mpfr(np.copysign(np.inf, xs[0]))
        else:  # cvt: round the one operand
            r = +exact[0]
        return float(r)


def is_nan(bits: int, fmt: str) -> bool:
    """True when ``bits`` encode a NaN in ``fmt``."""
    return decode(bits, fmt) != decode(bits, fmt)


def minmax(op: str, a: float, b: float, nan_propagates: bool) -> float:
    """PTX min/max: -0 < +0; a NaN operand gives the other operand (both NaN: NaN), or NaN with .NaN."""
    if a != a or b != b:
        if nan_propagates or (a != a and b != b):
            return float("nan")
        return b if a != a else a
    # order by value, then -0 before +0
    if op == "min":
        return a if (a, -int(np.signbit(a))) <= (b, -int(np.signbit(b))) else b
    return a if (a, -int(np.signbit(a))) >= (b, -int(np.signbit(b))) else b


def flush(x: float, fmt: str) -> float:
    """``.ftz``: a subnormal becomes a zero of its sign."""
    tiny = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022}[fmt]
    return np.copysign(0.0, x) if x == x and 0 < abs(x) < tiny else x


def oracle_scalar(opcode: str, fmt: str, ops: list[int]) -> int | None:
    """The independent result bits of a scalar FP opcode on element bits ``ops``; None: a NaN."""
    parts = opcode.split(".")
    base = parts[0]
    xs = [decode(o, fmt) for o in ops]
    if base in ("min", "max"):
        r = minmax(base, xs[0], xs[1], "NaN" in parts)
    elif base == "neg":
        return None if xs[0] != xs[0] else ops[0] ^ (1 << (WIDTH[fmt] - 1))
    elif base == "abs":
        return None if xs[0] != xs[0] else ops[0] & ((1 << (WIDTH[fmt] - 1)) - 1)
    elif "ftz" in parts:  # the approximate .ftz forms' reference: flushed operands, flushed result
        r = flush(rounded(fmt, base, *[flush(x, fmt) for x in xs]), fmt)
    else:
        r = rounded(fmt, base, *xs)
    return None if r != r else encode(r, fmt)


def _bits(fmt: str, rng, n: int) -> np.ndarray:
    """Edge patterns (zeros, subnormals, ones, the largest finite, infinities, NaNs) then random ones."""
    w = WIDTH[fmt]
    p = FORMATS[fmt][0]
    e = w - p  # the exponent field's width (w bits = sign + e + p - 1)
    sign, inf = 1 << (w - 1), ((1 << e) - 1) << (p - 1)
    one = ((1 << (e - 1)) - 1) << (p - 1)
    edges = [0, sign, 1, sign | 1, (1 << (p - 1)) - 1, 1 << (p - 1), one, sign | one, inf - 1, sign | (inf - 1),
             inf, sign | inf, inf | 1, inf | (1 << (p - 2)), one + 1, one - 1, 2 * one - one // 2]
    edges = [x & ((1 << w) - 1) for x in edges]
    dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[w]
    v = rng.integers(0, 1 << w, n, dtype=np.uint64).astype(dt) if w < 64 else \
        rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    # random values near one another (cancellation, ties) as well as anywhere
    v[n // 2:] = (v[n // 2:] & dt((1 << (p + 2)) - 1)) | dt(one & ~((1 << (p + 2)) - 1) & ((1 << w) - 1))
    v[: len(edges)] = edges
    return v.astype(dt)


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


def _check(got: list[int], want: list[int | None], fmt: str, what, inputs) -> None:
    bad = [k for k, (g, w) in enumerate(zip(got, want)) if (w is None and not is_nan(g, fmt)) or
           (w is not None and g != w)]
    assert not bad, (f"{what}: {len(bad)} of {len(got)} differ; first: inputs "
                     f"{[hex(int(i[bad[0]])) for i in inputs]} got {hex(got[bad[0]])} want "
                     f"{None if want[bad[0]] is None else hex(want[bad[0]])}")


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
    rng = np.random.default_rng(abs(hash(opcode)) % (1 << 32))
    k = _arity(base)
    srcs = [_bits(fmt, rng, N) for _ in range(k)]
    for j in range(1, k):  # every edge against every edge in the first rows
        e = 17
        srcs[j][: e * e] = np.tile(srcs[j][:e], e)
        srcs[0][: e * e] = np.repeat(srcs[0][:e].copy(), e)
    got = [int(g) for g in run(db, opcode, WIDTH[fmt], srcs, [WIDTH[fmt]] * k)]
    keep = [i for i in range(N) if _in_range(opcode, fmt, [decode(int(s[i]), fmt) for s in srcs])]
    want = [oracle_scalar(opcode, fmt, [int(s[i]) for s in srcs]) for i in keep]
    _check([got[i] for i in keep], want, fmt, opcode, [s[keep] for s in srcs])


PACKED = [o for o in OPCODES + NEIGHBOURS if o.split(".")[-1] in ("f16x2", "bf16x2") and not o.startswith("cvt")]


@pytest.mark.parametrize("opcode", PACKED)
def test_packed_fp_instruction_is_elementwise_mpfr(db, opcode):
    fmt = opcode.split(".")[-1][:-2]
    base = opcode.split(".")[0]
    rng = np.random.default_rng(abs(hash(opcode)) % (1 << 32))
    k = _arity(base)
    lo = [_bits(fmt, rng, N) for _ in range(k)]
    hi = [rng.permutation(x) for x in lo]
    srcs = [(h.astype(np.uint32) << np.uint32(16)) | lo_.astype(np.uint32) for h, lo_ in zip(hi, lo)]
    got = run(db, opcode, 32, srcs, [32] * k)
    scalar = opcode[: -len("x2")]
    for half, parts in ((0, lo), (16, hi)):
        g = [int(x) >> half & 0xFFFF for x in got]
        want = [oracle_scalar(scalar, fmt, [int(p[i]) for p in parts]) for i in range(N)]
        _check(g, want, fmt, f"{opcode} ({'upper' if half else 'lower'} half)", parts)


CVT = [o for o in OPCODES if o.startswith("cvt") and "x2" not in o]


@pytest.mark.parametrize("opcode", CVT)
def test_conversion_matches_mpfr(db, opcode):
    dst, src = opcode.split(".")[-2:]
    rng = np.random.default_rng(abs(hash(opcode)) % (1 << 32))
    a = _bits(src, rng, N)
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
    _check(got, want, dst, opcode, [a])


@pytest.mark.parametrize("opcode", ["cvt.rn.f16x2.f32", "cvt.rn.bf16x2.f32"])
def test_packing_conversion_puts_the_first_source_in_the_upper_half(db, opcode):
    fmt = opcode.split(".")[2][:-2]
    rng = np.random.default_rng(5)
    a, b = _bits("f32", rng, N), rng.permutation(_bits("f32", rng, N))
    got = run(db, opcode, 32, [a, b], [32, 32])
    for half, src in ((16, a), (0, b)):
        g = [int(x) >> half & 0xFFFF for x in got]
        want = [None if decode(int(x), "f32") != decode(int(x), "f32") else
                encode(rounded(fmt, "cvt", decode(int(x), "f32")), fmt) for x in src]
        _check(g, want, fmt, f"{opcode} ({'upper' if half else 'lower'} half)", [src])


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
