"""What the pages cost: the whole ``tilecheck doc`` site, and what ``verify FILE.ptx --html`` adds
to a run, against the run itself, measured in the same process.

    python bench/bench_reports.py [--cases 2000]

The issue's targets: the site in under a minute on 2 cores, a report under a second on top of a
run. Prints both, and the report's cost as a ratio of the verification it reports on (the peer
measured in the same run). Matplotlib's first import is most of a report's cost and is counted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from benchkit import machine_line  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    args = parser.parse_args()
    from tilecheck.commands import verify_ptx
    from tilecheck.spec.database import load_database
    from tilecheck.verify import compiled

    db = load_database()
    half = str(HERE.parent / "examples" / "cuda" / "half.ptx")
    print(machine_line())
    t = time.perf_counter()
    outcome = compiled.verify_ptx(half, "k_hdiv_f16", "div.rn.f16", db=db, cases=args.cases)
    run = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t, cpu = time.perf_counter(), time.process_time()
        outcome.misround_positions = compiled.misround_positions(outcome.prepared, outcome.misrounded)
        from tilecheck.report import run_report

        run_report.write_ptx_report(str(Path(tmp) / "r.html"), verify_ptx.to_json(outcome), outcome.prepared)
        report, report_cpu = time.perf_counter() - t, time.process_time() - cpu
        from tilecheck.report.site import build_site

        t = time.perf_counter()
        pages = build_site(db, Path(tmp) / "site")
        site = time.perf_counter() - t
    print(f"verify k_hdiv_f16, {args.cases} cases: {run:.2f} s")
    print(f"--html on top of it: {report:.2f} s wall, {report_cpu:.2f} s CPU (target < 1 s); "
          f"ratio report/run {report / run:.2f}x")
    print(f"tilecheck doc: {len(pages)} pages in {site:.1f} s (target < 60 s)")


if __name__ == "__main__":
    main()
