"""Sharded campaigns: the same CPU-bound campaign on a local Dask cluster of 1 and of 2 workers.

The campaign (``div.rn.f32`` and ``sqrt.rz.f32`` on the cpu backend: emitted PTX executed by the
simulator, every result judged by ``tilecheck.allowed``) runs once per cluster size in the same
process run; each cluster first runs a small warm-up campaign so that worker start-up (imports, the
spec database, kernel emission) is not timed. It prints the wall time of each, the speedup, whether
the two runs wrote byte-identical ``checkpoint.json`` and ``findings.jsonl``, and the load average
before and after (the speedup is only meaningful on an otherwise idle machine; the load says how
idle it was). Usage: ``python bench/bench_dask.py [--cases 400000] [--batch 32768]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tilecheck.diff.campaign import BackendSpec, Campaign, Config
from tilecheck.diff.distributed import DaskExecutor, local_cluster, require_dask
from tilecheck.spec.database import load_database

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


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=400_000, help="cases per form (default 400000)")
    parser.add_argument("--batch", type=int, default=32_768, help="cases per batch (default 32768)")
    args = parser.parse_args()
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
