"""Edge-biased operands for the ``oracle`` check of AMD forms (``tilecheck verify v_fma_f32``).

``operands(form, rng, n)`` returns ``n`` cases as ``(mode, {operand: value})``: MODE (rounding,
FP_DENORM field) and the form's sources. Half the cases use the default MODE (rn, denormals kept),
the rest every other rounding/denormal combination. Each family gets the operands its spec
singles out: exponent differences next to V_DIV_SCALE's T and its E(S1) and numerator-tiny
thresholds, V_DIV_FMAS addends next to E(S2) = BIAS, V_DIV_FIXUP exponent gaps next to the
underflow branch and Inf/NaN quotients, V_RCP operands whose reciprocal is subnormal or near
overflow; every family also gets zeros, subnormals, infinities, NaNs and random patterns.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format

ROUNDINGS = ("rn", "rz", "rm", "rp")
_OTHER_MODES = [(r, d) for r in ROUNDINGS for d in range(4) if (r, d) != ("rn", 3)]


def pattern(f: Format, neg: bool, exp: int, frac: int) -> int:
    """The pattern with this sign, biased exponent field (clamped to the format) and fraction."""
    exp = min(max(exp, 0), (1 << f.exponent_bits) - 1)
    return (f.sign_mask if neg else 0) | (exp << f.mantissa_bits) | (frac & f.mantissa_mask)


def edge_values(f: Format) -> list[int]:
    """Zeros, subnormals, the normal range's ends, one, infinities and NaNs, both signs."""
    top = (1 << f.exponent_bits) - 1
    mags = [0, 1, f.mantissa_mask, f.min_normal, f.min_normal + 1, pattern(f, False, f.bias, 0),
            pattern(f, False, f.bias, f.mantissa_mask), pattern(f, False, f.bias + 1, 0), f.max_finite,
            f.max_finite - 1, pattern(f, False, top - 1, 0), pattern(f, False, 1, f.mantissa_mask), f.inf,
            f.default_nan & f.magnitude_mask, pattern(f, False, top, 1)]
    return [m | s for m in mags for s in (0, f.sign_mask)]


class Draw:
    """Random values of one format from one generator."""

    def __init__(self, f: Format, rng: np.random.Generator):
        self.f, self.rng = f, rng
        self.edges = edge_values(f)

    def frac(self) -> int:
        # all-zero and all-ones fractions are the rounding-sensitive ones; else uniform
        pick = self.rng.integers(0, 4)
        if pick == 0:
            return 0
        if pick == 1:
            return self.f.mantissa_mask
        return int(self.rng.integers(0, 1 << self.f.mantissa_bits))

    def sign(self) -> bool:
        return bool(self.rng.integers(0, 2))

    def at(self, exp: int) -> int:
        """A value with exponent field ``exp`` (clamped), random sign and fraction."""
        return pattern(self.f, self.sign(), exp, self.frac())

    def any(self) -> int:
        """An edge value (1/4), a random pattern (1/4) or a value of uniform exponent field."""
        pick = self.rng.integers(0, 4)
        if pick == 0:
            return self.edges[int(self.rng.integers(0, len(self.edges)))]
        if pick == 1:
            return int(self.rng.integers(0, 1 << self.f.width, dtype=np.uint64))
        return self.at(int(self.rng.integers(0, (1 << self.f.exponent_bits))))

    def near(self, exp: int, spread: int = 2) -> int:
        return self.at(exp + int(self.rng.integers(-spread, spread + 1)))


def _mode(rng: np.random.Generator, i: int) -> tuple[str, int]:
    if i % 2 == 0:
        return ("rn", 3)
    return _OTHER_MODES[int(rng.integers(0, len(_OTHER_MODES)))]


def _div_scale(d: Draw, i: int) -> dict:
    f, rng = d.f, d.rng
    T = {"f64": 768, "f32": 96}[f.name]
    tiny = {"f64": 53, "f32": 23}[f.name]
    kind = i % 6
    if kind == 0:  # exponent difference next to +-T
        e1 = int(rng.integers(1, 2 * f.bias))
        s1, s2 = d.at(e1), d.near(e1 + (T if d.sign() else -T))
    elif kind == 1:  # E(S1) next to 0 and to 2B-1 (1/S1 subnormal)
        s1 = d.near(0 if d.sign() else 2 * f.bias - 1)
        s2 = d.any()
    elif kind == 2:  # numerator tiny: E(S2) next to the documented and hardware thresholds
        s1, s2 = d.any(), d.near(tiny + 1)
    elif kind == 3:  # quotient next to the subnormal boundary
        e1 = int(rng.integers(f.bias, 2 * f.bias))
        s1, s2 = d.at(e1), d.near(e1 - f.bias + 1)
    else:
        s1, s2 = d.any(), d.any()
    s0 = (s1, s2, d.any())[int(rng.integers(0, 3)) if i % 5 else 2]
    return {"S0": s0, "S1": s1, "S2": s2}


def _div_fmas(d: Draw, i: int) -> dict:
    f, rng = d.f, d.rng
    if i % 3 == 0:
        return {"S0": d.any(), "S1": d.any(), "S2": d.any(), "VCC": d.sign()}
    # macro-like: S2 the unrefined quotient (E(S2) next to BIAS often, or anywhere), S0*S1 a small residual
    e2 = int(rng.integers(1, 2 * f.bias + 1)) if i % 3 == 1 else f.bias + int(rng.integers(-1, 2))
    e1 = f.bias + int(rng.integers(-2, 3))
    e0 = e2 - (e1 - f.bias) - int(rng.integers(0, f.precision + 4))
    return {"S0": d.at(e0), "S1": d.at(e1), "S2": d.at(e2), "VCC": bool(i % 4)}


def _div_fixup(d: Draw, i: int) -> dict:
    f, rng = d.f, d.rng
    gap = {"f64": 1075, "f32": 150, "f16": 0}[f.name]
    kind = i % 4
    if kind == 0 and gap:  # exponent gap next to the underflow branch
        e1 = int(rng.integers(2 * f.bias - 200, 2 * f.bias + 1)) if f.name != "f16" else f.bias
        s1, s2 = d.at(e1), d.near(e1 - gap)
    elif kind == 1:  # ordinary operands, Inf/NaN or edge quotient
        s1, s2 = d.at(int(rng.integers(1, 2 * f.bias))), d.at(int(rng.integers(1, 2 * f.bias)))
        return {"S0": d.edges[int(rng.integers(0, len(d.edges)))], "S1": s1, "S2": s2}
    else:
        s1, s2 = d.any(), d.any()
    return {"S0": d.any(), "S1": s1, "S2": s2}


def _rcp(d: Draw, i: int) -> dict:
    f, rng = d.f, d.rng
    kind = i % 4
    if kind == 0:  # reciprocal subnormal or near overflow; operand subnormal
        x = d.near((2 * f.bias - 1, 1, 0)[int(rng.integers(0, 3))], 3)
    elif kind == 1:  # all-ones and all-zero significands (the Markstein exception's denominators)
        x = pattern(f, d.sign(), int(rng.integers(1, 2 * f.bias + 1)), f.mantissa_mask if d.sign() else 0)
    else:
        x = d.any()
    return {"S0": x}


def _arith(d: Draw, i: int, three: bool) -> dict:
    f, rng = d.f, d.rng
    kind = i % 4
    if kind == 0:  # product next to overflow or to the subnormal range
        e0 = int(rng.integers(1, 2 * f.bias + 1))
        target = (2 * f.bias if d.sign() else -f.mantissa_bits // 2) + int(rng.integers(-2, 3))
        a, b = d.at(e0), d.at(target - e0 + f.bias)
    else:
        a, b = d.any(), d.any()
    ops = {"S0": a, "S1": b}
    if three:
        # a quarter of the addends are of the product's size: cancellation, exact zeros, sticky bits
        field = (1 << f.exponent_bits) - 1
        ea = ((a >> f.mantissa_bits) & field) + ((b >> f.mantissa_bits) & field) - f.bias
        ops["S2"] = d.near(ea, 1) if kind == 1 else d.any()
    return ops


def _ldexp(d: Draw, i: int) -> dict:
    # exponents around the whole range (over/underflow from normal values) and arbitrary patterns
    f = d.f
    reach = 2 * (f.emax + f.precision)
    n = int(d.rng.integers(-reach, reach + 1)) if i % 4 else int(d.rng.integers(-(1 << 31), 1 << 31))
    return {"S0": d.any(), "S1": n & 0xFFFFFFFF}


GENERATORS = {"v_div_scale": _div_scale, "v_div_fmas": _div_fmas, "v_div_fixup": _div_fixup, "v_rcp": _rcp,
              "v_mul": lambda d, i: _arith(d, i, False), "v_fma": lambda d, i: _arith(d, i, True),
              "v_add": lambda d, i: _arith(d, i, False), "v_sub": lambda d, i: _arith(d, i, False),
              "v_subrev": lambda d, i: _arith(d, i, False), "v_fma_mix": lambda d, i: _arith(d, i, True),
              "v_fma_mixlo": lambda d, i: _arith(d, i, True), "v_fma_mixhi": lambda d, i: _arith(d, i, True),
              "v_cvt_f16": lambda d, i: {"S0": d.any()}, "v_cvt_f32": lambda d, i: {"S0": d.any()},
              "v_cvt_f64": lambda d, i: {"S0": d.any()}, "v_ldexp": _ldexp, "v_rsq": _rcp, "v_sqrt": _rcp}


def operands(form, rng: np.random.Generator, n: int) -> list[tuple[tuple[str, int], dict]]:
    """``n`` cases (MODE, operands) for ``form``: the edge values first, then generated ones."""
    d = Draw(form.input_format, rng)  # the sources' format (v_fma_mixlo_f16: f32)
    gen = GENERATORS[form.family]
    names = [o.name for o in form.sources if o.kind == "float"]
    cases = []
    # every edge value in every float operand position once, the others random
    for name in names:
        for v in d.edges:
            ops = gen(d, len(cases))
            ops[name] = v
            cases.append((("rn", 3), ops))
    while len(cases) < n:
        cases.append((_mode(rng, len(cases)), gen(d, len(cases))))
    return cases
