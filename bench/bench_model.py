"""Reference-model throughput against numpy's native arithmetic and MPFR (gmpy2) scalar calls.

Prints, for div.rz.f32, sqrt.rm.f32, div.rp.f64 and fma.rn.f64, the model's results per second
and two ratios measured in the same run on the same inputs:

* ``vs numpy``: the model's time over numpy's native operation on the same float arrays (numpy
  rounds to nearest only, so this is the cost of directed rounding and bit handling; fma compares
  against numpy's unfused ``a*b+c``);
* ``vs MPFR``: the model's throughput over MPFR's through gmpy2 scalar calls, each in a context
  emulating the format exactly (precision, exponent range, ``subnormalize=True``) and the same
  rounding. The MPFR loop gets its operands as Python floats prepared outside the timed region,
  which is the fastest way to drive it; the model takes and returns bit patterns.

Two input sets are measured: ``finite`` -- uniformly random finite bit patterns (normal and
subnormal, both signs; a quarter of the quotients over- or underflow) and ``scaled`` -- values
with exponents in [-60, 60] (typical data, results in range). The model uses every CPU core
(``TILECHECK_THREADS``, default one thread per core); MPFR runs on one. Usage:
``python bench/bench_model.py [--n 4194304] [--mpfr-n 200000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tilecheck
from tilecheck.formats import get_format

CASES = [("div", "f32", "rz"), ("sqrt", "f32", "rm"), ("div", "f64", "rp"), ("fma", "f64", "rn")]


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
    if op == "div":
        return lambda: f[0] / f[1]
    if op == "sqrt":
        return lambda: np.sqrt(f[0])
    return lambda: f[0] * f[1] + f[2]


def mpfr_loop(op: str, fmt_name: str, rounding: str, operands: list[np.ndarray]):
    """A closure evaluating ``op`` with gmpy2 scalar calls; returns the result bits."""
    import gmpy2

    prec, emin, emax = {"f32": (24, -148, 128), "f64": (53, -1073, 1024)}[fmt_name]
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
            "rp": gmpy2.RoundUp}[rounding]
    ctx = gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode)
    ftype = np.float32 if fmt_name == "f32" else np.float64
    lists = [o.view(ftype).astype(np.float64).tolist() for o in operands]
    fn = {"div": gmpy2.div, "sqrt": gmpy2.sqrt, "fma": gmpy2.fma}[op]

    def run():
        with gmpy2.context(ctx):
            if op == "sqrt":
                out = [float(fn(x)) for x in lists[0]]
            elif op == "div":
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

    prec, emin, emax = {"f32": (24, -148, 128), "f64": (53, -1073, 1024)}[fmt_name]
    mode = {"rn": gmpy2.RoundToNearest, "rz": gmpy2.RoundToZero, "rm": gmpy2.RoundDown,
            "rp": gmpy2.RoundUp}[rounding]
    ctx = gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True, round=mode)
    code, ucode = ("<f", "<I") if fmt_name == "f32" else ("<d", "<Q")
    fn = {"div": gmpy2.div, "sqrt": gmpy2.sqrt, "fma": gmpy2.fma}[op]
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


def main() -> None:
    """Run the benchmark and print one line per case."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 22, help="elements per model/numpy run")
    parser.add_argument("--mpfr-n", type=int, default=200_000, help="elements per MPFR run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    from tilecheck.model.api import _threads

    print(f"model threads: {_threads()}; MPFR: one thread, gmpy2 {__import__('gmpy2').version()}")
    print("MPFR loop A: operands prepared as Python floats, results bulk-converted (fastest way to drive it)")
    print("MPFR loop B: bit patterns converted per call with struct (the model's bits-in, bits-out interface)")
    print(f"{'case':<22} {'model M/s':>10} {'numpy M/s':>10} {'slower than numpy':>18} "
          f"{'MPFR A M/s':>11} {'x A':>7} {'MPFR B M/s':>11} {'x B':>7}   check")
    for kind, (op, fmt_name, rounding) in [(k, c) for k in ("finite", "scaled") for c in CASES]:
        arity = {"div": 2, "sqrt": 1, "fma": 3}[op]
        operands = [random_inputs(kind, fmt_name, args.n, rng, positive=(op == "sqrt")) for _ in range(arity)]
        model = lambda: tilecheck.ieee_op(op, fmt_name, rounding, *operands)  # noqa: E731
        model()  # warm up (spec loading, first-touch allocation)
        t_model = best_time(model, args.repeat)
        with np.errstate(all="ignore"):
            native = numpy_native(op, fmt_name, operands)
            t_np = best_time(native, args.repeat)
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
        np_rate = args.n / t_np / 1e6
        mpfr_rate = args.mpfr_n / t_mpfr / 1e6
        mpfr_b_rate = args.mpfr_n / t_mpfr_b / 1e6
        name = f"{op}.{rounding}.{fmt_name} {kind}"
        print(f"{name:<22} {model_rate:>10.1f} {np_rate:>10.1f} {t_model / t_np:>17.1f}x "
              f"{mpfr_rate:>11.2f} {model_rate / mpfr_rate:>6.1f}x {mpfr_b_rate:>11.2f} "
              f"{model_rate / mpfr_b_rate:>6.1f}x   "
              f"{'bits agree with MPFR' if agree else 'DISAGREES WITH MPFR'}")


if __name__ == "__main__":
    main()
