"""Speed of compiled-code verification (issues 12 item 6, 13 item 2), measured in one run.

    python bench/bench_compiler_ptx.py [--slice-log2 N] [--full hdiv|frsqrt]

Prints, for the committed nvcc PTX:

* ``__hdiv`` (examples/cuda/half.ptx, k_hdiv_f16) against div.rn.f16, every allowed result of
  rcp.approx.ftz.f32: the first 2^N pairs of the exhaustive enumeration (N = 22 by default), the
  measured rate, and the time all 2^32 pairs would take at that rate (labelled "projected");
* ``__frsqrt_rn`` (k_frsqrt_rn) against rsqrt.rn.f32: likewise over 2^N of the 2^32 inputs;
* the simulator targets: a single-instruction kernel (``div.rn.f32``) through the plan vs the model
  evaluating the same inputs (ratio), and lane evaluations per second of the nvcc ``__hdiv``
  sequence (inputs x allowed choices x instructions executed, per second).

``--full`` runs one of the two exhaustive sweeps completely instead of projecting it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilecheck.model import api  # noqa: E402
from tilecheck.sim.frontend import parse_module  # noqa: E402
from tilecheck.sim.plan import RunContext, compile_function  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402
from tilecheck.verify import compiled  # noqa: E402

HALF = str(ROOT / "examples" / "cuda" / "half.ptx")
FLOAT = str(ROOT / "examples" / "cuda" / "float.ptx")
SINGLE = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) one(.param .b32 a, .param .b32 b)
{
  .reg .f32 %f<4>;
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  div.rn.f32 %f3, %f1, %f2;
  st.param.f32 [r], %f3;
  ret;
}
"""


def sweep(db, path, entry, against, n, label):
    """Run the first ``n`` inputs of the exhaustive enumeration; print rate and projection."""
    t0 = time.perf_counter()
    o = compiled.verify_ptx(path, entry, against, db=db, exhaustive=True, limit=n)
    dt = time.perf_counter() - t0
    total = 1 << 32
    rate = o.inputs_checked / dt
    kind = "measured" if o.exhaustive else "projected from the measured rate"
    full = dt if o.exhaustive else total / rate
    print(f"{label}: {o.inputs_checked} inputs ({'all' if o.exhaustive else 'first slice of 2^32'}), "
          f"{o.lanes_run} lanes (inputs x allowed choices), {dt:.1f} s, {rate / 1e6:.3f} M inputs/s, "
          f"verdict on the slice: {o.verdict} ({o.misrounded_count} misrounded); "
          f"all 2^32: {full / 60:.1f} min ({kind})")
    return o, dt


def simulator_targets(db):
    """Single-instruction kernel vs the model; lane evaluations per second of the __hdiv sequence."""
    rng = np.random.default_rng(1)
    n = 1 << 20
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    form = db.resolve("div.rn.f32")
    module = parse_module(SINGLE, "single.ptx")
    plan = compile_function(module.function("one"), db, "single.ptx")
    best_model = best_plan = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        want = api.evaluate(form, a, b)
        best_model = min(best_model, time.perf_counter() - t0)
        lanes = plan.new_lanes(n)
        lanes.params["a"], lanes.params["b"] = a.astype(np.uint64), b.astype(np.uint64)
        t0 = time.perf_counter()
        plan.run(lanes, RunContext())
        best_plan = min(best_plan, time.perf_counter() - t0)
    got = lanes.params["r"].astype(np.uint32)
    assert np.array_equal(got, want), "the plan and the model disagree"
    print(f"single-instruction kernel (div.rn.f32, 2^20 lanes): model {best_model * 1e3:.1f} ms, plan "
          f"{best_plan * 1e3:.1f} ms, ratio {best_plan / best_model:.2f}x (target <= 2x)")
    # the __hdiv sequence: lanes x executed instructions per second, all allowed rcp results
    path = HALF
    fn = parse_module(Path(path).read_text(), path).function("k_hdiv_f16")
    plan = compile_function(fn, db, path)
    ref = compiled.parse_reference("div.rn.f16", db)
    abi = compiled.find_abi(plan, ref, path)
    m = 1 << 20
    ops = compiled._exhaustive_block(ref, 1 << 24, (1 << 24) + m)
    t0 = time.perf_counter()
    res = compiled.run_block(plan, abi, ref, compiled._pack(abi, ref, ops),
                             dict(approx="all", ulp_reading="either", tininess="after"))
    dt = time.perf_counter() - t0
    executed = len(plan.steps)  # upper bound of steps per lane; the fix-up branch skips some
    print(f"__hdiv sequence (k_hdiv_f16, {len(plan.steps)} instructions, 2^20 inputs, 1 thread): {res.lanes} lanes, "
          f"{dt:.2f} s, {res.lanes / dt / 1e6:.2f} M lanes/s, <= {res.lanes * executed / dt / 1e6:.0f} M "
          f"lane-instructions/s (target: 30 M lane-evaluations/s)")


def main() -> int:
    """Run the benchmark; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slice-log2", type=int, default=22, help="inputs per sweep slice, log2 (default 22)")
    ap.add_argument("--full", choices=("hdiv", "frsqrt"), help="run this sweep over all 2^32 inputs")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; TILECHECK_THREADS={os.environ.get('TILECHECK_THREADS', 'unset')}")
    db = load_database()
    simulator_targets(db)
    n = 1 << args.slice_log2
    sweep(db, HALF, "k_hdiv_f16", "div.rn.f16", (1 << 32) if args.full == "hdiv" else n,
          "__hdiv exhaustive (every allowed rcp.approx.ftz.f32 result)")
    sweep(db, FLOAT, "k_frsqrt_rn", "rsqrt.rn.f32", (1 << 32) if args.full == "frsqrt" else n,
          "__frsqrt_rn exhaustive (every allowed rsqrt.approx.ftz.f32 result)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
