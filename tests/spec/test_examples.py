"""Every example in the PTX specs, re-derived independently.

Exact forms: the expected bits are recomputed with MPFR (gmpy2, ``subnormalize=True``), with
.ftz as documented (subnormal inputs read as sign-preserving zeros, subnormal results -- judged
after rounding -- flushed) and .sat (clamp to [0, 1], NaN -> +0), lane by lane for packed types.
Approximate forms: the result must match the form's special-case table when an operand is
special, else lie within the contract's bound of the exact value (computed with MPFR at 200 bits).
"""

from __future__ import annotations

import struct

import gmpy2
import numpy as np
from support.inventory import ptx_example_count


# element format -> (precision, emin, emax for MPFR with subnormalize, exponent bits, fraction bits)
FORMATS = {
    "f16": (11, -23, 16, 5, 10),
    "bf16": (8, -132, 128, 8, 7),
    "f32": (24, -148, 128, 8, 23),
    "f64": (53, -1073, 1024, 11, 52),
}
ROUND = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown, "rp": gmpy2.RoundUp}
WIDE = gmpy2.context(precision=200, emin=-100000, emax=100000)


def to_float(fmt: str, bits: int) -> float:
    """Exact value of a bit pattern as a Python float (every format here fits in f64)."""
    if fmt == "f16":
        return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])
    if fmt == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if fmt == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def to_bits(fmt: str, x: float) -> int:
    """Bits of a value that is exactly representable in ``fmt``."""
    if fmt == "f16":
        bits = int(np.array([x], dtype=np.float16).view(np.uint16)[0])
    elif fmt == "bf16":
        wide = struct.unpack("<I", struct.pack("<f", x))[0]
        assert x != x or wide & 0xFFFF == 0, x
        bits = wide >> 16
    elif fmt == "f32":
        bits = struct.unpack("<I", struct.pack("<f", x))[0]
    else:
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    assert x != x or to_float(fmt, bits) == x, (fmt, x)
    return bits


def is_nan(fmt: str, bits: int) -> bool:
    return to_float(fmt, bits) != to_float(fmt, bits)


def flush(fmt: str, x: float) -> float:
    """.ftz: a subnormal becomes a zero of the same sign."""
    # MPFR's emin is the exponent of the smallest subnormal in [0.5, 1) * 2^e form
    min_normal = 2.0 ** (FORMATS[fmt][1] + FORMATS[fmt][0] - 2)
    if x == x and x != 0 and abs(x) < min_normal:
        return -0.0 if x < 0 else 0.0
    return x


def exact_result(key: str, fmt: str, rounding: str, ftz: bool, sat: bool, bits: list[int]) -> float:
    """MPFR's correctly rounded result of one lane."""
    prec, emin, emax = FORMATS[fmt][:3]
    values = [to_float(fmt, b) for b in bits]
    if ftz:
        values = [flush(fmt, v) for v in values]
    ctx = gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=ROUND[rounding])
    m = [gmpy2.mpfr(v, 53) for v in values]
    op = key.split(".")[1]
    # module functions under `with ctx:`: gmpy2 2.2.x's ctx.div ignores the context's precision
    with ctx:
        r = {"add": lambda: gmpy2.add(m[0], m[1]), "sub": lambda: gmpy2.sub(m[0], m[1]),
             "mul": lambda: gmpy2.mul(m[0], m[1]), "fma": lambda: gmpy2.fma(m[0], m[1], m[2]),
             "div": lambda: gmpy2.div(m[0], m[1]), "rcp": lambda: gmpy2.div(gmpy2.mpfr(1), m[0]),
             "sqrt": lambda: gmpy2.sqrt(m[0])}[op]()
    assert r.precision == prec, f"gmpy2 {gmpy2.version()} rounded to {r.precision} bits, not {prec}"
    out = float(r)
    if ftz:
        out = flush(fmt, out)
    if sat:
        out = 0.0 if out != out or out < 0 else min(out, 1.0)
    return out


def lanes(form, value: int) -> list[int]:
    elem, count, container = form.element_format, form.lanes, form.container_bits
    width = container // count
    return [(value >> (width * i)) & ((1 << width) - 1) for i in range(count)]


def _examples(db, kind):
    return [(f, e) for f in db.ptx_forms() if f.kind == kind for e in f.examples]


def test_example_counts(db):
    exact, contract = len(_examples(db, "exact")), len(_examples(db, "contract"))
    assert exact > 0 and contract > 0  # both kinds are exercised by the checks below
    assert sum(len(f.examples) for f in db.ptx_forms()) == ptx_example_count()


def test_exact_examples_match_mpfr(db):
    wrong = []
    for form, ex in _examples(db, "exact"):
        p = form.semantics.params
        fmt = form.element_format
        lane_ops = list(zip(*(lanes(form, o) for o in ex.operands)))
        for lane, (ops, got) in enumerate(zip(lane_ops, lanes(form, ex.result))):
            want = exact_result(form.semantics.key, fmt, p["rounding"], p.get("ftz", False), p.get("sat", False), list(ops))
            if want != want:
                ok = is_nan(fmt, got)
            else:
                ok = got == to_bits(fmt, want)
            if not ok:
                wrong.append(f"{ex.location}: {form.name} lane {lane}: spec {got:#x}, MPFR {want!r}")
    assert not wrong, "\n".join(wrong)


def _class_of(fmt_bits: tuple[int, int], bits: int) -> str:
    exp_bits, frac_bits = fmt_bits
    sign = "-" if bits >> (exp_bits + frac_bits) else "+"
    exp = (bits >> frac_bits) & ((1 << exp_bits) - 1)
    frac = bits & ((1 << frac_bits) - 1)
    if exp == (1 << exp_bits) - 1:
        return "nan" if frac else sign + "inf"
    if exp == 0:
        return sign + ("0" if frac == 0 else "subnormal")
    return sign + "normal"


def _matches(word: str, cls: str, bits: int) -> bool:
    if word == "any":
        return True
    if word.startswith("0x"):
        return bits == int(word, 16)
    return word == cls


def _contract_cases(db):
    """(form, example, operands, result) per element: a packed example (ex2.approx.f16x2) is one
    case per lane, each judged by the same contract."""
    for form, ex in _examples(db, "contract"):
        lane_ops = list(zip(*(lanes(form, o) for o in ex.operands)))
        for ops, got in zip(lane_ops, lanes(form, ex.result)):
            yield form, ex, list(ops), got


def test_contract_examples_respect_the_contract(db):
    wrong = []
    for form, ex, ex_operands, ex_result in _contract_cases(db):
        key = form.semantics.key
        fmt = form.element_format
        exp_bits, frac_bits = FORMATS[fmt][3:]
        hi = key in ("approx.rcp_hi", "approx.rsqrt_hi")
        # the _hi forms read only the upper word: classify it as a 1.11.20 number
        ops = [o >> 32 for o in ex_operands] if hi else list(ex_operands)
        op_fmt = (11, 20) if hi else (exp_bits, frac_bits)
        classes = [_class_of(op_fmt, o) for o in ops]
        result_cls = _class_of((exp_bits, frac_bits), ex_result)
        special = next((s for s in form.contract.specials
                        if all(_matches(w, c, b) for w, c, b in zip(s.operands, classes, ops))), None)
        if special is not None:
            want = special.result
            ok = (result_cls == "nan") if want == "nan" else _matches(want, result_cls, ex_result)
            if not ok:
                wrong.append(f"{ex.location}: {form.name} special {special.operands} -> {want}, spec says {ex_result:#x}")
            continue
        if key == "approx.div" and form.semantics.params.get("variant") == "approx" and \
                abs(to_float(fmt, ex_operands[1])) > 2.0 ** 126:
            # documented: a sign-preserving zero (NaN if a is infinite) for 2^126 < |b| < 2^128
            a, b = (to_float(fmt, o) for o in ex_operands)
            want_cls = "nan" if a in (float("inf"), float("-inf")) else ("-0" if (a < 0) != (b < 0) else "+0")
            if result_cls != want_cls:
                wrong.append(f"{ex.location}: {form.name} large divisor: want {want_cls}, spec {ex_result:#x}")
            continue
        values = [gmpy2.mpfr(to_float(fmt, o), 53) for o in ex_operands]
        if hi:
            values = [gmpy2.mpfr(to_float("f64", o & 0xFFFFFFFF00000000), 53) for o in ex_operands]
        fn = key.split(".")[1].replace("_hi", "")
        # module functions in the active context: gmpy2 2.2's context.div ignores the context (53 bits)
        with WIDE:
            exact = {"div": lambda: gmpy2.div(values[0], values[1]), "rcp": lambda: gmpy2.div(1, values[0]),
                     "sqrt": lambda: gmpy2.sqrt(values[0]), "rsqrt": lambda: gmpy2.rec_sqrt(values[0]),
                     "ex2": lambda: gmpy2.exp2(values[0]), "lg2": lambda: gmpy2.log2(values[0])}[fn]()
        got = gmpy2.mpfr(to_float(fmt, ex_result), 53)
        err = abs(WIDE.sub(got, exact))
        c = form.contract
        absolute = c.bound.absolute
        if absolute is not None and 2.0 ** absolute[1] < abs(float(values[0])) < 2.0 ** absolute[2]:
            ok = err <= WIDE.exp2(absolute[0])  # lg2 on (0.5, 2): an absolute bound
        elif c.relative_log2 is not None:
            ok = err <= abs(exact) * WIDE.exp2(c.relative_log2)
        else:
            # ulp of the exact value's binade in the result format (subnormal ulp below emin)
            e = max(int(gmpy2.floor(WIDE.log2(abs(exact)))), FORMATS[fmt][1] + FORMATS[fmt][0] - 2)
            ok = err <= c.ulp * WIDE.exp2(e - frac_bits)
        if not ok:
            wrong.append(f"{ex.location}: {form.name} {[hex(o) for o in ex_operands]} -> {ex_result:#x} is outside the bound")
    assert not wrong, "\n".join(wrong)
