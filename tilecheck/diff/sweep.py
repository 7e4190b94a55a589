"""Exhaustive sweeps of the model's IEEE operations judged by certificate.

:func:`sweep` evaluates :func:`tilecheck.ieee_op` on every point of a range of an operation's
input domain (one 32-bit operand, or two 16-bit operands: point ``i`` is ``(i >> 16, i & 0xffff)``)
and judges each result with the compiled certificate (:mod:`tilecheck.diff.certkernels` through
:mod:`tilecheck.diff.certificate`), which shares no arithmetic with the model. It covers what PTX
has no form for (binary16 division, directed binary16/bfloat16 arithmetic); PTX forms are swept by
``tilecheck fuzz FORM --exhaustive``.

The domain is cut into slices of ``block`` points (memory stays bounded: a few arrays of one slice
per worker); worker threads take slices in turn. The model's numpy passes release the GIL inside
their loops and the certificate kernel releases it throughout, so the workers share the cores.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from tilecheck import cpus
from tilecheck.diff import certificate, certkernels
from tilecheck.model.api import ieee_op

__all__ = ["SweepResult", "domain_bits", "points", "sweep"]


@dataclass
class SweepResult:
    """Totals of a sweep: cases judged, cases the certificate rejected (the first few listed as
    operand tuples followed by the model's result), wall seconds, CPU seconds (every thread of this
    process), and the CPU seconds the workers spent in the model and in the certificate."""

    cases: int
    mismatches: int
    first: list
    seconds: float
    cpu_seconds: float
    model_seconds: float = 0.0
    certificate_seconds: float = 0.0
    workers: int = 1
    block: int = 0
    details: dict = field(default_factory=dict)


def domain_bits(op: str, fmt: str) -> int:
    """log2 of the number of inputs of ``op`` on ``fmt`` (32 for unary f32 and binary 16-bit)."""
    width = {"f16": 16, "bf16": 16, "f32": 32}[fmt]
    return width * (1 if op in ("sqrt", "rcp") else 2)


def points(op: str, fmt: str, start: int, stop: int) -> list[np.ndarray]:
    """Operands of points ``start .. stop - 1`` of the domain (see the module docstring)."""
    unary = op in ("sqrt", "rcp")
    if domain_bits(op, fmt) > 32:
        raise ValueError(f"{op} on {fmt}: the domain has more than 2**32 points")
    dtype = np.uint32 if fmt == "f32" else np.uint16
    a = np.empty(stop - start, dtype=dtype)
    b = a if unary else np.empty(stop - start, dtype=dtype)
    certkernels.points_into(start, unary, a, b)
    return [a] if unary else [a, b]


SPECIALISE_FROM = 1 << 26
"""Sweeps of at least this many points use a certificate kernel compiled for their configuration
(:func:`tilecheck.diff.certkernels.specialised`: a few seconds to compile, about half the time per
lane)."""


def sweep(op: str, fmt: str, rounding: str, *, ftz: bool = False, ranges=None, block: int = 1 << 18,
          keep: int = 10, workers: int | None = None, specialise: bool | None = None) -> SweepResult:
    """Sweep ``ranges`` (``(start, stop)`` pairs; default: the whole domain) in slices of
    ``block`` points on ``workers`` threads; returns the totals (see :class:`SweepResult`;
    ``details["compile_seconds"]`` and ``["compile_cpu_seconds"]``: compiling the specialised kernel,
    included in the totals).
    ``specialise``: compile the certificate for this configuration (default: from
    :data:`SPECIALISE_FROM` points)."""
    if not certificate.supports(op, fmt):
        raise ValueError(f"no certificate for {op} on {fmt}")
    if ranges is None:
        ranges = [(0, 1 << domain_bits(op, fmt))]
    slices = [(s, min(hi, s + block)) for lo, hi in ranges for s in range(lo, hi, block)]
    workers = cpus.threads() if workers is None else max(1, int(workers))
    workers = min(workers, max(1, len(slices)))
    ebits, mbits = certkernels.FORMATS[fmt]
    codes = (certkernels.OPS[op], ebits, mbits, certkernels.ROUNDINGS[rounding], ftz, ftz, False, False,
             certkernels.NAN_POLICIES["propagate"], 0)
    if specialise is None:
        specialise = sum(hi - lo for lo, hi in slices) >= SPECIALISE_FROM
    t_start, c_start = time.perf_counter(), time.process_time()
    if specialise:
        kernel = certkernels.specialised(op, fmt, rounding, ftz_in=ftz, ftz_out=ftz)
        one = np.zeros(1, dtype=np.uint32 if fmt == "f32" else np.uint16)
        kernel(one, one, one, one, np.zeros(1, dtype=np.bool_))  # compile here, not in a worker

        def judge(got, x, y, out):
            return kernel(got, x, y, y, out)
    else:
        def judge(got, x, y, out):
            return certkernels.check_into(*codes, got, x, y, y, out)
    compile_seconds = time.perf_counter() - t_start
    compile_cpu = time.process_time() - c_start
    lock = threading.Lock()
    todo = iter(slices)
    totals = {"cases": 0, "bad": 0, "model": 0.0, "cert": 0.0}
    first: list = []
    errors: list = []

    def work() -> None:
        try:
            ok = np.empty(block, dtype=np.bool_)
            model = cert = 0.0
            cases = bad = 0
            while True:
                with lock:
                    item = next(todo, None)
                if item is None:
                    break
                start, stop = item
                ops_ = points(op, fmt, start, stop)
                t0 = time.thread_time()
                got = ieee_op(op, fmt, rounding, *ops_, ftz=ftz)
                t1 = time.thread_time()
                n = stop - start
                wrong = judge(got, ops_[0], ops_[-1], ok[:n])
                cert += time.thread_time() - t1
                model += t1 - t0
                cases += n
                bad += wrong
                if wrong and keep:
                    found = [tuple(int(o[i]) for o in ops_) + (int(got[i]),) for i in np.nonzero(~ok[:n])[0][:keep]]
                    with lock:  # the first cases in domain order, whichever worker finds them
                        first.extend(found)
                        first.sort()
                        del first[keep:]
            with lock:
                totals["cases"] += cases
                totals["bad"] += bad
                totals["model"] += model
                totals["cert"] += cert
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    t0, c0 = t_start, c_start
    if workers == 1:
        work()
    else:
        threads = [threading.Thread(target=work, name=f"tilecheck-sweep-{k}") for k in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return SweepResult(totals["cases"], totals["bad"], first[:keep], time.perf_counter() - t0,
                       time.process_time() - c0, totals["model"], totals["cert"], workers, block,
                       {"compile_seconds": compile_seconds, "compile_cpu_seconds": compile_cpu,
                        "specialised": bool(specialise)})
