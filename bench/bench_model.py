"""Reference-model throughput against numpy's native arithmetic and MPFR (gmpy2) scalar calls.

Prints, for every binary64 add/sub/mul/fma/div in every rounding mode (and div.rz.f32,
sqrt.rm.f32), the model's results per second and ratios measured in the same run on the same
inputs:

* ``model time / numpy``: the model's time over numpy's native operation on the same float arrays
  (numpy rounds to nearest only, so this is the cost of directed rounding and bit handling; fma
  compares against numpy's unfused ``a*b+c``);
* ``x MPFR``: the model's throughput over MPFR's through gmpy2 scalar calls, each in a context
  emulating the format exactly (precision, exponent range, ``subnormalize=True``) and the same
  rounding. Loop A gets its operands as Python floats prepared outside the timed region, which is
  the fastest way to drive it; loop B converts bit patterns per call (the model's interface).
* ``targets``: issue 13's goals where they apply -- binary64 add/sub/mul/fma at least 50 M/s and
  within 10x of numpy; directed binary64 division at least 30x MPFR loop A and within 4x of numpy.

Two input sets are measured: ``finite`` -- uniformly random finite bit patterns (normal and
subnormal, both signs; a quarter of the products and quotients over- or underflow) and ``scaled``
-- values with exponents in [-60, 60] (typical data, results in range). The model uses every CPU
core (``TILECHECK_THREADS``, default one thread per core); numpy and MPFR run on one. The header
says when, where and under what load it ran. Usage:
``python bench/bench_model.py [--n 4194304] [--mpfr-n 100000] [--repeat 3] [--markdown]
[--only f64]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np
from benchkit import best_time, load, machine_line

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


def numpy_native(op: str, fmt_name: str, operands: list[np.ndarray]):
    """A closure running numpy's native (round-to-nearest) version of ``op``."""
    ftype = np.float32 if fmt_name == "f32" else np.float64
    f = [o.view(ftype) for o in operands]
    if op == "add":
        return lambda: f[0] + f[1]
    if op == "sub":
        return lambda: f[0] - f[1]
    if op == "mul":
        return lambda: f[0] * f[1]
    if op == "div":
        return lambda: f[0] / f[1]
    if op == "sqrt":
        return lambda: np.sqrt(f[0])
    return lambda: f[0] * f[1] + f[2]


def _context(fmt_name: str, rounding: str):
    import gmpy2

    prec, emin, emax = {"f32": (24, -148, 128), "f64": (53, -1073, 1024)}[fmt_name]
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
            "rp": gmpy2.RoundUp}[rounding]
    return gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode)


def _mpfr_function(op: str):
    import gmpy2

    return {"add": gmpy2.add, "sub": gmpy2.sub, "mul": gmpy2.mul, "div": gmpy2.div, "sqrt": gmpy2.sqrt,
            "fma": gmpy2.fma}[op]


def mpfr_loop(op: str, fmt_name: str, rounding: str, operands: list[np.ndarray]):
    """A closure evaluating ``op`` with gmpy2 scalar calls on Python floats; returns result bits."""
    import gmpy2

    ctx = _context(fmt_name, rounding)
    ftype = np.float32 if fmt_name == "f32" else np.float64
    lists = [o.view(ftype).astype(np.float64).tolist() for o in operands]
    fn = _mpfr_function(op)

    def run():
        with gmpy2.context(ctx):
            if len(lists) == 1:
                out = [float(fn(x)) for x in lists[0]]
            elif len(lists) == 2:
                out = [float(fn(x, y)) for x, y in zip(lists[0], lists[1])]
            else:
                out = [float(fn(x, y, z)) for x, y, z in zip(*lists)]
        return np.array(out, dtype=ftype).view(operands[0].dtype)

    return run


def mpfr_bits_loop(op: str, fmt_name: str, rounding: str, operands: list[np.ndarray]):
    """Like :func:`mpfr_loop`, but each scalar call also converts its operand bit patterns and its
    result through ``struct`` -- the model's interface (bits in, bits out), one case at a time."""
    import struct

    import gmpy2

    ctx = _context(fmt_name, rounding)
    code, ucode = ("<f", "<I") if fmt_name == "f32" else ("<d", "<Q")
    fn = _mpfr_function(op)
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


def targets(op: str, fmt_name: str, rounding: str, rate: float, vs_numpy: float, vs_mpfr: float) -> str:
    """Issue 13's goals for this case: "met", "missed (...)" or "" where none applies."""
    if fmt_name != "f64":
        return ""
    if op in ("add", "sub", "mul", "fma"):
        missed = ([f"{rate:.0f} < 50 M/s"] if rate < 50 else []) + ([f"{vs_numpy:.1f}x > 10x"] if vs_numpy > 10 else [])
    elif op == "div" and rounding != "rn":
        missed = ([f"{vs_mpfr:.1f}x < 30x MPFR"] if vs_mpfr < 30 else []) + ([f"{vs_numpy:.1f}x > 4x"] if vs_numpy > 4 else [])
    else:
        return ""
    return "missed (" + ", ".join(missed) + ")" if missed else "met"


def header(args) -> list[str]:
    """Lines saying when, where, with what and under what load the run took place."""
    import gmpy2
    import numba

    from tilecheck.model.api import _threads

    return [
        machine_line(),
        f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"gmpy2 {gmpy2.version()}; model threads {_threads()} (binary64: compiled Numba loops); numpy native "
        f"and MPFR on one thread; {args.n} elements per model/numpy run (best of {args.repeat}), "
        f"{args.mpfr_n} per MPFR loop.",
    ]


def measure(op: str, fmt_name: str, rounding: str, kind: str, args, rng) -> dict:
    """One case: rates, ratios, targets and agreement with MPFR on the MPFR sample."""
    operands = [random_inputs(kind, fmt_name, args.n, rng, positive=(op == "sqrt")) for _ in range(ARITY[op])]
    model = lambda: tilecheck.ieee_op(op, fmt_name, rounding, *operands)  # noqa: E731
    t_first = time.perf_counter()
    model()  # warm up (spec loading, first-touch allocation, compiling or loading a kernel)
    t_first = time.perf_counter() - t_first
    t_model = best_time(model, args.repeat)
    with np.errstate(all="ignore"):
        t_np = best_time(numpy_native(op, fmt_name, operands), args.repeat)
    small = [o[: args.mpfr_n] for o in operands]
    mpfr, mpfr_b = mpfr_loop(op, fmt_name, rounding, small), mpfr_bits_loop(op, fmt_name, rounding, small)
    t_mpfr = best_time(mpfr, 1)
    t_mpfr_b = best_time(mpfr_b, 1)
    # the model and MPFR must agree bit for bit (NaN by class) on the MPFR sample
    got = tilecheck.ieee_op(op, fmt_name, rounding, *small)
    fmt = get_format(fmt_name)
    agree = True
    for want in (mpfr(), mpfr_b()):
        agree &= bool(np.all((got == want) | (fmt.is_nan(got) & fmt.is_nan(want))))
    rate = args.n / t_model / 1e6
    mpfr_rate = args.mpfr_n / t_mpfr / 1e6
    mpfr_b_rate = args.mpfr_n / t_mpfr_b / 1e6
    return {"case": f"{op}.{rounding}.{fmt_name}", "kind": kind, "rate": rate, "np": args.n / t_np / 1e6,
            "vs_np": t_model / t_np, "x_a": rate / mpfr_rate, "x_b": rate / mpfr_b_rate, "first": t_first,
            "agree": agree, "targets": targets(op, fmt_name, rounding, rate, t_model / t_np, rate / mpfr_rate)}


def main() -> None:
    """Run the benchmark and print one line (or table row) per case."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 22, help="elements per model/numpy run")
    parser.add_argument("--mpfr-n", type=int, default=100_000, help="elements per MPFR run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print a markdown table (the README's)")
    parser.add_argument("--only", default="", help="only cases whose name contains this, e.g. f64 or fma")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    cases = [c for c in CASES if args.only in f"{c[0]}.{c[2]}.{c[1]}"]
    if not cases:
        sys.exit(f"no case matches --only {args.only!r}")
    lines = header(args)
    if args.markdown:
        print("  \n".join(lines) + "\n")
        print("| case | inputs | model M/s | numpy M/s | model time / numpy | x MPFR (A) | x MPFR (B) "
              "| first call s | vs MPFR | targets |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    else:
        print("\n".join(lines))
        print(f"{'case':<13} {'inputs':<7} {'model M/s':>10} {'numpy M/s':>10} {'/numpy':>7} {'x MPFR A':>9} "
              f"{'x MPFR B':>9} {'first s':>8}  check  targets")
    for kind in ("scaled", "finite"):
        for op, fmt_name, rounding in cases:
            r = measure(op, fmt_name, rounding, kind, args, rng)
            check = "agree" if r["agree"] else "DISAGREE"
            if args.markdown:
                print(f"| `{r['case']}` | {kind} | {r['rate']:.1f} | {r['np']:.1f} | {r['vs_np']:.1f}x | "
                      f"{r['x_a']:.1f}x | {r['x_b']:.1f}x | {r['first']:.2f} | {check} | {r['targets']} |", flush=True)
            else:
                print(f"{r['case']:<13} {kind:<7} {r['rate']:>10.1f} {r['np']:>10.1f} {r['vs_np']:>6.1f}x "
                      f"{r['x_a']:>8.1f}x {r['x_b']:>8.1f}x {r['first']:>8.2f}  {check:<6} {r['targets']}", flush=True)
    print(("\n" if args.markdown else "") + f"After the run: {load()}.")


if __name__ == "__main__":
    main()
