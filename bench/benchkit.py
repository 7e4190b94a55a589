"""What the benchmarks share: best-of timing and the header line saying when, where and under
what load a run took place (imported by the scripts beside it, run as ``python bench/NAME.py``)."""

from __future__ import annotations

import os
import platform
import time


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def load() -> str:
    """The load average now (``load average unknown`` where the system does not tell)."""
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def usable_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_line() -> str:
    """``Measured <UTC time>; <machine>; N CPUs (M usable); load average ...``."""
    return (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()}; "
            f"{os.cpu_count()} CPUs ({usable_cpus()} usable); {load()}.")
