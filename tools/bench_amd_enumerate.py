"""Time ``tilecheck.amdgpu.contract.enumerate_allowed`` on one exhaustive f32 unary block.

An exhaustive f32 unary run of the AMDGCN verifier is 65,536 blocks of 65,536 consecutive operand
patterns, each forked by ``FloatOp.choices`` into every allowed result; this times that call on
one block (default: the patterns from 1.0 up) for v_rcp_f32, v_sqrt_f32 and v_rsq_f32 under each
ulp reading the installed ``enumerate_allowed`` takes, and prints the mean allowed values per lane.

    nice -n 10 python tools/bench_amd_enumerate.py [N [FIRST_PATTERN]]
"""

from __future__ import annotations

import inspect
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's tilecheck

from tilecheck.amdgpu.contract import enumerate_allowed  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402


def main(argv: list[str]) -> int:
    """Print one timing line per form and reading."""
    n = int(argv[0]) if argv else 65536
    first = int(argv[1], 0) if len(argv) > 1 else 0x3F800000
    forms = load_database().extras["amdgpu"]["forms"]
    x = np.arange(first, first + n, dtype=np.uint64)
    # older versions have no reading argument (they apply the exact reading)
    readings = ("exact", "correctly-rounded", "either") \
        if "reading" in inspect.signature(enumerate_allowed).parameters else (None,)
    for name in ("v_rcp_f32", "v_sqrt_f32", "v_rsq_f32"):
        for reading in readings:
            kw = {} if reading is None else {"reading": reading}
            t = time.perf_counter()
            _, valid, _ = enumerate_allowed(forms[name], "observed", x, **kw)
            print(f"{name} {reading or 'exact':18s} n={n}: {time.perf_counter() - t:6.2f} s, "
                  f"{valid.sum(axis=1).mean():.3f} values per lane", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
