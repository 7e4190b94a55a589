"""Differential-engine throughput: cases per second through the cpu backend, and sweep wall times.

For ``div.rn.f32``, ``sqrt.rz.f32`` and ``div.rn.f64`` it prints, measured in the same run on the
same generated batches (edge-biased, hard and uniform cases):

* ``cpu``: cases/s of the cpu backend's judge -- the single-instruction kernel's PTX executed by the
  simulator, every result judged by ``tilecheck.allowed``;
* ``verdict``: cases/s of the verdict alone (the model's own result judged), so ``cpu / verdict``
  is the share the simulator costs;
* ``host``: cases/s of the host backend (numpy IEEE arithmetic + the verdict) where it applies.

Then the exhaustive sweeps judged by certificate (:mod:`tilecheck.diff.sweep`: the model's results,
each checked by the compiled certificate of :mod:`tilecheck.diff.certkernels`, integer code that
shares nothing with the model): unary binary32 ``sqrt`` and ``rcp`` in every mode with and without
``.ftz``, and binary16/bfloat16 ``div/add/sub/mul`` over all 2^32 operand pairs per mode (issue 13's
target: each within 60 s on 2 cores). Every sweep uses its specialised certificate kernel (compiled
once, its compile time shown and counted). By default (``--quick``) a slice of 2^``--slice`` points
(16 pieces spread over the domain) is timed and the full sweep's time *projected* from it (compile
time + slice time x 2^32 / slice), labelled so; ``--full`` sweeps all 2^32 points of the selected
sweeps (``--only``) and prints the measured time. Shown per sweep: wall time, CPU time (all threads;
the steadier figure on a shared machine), the CPU seconds spent in the model and in the certificate
per 2^24 points, and the cases the certificate rejected. ``--markdown`` prints the README table.
Usage: ``python bench/bench_diff.py [--n 262144] [--repeat 3] [--slice 24] [--full] [--only sqrt.rz.f32,...]
[--workers 2] [--no-backends] [--markdown]``.
"""

from __future__ import annotations

import argparse

from benchkit import best_time, load, machine_line

from tilecheck.diff import backends, cases
from tilecheck.diff.verdict import disagreements
from tilecheck.model import api
from tilecheck.spec.database import load_database

FORMS = ("div.rn.f32", "sqrt.rz.f32", "div.rn.f64")


SWEEPS = ([(op, "f32", r, ftz) for op in ("sqrt", "rcp") for r in ("rn", "rz", "rm", "rp") for ftz in (False, True)]
          + [(op, f, r, False) for f in ("f16", "bf16") for op in ("div", "add", "sub", "mul")
             for r in ("rn", "rz", "rm", "rp")])


def sweep_name(op, fmt, rounding, ftz) -> str:
    """``sqrt.rz.ftz.f32``-style name of a sweep."""
    return f"{op}.{rounding}{'.ftz' if ftz else ''}.{fmt}"


def sweeps(args) -> list[dict]:
    """Time the certificate-judged sweeps (see the module docstring)."""
    from tilecheck.diff.sweep import sweep as run_sweep

    only = {x for x in args.only.split(",") if x}
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
        res = run_sweep(op, fmt, rounding, ftz=ftz, ranges=ranges, workers=args.workers, specialise=True)
        compile_s, compile_cpu = res.details["compile_seconds"], res.details["compile_cpu_seconds"]
        scale = (1 << 32) / res.cases
        per = (1 << 24) / res.cases
        row = {"name": name, "cases": res.cases, "bad": res.mismatches, "first": res.first,
               "wall": compile_s + (res.seconds - compile_s) * scale,
               "cpu": compile_cpu + (res.cpu_seconds - compile_cpu) * scale,
               "model": res.model_seconds * per, "cert": res.certificate_seconds * per, "compile": compile_s,
               "workers": res.workers, "measured": bool(args.full)}
        rows.append(row)
        if not args.markdown:
            what = "measured" if args.full else f"projected from {res.cases} points"
            print(f"  {name:<18} all 2^32: {row['wall']:6.0f} s wall, {row['cpu']:6.0f} s CPU ({what}; compile "
                  f"{compile_s:.1f} s); per 2^24 points: model {row['model']:.2f} s, certificate {row['cert']:.2f} s "
                  f"CPU; {res.mismatches} rejected{' ' + str(res.first[:3]) if res.first else ''}", flush=True)
    return rows


def header(args) -> list[str]:
    """When, where, with what and under what load the run took place."""
    import platform

    import numba
    import numpy as np

    from tilecheck.diff.sweep import _workers

    return [machine_line(),
            f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}; sweep "
            f"workers {args.workers or _workers()} (threads), slices of 2^18 points, specialised certificate kernels; "
            + ("all 2^32 points per sweep." if args.full else
               f"2^{args.slice} points per sweep in 16 pieces, full times projected.")]


def main() -> None:
    """Run the benchmark and print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 18, help="cases per batch (default 262144)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best counts (default 3)")
    parser.add_argument("--full", action="store_true", help="sweep all 2^32 points (about a minute per sweep)")
    parser.add_argument("--quick", action="store_true", help="time a slice and project (the default)")
    parser.add_argument("--slice", type=int, default=24, help="log2 of the points timed per sweep in quick mode")
    parser.add_argument("--only", default="", help="only these sweeps, e.g. sqrt.rz.f32,div.rn.f16")
    parser.add_argument("--workers", type=int, default=None, help="sweep threads (default: one per CPU)")
    parser.add_argument("--no-backends", action="store_true", help="skip the backend cases/s part")
    parser.add_argument("--markdown", action="store_true", help="print the README's sweep table")
    args = parser.parse_args()
    before = header(args)
    if not args.markdown:
        print("\n".join(before))
    if not args.no_backends and not args.markdown:
        backends_part(args)
    if not args.markdown:
        print("exhaustive sweeps judged by certificate (the model's results; the certificate shares no "
              "arithmetic with it):")
    rows = sweeps(args)
    after = load()
    if args.markdown:
        how = "measured" if args.full else f"projected from 2^{args.slice} points per sweep (16 pieces)"
        print("  \n".join(before) + f"  \nAfter the run: {after}. Full 2^32 sweep times {how}, compile time "
              "included; wall time on this machine and CPU time (all threads); model and certificate: CPU "
              "seconds per 2^24 points. Target: 60 s wall on 2 cores.")
        print()
        print("| sweep | all 2^32: wall | CPU | CPU / 2 cores | model per 2^24 | certificate per 2^24 | rejected |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| `{r['name']}` | {r['wall']:.0f} s | {r['cpu']:.0f} s | {r['cpu'] / 2:.0f} s | {r['model']:.2f} s "
                  f"| {r['cert']:.2f} s | {r['bad']} of {r['cases']} |")
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
