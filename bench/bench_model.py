"""Reference-model throughput against numpy's native arithmetic and MPFR (gmpy2) scalar calls.

Prints, for every binary64 add/sub/mul/fma in every rounding mode, binary64 division in every
mode, and binary32 div.rz/sqrt.rm, the model's results per second and ratios measured in the same
run on the same inputs:

* ``x numpy``: the model's time over numpy's native operation on the same float arrays (numpy
  rounds to nearest only, so this is the cost of directed rounding and bit handling; fma compares
  against numpy's unfused ``a*b+c``, the cheapest expression with its operands);
* ``x MPFR``: the model's throughput over MPFR's through gmpy2 scalar calls, each in a context
  emulating the format exactly (precision, exponent range, ``subnormalize=True``) and the same
  rounding. Loop A gets its operands as Python floats prepared outside the timed region (the
  fastest way to drive it); loop B converts bit patterns per call (the model's interface).

Two input sets: ``finite`` -- uniformly random finite bit patterns (normal and subnormal, both
signs; a quarter of the products over- or underflow) and ``scaled`` -- exponents in [-60, 60]
(typical data). The model uses every CPU core (``TILECHECK_THREADS``); numpy and MPFR run on one.
The header gives the machine (cores, load average before and after), numpy and gmpy2 versions.
``--markdown`` prints the README's table instead. Usage:
``python bench/bench_model.py [--n 4194304] [--mpfr-n 100000] [--repeat 3] [--sets scaled,finite] [--markdown]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tilecheck
from tilecheck.formats import get_format

ROUNDINGS = ("rn", "rz", "rm", "rp")
CASES = ([(op, "f64", r) for op in ("add", "sub", "mul", "fma", "div") for r in ROUNDINGS]
         + [("div", "f32", "rz"), ("sqrt", "f32", "rm")])
ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "fma": 3}


def random_inputs(kind: str, fmt_name: str, n: int, rng: np.random.Generator, positive: bool = False) -> np.ndarray:
    """``n`` random patterns of f32 or f64: ``finite`` (any finite pattern) or ``scaled``
    (unbiased exponent in [-60, 60], random significand)."""
    width, mbits, bias, utype = (32, 23, 127, np.uint32) if fmt_name == "f32" else (64, 52, 1023, np.uint64)
    if kind == "finite":
        bits = rng.integers(0, ((1 << (width - 1 - mbits)) - 1) << mbits, n, dtype=utype)
    else:
        exps = rng.integers(bias - 60, bias + 61, n).astype(utype)
        bits = (exps << utype(mbits)) | rng.integers(0, 1 << mbits, n, dtype=utype)
    if not positive:
        bits |= rng.integers(0, 2, n, dtype=utype) << utype(width - 1)
    return bits


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def numpy_native(op: str, fmt_name: str, operands: list[np.ndarray]):
    """A closure running numpy's native (round-to-nearest) version of ``op``."""
    ftype = np.float32 if fmt_name == "f32" else np.float64
    f = [o.view(ftype) for o in operands]
    return {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
            "div": lambda: f[0] / f[1], "sqrt": lambda: np.sqrt(f[0]), "fma": lambda: f[0] * f[1] + f[2]}[op]


def mpfr_loop(op: str, fmt_name: str, rounding: str, operands: list[np.ndarray]):
    """A closure evaluating ``op`` with gmpy2 scalar calls; returns the result bits."""
    import gmpy2

    prec, emin, emax = {"f32": (24, -148, 128), "f64": (53, -1073, 1024)}[fmt_name]
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
            "rp": gmpy2.RoundUp}[rounding]
    ctx = gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode)
    ftype = np.float32 if fmt_name == "f32" else np.float64
    lists = [o.view(ftype).astype(np.float64).tolist() for o in operands]
    fn = _MPFR_FN(gmpy2)[op]

    def run():
        with gmpy2.context(ctx):
            if op == "sqrt":
                out = [float(fn(x)) for x in lists[0]]
            elif op != "fma":
                out = [float(fn(x, y)) for x, y in zip(lists[0], lists[1])]
            else:
                out = [float(fn(x, y, z)) for x, y, z in zip(*lists)]
        return np.array(out, dtype=ftype).view(operands[0].dtype)

    return run


def _MPFR_FN(gmpy2):  # noqa: N802 - a table, not a class
    return {"add": gmpy2.add, "sub": gmpy2.sub, "mul": gmpy2.mul, "div": gmpy2.div, "sqrt": gmpy2.sqrt,
            "fma": gmpy2.fma}


def mpfr_bits_loop(op: str, fmt_name: str, rounding: str, operands: list[np.ndarray]):
    """Like :func:`mpfr_loop`, but each scalar call also converts its operand bit patterns and its
    result through ``struct`` -- the model's interface (bits in, bits out), one case at a time."""
    import struct

    import gmpy2

    prec, emin, emax = {"f32": (24, -148, 128), "f64": (53, -1073, 1024)}[fmt_name]
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
            "rp": gmpy2.RoundUp}[rounding]
    ctx = gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode)
    code, ucode = ("<f", "<I") if fmt_name == "f32" else ("<d", "<Q")
    fn = _MPFR_FN(gmpy2)[op]
    ints = [o.tolist() for o in operands]
    pack, unpack = struct.pack, struct.unpack

    def val(u):
        return unpack(code, pack(ucode, u))[0]

    def bits(x):
        return unpack(ucode, pack(code, float(x)))[0]

    def run():
        with gmpy2.context(ctx):
            out = [bits(fn(*(val(u) for u in case))) for case in zip(*ints)]
        return np.array(out, dtype=operands[0].dtype)

    return run


def machine() -> list[str]:
    """Lines describing the machine and the configuration of this run."""
    import os
    import platform

    import gmpy2

    from tilecheck.model.api import _threads

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return [f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.processor() or platform.machine()}; "
            f"{cores} CPUs ({usable} usable); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
            f"numpy {np.__version__}, gmpy2 {gmpy2.version()}, python {platform.python_version()}; "
            f"model threads {_threads()}; numpy native and MPFR on one thread"]


def measure(kind: str, op: str, fmt_name: str, rounding: str, args, rng) -> dict:
    """One case: rates and ratios (see the module docstring)."""
    operands = [random_inputs(kind, fmt_name, args.n, rng, positive=(op == "sqrt")) for _ in range(ARITY[op])]
    model = lambda: tilecheck.ieee_op(op, fmt_name, rounding, *operands)  # noqa: E731
    model()  # warm up (spec loading, first-touch allocation)
    with np.errstate(all="ignore"):
        native = numpy_native(op, fmt_name, operands)
        # interleaved, best of each: load changes within the run hit both sides alike
        t_model = t_np = float("inf")
        for _ in range(args.repeat):
            t_model = min(t_model, best_time(model, 1))
            t_np = min(t_np, best_time(native, 1))
    small = [o[: args.mpfr_n] for o in operands]
    mpfr = mpfr_loop(op, fmt_name, rounding, small)
    t_mpfr = best_time(mpfr, 1)
    mpfr_b = mpfr_bits_loop(op, fmt_name, rounding, small)
    t_mpfr_b = best_time(mpfr_b, 1)
    # the two must agree bit for bit (NaN by class) on the MPFR sample
    got = tilecheck.ieee_op(op, fmt_name, rounding, *small)
    want = mpfr()
    fmt = get_format(fmt_name)
    nan = fmt.is_nan(got) & fmt.is_nan(want)
    want_b = mpfr_b()
    nan_b = fmt.is_nan(got) & fmt.is_nan(want_b)
    agree = bool(np.all((got == want) | nan)) and bool(np.all((got == want_b) | nan_b))
    model_rate = args.n / t_model / 1e6
    mpfr_rate = len(small[0]) / t_mpfr / 1e6
    mpfr_b_rate = len(small[0]) / t_mpfr_b / 1e6
    return {"case": f"{op}.{rounding}.{fmt_name}", "kind": kind, "model": model_rate, "numpy": args.n / t_np / 1e6,
            "x_numpy": t_model / t_np, "mpfr_a": mpfr_rate, "x_a": model_rate / mpfr_rate, "mpfr_b": mpfr_b_rate,
            "x_b": model_rate / mpfr_b_rate, "agree": agree}


def main() -> None:
    """Run the benchmark and print one line per case (or the README table with --markdown)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 22, help="elements per model/numpy run")
    parser.add_argument("--mpfr-n", type=int, default=100_000, help="elements per MPFR run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sets", default="scaled,finite", help="input sets, comma-separated")
    parser.add_argument("--cases", default="", help="only these cases (e.g. fma.rz.f64,div.rp.f64)")
    parser.add_argument("--markdown", action="store_true", help="print the README's table")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    before = machine()
    wanted = {c for c in args.cases.split(",") if c}
    rows = []
    if not args.markdown:
        print("\n".join(before))
        print(f"{'case':<14} {'inputs':<7} {'model M/s':>10} {'numpy M/s':>10} {'x numpy':>8} "
              f"{'MPFR A M/s':>11} {'x A':>7} {'MPFR B M/s':>11} {'x B':>7}   check")
    for kind in args.sets.split(","):
        for op, fmt_name, rounding in CASES:
            if wanted and f"{op}.{rounding}.{fmt_name}" not in wanted:
                continue
            row = measure(kind, op, fmt_name, rounding, args, rng)
            rows.append(row)
            if not args.markdown:
                print(f"{row['case']:<14} {kind:<7} {row['model']:>10.1f} {row['numpy']:>10.1f} "
                      f"{row['x_numpy']:>7.1f}x {row['mpfr_a']:>11.2f} {row['x_a']:>6.1f}x {row['mpfr_b']:>11.2f} "
                      f"{row['x_b']:>6.1f}x   {'bits agree with MPFR' if row['agree'] else 'DISAGREES WITH MPFR'}",
                      flush=True)
    after = machine()[0].split("; ")[-1]
    if args.markdown:
        print(f"Measured {before[0]}; after the run: {after}.  ")
        print(f"{before[1]}; {args.n} elements per model/numpy run, {args.mpfr_n} per MPFR loop.")
        print()
        print("| case | inputs | model M/s | numpy M/s | model time / numpy | x MPFR (A) | x MPFR (B) | vs MPFR |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| `{r['case']}` | {r['kind']} | {r['model']:.1f} | {r['numpy']:.1f} | {r['x_numpy']:.1f}x | "
                  f"{r['x_a']:.1f}x | {r['x_b']:.1f}x | {'agree' if r['agree'] else '**DISAGREE**'} |")
    else:
        print(f"after the run: {after}")


if __name__ == "__main__":
    main()
