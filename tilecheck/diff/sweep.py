"""Exhaustive sweeps of the model's IEEE operations judged by certificate.

:func:`sweep` evaluates :func:`tilecheck.ieee_op` on every point of a range of an operation's
input domain (one 32-bit operand, or two 16-bit operands: point ``i`` is ``(i >> 16, i & 0xffff)``)
and judges each result with :mod:`tilecheck.diff.certificate`, which shares no arithmetic with the
model. It covers what PTX has no form for (binary16 division, directed binary16/bfloat16
arithmetic); PTX forms are swept by ``tilecheck fuzz FORM --exhaustive``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tilecheck.diff import certificate
from tilecheck.model.api import ieee_op

__all__ = ["SweepResult", "domain_bits", "points", "sweep"]


@dataclass
class SweepResult:
    """Totals of a sweep: cases judged, cases the certificate rejected (the first few listed as
    operand tuples), wall and CPU seconds (CPU: every thread of this process)."""

    cases: int
    mismatches: int
    first: list
    seconds: float
    cpu_seconds: float


def domain_bits(op: str, fmt: str) -> int:
    """log2 of the number of inputs of ``op`` on ``fmt`` (32 for unary f32 and binary 16-bit)."""
    width = {"f16": 16, "bf16": 16, "f32": 32}[fmt]
    return width * (1 if op in ("sqrt", "rcp") else 2)


def points(op: str, fmt: str, start: int, stop: int) -> list[np.ndarray]:
    """Operands of points ``start .. stop - 1`` of the domain (see the module docstring)."""
    index = np.arange(start, stop, dtype=np.uint64)
    if op in ("sqrt", "rcp"):
        return [index.astype(np.uint32 if fmt == "f32" else np.uint16)]
    return [(index >> np.uint64(16)).astype(np.uint16), (index & np.uint64(0xFFFF)).astype(np.uint16)]


def sweep(op: str, fmt: str, rounding: str, *, ftz: bool = False, ranges=None, block: int = 1 << 22,
          keep: int = 10) -> SweepResult:
    """Sweep ``ranges`` (``(start, stop)`` pairs; default: the whole domain) in blocks of
    ``block`` points; returns the totals (see :class:`SweepResult`)."""
    if ranges is None:
        ranges = [(0, 1 << domain_bits(op, fmt))]
    cases = bad = 0
    first: list = []
    t0, c0 = time.perf_counter(), time.process_time()
    for lo, hi in ranges:
        for start in range(lo, hi, block):
            ops = points(op, fmt, start, min(hi, start + block))
            got = ieee_op(op, fmt, rounding, *ops, ftz=ftz)
            ok = certificate.check(op, fmt, rounding, got, *ops, ftz=ftz)
            cases += int(ok.size)
            wrong = np.nonzero(~ok)[0]
            bad += int(wrong.size)
            for i in wrong[:max(0, keep - len(first))]:
                first.append(tuple(int(o[i]) for o in ops) + (int(got[i]),))
    return SweepResult(cases, bad, first, time.perf_counter() - t0, time.process_time() - c0)
