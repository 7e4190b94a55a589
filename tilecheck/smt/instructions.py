"""Z3 encodings of the instructions around the arithmetic (registry kind ``function``).

One encoder per ``function`` key of :mod:`tilecheck.spec.registry` (cvt, setp, selp, mov, abs,
neg, min, max, copysign, testp, integer arithmetic, logic and shifts), written from the ISA text
independently of :mod:`tilecheck.model.instructions`: bit-vector operations for the integer and
bit keys, the Z3 FP theory (``fpFPToFP``, ``fpRoundToIntegral``, ``fpToSBV``, comparisons) for the
float keys. Operands are bit-vectors of each operand's type width (predicates: Z3 Bools); results
likewise. Where a NaN result's bits are the form's choice (policy ``unspecified``), the encoding
returns the policy's representative bits, like the model.

:func:`encode` builds the terms; :func:`evaluate` simplifies them on constants (Python ints and
bools in and out; numpy arrays element by element -- slow, meant for tests).
"""

from __future__ import annotations

import numpy as np
import z3

from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.smt import fp
from tilecheck.spec.forms import Form
from tilecheck.spec.types import INTEGER_KIND, PTX_TYPES

_QUAD = z3.FPSort(15, 113)  # holds every value of every format here, and 2**64, exactly


def _form(form) -> Form:
    """``form`` itself: the encodings take a :class:`Form` of the caller's database (spellings are
    resolved by :mod:`tilecheck.smt`'s public functions)."""
    if isinstance(form, Form):
        return form
    raise UsageError(f"expected a Form, got {type(form).__name__} {form!r}: resolve a spelling with db.form(...)")


def _w(ptx_type: str) -> int:
    return PTX_TYPES[ptx_type].bits


def _signed(ptx_type: str) -> bool:
    return INTEGER_KIND.get(ptx_type) == "s"


def _fmt(form: Form, ptx_type: str) -> Format:
    """The element format of a PTX type, from the form's own database."""
    return form.format_of(ptx_type)


def _nan(form: Form, fmt: Format) -> int:
    return form.nan.bits if form.nan.bits is not None else fmt.canonical_nan


def _flush(fmt: Format, b, on: bool):
    return fp.flush_bits(fmt, b) if on else b


def _ext(x, by: int, signed: bool):
    return z3.SignExt(by, x) if signed else z3.ZeroExt(by, x)


def _amount(b, w: int):
    """A u32 shift amount as a w-bit vector (only used when it is below w)."""
    return z3.ZeroExt(w - 32, b) if w >= 32 else z3.Extract(w - 1, 0, b)


def _clamp_signed(x, wide: int, w: int):
    lo = z3.BitVecVal(-(1 << (w - 1)), wide)
    hi = z3.BitVecVal((1 << (w - 1)) - 1, wide)
    return z3.Extract(w - 1, 0, z3.If(x < lo, lo, z3.If(x > hi, hi, x)))


# ---------------------------------------------------------------------------------------------


def _int_key(form: Form, key: str, p: dict, xs):
    t = form.type
    w = _w(t)
    s = _signed(t)
    if key == "bits.mov":
        return xs[0]
    if key in ("bits.and", "bits.or", "bits.xor", "bits.not"):
        if t == "pred":
            return {"bits.and": lambda: z3.And(*xs), "bits.or": lambda: z3.Or(*xs),
                    "bits.xor": lambda: z3.Xor(*xs), "bits.not": lambda: z3.Not(xs[0])}[key]()
        return {"bits.and": lambda: xs[0] & xs[1], "bits.or": lambda: xs[0] | xs[1],
                "bits.xor": lambda: xs[0] ^ xs[1], "bits.not": lambda: ~xs[0]}[key]()
    if key == "bits.cnot":
        return z3.If(xs[0] == 0, z3.BitVecVal(1, w), z3.BitVecVal(0, w))
    if key in ("bits.shl", "bits.shr"):
        a, n = xs
        big = z3.UGE(n, w)
        if key == "bits.shl":
            return z3.If(big, z3.BitVecVal(0, w), a << _amount(n, w))
        if s:
            return a >> z3.If(big, z3.BitVecVal(w - 1, w), _amount(n, w))
        return z3.If(big, z3.BitVecVal(0, w), z3.LShR(a, _amount(n, w)))
    if key in ("int.add", "int.sub"):
        a, b = xs
        if p.get("sat"):
            x, y = z3.SignExt(1, a), z3.SignExt(1, b)
            return _clamp_signed(x + y if key == "int.add" else x - y, w + 1, w)
        return a + b if key == "int.add" else a - b
    if key in ("int.mul", "int.mad"):
        a, b = xs[0], xs[1]
        full = _ext(a, w, s) * _ext(b, w, s)
        mode = p.get("mode", "lo")
        if key == "int.mul":
            return {"lo": z3.Extract(w - 1, 0, full), "hi": z3.Extract(2 * w - 1, w, full), "wide": full}[mode]
        c = xs[2]
        if mode == "wide":
            return full + c
        part = z3.Extract(w - 1, 0, full) if mode == "lo" else z3.Extract(2 * w - 1, w, full)
        if p.get("sat"):
            return _clamp_signed(z3.SignExt(1, part) + z3.SignExt(1, c), w + 1, w)
        return part + c
    if key in ("int.div", "int.rem"):
        # where the ISA leaves the result open (integer_quotient: a zero divisor, the most negative
        # value over -1, a signed remainder the other rounding changes) it is a fresh value: any stands
        a, b = xs
        if s:
            q, r = a / b, z3.SRem(a, b)  # bvsdiv truncates; bvsrem takes the dividend's sign
            low = z3.BitVecVal(1 << (w - 1), w)
            open_ = z3.Or(b == 0, z3.And(a == low, b == -1))
            if key == "int.rem":
                open_ = z3.Or(open_, z3.And(r != 0, (a < 0) != (b < 0)))
        else:
            q, r = z3.UDiv(a, b), z3.URem(a, b)
            open_ = b == 0
        return z3.If(open_, z3.FreshConst(z3.BitVecSort(w), UNSPECIFIED), q if key == "int.div" else r)
    if key == "int.neg":
        return -xs[0]
    if key == "int.abs":
        return z3.If(xs[0] < 0, -xs[0], xs[0])
    if key in ("int.min", "int.max"):
        a, b = xs
        less = (a < b) if s else z3.ULT(a, b)
        r = z3.If(less, a, b) if key == "int.min" else z3.If(less, b, a)
        if p.get("relu"):
            r = z3.If(r < 0, z3.BitVecVal(0, w), r)
        return r
    if key == "sel.selp":
        return z3.If(xs[2], xs[0], xs[1])
    if key == "bits.prmt":  # byte i: byte c[4i+2:4i] of {b, a}, or its sign where c[4i+3]
        pair = z3.Concat(xs[1], xs[0])
        out = []
        for i in reversed(range(4)):
            selector = z3.Extract(4 * i + 2, 4 * i, xs[2])
            byte = z3.Extract(7, 0, z3.LShR(pair, z3.ZeroExt(61, selector) * 8))
            sign = z3.If(z3.Extract(7, 7, byte) == 1, z3.BitVecVal(0xFF, 8), z3.BitVecVal(0, 8))
            out.append(z3.If(z3.Extract(4 * i + 3, 4 * i + 3, xs[2]) == 1, sign, byte))
        return z3.Concat(*out)
    if key == "addr.cvta":
        if p.get("space") != "global":
            raise UsageError(f"{form.name}: only the global window is modelled")
        return xs[0]
    return None


def _cvt(form: Form, key: str, p: dict, a):
    d, s = form.destinations[0].ptx_type, form.sources[0].ptx_type
    if key == "cvt.int":
        wd, ws = _w(d), _w(s)
        wide = _ext(a, 66 - ws, _signed(s))  # 66 bits hold every value of every source exactly
        if p.get("sat"):
            lo = -(1 << (wd - 1)) if _signed(d) else 0
            hi = (1 << (wd - 1)) - 1 if _signed(d) else (1 << wd) - 1
            lo_v, hi_v = z3.BitVecVal(lo, 66), z3.BitVecVal(hi, 66)
            wide = z3.If(wide < lo_v, lo_v, z3.If(wide > hi_v, hi_v, wide))
        return z3.Extract(wd - 1, 0, wide)
    ftz = bool(p.get("ftz"))
    rounding = p.get("rounding", "")
    if key == "cvt.from_int":
        dst = _fmt(form, d)
        rm = fp.rounding_mode(rounding)
        x = z3.fpSignedToFP(rm, a, fp.sort(dst)) if _signed(s) else z3.fpUnsignedToFP(rm, a, fp.sort(dst))
        if p.get("sat"):
            x = _sat(dst, x)
        return z3.fpToIEEEBV(x)
    src = _fmt(form, s)
    x = fp.to_fp(src, _flush(src, a, ftz and s == "f32"))
    if key == "cvt.to_int":
        wd = _w(d)
        rm = {"rni": z3.RNE(), "rzi": z3.RTZ(), "rmi": z3.RTN(), "rpi": z3.RTP()}[rounding]
        r = z3.fpRoundToIntegral(rm, z3.fpFPToFP(z3.RNE(), x, _QUAD))
        lo = -(1 << (wd - 1)) if _signed(d) else 0
        hi = (1 << (wd - 1)) - 1 if _signed(d) else (1 << wd) - 1
        low = z3.fpLT(r, z3.FPVal(lo, _QUAD))
        high = z3.fpGEQ(r, z3.FPVal(hi + 1, _QUAD))
        safe = z3.If(z3.Or(low, high, z3.fpIsNaN(r)), z3.FPVal(0, _QUAD), r)
        value = z3.fpToSBV(z3.RTZ(), safe, z3.BitVecSort(66))
        out = z3.If(low, z3.BitVecVal(lo, 66), z3.If(high, z3.BitVecVal(hi, 66), value))
        nan_value = (1 << (wd - 1)) if (s == "f64" or wd == 64) else 0
        out = z3.If(z3.fpIsNaN(r), z3.BitVecVal(nan_value, 66), out)
        return z3.Extract(wd - 1, 0, out)
    dst = _fmt(form, d)
    if rounding in ("rni", "rzi", "rmi", "rpi"):
        rm = {"rni": z3.RNE(), "rzi": z3.RTZ(), "rmi": z3.RTN(), "rpi": z3.RTP()}[rounding]
        y = z3.fpRoundToIntegral(rm, x)
    else:
        y = z3.fpFPToFP(fp.rounding_mode(rounding or "rn"), x, fp.sort(dst))
        if ftz and d == "f32":
            y = fp.flush_fp(y)
    if p.get("satfinite"):
        big = z3.fpBVToFP(z3.BitVecVal(dst.max_finite, dst.width), fp.sort(dst))
        y = z3.If(z3.fpIsInf(y), z3.If(z3.fpIsNegative(y), z3.fpNeg(big), big), y)
    if p.get("relu"):
        y = z3.If(z3.And(z3.fpIsNegative(y), z3.Not(z3.fpIsNaN(y))), z3.fpPlusZero(fp.sort(dst)), y)
    if p.get("sat"):
        y = _sat(dst, y)
    return fp.to_bits(dst, y, _nan(form, dst))


def _sat(fmt: Format, r):
    one = z3.FPVal(1.0, fp.sort(fmt))
    zero = z3.fpPlusZero(fp.sort(fmt))
    return z3.If(z3.Or(z3.fpIsNaN(r), z3.fpIsNegative(r)), zero, z3.If(z3.fpGT(r, one), one, r))


def _compare(cmp: str, fa, fb):
    unordered = z3.Or(z3.fpIsNaN(fa), z3.fpIsNaN(fb))
    if cmp == "num":
        return z3.Not(unordered)
    if cmp == "nan":
        return unordered
    op = cmp[:-1] if cmp.endswith("u") else cmp
    rel = {"eq": z3.fpEQ, "ne": lambda x, y: z3.Not(z3.fpEQ(x, y)), "lt": z3.fpLT, "le": z3.fpLEQ,
           "gt": z3.fpGT, "ge": z3.fpGEQ}[op](fa, fb)
    return z3.Or(rel, unordered) if cmp.endswith("u") else z3.And(rel, z3.Not(unordered))


def _setp(form: Form, p: dict, xs, destinations: int):
    t = form.sources[0].ptx_type
    a, b = xs[0], xs[1]
    c = xs[2] if len(xs) > 2 else None
    elem, lanes = PTX_TYPES[t].element, PTX_TYPES[t].lanes
    results = []
    if elem is None:
        w = _w(t)
        op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(p["cmp"], p["cmp"])
        if _signed(t):
            rel = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
        else:
            rel = {"eq": a == b, "ne": a != b, "lt": z3.ULT(a, b), "le": z3.ULE(a, b), "gt": z3.UGT(a, b),
                   "ge": z3.UGE(a, b)}[op]
        del w
        results.append(rel)
    else:
        fmt = form.format_of(elem)
        for i in range(lanes):
            la = z3.Extract((i + 1) * fmt.width - 1, i * fmt.width, a)
            lb = z3.Extract((i + 1) * fmt.width - 1, i * fmt.width, b)
            ftz = bool(p.get("ftz"))
            results.append(_compare(p["cmp"], fp.to_fp(fmt, _flush(fmt, la, ftz)), fp.to_fp(fmt, _flush(fmt, lb, ftz))))

    def combine(t_):
        if c is None:
            return t_
        return {"and": z3.And(t_, c), "or": z3.Or(t_, c), "xor": z3.Xor(t_, c)}[p["boolop"]]

    if lanes == 2:
        if destinations != 2:
            raise UsageError(f"{form.name} writes p|q; pass destinations=2")
        return tuple(combine(r) for r in results)
    if destinations == 1:
        return combine(results[0])
    return combine(results[0]), combine(z3.Not(results[0]))


def _float_key(form: Form, key: str, p: dict, xs):
    t = form.destinations[0].ptx_type if key != "float.testp" else form.sources[0].ptx_type
    elem, lanes = PTX_TYPES[t].element, PTX_TYPES[t].lanes
    fmt = form.format_of(elem)
    w = fmt.width
    out = []
    for i in range(lanes):
        lx = [z3.Extract((i + 1) * w - 1, i * w, x) for x in xs]
        out.append(_float_lane(form, key, p, fmt, lx))
    if key == "float.testp":
        return out[0]
    return out[0] if lanes == 1 else z3.Concat(*reversed(out))


def _float_lane(form: Form, key: str, p: dict, fmt: Format, xs):
    nan = z3.BitVecVal(_nan(form, fmt), fmt.width)
    sign = fmt.sign_mask
    mag = fmt.magnitude_mask
    if key == "float.testp":
        f = fp.to_fp(fmt, xs[0])
        return {"finite": z3.Not(z3.Or(z3.fpIsInf(f), z3.fpIsNaN(f))), "infinite": z3.fpIsInf(f),
                "number": z3.Not(z3.fpIsNaN(f)), "notanumber": z3.fpIsNaN(f),
                "normal": z3.Or(z3.fpIsNormal(f), z3.fpIsZero(f)), "subnormal": z3.fpIsSubnormal(f)}[p["test"]]
    if key == "float.copysign":
        a, b = xs
        return (a & sign) | (b & mag)
    ftz = bool(p.get("ftz"))
    if key in ("float.abs", "float.neg"):
        a = _flush(fmt, xs[0], ftz)
        r = a & mag if key == "float.abs" else a ^ sign
        keep = xs[0] if form.nan.policy == "none" else nan
        return z3.If(fp.is_nan_bits(fmt, xs[0]), keep, r)
    a, b = (_flush(fmt, x, ftz) for x in xs)
    signs = (a ^ b) & sign  # .xorsign.abs: the sign bits' XOR, taken before the magnitudes
    if p.get("xorsign"):
        a, b = a & mag, b & mag
    fa, fb = fp.to_fp(fmt, a), fp.to_fp(fmt, b)
    both_zero = z3.And(z3.fpIsZero(fa), z3.fpIsZero(fb))
    b_below = z3.Or(z3.fpLT(fb, fa), z3.And(both_zero, z3.fpIsNegative(fb), z3.fpIsPositive(fa)))
    a_below = z3.Or(z3.fpLT(fa, fb), z3.And(both_zero, z3.fpIsNegative(fa), z3.fpIsPositive(fb)))
    r = z3.If(b_below, b, a) if key == "float.min" else z3.If(a_below, b, a)
    na, nb = z3.fpIsNaN(fa), z3.fpIsNaN(fb)
    if p.get("nan"):
        d = z3.If(z3.Or(na, nb), nan, r)
    else:
        d = z3.If(z3.And(na, nb), nan, z3.If(na, b, z3.If(nb, a, r)))
    if p.get("xorsign"):  # a NaN result keeps its own bits
        d = z3.If(fp.is_nan_bits(fmt, d), d, (d & mag) | signs)
    return d


def encode(form, *terms, destinations: int = 1):
    """The Z3 result term(s) of a ``function`` form on bit-vector (Bool for predicates) terms."""
    form = _form(form)
    if form.kind != "function":
        raise UsageError(f"{form.name} is not an instruction of kind function (use tilecheck.smt.forms)")
    if len(terms) != len(form.sources):
        raise UsageError(f"{form.name} takes {len(form.sources)} source operand(s), got {len(terms)}")
    key = form.semantics.key
    p = form.semantics.params
    if any(o.format is not None and o.format.container_bits == 8 for o in form.operands):
        raise UsageError(f"{form.name}: no Z3 encoding for the conversions to and from the 8-bit floats "
                         "(E4M3 has no IEEE floating-point sort: its largest exponent holds finite values)")
    if key.startswith("cmp.setp"):
        return _setp(form, p, list(terms), destinations)
    if destinations != 1:
        raise UsageError(f"{form.name} has one destination")
    if key == "cvt.pack":  # a in the upper half, b in the lower: the scalar conversion twice
        return z3.Concat(_cvt(form, "cvt.float", p, terms[0]), _cvt(form, "cvt.float", p, terms[1]))
    if key.startswith("cvt."):
        return _cvt(form, key, p, terms[0])
    if key.startswith("float."):
        return _float_key(form, key, p, list(terms))
    out = _int_key(form, key, p, list(terms))
    if out is None:
        raise UsageError(f"{form.name}: no Z3 encoding for {key}")
    return out


def _const(ptx_type: str, value):
    if ptx_type == "pred":
        return z3.BoolVal(bool(value))
    return z3.BitVecVal(int(value), _w(ptx_type))


UNSPECIFIED = "unspecified"
"""The prefix of the fresh constants that stand for results the ISA leaves open (any value)."""


def _value(term):
    term = z3.simplify(term)
    if not z3.is_bv_value(term) and z3.is_bv(term):
        # a result left open on these operands (a fresh constant): any value stands; 0 represents it,
        # as the numpy model's representative does
        term = z3.simplify(z3.substitute(term, *[(c, z3.BitVecVal(0, c.size())) for c in _fresh(term)]))
    if z3.is_true(term):
        return True
    if z3.is_false(term):
        return False
    return term.as_long()


def _fresh(term) -> list:
    """The fresh constants of :data:`UNSPECIFIED` in ``term``."""
    found, todo = {}, [term]
    while todo:
        t = todo.pop()
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED and str(t).startswith(UNSPECIFIED):
            found[str(t)] = t
        todo.extend(t.children())
    return list(found.values())


def evaluate(form, *operand_bits, destinations: int = 1):
    """Concrete result(s) of a ``function`` form by simplifying its encoding on constants.

    Python ints/bools in and out; numpy arrays are evaluated element by element (slow: tests only).
    """
    form = _form(form)
    if any(isinstance(a, np.ndarray) and a.ndim > 0 for a in operand_bits):
        arrays = np.broadcast_arrays(*[np.asarray(a) for a in operand_bits])
        flat = [a.reshape(-1) for a in arrays]
        rows = [evaluate(form, *[f[i].item() for f in flat], destinations=destinations) for i in range(flat[0].size)]
        if destinations > 1:
            return tuple(np.array([r[k] for r in rows]).reshape(arrays[0].shape) for k in range(destinations))
        return np.array(rows).reshape(arrays[0].shape)
    terms = [_const(o.ptx_type, v) for o, v in zip(form.sources, operand_bits)]
    out = encode(form, *terms, destinations=destinations)
    if isinstance(out, tuple):
        return tuple(_value(o) for o in out)
    return _value(out)
