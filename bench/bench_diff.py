"""Differential-engine throughput: cases per second through the cpu backend, and sweep wall times.

For ``div.rn.f32``, ``sqrt.rz.f32`` and ``div.rn.f64`` it prints, measured in the same run on the
same generated batches (edge-biased, hard and uniform cases):

* ``cpu``: cases/s of the cpu backend's judge -- the single-instruction kernel's PTX executed by the
  simulator, every result judged by ``tilecheck.allowed``;
* ``verdict``: cases/s of the verdict alone (the model's own result judged), so ``cpu / verdict``
  is the share the simulator costs;
* ``host``: cases/s of the host backend (numpy IEEE arithmetic + the verdict) where it applies.

Then the exhaustive ``sqrt.rn.f32`` sweep through the host backend (the configuration
``tilecheck fuzz sqrt.rn.f32 --exhaustive`` uses on a CPU): by default a 2^26-input slice spread
over the domain, extrapolated to 2^32 and labelled so; ``--full`` runs all 2^32 inputs and prints
the measured wall time. Usage: ``python bench/bench_diff.py [--n 262144] [--repeat 3] [--full]``.
"""

from __future__ import annotations

import argparse
import time

from tilecheck.diff import backends, cases
from tilecheck.diff.verdict import disagreements
from tilecheck.model import api
from tilecheck.spec.database import load_database

FORMS = ("div.rn.f32", "sqrt.rz.f32", "div.rn.f64")


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def sweep(db, full: bool) -> tuple[float, int, int, bool]:
    """(seconds, inputs, mismatches, measured_fully) of the sqrt.rn.f32 sweep on the host backend."""
    from tilecheck.inputs.exhaustive import chunk

    form = db.form("sqrt.rn.f32")
    host = backends.HostBackend()
    block = 1 << 22
    starts = range(0, 1 << 32, block) if full else range(0, 1 << 32, 1 << 28)  # 16 x 2^22 = 2^26 inputs
    bad = n = 0
    t = time.perf_counter()
    for s in starts:
        ops = chunk(form, s, s + block)
        bad += host.judge(form, ops).count
        n += block
    return time.perf_counter() - t, n, bad, full


def main() -> None:
    """Run the benchmark and print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 18, help="cases per batch (default 262144)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best counts (default 3)")
    parser.add_argument("--full", action="store_true", help="sweep all 2^32 sqrt.rn.f32 inputs (minutes)")
    args = parser.parse_args()
    db = load_database()
    cpu = backends.CpuBackend(db)
    host = backends.HostBackend()
    print(f"cases per second, best of {args.repeat}, batches of {args.n} cases")
    for name in FORMS:
        form = db.form(name)
        ops = cases.batch(form, 0, 0, args.n)
        ref = api.reference(form, *ops)
        t_cpu = best_time(lambda: cpu.judge(form, ops), args.repeat)
        t_ver = best_time(lambda: disagreements(form, ref, ops), args.repeat)
        line = (f"  {name:<12} cpu {args.n / t_cpu / 1e6:7.2f} M/s   verdict alone {args.n / t_ver / 1e6:7.2f} M/s "
                f"(simulator share {1 - t_ver / t_cpu:5.1%})")
        if not host.supports(form):
            t_host = best_time(lambda: host.judge(form, ops), args.repeat)
            line += f"   host {args.n / t_host / 1e6:7.2f} M/s"
        print(line)
    seconds, n, bad, full = sweep(db, args.full)
    rate = n / seconds
    if full:
        print(f"exhaustive sqrt.rn.f32 (host backend): {n} inputs in {seconds:.1f} s ({rate / 1e6:.1f} M/s), "
              f"{bad} mismatches -- measured")
    else:
        print(f"exhaustive sqrt.rn.f32 (host backend): {n} inputs (16 slices over the domain) in {seconds:.2f} s "
              f"({rate / 1e6:.1f} M/s), {bad} mismatches; all 2^32 extrapolated: {(1 << 32) / rate:.0f} s "
              "(run with --full to measure)")


if __name__ == "__main__":
    main()
