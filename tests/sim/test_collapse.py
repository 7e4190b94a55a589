"""Choices collapsed through the next step (``Plan.collapse``): an approximate result whose only
use is the pure step right after it forks once per value that step computes, and the verdicts
are those of forking every allowed result.

What each comparison establishes: the runs with and without the collapse share everything but
the collapse (the same plan, contracts and judging), so equal tallies show that dropping the
choices the next step makes equal loses no result; the lane counts show that it drops some.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import RunContext, compile_function
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]


def _plans(p) -> list:
    return [g.plan for g in p.abi.layout.groups] if p.abi.layout is not None else [p.plan]


def _tally(p, start: int, collapse: bool):
    kept = [plan.collapse for plan in _plans(p)]
    try:
        if not collapse:
            for plan in _plans(p):
                plan.collapse = {}
        return compiled.run_range(p, start, start + compiled.EXHAUSTIVE_BLOCK)
    finally:
        for plan, c in zip(_plans(p), kept):
            plan.collapse = c


@pytest.mark.parametrize("path,entry,against,block", [
    ("examples/triton/div_f16.ptx", "div_kernel", "div.rn.f16", 0x0111),
    ("examples/triton/div_f16_v.ptx", "div_kernel", "div.rn.f16", 0x0667),
    ("examples/triton/div_bf16_v.ptx", "div_kernel", "div.rn.bf16", 0x3F81),
    ("examples/triton/rcp_f16.ptx", "rcp_kernel", "rcp.rn.f16", 0),
    ("examples/triton/sqrt_f16_up.ptx", "sqrt_up_kernel", "sqrt.rn.f16", 0),
])
def test_a_collapsed_block_reports_what_every_choice_does(db, path, entry, against, block):
    """One exhaustive block of a Triton kernel whose approximate result is converted right away:
    the same misrounded inputs, classes, unknowns and examples with the collapse as without it,
    on fewer lanes."""
    p = compiled.prepare(str(ROOT / path), entry, against, db=db)
    assert any(plan.collapse for plan in _plans(p)), "the approximate step should collapse through its cvt"
    start = block * compiled.EXHAUSTIVE_BLOCK if p.domain > compiled.EXHAUSTIVE_BLOCK else 0
    on, off = _tally(p, start, True), _tally(p, start, False)
    assert (on.checked, on.misrounded, on.by_value, on.unknown) == (off.checked, off.misrounded, off.by_value,
                                                                    off.unknown)
    assert on.inputs == off.inputs and on.first_value == off.first_value and on.first_zero == off.first_zero
    assert on.lanes < off.lanes


def test_a_counterexample_still_names_the_choice(db):
    """A trace (the run a counterexample's report comes from) forks every choice: the repro of a
    Triton half division names what div.full.f32 returned."""
    o = compiled.verify_ptx(str(ROOT / "examples/triton/div_f16.ptx"), "div_kernel", "div.rn.f16", db=db,
                            cases=2000)
    assert o.verdict_word == "counterexample"
    choices = o.counterexamples[0]["approximate_choices"]
    assert choices and choices[0]["instruction"].startswith("div.full.f32")


REUSED = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) again(.param .b32 a)
{
  .reg .f32 %f<5>;
  .reg .b16 %h<2>;
  ld.param.f32 %f1, [a];
  rcp.approx.ftz.f32 %f2, %f1;
  cvt.rn.f16.f32 %h1, %f2;
  cvt.f32.f16 %f3, %h1;
  add.rn.f32 %f4, %f3, %f2;
  st.param.f32 [r], %f4;
  ret;
}
"""


def test_no_collapse_where_the_result_is_read_again(db):
    """The approximate result is read after the step that follows it: each allowed result forks
    (two choices the cvt rounds alike still give different sums)."""
    plan = compile_function(parse_module(REUSED, "t.ptx").function("again"), db, "t.ptx")
    assert plan.collapse == {}
    a = np.array([3.0, 7.0, 0.1], dtype=np.float32).view(np.uint32)
    lanes = plan.new_lanes(a.size)
    lanes.params["a"] = a.astype(np.uint64)
    plan.run(lanes, RunContext())
    from tilecheck.sim.choices import allowed_choices

    ch = allowed_choices(db.resolve("rcp.approx.ftz.f32"), [a])
    assert lanes.size == int(ch.valid.sum())


ONCE = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b16 r) once(.param .b32 a)
{
  .reg .f32 %f<3>;
  .reg .b16 %h<2>;
  ld.param.f32 %f1, [a];
  rcp.approx.ftz.f32 %f2, %f1;
  cvt.rn.f16.f32 %h1, %f2;
  st.param.b16 [r], %h1;
  ret;
}
"""


def test_collapsed_lanes_are_the_distinct_conversions(db):
    """rcp.approx.ftz.f32 then cvt.rn.f16.f32: per input, one lane per distinct half that some
    allowed result rounds to (numpy's float32 -> float16 cast gives those halves, independently of
    the simulator's conversion)."""
    plan = compile_function(parse_module(ONCE, "t.ptx").function("once"), db, "t.ptx")
    assert [plan.steps[k].instr.opcode for k in plan.collapse] == ["rcp.approx.ftz.f32"]
    rng = np.random.default_rng(5)
    a = np.concatenate([np.array([3.0, 7.0, 0.1, 1.0, 65504.0, 2.0 ** -20], dtype=np.float32),
                        rng.uniform(-1e4, 1e4, 2000).astype(np.float32)]).view(np.uint32)
    lanes = plan.new_lanes(a.size)
    lanes.params["a"] = a.astype(np.uint64)
    plan.run(lanes, RunContext())
    from tilecheck.sim.choices import allowed_choices

    ch = allowed_choices(db.resolve("rcp.approx.ftz.f32"), [a])
    got = lanes.params["r"].astype(np.uint16)
    for i in range(a.size):
        with np.errstate(over="ignore"):  # results past the half range round to infinity
            halves = ch.values[i][ch.valid[i]].astype(np.uint32).view(np.float32).astype(np.float16).view(np.uint16)
        mine = np.sort(got[lanes.origin == i])
        assert mine.tolist() == sorted(set(halves.tolist())), hex(int(a[i]))
