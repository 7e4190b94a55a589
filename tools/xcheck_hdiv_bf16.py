"""Cross-check an exhaustive bfloat16 ``__hdiv`` verdict with an independent interpretation.

    tilecheck verify examples/cuda/half.ptx --entry k_hdiv_bf16 --against div.rn.bf16 --exhaustive --json run.json
    python tools/xcheck_hdiv_bf16.py run.json [--others N]

Every misrounded pair the JSON lists is run through the interpretation of nvcc's sequence in
Python fractions of ``tests/sim/test_hdiv_bf16_independent.py`` (allowed ``div.approx.f32``
quotients with the IEEE sign, the FMA rescale, ``cvt.rn.bf16.f32``; no arithmetic of the model),
which must find it misrounded in value; then ``N`` random pairs the JSON does not list (finite
operands, a normal divisor), which it must find correctly rounded for every allowed quotient.
Exit 0 when both hold, 1 otherwise, 2 when the JSON does not hold the whole list.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "sim"))

import test_hdiv_bf16_independent as independent  # noqa: E402


def main(argv=None) -> int:
    """Run the cross-check; returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="the --json output of the exhaustive k_hdiv_bf16 run")
    ap.add_argument("--others", type=int, default=200_000, help="random unlisted pairs to check (default 200000)")
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args(argv)
    data = json.loads(Path(args.json).read_text(encoding="utf-8"))
    if not data.get("exhaustive") or data.get("misrounded_capped"):
        print(f"{args.json}: not an exhaustive run listing every misrounded pair", file=sys.stderr)
        return 2
    listed = [(int(a, 16), int(b, 16)) for a, b in data["misrounded_inputs"]]
    started = time.time()
    missed = [p for p in listed if not independent.independent_misrounds(*p)[1]]
    print(f"{len(listed)} listed pairs: {len(listed) - len(missed)} misround in value independently, "
          f"{len(missed)} do not {[tuple(map(hex, p)) for p in missed[:5]]} ({time.time() - started:.0f} s)")
    rng = random.Random(args.seed)
    known = set(listed)
    others = []
    while len(others) < args.others:
        a, b = rng.randrange(1 << 16), rng.randrange(1 << 16)
        va, vb = independent._value(a, 7, 8), independent._value(b, 7, 8)
        if va in (None, 0) or vb in (None, 0) or (b & 0x7F80) == 0 or (a, b) in known:
            continue  # zeros, infinities, NaNs: the special table; a subnormal divisor: unknown
        others.append((a, b))
    started = time.time()
    extra = [p for p in others if independent.independent_misrounds(*p)[0]]
    print(f"{len(others)} random unlisted pairs: {len(extra)} misround independently "
          f"{[tuple(map(hex, p)) for p in extra[:5]]} ({time.time() - started:.0f} s)")
    return 1 if missed or extra else 0


if __name__ == "__main__":
    sys.exit(main())
