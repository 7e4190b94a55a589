"""The model's cvt, setp, min/max, integer and logic forms against independent oracles.

* float -> float cvt against MPFR (gmpy2, ``subnormalize=True``) for every pair among f16, bf16, f32,
  f64 and every rounding the spec defines, on edge values and random patterns;
* float -> int against exact Python arithmetic (``Fraction`` and ``math.floor``/``ceil``), int -> float
  against MPFR, int -> int against Python ints;
* setp, min and max against a few lines of pure Python written from the ISA text (ordered comparisons
  false on NaN, -0 == +0 but -0 < +0 for min/max, one NaN gives the other operand), on every pair of
  special values;
* integer add/sub/mul/mad/shl/shr/abs/neg/min/max and logic against Python ints.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.model.api import allowed, evaluate
from tilecheck.spec.database import load_database

gmpy2 = pytest.importorskip("gmpy2")

DB = load_database()
FLOATS = ("f16", "bf16", "f32", "f64")
RNG = np.random.default_rng(20261201)


def _edges(fmt) -> list[int]:
    """Zeros, subnormal and normal bounds, infinities, NaNs, and neighbours of each, both signs."""
    base = [0, 1, 2, fmt.min_normal - 1, fmt.min_normal, fmt.min_normal + 1, fmt.max_finite - 1, fmt.max_finite,
            fmt.inf, fmt.inf + 1, fmt.canonical_nan, fmt.from_fraction(1), fmt.from_fraction(Fraction(3, 2)),
            fmt.from_fraction(Fraction(5, 2)), fmt.from_fraction(65504), fmt.from_fraction(65520),
            fmt.from_fraction(Fraction(1, 2**24)), fmt.from_fraction(Fraction(3, 2**25)),
            fmt.from_fraction(2**31), fmt.from_fraction(-(2**31) - 1, "rz"), fmt.from_fraction(2**63),
            fmt.from_fraction(2**64), fmt.from_fraction(Fraction(1, 2**126)), fmt.from_fraction(Fraction(1, 2**133))]
    out = set()
    for b in base:
        for v in (b, b | fmt.sign_mask):
            out.add(v & ((1 << fmt.width) - 1))
    return sorted(out)


def _inputs(fmt, n: int = 600) -> np.ndarray:
    rand = RNG.integers(0, 1 << min(fmt.width, 63), size=n, dtype=np.uint64) << np.uint64(max(0, fmt.width - 63))
    rand |= RNG.integers(0, 2, size=n, dtype=np.uint64) << np.uint64(fmt.width - 1)
    return np.concatenate([np.array(_edges(fmt), dtype=np.uint64), rand & np.uint64((1 << fmt.width) - 1)])


_MODES = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}


def _mpfr_round(value: Fraction, dst, rounding: str) -> int:
    """Bits of the exact nonzero ``value`` rounded to ``dst`` by MPFR."""
    ctx = gmpy2.context(precision=dst.precision, emin=dst.emin - dst.mantissa_bits + 1, emax=dst.emax + 1,
                        subnormalize=True, round=_MODES[rounding])
    exact = gmpy2.context(precision=200, emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())
    with exact:  # a module function in the active context: gmpy2 2.2's context.div ignores the context
        x = gmpy2.div(gmpy2.mpfr(value.numerator, 200), gmpy2.mpfr(value.denominator, 200))
    r = ctx.add(x, gmpy2.mpfr(0))
    neg = value < 0
    if gmpy2.is_infinite(r):
        return dst.inf | (dst.sign_mask if neg else 0)
    if gmpy2.is_zero(r):
        return dst.sign_mask if neg else 0
    return dst.from_fraction(Fraction(*r.as_integer_ratio()), "rn")  # r is representable: exact


def _cvt_forms(key: str):
    return [f for f in DB.ptx_forms() if f.kind == "function" and f.semantics.key == key]


@pytest.mark.parametrize("form", [pytest.param(f, id=f.name) for f in _cvt_forms("cvt.float")
                                  if f.semantics.get("rounding") in ("", "rn", "rz", "rm", "rp")
                                  and not f.semantics.get("sat") and not f.semantics.get("relu")])
def test_cvt_float_matches_mpfr(form):
    d, s = get_format(form.destinations[0].ptx_type), get_format(form.sources[0].ptx_type)
    rounding = form.semantics.get("rounding") or "rn"  # no modifier: an exact widening or the same format
    ftz = form.semantics.get("ftz")
    xs = _inputs(s, 120)
    got = evaluate(form, xs)
    ok = allowed(form, got, xs)
    assert ok.all()
    for x, r in zip(xs.tolist(), got.tolist()):
        if s.is_nan(np.array([x], dtype=s.uint))[0]:
            assert d.is_nan(np.array([r], dtype=d.uint))[0], (form.name, hex(x), hex(r))
            continue
        xx = x
        if ftz and s.name == "f32" and s.is_subnormal(np.array([x], dtype=s.uint))[0]:
            xx = x & s.sign_mask
        v = s.to_fraction(xx)
        neg = bool(xx & s.sign_mask)
        if v is None:  # infinity
            want = d.inf | (d.sign_mask if neg else 0)
        elif v == 0:
            want = d.sign_mask if neg else 0
        else:
            want = _mpfr_round(v, d, rounding)
            if ftz and d.name == "f32" and d.is_subnormal(np.array([want], dtype=d.uint))[0]:
                want &= d.sign_mask
        if form.semantics.get("satfinite") and (want & d.magnitude_mask) == d.inf:
            want = (want & d.sign_mask) | d.max_finite
        assert r == want, (form.name, hex(x), hex(r), hex(want))


def _round_int(v: Fraction, rounding: str) -> int:
    if rounding == "rzi":
        return math.trunc(v)
    if rounding == "rmi":
        return math.floor(v)
    if rounding == "rpi":
        return math.ceil(v)
    f = math.floor(v)
    rest = v - f
    return f + (1 if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and f % 2) else 0)


@pytest.mark.parametrize("form", [pytest.param(f, id=f.name) for f in _cvt_forms("cvt.to_int")
                                  if not f.modifiers.count("sat")])
def test_cvt_float_to_int_matches_python(form):
    d, s = form.destinations[0].ptx_type, get_format(form.sources[0].ptx_type)
    width = form.destinations[0].container_bits
    signed = d.startswith("s")
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    xs = _inputs(s, 40)
    got = evaluate(form, xs).tolist()
    for x, r in zip(xs.tolist(), got):
        if s.is_nan(np.array([x], dtype=s.uint))[0]:
            want = (1 << (width - 1)) if (s.name == "f64" or width == 64) else 0
        else:
            if form.semantics.get("ftz") and s.is_subnormal(np.array([x], dtype=s.uint))[0]:
                x = x & s.sign_mask
            v = s.to_fraction(x)
            n = (hi if not x & s.sign_mask else lo) if v is None else _round_int(v, form.semantics.get("rounding"))
            want = min(max(n, lo), hi) & ((1 << width) - 1)
        assert r == want, (form.name, hex(x), hex(r), hex(want))


def _int_inputs(width: int) -> list[int]:
    m = (1 << width) - 1
    edge = [0, 1, 2, 3, m, m - 1, 1 << (width - 1), (1 << (width - 1)) - 1, (1 << (width - 1)) + 1]
    return sorted({e & m for e in edge} | {int(x) & m for x in RNG.integers(0, 1 << 63, 60, dtype=np.uint64)})


def _value(bits: int, ptx_type: str) -> int:
    width = int(ptx_type[1:])
    return bits - (1 << width) if ptx_type.startswith("s") and bits >> (width - 1) else bits


@pytest.mark.parametrize("form", [pytest.param(f, id=f.name) for f in _cvt_forms("cvt.from_int")
                                  if not f.semantics.get("sat")])
def test_cvt_int_to_float_matches_mpfr(form):
    d, s = get_format(form.destinations[0].ptx_type), form.sources[0].ptx_type
    xs = _int_inputs(int(s[1:]))
    got = evaluate(form, np.array(xs, dtype=np.uint64)).tolist()
    for x, r in zip(xs, got):
        v = _value(x, s)
        want = 0 if v == 0 else _mpfr_round(Fraction(v), d, form.semantics.get("rounding"))
        assert r == want, (form.name, hex(x), hex(r), hex(want))


@pytest.mark.parametrize("form", [pytest.param(f, id=f.name) for f in _cvt_forms("cvt.int")])
def test_cvt_int_to_int_matches_python(form):
    d, s = form.destinations[0].ptx_type, form.sources[0].ptx_type
    wd = int(d[1:])
    xs = _int_inputs(int(s[1:]))
    got = evaluate(form, np.array(xs, dtype=np.uint64)).tolist()
    for x, r in zip(xs, got):
        v = _value(x, s)
        if form.semantics.get("sat"):
            lo, hi = (-(1 << (wd - 1)), (1 << (wd - 1)) - 1) if d.startswith("s") else (0, (1 << wd) - 1)
            v = min(max(v, lo), hi)
        assert r == v & ((1 << wd) - 1), (form.name, hex(x), hex(r))


# ---- comparisons and min/max from the ISA text ----------------------------------------------------


def _specials(fmt) -> list[int]:
    one = fmt.from_fraction(1)
    vals = [0, 1, fmt.min_normal, one, fmt.max_finite, fmt.inf, fmt.canonical_nan, fmt.inf + 1]
    return sorted({v | s for v in vals for s in (0, fmt.sign_mask)})


def _num(fmt, bits: int, ftz: bool):
    """The ISA's reading of an operand: None for NaN, else its value (a subnormal flushed under .ftz)."""
    if fmt.is_nan(np.array([bits], dtype=fmt.uint))[0]:
        return None
    if ftz and fmt.is_subnormal(np.array([bits], dtype=fmt.uint))[0]:
        return 0.0
    return float(fmt.to_float64(np.array([bits], dtype=fmt.uint))[0])


def _isa_setp(cmp: str, x, y) -> bool:
    unordered = x is None or y is None
    if cmp == "num":
        return not unordered
    if cmp == "nan":
        return unordered
    if unordered:
        return cmp.endswith("u")  # Table 23-25: ordered false, unordered true
    op = cmp[:-1] if cmp.endswith("u") else cmp
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


@pytest.mark.parametrize("type_", ["f16", "bf16", "f32", "f64"])
def test_setp_float_matches_the_isa_text(type_):
    fmt = get_format(type_)
    vals = _specials(fmt)
    pairs = list(itertools.product(vals, vals))
    a = np.array([p[0] for p in pairs], dtype=np.uint64)
    b = np.array([p[1] for p in pairs], dtype=np.uint64)
    forms = [f for f in DB.families["setp"].forms if f.type == type_ and f.semantics.key == "cmp.setp"]
    assert len(forms) in (14, 28)
    for form in forms:
        ftz = bool(form.semantics.get("ftz"))
        got = evaluate(form, a, b)
        p2, q2 = evaluate(form, a, b, destinations=2)
        want = [_isa_setp(form.semantics.get("cmp"), _num(fmt, x, ftz), _num(fmt, y, ftz)) for x, y in pairs]
        assert got.tolist() == want, form.name
        assert p2.tolist() == want and q2.tolist() == [not w for w in want], form.name
        if form.semantics.get("cmp") not in ("lt", "neu", "nan"):
            continue
        combined = evaluate(form.name.replace("setp." + form.semantics.get("cmp"),
                                              "setp." + form.semantics.get("cmp") + ".xor"), a, b, True)
        assert combined.tolist() == [not w for w in want]


def _isa_minmax(is_min: bool, fmt, x: int, y: int, nan_mode: bool):
    """min/max from §9.7.3.11-12: NaN rules, then -0 < +0, else the numeric order. None = some NaN."""
    nx, ny = _num(fmt, x, False), _num(fmt, y, False)
    if nx is None or ny is None:
        if nan_mode or (nx is None and ny is None):
            return None
        return y if nx is None else x
    kx = (nx, not (x & fmt.sign_mask))  # -0 sorts before +0
    ky = (ny, not (y & fmt.sign_mask))
    return (x if kx <= ky else y) if is_min else (x if kx >= ky else y)


def _isa_xorsign(is_min: bool, fmt, x: int, y: int, nan_mode: bool):
    """min/max.xorsign.abs from the ISA's pseudocode: the XOR of the sign bits, the magnitudes
    compared, the XOR given to a number result. None = some NaN."""
    d = _isa_minmax(is_min, fmt, x & ~fmt.sign_mask, y & ~fmt.sign_mask, nan_mode)
    if d is None or _num(fmt, d, False) is None:
        return None
    return (d & ~fmt.sign_mask) | ((x ^ y) & fmt.sign_mask)


@pytest.mark.parametrize("name", ["min.f32", "max.f32", "min.f64", "max.f64", "min.NaN.f32", "max.NaN.f32",
                                  "min.f16", "max.bf16", "min.NaN.bf16", "min.xorsign.abs.f32",
                                  "max.NaN.xorsign.abs.f32", "max.xorsign.abs.f16", "min.NaN.xorsign.abs.bf16",
                                  "min.ftz.xorsign.abs.f16"])
def test_min_max_match_the_isa_text(name):
    form = DB.form(name)
    fmt = get_format(form.element_format)
    vals = _specials(fmt)
    pairs = list(itertools.product(vals, vals))
    a = np.array([p[0] for p in pairs], dtype=np.uint64)
    b = np.array([p[1] for p in pairs], dtype=np.uint64)
    got = evaluate(form, a, b).tolist()
    for (x, y), r in zip(pairs, got):
        isa = _isa_xorsign if ".xorsign." in name else _isa_minmax
        if ".ftz." in name:
            x, y = (v & fmt.sign_mask if 0 < v & ~fmt.sign_mask < fmt.min_normal else v for v in (x, y))
        want = isa(name.startswith("min"), fmt, x, y, ".NaN." in name)
        if want is None:
            assert fmt.is_nan(np.array([r], dtype=fmt.uint))[0], (name, hex(x), hex(y), hex(r))
        else:
            assert r == want, (name, hex(x), hex(y), hex(r), hex(want))


# ---- integers and logic against Python ints -------------------------------------------------------


def _py_int(name: str, width: int, signed: bool, a: int, b: int, c: int) -> int:
    m = (1 << width) - 1
    va, vb = (_value(a, f"s{width}"), _value(b, f"s{width}")) if signed else (a, b)
    op = name.split(".")
    if op[0] == "add":
        return (va + vb) & m
    if op[0] == "sub":
        return (va - vb) & m
    if op[0] == "mul":
        p = va * vb
        return {"lo": p & m, "hi": (p >> width) & m, "wide": p & ((1 << 2 * width) - 1)}[op[1]]
    if op[0] == "mad":
        p = va * vb
        if op[1] == "wide":
            vc = _value(c, f"s{2 * width}") if signed else c
            return (p + vc) & ((1 << 2 * width) - 1)
        vc = _value(c, f"s{width}") if signed else c
        return (((p >> width) if op[1] == "hi" else p) + vc) & m
    if op[0] == "shl":
        return (a << b) & m if b < width else 0
    if op[0] == "shr":
        return (va >> min(b, width)) & m if signed else (a >> b if b < width else 0)
    if op[0] in ("min", "max"):
        return (min if op[0] == "min" else max)(va, vb) & m
    if op[0] == "prmt":  # byte i: byte (nibble i & 7) of b:a, or that byte's sign where nibble i >= 8
        pair, out = (b << 32) | a, 0
        for i in range(4):
            nibble = (c >> (4 * i)) & 0xF
            byte = (pair >> (8 * (nibble & 7))) & 0xFF
            out |= ((0xFF if byte >> 7 else 0) if nibble >> 3 else byte) << (8 * i)
        return out
    if op[0] in ("div", "rem"):
        if vb == 0 or (signed and va == -(1 << (width - 1)) and vb == -1):
            return None  # the ISA leaves it open: any value stands
        q = abs(va) // abs(vb) * (1 if (va < 0) == (vb < 0) else -1)  # C's: truncated toward zero
        return (q if op[0] == "div" else va - vb * q) & m
    if op[0] == "abs":
        return abs(va) & m
    if op[0] == "neg":
        return -va & m
    return {"and": a & b, "or": a | b, "xor": a ^ b, "not": ~a & m}[op[0]]


INT_FORMS = [f for f in DB.ptx_forms() if f.kind == "function" and f.semantics.key.split(".")[0] in ("int", "bits")
             and f.semantics.key not in ("bits.mov", "bits.cnot") and not f.semantics.get("sat")
             and not f.semantics.get("relu") and f.type != "pred"]


@pytest.mark.parametrize("form", [pytest.param(f, id=f.name) for f in INT_FORMS])
def test_integer_forms_match_python_ints(form):
    width = int(form.type[1:])
    signed = form.type.startswith("s")
    xs = _int_inputs(width)
    amounts = [0, 1, width - 1, width, width + 1, 63, 64, 200, 0xFFFFFFFF]
    rows = []
    for a, b in itertools.product(xs[:14], xs[:14] if form.family not in ("shl", "shr") else amounts):
        c = xs[(a + b) % len(xs)] if form.family in ("mad", "prmt") else 0
        if form.family == "prmt":  # selectors: Triton's sign extensions, the ISA's example, every nibble
            c = (0x9991, 0xAAA2, 0xBBB3, 0x7531, 0x3210, 0xFEDC, 0x8888, c)[(a ^ b) % 8]
        if form.family == "mad" and "wide" in form.name:
            c = (c << width) | xs[b % len(xs)]
        rows.append((a, b, c))
    arity = len(form.sources)
    cols = [np.array([r[i] for r in rows], dtype=np.uint64) for i in range(arity)]
    got = evaluate(form, *cols).tolist()
    for (a, b, c), r in zip(rows, got):
        want = _py_int(form.name, width, signed, a, b, c)
        assert want is None or r == want, (form.name, hex(a), hex(b), hex(c), hex(r))


def test_every_function_form_evaluates():
    """One form of every group of kind function runs through evaluate on zeros (cvta outside global
    raises)."""
    seen = set()
    for form in DB.ptx_forms():
        if form.kind != "function" or (form.family == "cvta" and form.semantics.get("space") != "global"):
            continue
        if (form.family, form.group) in seen:
            continue
        seen.add((form.family, form.group))
        zeros = [False if o.ptx_type == "pred" else 0 for o in form.sources]
        lanes = TYPE_LANES.get(form.type, 1)
        out = evaluate(form, *zeros, destinations=2 if lanes == 2 and form.family == "setp" else 1)
        assert out is not None, form.name


TYPE_LANES = {"f16x2": 2, "bf16x2": 2}


def test_function_examples_hold():
    """Every example of a function form is reproduced bit-exactly (NaN by class where unspecified)."""
    checked = 0
    for form in DB.ptx_forms():
        if form.kind != "function":
            continue
        for ex in form.examples:
            operands = [bool(v) if o.ptx_type == "pred" else v for v, o in zip(ex.operands, form.sources)]
            result = bool(ex.result) if form.destinations[0].ptx_type == "pred" else ex.result
            assert allowed(form, result, *operands), (form.name, ex)
            checked += 1
    assert checked >= 30


def test_mov_pack_unpack_and_selp():
    assert evaluate("mov.b32", (0x3C00, 0x4000)) == 0x40003C00  # first element = low half
    assert evaluate("mov.b32", 0x40003C00, destinations=2) == (0x3C00, 0x4000)
    assert evaluate("mov.b64", 0x1122334455667788, destinations=4) == (0x7788, 0x5566, 0x3344, 0x1122)
    assert evaluate("selp.b32", 5, 7, True) == 5 and evaluate("selp.b32", 5, 7, False) == 7
    assert evaluate("setp.lt.f16x2", 0x3C00BC00, 0x00000000, destinations=2) == (True, False)
