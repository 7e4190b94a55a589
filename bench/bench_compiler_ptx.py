"""Speed of compiled-code verification (issues 12 item 6, 13 item 2, 21 item 4, 22 item 5), measured in one run.

    python bench/bench_compiler_ptx.py [--blocks K] [--only hdiv|frsqrt|hdiv-bf16|triton-f16|triton-f16-v]
    python bench/bench_compiler_ptx.py --full hdiv|frsqrt|hdiv-bf16|triton-f16|triton-f16-v [--json FILE]

Prints, for the committed nvcc PTX:

* ``__hdiv`` (examples/cuda/half.ptx, k_hdiv_f16) against div.rn.f16, every allowed result of
  rcp.approx.ftz.f32: K blocks of 2^16 pairs spread evenly over the exhaustive enumeration (K = 64
  by default; blocks differ a lot in cost: the divisor's class decides which branch runs), run two
  at a time in worker processes as the verifier runs a whole sweep, the measured rate, and the time
  all 2^32 pairs would take at that rate (labelled "projected"; it includes starting the workers,
  not compiling the kernels: one block runs first, untimed); then the same blocks on two threads of
  one process, for comparison;
* ``__frsqrt_rn`` (k_frsqrt_rn) against rsqrt.rn.f32: likewise over K blocks of its 2^32 inputs;
* bfloat16 ``__hdiv`` (k_hdiv_bf16) against div.rn.bf16, every allowed ``div.approx.f32`` result
  (issue 21 item 4: the whole run within 10 minutes on 2 cores): likewise over K blocks, spread so
  that they hold every divisor significand (the division contract is remembered per pair of
  significands, as in a whole run);
* Triton's float16 ``a / b`` (examples/triton/div_f16.ptx, one element per thread, and
  div_f16_v.ptx, eight per thread through 128-bit vectors) against div.rn.f16, every allowed
  ``div.full.f32`` result, through the whole kernel: likewise over K blocks, with the ratio of its
  inputs per second to ``__hdiv``'s measured in the same run (issue 22 item 5: at least 1);
* the simulator targets: a single-instruction kernel (``div.rn.f32``) through the plan vs the model
  evaluating the same inputs (ratio); lanes per second of the nvcc ``__hdiv`` sequence on one
  thread (2^20 inputs of 16 divisors), with the plan's fused regions and with every step as numpy
  (``RunContext.fuse``); and, last, the lane evaluations per second on the machine's cores that
  the ``__hdiv`` sweep above measured (a lane: one input under one combination of allowed
  approximate results, run through the whole sequence and judged).

``--full`` runs one of the exhaustive sweeps completely instead of projecting it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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
TRITON = ROOT / "examples" / "triton"
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


F16_BLOCKS = dict(base=0x1A5, offset=0x12E)
"""The float16 division sweeps' blocks (the divisor is a block's index): two divisor significands
of no particular shape (0x1A5 and 0x2D3; with no offset every divisor would be a power of two,
whose quotients are exact), in every sign and binade for K = 64, the NaN divisors included."""


def sweep(db, path, entry, against, blocks, label, full=False, target_min=30, offset=0, json_path=None,
          base=0):
    """Run ``blocks`` evenly spaced blocks of the exhaustive enumeration (or all of it with
    ``full``), two at a time; print the rate and the projection to every input against
    ``target_min`` minutes; returns (lanes per second, what they were measured over). Block k
    starts ``base + (k mod 2) * offset`` blocks after the k-th even spacing: with K blocks 256
    apart (bfloat16, K = 256) or 1024 apart (float16, K = 64) the divisors then have two
    significands, each in K/2 sign-and-binade combinations -- the special divisors (NaN and
    infinity) among them in the share a whole run has -- as a whole run has each significand in all
    of them (work remembered per significand is paid once per K/2 blocks, about twice as often as
    in a whole run)."""
    if full:
        t0 = time.perf_counter()
        o = compiled.verify_ptx(path, entry, against, db=db, exhaustive=True)
        dt = time.perf_counter() - t0
        classes = ", ".join(f"{k} {v}" for k, v in o.misrounded_classes.items()) or "none"
        print(f"{label}: all {o.inputs_checked} inputs, {o.lanes_run} lanes (inputs x allowed choices), "
              f"{dt / 60:.1f} min (measured; target {target_min} min), {o.lanes_run / dt / 1e6:.1f} M lanes/s, "
              f"verdict {o.verdict_word} ({o.misrounded_count} misrounded; by class: {classes}; "
              f"{o.unknown_count} unknown)")
        if json_path:  # the report's JSON, as `tilecheck verify ... --json` writes it
            from tilecheck.commands.verify_ptx import to_json
            Path(json_path).write_text(json.dumps(to_json(o), indent=2) + "\n", encoding="utf-8")
        return o.lanes_run / dt, "the whole sweep", o.inputs_checked / dt
    p = compiled.prepare(path, entry, against, db=db)
    total = compiled.exhaustive_total(p)
    size = compiled.EXHAUSTIVE_BLOCK
    starts = [((total // blocks) // size * k + base + (k % 2) * offset) % (total // size) * size for k in range(blocks)]
    # one block first, untimed: Numba compiles (or loads) the fused kernels once, and the workers
    # forked below inherit them (a whole run pays this once per worker, a second or two)
    compiled.run_range(p, starts[1], starts[1] + size)
    t0 = time.perf_counter()
    # two at a time, as the verifier runs a whole sweep: in two worker processes
    tally = compiled.run_ranges(p, [(s, s + size) for s in starts], workers=2)
    dt = time.perf_counter() - t0
    rate = tally.checked / dt
    # for comparison: the same blocks on two threads of this process (the verifier before it used
    # worker processes, and still for runs under compiled.PROCESS_MIN inputs)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = list(pool.map(lambda s: compiled.run_range(p, s, s + size), starts))
    dt_threads = time.perf_counter() - t0
    assert sum(t.misrounded for t in threaded) == tally.misrounded, "threads and processes disagree"
    print(f"{label}: {blocks} blocks of {size} inputs spread over all {total}, {tally.checked} inputs, "
          f"{tally.lanes} lanes ({tally.lanes / tally.checked:.2f} per input), {dt:.1f} s, "
          f"{rate / 1e6:.3f} M inputs/s = {tally.lanes / dt / 1e6:.1f} M lanes/s (2 worker processes, their start "
          f"included), {tally.misrounded} misrounded in the sample; "
          f"all {total}: {total / rate / 60:.1f} min (projected from the measured rate; target {target_min} min); "
          f"on 2 threads instead: {dt_threads:.1f} s, {total / (tally.checked / dt_threads) / 60:.1f} min projected")
    return tally.lanes / dt, f"{blocks} blocks of the sweep", rate


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
    ops = compiled.exhaustive_block(ref, 1 << 24, (1 << 24) + m)
    packed = compiled._pack(abi, ref, ops)
    executed = len(plan.steps)  # upper bound of steps per lane; the fix-up branch skips some
    fused_steps = sum(r.end - r.start for r in plan.regions.values())
    rates = {}
    for fuse in (True, False):  # fused regions (tilecheck/sim/fused.py), and every step as numpy
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            res = compiled.run_block(plan, abi, ref, packed, dict(approx="all", ulp_reading="either",
                                                                  tininess="after", fuse=fuse))
            best = min(best, time.perf_counter() - t0)
        rates[fuse] = res.lanes / best
        label = f"{fused_steps} of {len(plan.steps)} steps fused" if fuse else "every step as numpy"
        print(f"__hdiv sequence (k_hdiv_f16, {len(plan.steps)} instructions, 2^20 inputs, 1 thread, {label}): "
              f"{res.lanes} lanes, {best:.2f} s, {res.lanes / best / 1e6:.2f} M lanes/s, <= "
              f"{res.lanes * executed / best / 1e6:.0f} M lane-instructions/s (item 2's figure, on every core: the "
              "last line)")
    print(f"__hdiv sequence: fused / numpy steps {rates[True] / rates[False]:.2f}x")


def main() -> int:
    """Run the benchmark; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=64, help="blocks of 2^16 inputs measured per sweep (default 64)")
    sweeps = ("hdiv", "frsqrt", "hdiv-bf16", "triton-f16", "triton-f16-v")
    ap.add_argument("--full", choices=sweeps, help="run this sweep over all 2^32 inputs")
    ap.add_argument("--only", choices=sweeps, help="run this sweep alone (no simulator targets)")
    ap.add_argument("--json", help="with --full: write the run's report JSON here (as tilecheck verify --json)")
    args = ap.parse_args()
    if args.blocks < 1 or args.blocks & (args.blocks - 1) or args.blocks > 1 << 16:
        ap.error("--blocks must be a power of two between 1 and 65536")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.2f} at the start; "
          f"TILECHECK_THREADS={os.environ.get('TILECHECK_THREADS', 'unset')}")
    db = load_database()
    # the sweeps first: the simulator targets start the model's thread pool, and a process running
    # threads starts its workers afresh instead of forking them (as the command line does)
    wanted = (lambda name: args.only in (None, name)) if args.full is None else (lambda name: args.full == name)
    hdiv_inputs = None
    if wanted("hdiv") or (args.full is None and args.only in ("triton-f16", "triton-f16-v")):
        hdiv_rate, hdiv_over, hdiv_inputs = sweep(db, HALF, "k_hdiv_f16", "div.rn.f16", args.blocks,
                                                  "__hdiv exhaustive (every allowed rcp.approx.ftz.f32 result)",
                                                  args.full == "hdiv", json_path=args.json, **F16_BLOCKS)
    for name, kernel, how in (("triton-f16", "div_f16.ptx", "one element per thread"),
                              ("triton-f16-v", "div_f16_v.ptx", "8 elements per thread, 128-bit vectors")):
        if wanted(name):
            # issue 22 item 5: a whole Triton kernel, 2^32 pairs x every allowed div.full.f32 result,
            # at nvcc's __hdiv rate (inputs per second, measured above in this run) or better
            _, _, rate = sweep(db, str(TRITON / kernel), "div_kernel", "div.rn.f16", args.blocks,
                               f"Triton float16 a / b ({kernel}, {how}; every allowed div.full.f32 result)",
                               args.full == name, json_path=args.json, **F16_BLOCKS)
            if hdiv_inputs:
                print(f"  {kernel} / __hdiv, inputs per second: {rate / hdiv_inputs:.2f}x (target: at least 1)")
    if wanted("frsqrt"):
        sweep(db, FLOAT, "k_frsqrt_rn", "rsqrt.rn.f32", args.blocks,
              "__frsqrt_rn exhaustive (every allowed rsqrt.approx.ftz.f32 result)", args.full == "frsqrt",
              json_path=args.json)
    if wanted("hdiv-bf16"):
        # a block holds one divisor: give the blocks' divisors two significands (every 256th block
        # has the same one), each over many binades, as across a whole run
        sweep(db, HALF, "k_hdiv_bf16", "div.rn.bf16", args.blocks,
              "bfloat16 __hdiv exhaustive (every allowed div.approx.f32 result)", args.full == "hdiv-bf16",
              target_min=10, offset=1, json_path=args.json)
    if args.full is not None or args.only not in (None, "hdiv"):
        return 0
    simulator_targets(db)
    # a lane: one input under one combination of allowed approximate results, run through the
    # whole sequence (each of its instructions it reaches) and judged
    print(f"issue 13 item 2, the nvcc __hdiv sequence on {os.cpu_count()} cores (the verifier's worker processes, "
          f"reference and judging included): {hdiv_rate / 1e6:.1f} M lane-evaluations/s over {hdiv_over} "
          f"(target: at least 30 M)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
