"""The AMDGCN verifier against an independent enumeration, divisor by divisor.

``tools/xcheck_amd_hdiv.py`` interprets the two f16 division sequences (llc-19's and Triton 3.9's
for gfx942) in exact integer arithmetic of its own, under V_RCP_F32's 1-ulp contract read from the
exact value (the reading of spec/amdgpu/v_rcp.yaml); it shares no arithmetic with tilecheck. Here
both count the misrounded numerators of whole divisors (all 65,536 numerators each), and the sets
must be equal: the simulator's run of the committed assembly, with every allowed reciprocal,
against the tool's reading of the same instructions. b = 2 and 65504 misround under llc (2,048 and
2 numerators: exact ties of subnormal quotients broken the wrong way); Triton's correction step
leaves none.

The verifier runs with ``ulp_reading="exact"`` against the tool's ``exact`` reading (the same
definition: ``|r - 1/b| <= ulp(1/b)``, ulp measured at the exact value). No reading of the tool
equals tilecheck's ``correctly-rounded`` one (``r`` at most one f32 value from RN(1/b)), so that
reading is not cross-checked here. The nearest, ``steps`` (no f32 strictly between ``r`` and
``1/b``), agrees with it only at ``1/b = 2^k`` (both allow one step below and one above); for every
other divisor ``steps`` allows {RD, RU} and the correctly-rounded reading also the value one step
beyond RN on the far side (3 values); ``faithful`` and ``rn`` are narrower still.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tilecheck.verify import amdgcn, compiled

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import xcheck_amd_hdiv as xcheck  # noqa: E402

CASES = [("llc", "examples/amdgpu/arith_gfx942.s", "fdiv_f16", [0x4000, 0x7BFF, 0xB4C3, 0x0001]),
         ("triton", "examples/amdgpu/triton/div_f16.s", "div_kernel", [0x4000, 0xC200])]


@pytest.mark.parametrize("sequence,path,entry,divisors", CASES, ids=[c[0] for c in CASES])
def test_misrounded_numerators_match(db, sequence, path, entry, divisors):
    p = amdgcn.prepare(str(ROOT / path), entry, "div.rn.f16", db=db)
    for b in divisors:
        ops = [o.astype(np.uint64) for o in compiled.exhaustive_block(p.ref, b << 16, (b + 1) << 16)]
        ours = set(np.flatnonzero(amdgcn.run_inputs(p, ops, ulp_reading="exact").bad).tolist())
        _, bad = xcheck.check_divisor(sequence, b, "exact")
        theirs = {a for a, _, _ in bad}
        assert ours == theirs, (hex(b), len(ours), len(theirs), sorted(ours ^ theirs)[:5])
        if sequence == "llc" and b == 0x4000:
            assert len(ours) == 2048


@pytest.mark.parametrize("divisor,per_reading", [(0x4200, {"exact": 2, "correctly-rounded": 3, "either": 3}),
                                                 (0x3C00, {"exact": 4, "correctly-rounded": 3, "either": 4})])
def test_the_ulp_reading_reaches_the_reciprocal_forks(db, divisor, per_reading):
    """``run_inputs(ulp_reading=...)`` enumerates V_RCP_F32's results under that reading: 1/3 is no
    f32 (exact: RD and RU; correctly rounded: RN and one value either side), 1/1 is (exact: two
    steps below, one above; correctly rounded: one either side); ``either`` is their union."""
    p = amdgcn.prepare(str(ROOT / CASES[0][1]), CASES[0][2], "div.rn.f16", db=db)
    ops = [o.astype(np.uint64)[:512] for o in compiled.exhaustive_block(p.ref, divisor << 16, (divisor + 1) << 16)]
    for reading, forks in per_reading.items():
        assert amdgcn.run_inputs(p, ops, ulp_reading=reading).lanes == forks * ops[0].size, reading
