"""An independent oracle for PTX floating-point results: MPFR (gmpy2) at each format's precision and
exponent range (subnormals included, round to nearest even) for correctly rounded operations and
conversions, the ISA's rules for min/max/abs/neg, and edge-and-random bit patterns. It never
evaluates tilecheck's model. Import it after ``pytest.importorskip("gmpy2")``."""

from __future__ import annotations

import gmpy2
import numpy as np

# (precision, emin, emax) in MPFR's convention (x = m 2^e, 1/2 <= m < 1), subnormals included
FORMATS = {"f16": (11, -23, 16), "bf16": (8, -132, 128), "f32": (24, -148, 128), "f64": (53, -1073, 1024)}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


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
        elif op == "ex2":
            r = gmpy2.exp2(exact[0])
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


def edge_bits(fmt: str, rng, n: int) -> np.ndarray:
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


def check(got: list[int], want: list[int | None], fmt: str, what, inputs) -> None:
    """Assert ``got`` (result bits) equals ``want`` (None: any NaN), naming the first difference."""
    bad = [k for k, (g, w) in enumerate(zip(got, want)) if (w is None and not is_nan(g, fmt)) or
           (w is not None and g != w)]
    assert not bad, (f"{what}: {len(bad)} of {len(got)} differ; first: inputs "
                     f"{[hex(int(i[bad[0]])) for i in inputs]} got {hex(got[bad[0]])} want "
                     f"{None if want[bad[0]] is None else hex(want[bad[0]])}")
