"""Sharded campaigns: the same CPU-bound campaign on a local Dask cluster of 1 and of 2 workers.

The campaign (``div.rn.f32`` and ``sqrt.rz.f32`` on the cpu backend: emitted PTX executed by the
simulator, every result judged by ``tilecheck.allowed``) runs once per cluster size in the same
process run; each cluster first runs a small warm-up campaign so that worker start-up (imports, the
spec database, kernel emission) is not timed. It prints the wall time of each, the speedup, whether
the two runs wrote byte-identical ``checkpoint.json`` and ``findings.jsonl``, and the load average
before and after (the speedup is only meaningful on an otherwise idle machine; the load says how
idle it was). Usage: ``python bench/bench_dask.py [--cases 400000] [--batch 32768]``.

``--verify FILE.ptx --entry NAME --against REF`` times the compiler-PTX verifier's exhaustive run
instead (``tilecheck verify FILE.ptx --exhaustive --workers N``; ``--limit N``: its first N inputs,
default 2^22; ``--batch``: inputs per batch, default 2^18) on 1 and on 2 workers, alternating for
``--rounds`` rounds (default 2), each cluster warmed up first (the function compiled and run once
on every worker); it prints every time, the speedup of the best times and whether all reports are
identical (all but ``seconds``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from tilecheck.diff.campaign import BackendSpec, Campaign, Config
from tilecheck.diff.distributed import DaskExecutor, local_cluster, require_dask
from tilecheck.spec.database import load_database
from tilecheck.verify import sharded

FORMS = ("div.rn.f32", "sqrt.rz.f32")


def timed_run(workers: int, config: Config, out: Path) -> float:
    """Wall seconds of ``config`` on a fresh local cluster of ``workers`` (warmed up first)."""
    distributed = require_dask()
    db = load_database()
    cluster = local_cluster(workers, dashboard=False)
    client = distributed.Client(cluster)
    try:
        executor = DaskExecutor(client, BackendSpec.of(config))
        view = executor.describe(config.forms)
        warm = Config(config.forms, seed=config.seed + 1, cases=config.batch * workers, batch=config.batch,
                      backend=config.backend)
        Campaign(warm, view, str(out / "warm"), db=db, executor=executor).run()
        t = time.perf_counter()
        result = Campaign(config, view, str(out / "run"), db=db, executor=executor).run()
        seconds = time.perf_counter() - t
        assert result.finished and result.cases == config.cases * len(config.forms)
        return seconds
    finally:
        client.close()
        cluster.close()


def timed_verify(workers: int, args) -> tuple[float, str]:
    """Wall seconds of the exhaustive verification of ``args`` on a fresh local cluster of
    ``workers``, and its report as JSON without ``seconds``."""
    from tilecheck.commands.verify_ptx import to_json

    distributed = require_dask()
    db = load_database()
    cluster = local_cluster(workers, dashboard=False)
    client = distributed.Client(cluster)
    try:
        with open(args.verify, encoding="utf-8") as fh:
            text = fh.read()
        job = sharded.Job(args.verify, text, args.entry, args.against, "either", "all", "after",
                          sharded.block_of(args.batch))
        client.run(sharded.run_batch, job, 0, 0, job.block)  # every worker compiles and runs once: not timed
        t = time.perf_counter()
        run = sharded.verify_batched(args.verify, args.entry, args.against, db=db, batch=args.batch,
                                     limit=args.limit, client=client)
        seconds = time.perf_counter() - t
        assert run.finished and run.outcome.inputs_checked == args.limit
        report = to_json(run.outcome)
        report.pop("seconds")
        return seconds, json.dumps(report)
    finally:
        client.close()
        cluster.close()


def main_verify(args) -> None:
    """``--verify``: the verifier's exhaustive run on 1 and 2 workers."""
    load_before = os.getloadavg()
    times: dict[int, list[float]] = {1: [], 2: []}
    reports = set()
    for _ in range(args.rounds):  # alternating, so that a change of load hits both sizes
        for workers in (1, 2):
            seconds, report = timed_verify(workers, args)
            times[workers].append(seconds)
            reports.add(report)
    load_after = os.getloadavg()
    one, two = min(times[1]), min(times[2])
    print(f"verify {args.verify} --entry {args.entry} --against {args.against} --exhaustive: first {args.limit} "
          f"inputs, batch {args.batch} (cores: {os.cpu_count()}); best of {args.rounds} alternating round(s)")
    for workers, best in ((1, one), (2, two)):
        every = ", ".join(f"{t:.2f}" for t in times[workers])
        print(f"{workers} worker{'s' if workers > 1 else ' '}: {best:7.2f} s  {args.limit / best / 1e3:8.1f} k inputs/s "
              f"(each round: {every} s)")
    print(f"speedup  : {one / two:.2f}x; reports identical (all but seconds): {len(reports) == 1}")
    print(f"load average (1, 5, 15 min) before: {', '.join(f'{v:.2f}' for v in load_before)}; "
          f"after: {', '.join(f'{v:.2f}' for v in load_after)}")


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=400_000, help="cases per form (default 400000)")
    parser.add_argument("--batch", type=int, default=None,
                        help="cases per batch (default 32768; with --verify, inputs per batch, default 262144)")
    parser.add_argument("--verify", metavar="FILE.ptx", help="time the verifier's exhaustive run of FILE.ptx instead")
    parser.add_argument("--entry", default="k_hdiv_f16", help="with --verify: the function (default k_hdiv_f16)")
    parser.add_argument("--against", default="div.rn.f16", help="with --verify: the reference (default div.rn.f16)")
    parser.add_argument("--limit", type=int, default=1 << 22,
                        help="with --verify: the first N inputs (default 4194304)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="with --verify: alternating rounds of 1 and 2 workers, best of each (default 2)")
    args = parser.parse_args()
    if args.verify:
        args.batch = args.batch or 1 << 18
        main_verify(args)
        return
    args.batch = args.batch or 32_768
    config = Config(FORMS, seed=1, cases=args.cases, batch=args.batch, backend="cpu", shrink=0)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        one = timed_run(1, config, base / "one")
        two = timed_run(2, config, base / "two")
        same = all((base / "one" / "run" / name).read_bytes().replace(b"/one/", b"/two/")
                   == (base / "two" / "run" / name).read_bytes() for name in ("checkpoint.json", "findings.jsonl"))
    load_after = os.getloadavg()
    total = config.cases * len(FORMS)
    print(f"campaign: {', '.join(FORMS)}, {args.cases} cases each, batch {args.batch}, cpu backend "
          f"(cores: {os.cpu_count()})")
    print(f"1 worker : {one:7.2f} s  {total / one / 1e3:8.1f} k cases/s")
    print(f"2 workers: {two:7.2f} s  {total / two / 1e3:8.1f} k cases/s")
    print(f"speedup  : {one / two:.2f}x; checkpoint and findings byte-identical: {same}")
    print(f"load average (1, 5, 15 min) before: {', '.join(f'{v:.2f}' for v in load_before)}; "
          f"after: {', '.join(f'{v:.2f}' for v in load_after)}")


if __name__ == "__main__":
    main()
