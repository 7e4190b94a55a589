"""Shrink a mismatching case to the simplest operands that still disagree.

A case is simpler when its operands have fewer significand bits set, exponents closer to that of
1.0, no sign and no NaN payload (:func:`complexity`). :func:`shrink` proposes, for every operand
(every lane of packed ones), simpler variants -- the canonical quiet NaN for a NaN, the sign
cleared, low significand bits cleared (all, or all but the top 1, 2, 4, ... bits), the exponent
moved to 1.0's or halfway toward it or one step toward it, zero and one -- runs all proposals
of a round as one batch on the backend, keeps the simplest that still disagrees, and repeats
until no proposal does. Each accepted step lowers the complexity, so it terminates; ``rounds``
bounds the work. Memory forms and integer containers shrink by clearing bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecheck.diff.cases import source_layout
from tilecheck.spec.contract import ULP_READING_DEFAULT
from tilecheck.spec.registry import TININESS_DEFAULT

__all__ = ["Shrunk", "shrink", "complexity", "proposals"]


@dataclass(frozen=True)
class Shrunk:
    """The outcome: simplest operands found, their (still rejected) result, backend runs used."""

    operands: tuple[int, ...]
    result: int
    steps: int
    runs: int


def _element_format(form):
    return form.format


def _lane_score(fmt, bits: int) -> int:
    if fmt is None:
        return bin(bits).count("1")
    exp = (bits & fmt.exponent_mask) >> fmt.mantissa_bits
    frac = bits & fmt.mantissa_mask
    nan = exp == (1 << fmt.exponent_bits) - 1 and frac != 0
    score = bin(frac).count("1") + abs(exp - fmt.bias) + (1 if bits & fmt.sign_mask else 0)
    return score + (4 * fmt.mantissa_bits if nan else 0)


def _lanes(form) -> int:
    return form.lanes if form.element_format else 1


def complexity(form, operands) -> int:
    """A non-negative score; lower is simpler (see the module docstring)."""
    fmt = _element_format(form)
    total = 0
    for value in operands:
        value = int(value)
        if fmt is None:
            total += bin(value).count("1")
            continue
        for lane in range(_lanes(form)):
            total += _lane_score(fmt, (value >> (lane * fmt.width)) & ((1 << fmt.width) - 1))
    return total


def _lane_proposals(fmt, bits: int) -> list[int]:
    if fmt is None:
        out = [0, bits & (bits - 1)]
        out += [bits & ~((1 << k) - 1) for k in (1, 2, 4, 8, 16, 32) if k < bits.bit_length()]
        return out
    sign = bits & fmt.sign_mask
    exp = (bits & fmt.exponent_mask) >> fmt.mantissa_bits
    frac = bits & fmt.mantissa_mask
    top = (1 << fmt.exponent_bits) - 1
    one = fmt.bias << fmt.mantissa_bits
    out = [0, one, sign | one]
    if exp == top and frac:
        out += [sign | fmt.exponent_mask | fmt.quiet_bit, fmt.exponent_mask | fmt.quiet_bit]
    out.append(bits & ~fmt.sign_mask)
    m = fmt.mantissa_bits
    for keep in (0, 1, 2, 4, 8, 16, 32):
        if keep < m:
            out.append(bits & ~((1 << (m - keep)) - 1))
    low = frac & -frac if frac else 0  # clear the lowest set bit
    if low:
        out.append(bits & ~low)
    if 0 < exp < top:
        for new in (fmt.bias, (exp + fmt.bias) // 2, exp + (1 if exp < fmt.bias else -1)):
            if 0 < new < top:
                out.append(sign | (new << m) | frac)
    return out


def proposals(form, operands) -> list[tuple[int, ...]]:
    """Simpler variants of ``operands`` (one operand, one lane changed each), simplest first,
    without duplicates; only strictly simpler ones are kept."""
    fmt = _element_format(form)
    base = complexity(form, operands)
    seen, out = {tuple(operands)}, []
    for i, value in enumerate(operands):
        value = int(value)
        if fmt is None:
            variants = _lane_proposals(None, value)
        else:
            variants = []
            w = fmt.width
            for lane in range(_lanes(form)):
                shift = lane * w
                lane_bits = (value >> shift) & ((1 << w) - 1)
                rest = value & ~(((1 << w) - 1) << shift)
                variants += [rest | (v << shift) for v in _lane_proposals(fmt, lane_bits)]
        for v in variants:
            cand = tuple(int(x) for x in operands[:i]) + (v,) + tuple(int(x) for x in operands[i + 1:])
            if cand not in seen:
                seen.add(cand)
                score = complexity(form, cand)
                if score < base:
                    out.append((score, cand))
    if fmt is not None and form.lanes == 1 and len(operands) >= 2:
        for cand in _joint(fmt, [int(v) for v in operands]):
            if cand not in seen:
                seen.add(cand)
                score = complexity(form, cand)
                if score < base:
                    out.append((score, cand))
    out.sort(key=lambda item: item[0])
    return [c for _, c in out]


def _joint(fmt, values: list[int]) -> list[tuple[int, ...]]:
    """Exponents of the first two operands moved together: by the same amount (a quotient keeps
    its value) or by opposite amounts (a product keeps it), toward 1.0's exponent."""
    m = fmt.mantissa_bits
    top = (1 << fmt.exponent_bits) - 1
    exps = [(v & fmt.exponent_mask) >> m for v in values[:2]]
    if not all(0 < e < top for e in exps):
        return []
    deltas = set()
    for e in exps:
        gap = fmt.bias - e
        deltas.update({gap, gap // 2, (gap > 0) - (gap < 0)})
    deltas.discard(0)
    out = []
    for d in sorted(deltas, key=abs, reverse=True):
        for sign in (1, -1):
            new = [exps[0] + d, exps[1] + sign * d]
            if all(0 < e < top for e in new):
                moved = [(v & ~fmt.exponent_mask) | (e << m) for v, e in zip(values[:2], new)]
                out.append(tuple(moved + values[2:]))
    return out


def shrink(form, backend, operands, result: int, rounds: int = 64, tininess: str = TININESS_DEFAULT,
           ulp_reading: str = ULP_READING_DEFAULT) -> Shrunk:
    """Simplify ``operands`` (a case ``backend`` gets wrong, giving ``result``) while the
    backend's result stays rejected. Memory forms with vector operands are returned unchanged."""
    layout = source_layout(form)
    current, current_result = tuple(int(v) for v in operands), int(result)
    if any(per != 1 for _, _, per in layout):
        return Shrunk(current, current_result, 0, 0)
    steps = runs = 0
    for _ in range(rounds):
        cands = proposals(form, current)
        if not cands:
            break
        arrays = [np.array([c[i] for c in cands], dtype=layout[i][1]) for i in range(len(layout))]
        found = backend.judge(form, arrays, tininess, ulp_reading)
        runs += 1
        if found.count == 0:
            break
        best = int(found.index.min())  # proposals are sorted simplest first
        pos = int(np.nonzero(found.index == best)[0][0])
        current = cands[best]
        current_result = int(found.results[pos])
        steps += 1
    return Shrunk(current, current_result, steps, runs)
