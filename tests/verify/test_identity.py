"""A kernel that stores one approximate form of its loaded operand, with only moves between
(:mod:`tilecheck.verify.identity`): inputs whose allowed results are more than the simulator
enumerates (``lg2.approx`` near 1) are that form's set, so they are judged, not left unknown --
against the form itself by the reference alone, against another form of the same operation by
whether every result the kernel's form allows the reference allows too; any other code around the
instruction keeps them unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.verify.compiled import prepare, verify_ptx
from tilecheck.verify.identity import stored_form

FAST_LOG2 = Path(__file__).resolve().parents[2] / "examples" / "triton" / "fast_log2_f32.ptx"

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 o, .param .u32 n)
{{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [o];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  setp.lt.s32 %p1, %r4, %r9;
  setp.lt.s32 %p2, %r4, %r9;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
{body}
  ret;
}}
"""
PLAIN = """  mov.u32 %r5, 0x0;
  @%p1 ld.global.b32 %r5, [%rd4];
  lg2.approx.ftz.f32 %r6, %r5;
  mov.b32 %r7, %r6;
  @%p1 st.global.b32 [%rd5], %r7;"""


@pytest.mark.parametrize("body,same", [
    (PLAIN, True),
    (PLAIN.replace("@%p1 ld", "ld").replace("  mov.u32 %r5, 0x0;\n", ""), True),  # unguarded load
    (PLAIN.replace("mov.b32 %r7, %r6;", "abs.f32 %r7, %r6;"), False),           # computed after
    (PLAIN + "\n  setp.gt.f32 %p2, %r6, 0f00000000;", False),                   # read otherwise
    (PLAIN.replace("  lg2", "  @%p1 lg2"), False),                              # guarded
    (PLAIN.replace("@%p1 st", "@%p2 st"), False),                               # another guard
    (PLAIN.replace("lg2.approx.ftz.f32 %r6, %r5;", "neg.f32 %r8, %r5;\n  lg2.approx.ftz.f32 %r6, %r8;"), False),
    (PLAIN.replace("  lg2.approx.ftz.f32 %r6, %r5;\n", "") .replace("  mov.u32 %r5, 0x0;\n",
                                                                   "  mov.u32 %r5, 0x0;\n  lg2.approx.ftz.f32 %r6, %r5;\n"),
     False),                                                                     # before its load
    (PLAIN + "\n  @%p2 bra DONE;\nDONE:", True),                                # an early exit (to ret)
    ("  setp.ge.s32 %p0, %r4, %r9;\n  @%p0 bra DONE;\n" + PLAIN + "\nDONE:", True),  # nvcc's if (i < n)
    (PLAIN.replace("  lg2.approx.ftz.f32 %r6, %r5;", "  @%p2 bra SKIP;\n  lg2.approx.ftz.f32 %r6, %r5;\nSKIP:"),
     False),                                                                     # a branch to code
    ("  setp.ne.s32 %p0, %r4, %r4;\nLOOP:\n" + PLAIN + "\n  @%p0 bra LOOP;", False),  # a backward branch
])
def test_what_counts_as_storing_the_form_of_the_operand(db, tmp_path, body, same):
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(body=body))
    p = prepare(str(path), "k", "lg2.approx.ftz.f32", db=db)
    assert (stored_form(p.plan, p.ref, db) is p.ref.form) is same
    other = prepare(str(path), "k", "lg2.approx.f32", db=db)  # another form of lg2: the kernel's is found
    found = stored_form(other.plan, other.ref, db)
    assert (found is not None and found.name == "lg2.approx.ftz.f32") is same
    # another operation of the same formats is found too (the allowed sets then decide)
    sqrt = prepare(str(path), "k", "sqrt.approx.f32", db=db)
    assert (stored_form(sqrt.plan, sqrt.ref, db) is not None) is same


def test_lg2_near_one_is_judged_when_the_kernel_is_the_reference(db, tmp_path, capsys):
    # log2(1 + 2^-7) ~ 0.0112: the 2^-22 absolute bound allows hundreds of floats, more than enumerated
    assert main(["verify", str(FAST_LOG2), "--entry", "fast_log2_kernel", "--against", "lg2.approx.ftz.f32",
                 "--input", "0x3f810000"]) == 0
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(body=PLAIN.replace("mov.b32 %r7, %r6;", "abs.f32 %r7, %r6;")))
    capsys.readouterr()
    assert main(["verify", str(path), "--entry", "k", "--against", "lg2.approx.ftz.f32", "--input", "0x3f810000"]) == 4


def test_the_sampled_row_leaves_only_what_the_reference_cannot_bound_unknown(db):
    out = verify_ptx(str(FAST_LOG2), "fast_log2_kernel", "lg2.approx.ftz.f32", db=db, cases=65536, processes=False)
    # the inputs left are those where the reference's own set is no single run of values (below)
    assert out.verdict == "unknown" and 0 < out.unknown_count < 10 and out.misrounded_count == 0
    assert all("no single run of values" in str(u) for u in out.unknown_inputs)


def test_lg2_near_one_against_the_other_form_is_judged_by_containment(db, tmp_path, capsys):
    # the kernel's lg2.approx.ftz.f32 against lg2.approx.f32: near 1 both allow every value within
    # 2^-22 of log2(a), hundreds of floats; every one the .ftz form allows the other allows too
    assert main(["verify", str(FAST_LOG2), "--entry", "fast_log2_kernel", "--against", "lg2.approx.f32",
                 "--input", "0x3f810000"]) == 0
    capsys.readouterr()
    # log2(1 + 2^-23) < 2^-22: the .ftz form's values have both signs and no subnormals between
    # them, no single run the model holds: unknown, not verified
    assert main(["verify", str(FAST_LOG2), "--entry", "fast_log2_kernel", "--against", "lg2.approx.f32",
                 "--input", "0x3f800001"]) == 4
    capsys.readouterr()
    # a flushed subnormal input: -Inf where log2(a) ~ -148 was due, a counterexample as before
    assert main(["verify", str(FAST_LOG2), "--entry", "fast_log2_kernel", "--against", "lg2.approx.f32",
                 "--input", "0x00000002"]) == 1
    capsys.readouterr()
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(body=PLAIN.replace("mov.b32 %r7, %r6;", "abs.f32 %r7, %r6;")))
    assert main(["verify", str(path), "--entry", "k", "--against", "lg2.approx.f32", "--input", "0x3f810000"]) == 4


# ---- the reference's own expression (identity.stored_expression) --------------------------------

LN2 = "0.693147182464599609375"
LOG = f"mul.rn.f32(lg2.approx.ftz.f32(a), {LN2})"
COMPOSED = """  mov.u32 %r5, 0x0;
  @%p1 ld.global.b32 %r5, [%rd4];
  lg2.approx.ftz.f32 %r6, %r5;
  mul.f32 %r7, %r6, 0f3F317218;
  @%p1 st.global.b32 [%rd5], %r7;"""


@pytest.mark.parametrize("body,ref,same", [
    (COMPOSED, LOG, True),
    (COMPOSED.replace("mul.f32", "mul.rn.f32"), LOG, True),                     # the same form spelled out
    (COMPOSED, LOG.replace(LN2, "0.693147242069244384765625"), False),           # another constant
    (COMPOSED, f"mul.rn.f32({LN2}, lg2.approx.ftz.f32(a))", False),              # operands swapped
    (COMPOSED, LOG.replace("mul.rn", "mul.rz"), False),                          # another rounding
    (COMPOSED, LOG.replace(".ftz", ""), False),                                  # another approximate form
    (COMPOSED.replace("0f3F317218", "%r8").replace("  mul.f32", "  mov.b32 %r8, 0f3F317218;\n  mul.f32"), LOG,
     True),                                                                      # the constant in a register
    (COMPOSED + "\n  setp.gt.f32 %p2, %r6, 0f00000000;", LOG, False),            # a choice read otherwise
    (COMPOSED.replace("  mul.f32", "  @%p1 mul.f32"), LOG, False),               # guarded
    (COMPOSED.replace("mul.f32 %r7, %r6, 0f3F317218;", "mul.f32 %r7, %r6, 0f3F317218;\n  add.f32 %r7, %r7, %r7;"),
     LOG, False),                                                                # written twice
    # a mul.f32 feeding an add.f32 may be contracted into an fma: no identity with the separate pair
    (COMPOSED.replace("mul.f32 %r7, %r6, 0f3F317218;", "mul.f32 %r8, %r6, 0f3F317218;\n  add.f32 %r7, %r8, 0f3F800000;"),
     f"add.rn.f32(mul.rn.f32(lg2.approx.ftz.f32(a), {LN2}), 1.0)", False),
])
def test_what_counts_as_storing_the_reference_expression(db, tmp_path, body, ref, same):
    from tilecheck.verify.identity import stored_expression

    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(body=body))
    p = prepare(str(path), "k", ref, db=db)
    assert stored_expression(p.plan, p.ref, db) is same
    assert p.abi.stored_expression is same


TRITON = FAST_LOG2.parent
OWN = [("fast_log_f32", "fast_log_kernel", LOG, (0x3F700000, 0x40000000, 0x7F000000)),
       ("sigmoid_f32", "sigmoid_kernel",
        "div.full.f32(1.0, add.rn.f32(ex2.approx.f32(mul.rn.f32(a, -1.44269502162933349609375)), 1.0))",
        (0x3F000000, 0xC2B00000, 0x42C00000)),
       ("exp_f32", "exp_kernel", "ex2.approx.f32(mul.rn.f32(a, 1.44269502162933349609375))", (0x3F800000, 0xC2FE0000)),
       ("exp_up_f16", "exp_up_kernel",
        "cvt.rn.f16.f32(ex2.approx.f32(mul.rn.f32(cvt.f32.f16(a), 1.44269502162933349609375)))", (0,))]


@pytest.mark.parametrize("stem,entry,ref,starts", OWN, ids=[o[0] for o in OWN])
def test_the_identity_run_counts_what_enumerating_every_choice_counts(db, stem, entry, ref, starts):
    """Triton's lowerings against their own composition: the run that takes one representative per
    choice (by identity) finds the very misrounded inputs the run that forks on every allowed result
    finds, block by block, and the same unknown ones wherever every set is enumerable (the ends of
    the exponent's range; all of float16). Near 1, where lg2's set is more than the simulator
    enumerates, the forking run leaves every input unknown; by identity only the inputs where lg2's
    own contract bounds nothing stay unknown (the next test)."""
    from tilecheck.verify import compiled

    p = prepare(str(TRITON / f"{stem}.ptx"), entry, ref, db=db)
    assert p.abi.stored_expression
    for start in starts:
        same = compiled.run_range(p, start, start + (1 << 16), keep=8)
        p.abi.stored_expression = False
        forked = compiled.run_range(p, start, start + (1 << 16), keep=8)
        p.abi.stored_expression = True
        assert (same.checked, same.misrounded) == (forked.checked, forked.misrounded)
        assert same.inputs == forked.inputs and same.lanes <= forked.lanes
        if start == 0x3F700000:
            assert forked.unknown == 1 << 16 and same.unknown == 0
        else:
            assert same.unknown == forked.unknown and same.unknown_examples == forked.unknown_examples


def test_fast_logf_near_one_is_unknown_only_where_lg2_bounds_nothing(db):
    """The same four inputs as fast_log2f against its own form (no single run of values: both
    signs, the flushed subnormals left out), not the whole neighbourhood of 1."""
    from tilecheck.verify import compiled

    p = prepare(str(TRITON / "fast_log_f32.ptx"), "fast_log_kernel", LOG, db=db)
    t = compiled.run_range(p, 0x3F7F0000, 0x3F810000, keep=8)
    assert t.misrounded == 0
    assert [int(e[0]) for e in t.unknown_examples] == [0x3F7FFFFE, 0x3F7FFFFF, 0x3F800000, 0x3F800001]
    assert t.unknown == 4
