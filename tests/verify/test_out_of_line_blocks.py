"""Blocks LLVM places after the function's ``ret`` (a cold path that jumps back to the join) are
followed by the control-flow graph, not by the order of the instructions.

``libdevice.nextafter`` and ``libdevice.pow`` (Triton 3.9, sm_90, fp32, BLOCK 256 on 4 warps: two
elements per thread) branch, per element, to such a block. Read by instruction order, element 1's
branch to a block after the ``ret`` seemed to skip element 0's store, so element 0 was refused as
"not elementwise ... deciding a guard, branch or address of it". Fixtures:
``triton_nextafter_f32.ptx`` as Triton wrote it, ``triton_nextafter_f32_inline.ptx`` the same PTX
with the two blocks moved up to where their branches lead from (the same graph), and
``triton_pow_b128_f32.ptx`` pow at BLOCK 128 (one element per thread)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.sim.frontend import parse_module
from tilecheck.spec.database import load_database
from tilecheck.verify import compiled
from tilecheck.verify.slicing import Slicer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NEXTAFTER = ("selp.b32(add.rn.f32(a, b), selp.b32(b, selp.b32(or.b32(and.b32(b, 0x80000000), 1), add.s32(mov.b32(a), "
             "sub.s32(mul.lo.s32(2, xor.b32(selp.s32(1, 0, setp.lt.f32(a, b)), selp.s32(1, 0, setp.lt.f32(a, 0.0)))), "
             "1)), setp.eq.f32(a, 0.0)), setp.eq.f32(a, b)), setp.nan.f32(a, b))")
POW = "ex2.approx.f32(mul.rn.f32(b, lg2.approx.f32(a)))"


def _misrounded(name: str, entry: str, against: str) -> np.ndarray:
    rows = []
    o = compiled.verify_ptx(str(FIXTURES / name), entry, against, db=load_database(), cases=2000,
                            misrounded=rows.append)
    assert o.verdict in ("counterexample", "verified"), o.verdict
    return np.concatenate(rows) if rows else np.zeros((0, 2), dtype=np.uint64)


@pytest.mark.parametrize("cold,inline,entry,against", [
    ("triton_nextafter_f32.ptx", "triton_nextafter_f32_inline.ptx", "k_nextafter", NEXTAFTER),
    ("triton_pow_f32.ptx", "triton_pow_b128_f32.ptx", "k_pow", POW),
])
def test_a_branch_to_a_block_after_the_ret_misrounds_what_the_inline_build_does(cold, inline, entry, against):
    """Same inputs, same misrounded inputs (nextafter: its subnormals are flushed, against the
    IEEE nextafter above; pow: libdevice's exact pow against the two-instruction approximation)."""
    got, want = _misrounded(cold, entry, against), _misrounded(inline, entry, against)
    assert want.shape[0] > 0
    assert np.array_equal(got, want)


def test_the_cold_branch_controls_only_what_its_two_ways_do_not_share():
    """Element 1's `@%p20 bra $L__BB0_9` (to the block after the ret, which jumps back to the
    join before both stores) controls its own block and what it skips, not the join."""
    fn = parse_module((FIXTURES / "triton_nextafter_f32.ptx").read_text(), "x").functions["k_nextafter"]
    sl = Slicer(fn)
    branch = next(i for i, ins in enumerate(sl.instrs) if ins.text.strip().startswith("@%p20 bra"))
    store = next(i for i, ins in enumerate(sl.instrs) if "st.global" in ins.opcode)
    controlled = sl.controlled(branch)
    assert store not in controlled and controlled
    assert all(i > branch for i in controlled)
    # by the instructions' order, the branch would skip everything up to its target
    lo, hi = sl.span(branch)
    assert lo <= store < hi
