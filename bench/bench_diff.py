"""Differential-engine throughput: cases per second through the cpu backend, and sweep wall times.

For ``div.rn.f32``, ``sqrt.rz.f32`` and ``div.rn.f64`` it prints, measured in the same run on the
same generated batches (edge-biased, hard and uniform cases):

* ``cpu``: cases/s of the cpu backend's judge -- the single-instruction kernel's PTX executed by the
  simulator, every result judged by ``tilecheck.allowed``;
* ``verdict``: cases/s of the verdict alone (the model's own result judged), so ``cpu / verdict``
  is the share the simulator costs;
* ``host``: cases/s of the host backend (numpy IEEE arithmetic + the verdict) where it applies.

Then the exhaustive sweeps judged by certificate (:mod:`tilecheck.diff.sweep`: the model's results,
each checked by :mod:`tilecheck.diff.certificate`, independent of the model's arithmetic): unary
binary32 ``sqrt`` and ``rcp`` in every mode with and without ``.ftz``, and binary16/bfloat16
``div/add/sub/mul`` over all 2^32 operand pairs per mode. ``--quick`` (the default) times a slice of
2^``--slice`` points (16 pieces spread over the domain) and prints the full sweep's time
*projected* from it, labelled so; ``--full`` sweeps all 2^32 points of the selected sweeps
(``--only``) and prints the measured time. Wall time and CPU time (all threads) are both shown:
on a loaded machine the CPU time is the steadier figure. ``--markdown`` prints the README table.
Usage: ``python bench/bench_diff.py [--n 262144] [--repeat 3] [--slice 22] [--full] [--only sqrt.rz.f32,...]
[--no-backends] [--markdown]``.
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


SWEEPS = ([(op, "f32", r, ftz) for op in ("sqrt", "rcp") for r in ("rn", "rz", "rm", "rp") for ftz in (False, True)]
          + [(op, f, r, False) for f in ("f16", "bf16") for op in ("div", "add", "sub", "mul")
             for r in ("rn", "rz", "rm", "rp")])


def sweep_name(op, fmt, rounding, ftz) -> str:
    """``sqrt.rz.ftz.f32``-style name of a sweep."""
    return f"{op}.{rounding}{'.ftz' if ftz else ''}.{fmt}"


def sweeps(args) -> list[dict]:
    """Time the certificate-judged sweeps (see the module docstring)."""
    from tilecheck.diff.sweep import sweep as run_sweep

    only = {s for s in args.only.split(",") if s}
    rows = []
    for op, fmt, rounding, ftz in SWEEPS:
        name = sweep_name(op, fmt, rounding, ftz)
        if only and name not in only:
            continue
        if args.full:
            ranges = None
        else:
            piece = (1 << args.slice) // 16
            ranges = [(k << 28, (k << 28) + piece) for k in range(16)]
        res = run_sweep(op, fmt, rounding, ftz=ftz, ranges=ranges)
        scale = (1 << 32) / res.cases
        rows.append({"name": name, "cases": res.cases, "bad": res.mismatches, "first": res.first,
                     "wall": res.seconds * scale, "cpu": res.cpu_seconds * scale, "measured": bool(args.full)})
        if not args.markdown:
            what = "measured" if args.full else f"projected from {res.cases} points"
            print(f"  {name:<18} all 2^32: {rows[-1]['wall']:7.0f} s wall, {rows[-1]['cpu']:7.0f} s CPU ({what}); "
                  f"{res.mismatches} rejected by the certificate{' ' + str(res.first[:3]) if res.first else ''}",
                  flush=True)
    return rows


def main() -> None:
    """Run the benchmark and print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 18, help="cases per batch (default 262144)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best counts (default 3)")
    parser.add_argument("--full", action="store_true", help="sweep all 2^32 points (minutes per sweep)")
    parser.add_argument("--quick", action="store_true", help="time a slice and project (the default)")
    parser.add_argument("--slice", type=int, default=22, help="log2 of the points timed per sweep in quick mode")
    parser.add_argument("--only", default="", help="only these sweeps, e.g. sqrt.rz.f32,div.rn.f16")
    parser.add_argument("--no-backends", action="store_true", help="skip the backend cases/s part")
    parser.add_argument("--markdown", action="store_true", help="print the README's sweep table")
    args = parser.parse_args()
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_model import machine

    before = machine()
    if not args.markdown:
        print("\n".join(before))
    if not args.no_backends and not args.markdown:
        backends_part(args)
    if not args.markdown:
        print("exhaustive sweeps judged by certificate (the model's results; the certificate shares no "
              "arithmetic with it):")
    rows = sweeps(args)
    after = machine()[0].split("; ")[-1]
    if args.markdown:
        how = "measured" if args.full else f"projected from 2^{args.slice} points per sweep (16 slices)"
        print(f"Measured {before[0]}; after the run: {after}. Full 2^32 sweep times {how}; "
              "wall time on this machine and CPU time (all threads).")
        print()
        print("| sweep | all 2^32: wall | CPU | rejected |")
        print("|---|---|---|---|")
        for r in rows:
            print(f"| `{r['name']}` | {r['wall']:.0f} s | {r['cpu']:.0f} s | {r['bad']} of {r['cases']} |")
    else:
        print(f"after the run: {after}")


def backends_part(args) -> None:
    """Cases per second through the cpu, verdict-only and host paths."""
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
        if host.support(form).ok:
            t_host = best_time(lambda: host.judge(form, ops), args.repeat)
            line += f"   host {args.n / t_host / 1e6:7.2f} M/s"
        print(line)


if __name__ == "__main__":
    main()
