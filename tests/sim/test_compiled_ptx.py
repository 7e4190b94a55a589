"""Compiled-code PTX: the front end on the committed corpus, located errors, the lane-forking
executor (choices, contraction, loops, ABIs, half2), and the verifier's misrounded set against an
independent pure-Python enumeration (fractions, no shared arithmetic)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.formats import get_format
from tilecheck.model import ops
from tilecheck.sim.errors import StepLimitError, UnsupportedPtxError
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.conversions import native_convert, numpy_convert
from tilecheck.sim.plan import RunContext, compile_function
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "examples").glob("*/*.ptx"))
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _write(tmp_path, body: str, name="k.ptx") -> str:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return str(path)


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_corpus_function_parses_and_compiles(path, db):
    module = parse_module(path.read_text(), str(path))
    defined = [module.function(f.name) for f in module.functions.values() if f.defined]  # calls inlined
    assert defined
    for fn in defined:
        plan = compile_function(fn, db, str(path))
        assert len(plan.steps) == sum(1 for item in fn.body if hasattr(item, "opcode"))


def test_inline_asm_scopes_rename_their_registers(db):
    path = ROOT / "examples" / "cuda" / "half.ptx"
    fn = parse_module(path.read_text(), str(path)).function("k_hdiv_f16")
    scoped = [r for r in fn.registers if "#" in r]
    assert scoped and all(r.split("#")[0] in ("__$temp3", "low", "high", "f", "r") or r.startswith("__$")
                          for r in scoped)


@pytest.mark.parametrize("body,what,line,col", [
    (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %r<3>;\n  frob.b32 %r1, %r2;\n ret;\n}\n",
     "unsupported instruction 'frob.b32'", 7, 3),
    (".visible .entry k()\n{\n .extern .shared .b32 buf[4];\n ret;\n}\n", "unsupported dynamic shared declaration", 6, 2),
    (".global .b32 g;\n", "unsupported module-level directive '.global'", 4, 1),
    # a 32-bit generic address (address_size 32 only): still a located error
    (".visible .func (.param .b64 r) f(.param .b64 a)\n{\n .reg .b32 %r<3>;\n  cvta.shared.u32 %r1, %r2;\n ret;\n}\n",
     "unsupported instruction 'cvta.shared.u32'", 7, 3),
    # ld/st run only as forms of spec/ptx/ld.yaml and st.yaml: another state space, .nc outside
    # .global, a store through the read-only cache are located errors naming the spelling
    (".visible .func (.param .b32 r) f(.param .b64 a)\n{\n .reg .b64 %rd<3>;\n .reg .f32 %f<3>;\n"
     "  ld.const.f32 %f1, [%rd1];\n st.param.f32 [r], %f1;\n ret;\n}\n",
     "unsupported instruction 'ld.const.f32': not a form of spec/ptx/ld.yaml", 8, 3),
    (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .f32 %f<3>;\n  ld.param.nc.f32 %f1, [a];\n"
     " st.param.f32 [r], %f1;\n ret;\n}\n",
     # ptxas would not assemble it: verify stops before running, with the check's finding
     "1 instruction(s) that ptxas would not assemble", 7, 3),
    (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .f32 %f<3>;\n .reg .b64 %rd<3>;\n"
     "  ld.param.f32 %f1, [a];\n  st.global.nc.f32 [%rd1], %f1;\n st.param.f32 [r], %f1;\n ret;\n}\n",
     "1 instruction(s) that ptxas would not assemble", 9, 3),
])
def test_unsupported_ptx_is_a_located_error_with_exit_2(tmp_path, capsys, body, what, line, col):
    path = _write(tmp_path, body)
    code = main(["verify", path, "--entry", "f", "--against", "div.rn.f32"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}:{line}:{col}: error: {what}" in err


RCP_TIMES_A = """
.visible .func (.param .b32 r) wrong_div(.param .b32 a, .param .b32 b)
{
  .reg .f32 %f<4>;
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  rcp.approx.f32 %f3, %f2;
  mul.rn.f32 %f3, %f1, %f3;
  st.param.f32 [r], %f3;
  ret;
}
"""

F16_VIA_F32 = """
.visible .func (.param .align 2 .b8 r[2]) good_hdiv(.param .b16 a, .param .align 2 .b8 b[2])
{
  .reg .b16 %rs<4>;
  .reg .f32 %f<4>;
  ld.param.b16 %rs1, [a];
  ld.param.b16 %rs2, [b];
  cvt.f32.f16 %f1, %rs1;
  cvt.f32.f16 %f2, %rs2;
  div.rn.f32 %f3, %f1, %f2;
  cvt.rn.f16.f32 %rs3, %f3;
  st.param.b16 [r], %rs3;
  ret;
}
"""


def test_wrong_division_sequence_gives_a_counterexample_quickly(tmp_path, capsys):
    path = _write(tmp_path, RCP_TIMES_A)
    code = main(["verify", path, "--entry", "wrong_div", "--against", "div.rn.f32", "--cases", "2000",
                 "--json", "-"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["verdict"] == "counterexample" and out["misrounded_count"] > 0
    assert out["exhaustive"] is False and out["inputs_checked"] > 1000
    cex = out["counterexamples"][0]
    assert cex["approximate_choices"][0]["instruction"].startswith("rcp.approx.f32")
    assert re.fullmatch(r"RN([+-]\d+ulp)?", cex["approximate_choices"][0]["position"])
    # the one-line repro reproduces it
    repro = cex["repro"].split()[2:]
    assert main(["verify", *repro]) == 1


def test_correct_sequence_verifies_sampled(tmp_path, capsys):
    path = _write(tmp_path, F16_VIA_F32)
    code = main(["verify", path, "--entry", "good_hdiv", "--against", "div.rn.f16", "--cases", "20000"])
    out = capsys.readouterr().out
    assert code == 0, out
    # a sampled run is no proof: it says what it checked, and only an exhaustive run says VERIFIED
    assert "verdict: NO COUNTEREXAMPLE in 20000 sampled inputs (not exhaustive)" in out and "VERIFIED" not in out


def test_a_count_that_covers_the_domain_runs_every_input(capsys):
    # 1.0 / x on bfloat16 (65,536 inputs): asked for that many or more, the run is the enumeration,
    # not a sample with repeats; asked for fewer, a sample
    args = ["verify", "examples/triton/rcp_bf16.ptx", "--entry", "rcp_kernel", "--against", "rcp.rn.bf16"]
    assert main([*args, "--cases", "70000", "--json", "-"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["exhaustive"] is True and whole["inputs_checked"] == 1 << 16
    assert main([*args, "--cases", "1000", "--json", "-"]) == 0
    part = json.loads(capsys.readouterr().out)
    assert part["exhaustive"] is False and part["inputs_checked"] <= 1000


def test_approx_reference_takes_one_value(tmp_path, db):
    path = _write(tmp_path, RCP_TIMES_A)
    every = compiled.verify_ptx(path, "wrong_div", "div.rn.f32", db=db, cases=500)
    one = compiled.verify_ptx(path, "wrong_div", "div.rn.f32", db=db, cases=500, approx="reference")
    assert one.lanes_run == one.inputs_checked < every.lanes_run
    assert one.misrounded_count <= every.misrounded_count


def test_unqualified_mul_add_may_be_contracted(tmp_path, db):
    body = """
.visible .func (.param .b32 r) mad(.param .b32 a, .param .b32 b, .param .b32 c)
{
  .reg .f32 %f<6>;
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  ld.param.f32 %f3, [c];
  mul.f32 %f4, %f1, %f2;
  add.f32 %f5, %f4, %f3;
  st.param.f32 [r], %f5;
  ret;
}
"""
    path = _write(tmp_path, body)
    fused_ok = compiled.verify_ptx(path, "mad", "fma.rn.f32", db=db, cases=3000)
    assert fused_ok.contraction_sites and fused_ok.lanes_run > fused_ok.inputs_checked
    assert fused_ok.verdict == "counterexample"  # the separate roundings are allowed too
    strict = path.replace("k.ptx", "s.ptx")
    Path(strict).write_text(Path(path).read_text().replace("mul.f32", "mul.rn.f32").replace("add.f32", "add.rn.f32"))
    separate = compiled.verify_ptx(strict, "mad", "fma.rn.f32", db=db, cases=3000)
    assert not separate.contraction_sites and separate.lanes_run == separate.inputs_checked


def test_loops_run_under_a_step_limit(tmp_path, db):
    body = """
.visible .func (.param .b32 r) spin(.param .b32 a)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
$L_loop:
  add.s32 %r1, %r1, 1;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra $L_loop;
  st.param.b32 [r], %r1;
  ret;
}
"""
    path = _write(tmp_path, body)
    plan = compile_function(parse_module(Path(path).read_text(), path).function("spin"), db, path)
    lanes = plan.new_lanes(3)
    lanes.params["a"] = np.array([0xFFFFFFFE, 0xFFFFFFF0, 5], dtype=np.uint64)
    with pytest.raises(StepLimitError, match=r"\$L_loop"):
        plan.run(lanes, RunContext(step_limit=100))
    lanes = plan.new_lanes(2)
    lanes.params["a"] = np.array([0xFFFFFFFE, 0xFFFFFFF0], dtype=np.uint64)
    plan.run(lanes, RunContext(step_limit=100))  # divergent trip counts reconverge
    assert lanes.params["r"].tolist() == [0, 0]


def _hsqrt_misrounded(db, path: str, entry: str, inputs: np.ndarray) -> set[int]:
    plan = compile_function(parse_module(Path(path).read_text(), path).function(entry), db, path)
    ref = compiled.parse_reference("sqrt.rn.f16", db)
    abi = compiled.find_abi(plan, ref, path)
    res = compiled.run_block(plan, abi, ref, compiled._pack(abi, ref, [inputs]),
                             dict(approx="all", ulp_reading="either", tininess="after"))
    return {int(v) for v in inputs[res.bad]}


def test_func_entry_and_half2_abis_agree_on_hsqrt(db):
    inputs = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    half = str(ROOT / "examples" / "cuda" / "half.ptx")
    func = str(ROOT / "examples" / "cuda" / "half_func.ptx")
    entry_set = _hsqrt_misrounded(db, half, "k_hsqrt_f16", inputs)
    assert entry_set == _hsqrt_misrounded(db, func, "hsqrt_f16_func", inputs)
    assert entry_set == _hsqrt_misrounded(db, half, "k_h2sqrt_f16", inputs)
    assert entry_set  # sqrt.approx's documented 2^-23 leaves room to misround


# --- an independent interpretation of nvcc's hsqrt, choice by choice, with fractions -------------

def _f16_value(bits: int) -> Fraction | None:
    e, m = (bits >> 10) & 0x1F, bits & 0x3FF
    if e == 0x1F:
        return None
    v = Fraction(m, 1 << 24) if e == 0 else Fraction(1024 + m, 1024) * Fraction(2) ** (e - 15)
    return -v if bits & 0x8000 else v


def _round_f16(v: Fraction) -> Fraction:
    """Round a non-negative value to nearest-even f16 (65520 and above: infinity, as None)."""
    if v >= 65520:
        return None
    if v < Fraction(1, 1 << 14):
        ulp = Fraction(1, 1 << 24)
    else:
        e = v.numerator.bit_length() - v.denominator.bit_length()
        if Fraction(2) ** e > v:
            e -= 1
        ulp = Fraction(2) ** (e - 10)
    q = v / ulp
    n = q.numerator // q.denominator
    rest = q - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
        n += 1
    return n * ulp


def _f32_neighbours(x: float, k: int):
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    for b in range(bits - k, bits + k + 1):
        e, m = (b >> 23) & 0xFF, b & 0x7FFFFF
        yield (Fraction(m, 1 << 23) * Fraction(2) ** -126 if e == 0 else
               Fraction((1 << 23) + m, 1 << 23) * Fraction(2) ** (e - 127))


def _independent_hsqrt_misrounds(bits: int) -> bool:
    """Does some result sqrt.approx.ftz.f32 may return (relative error <= 2^-23) make
    cvt.f32.f16 -> sqrt.approx -> cvt.rn.f16.f32 differ from the correctly rounded f16 sqrt?"""
    x = _f16_value(bits)
    if x is None or x <= 0:
        return False  # specials and negatives: NaN/zero/inf by rule, not by rounding
    bound = Fraction(1, 1 << 23)
    lo2, hi2 = (1 - bound) ** 2 * x, (1 + bound) ** 2 * x
    mid_ok = None
    # correct f16 result: the grid point nearest sqrt(x), decided on squares (never a tie)
    approx = float(x) ** 0.5
    grid = sorted({_round_f16(Fraction(approx) * (1 + Fraction(d, 1 << 12))) for d in (-2, -1, 0, 1, 2)})
    best = min(grid, key=lambda g: abs(g * g - x) / (g + Fraction(approx)))
    for r in _f32_neighbours(approx, 4):
        if lo2 <= r * r <= hi2:
            got = _round_f16(r)
            if got != best:
                return True
            mid_ok = True
    assert mid_ok, f"no allowed sqrt.approx result found for {bits:#x}"
    return False


def test_misrounded_set_matches_an_independent_enumeration(db):
    rng = np.random.default_rng(7)
    subset = np.unique(np.concatenate([rng.integers(0, 0x7C00, 1500), np.arange(0x0BF0, 0x0C10),
                                       np.arange(0x3BF0, 0x3C10)]).astype(np.uint16))
    path = str(ROOT / "examples" / "cuda" / "half.ptx")
    full = _hsqrt_misrounded(db, path, "k_hsqrt_f16", np.arange(1 << 16, dtype=np.uint64).astype(np.uint16))
    subset = np.unique(np.concatenate([subset, np.array(sorted(full), dtype=np.uint16)]))
    ours = _hsqrt_misrounded(db, path, "k_hsqrt_f16", subset)
    theirs = {int(b) for b in subset if _independent_hsqrt_misrounds(int(b))}
    assert ours == theirs
    assert ours  # the subset holds every misrounded input of the exhaustive run


def test_native_conversions_match_the_model():
    rng = np.random.default_rng(3)
    f16, f32, bf16 = get_format("f16"), get_format("f32"), get_format("bf16")
    all16 = np.arange(1 << 16, dtype=np.uint64)
    edges = np.array([0, 1, 0x7FFFFF, 0x800000, 0x33000000, 0x33000001, 0x387FE000, 0x387FF000, 0x38800000,
                      0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x3F800000],
                     dtype=np.uint64)
    rand32 = np.concatenate([rng.integers(0, 1 << 32, 200_000, dtype=np.uint64), edges, edges | (1 << 31)])
    # binary32 patterns below 2^-14 every 4093 (odd: all low-bit patterns), both signs: the subnormal grid
    tiny = np.arange(0, 0x38800000, 4093, dtype=np.uint64)
    rand32 = np.concatenate([rand32, tiny, tiny | (1 << 31)])
    cases = [("f16", "f32", all16, f16, f32), ("bf16", "f32", all16, bf16, f32),
             ("f32", "f16", rand32, f32, f16), ("f32", "bf16", rand32, f32, bf16)]
    for src, dst, vals, sf, df in cases:
        rounding = "rn" if df.width < sf.width else None
        rule = ops.NanRule(False, df.canonical_nan, fixed=df.canonical_nan)
        with np.errstate(all="ignore"):
            want = ops.convert(np, sf, df, vals, ops.Mode("rn"), rule).astype(np.uint64)
        # the numpy form, and the compiled loop the plan runs on many lanes
        forms = {"numpy": numpy_convert(src, dst, rounding, False), "plan": native_convert(src, dst, rounding, False)}
        assert hasattr(forms["plan"], "loop"), "Numba compiles here: the plan's form is the loop"
        for name, convert in forms.items():
            got = convert(vals.astype(sf.uint)).astype(np.uint64)
            assert np.array_equal(got, want), (src, dst, name)


def test_unknown_function_is_a_usage_error(capsys):
    code = main(["verify", str(ROOT / "examples" / "cuda" / "half.ptx"), "--entry", "nope", "--against",
                 "div.rn.f16"])
    assert code == 2 and "no function 'nope'" in capsys.readouterr().err


def test_rejects_bad_reference(capsys):
    code = main(["verify", str(ROOT / "examples" / "cuda" / "half.ptx"), "--entry", "k_hsqrt_f16", "--against",
                 "sqrt.xx.f16"])
    assert code == 2 and "--against" in capsys.readouterr().err


FORK_THEN_DIVERGE = """
.visible .func (.param .b32 r) twice(.param .b32 a)
{
  .reg .pred %p<2>;
  .reg .f32 %f<6>;
  ld.param.f32 %f1, [a];
  rcp.approx.ftz.f32 %f2, %f1;
  setp.gt.f32 %p1, %f2, 0f3F000000;
  @%p1 bra BIG;
  mov.f32 %f3, 0f3F800000;
  bra.uni DONE;
BIG:
  mov.f32 %f3, 0f40000000;
DONE:
  rcp.approx.ftz.f32 %f4, %f1;
  add.rn.f32 %f5, %f3, %f4;
  st.param.f32 [r], %f5;
  ret;
}
"""


def test_forked_lanes_keep_what_later_steps_need(db):
    """Forking keeps only live registers: registers written after a fork (on divergent paths, by
    a second approximate step) and the return parameter still come out right on every lane. The
    second fork collapses through the add that is its result's only use: per first choice, one lane
    per distinct sum."""
    from tilecheck.sim.choices import allowed_choices

    fn = parse_module(HEADER + FORK_THEN_DIVERGE, "t.ptx").function("twice")
    plan = compile_function(fn, db, "t.ptx")
    assert [plan.steps[k].instr.opcode for k in plan.collapse] == ["rcp.approx.ftz.f32"]
    a = np.array([2.0, 3.0, 1.9999999, 0.1, 7.0], dtype=np.float32).view(np.uint32)
    ch = allowed_choices(db.resolve("rcp.approx.ftz.f32"), [a])
    for collapse in (True, False):
        if not collapse:
            plan.collapse = {}
        lanes = plan.new_lanes(a.size)
        lanes.params["a"] = a.astype(np.uint64)
        plan.run(lanes, RunContext())
        got = lanes.params["r"].astype(np.uint32).view(np.float32)
        for i in range(a.size):
            rs = [np.float32(v.view(np.float32)) for v in ch.values[i][ch.valid[i]].astype(np.uint32)]
            sums = [[(np.float32(2.0) if r1 > 0.5 else np.float32(1.0)) + r2 for r2 in rs] for r1 in rs]
            # one lane per combination of the two choices (collapsed: per first choice, per distinct sum)
            want = [x for row in sums for x in (sorted(set(row)) if collapse else row)]
            assert sorted(got[lanes.origin == i].tolist()) == sorted(want), (collapse, i)


# --- nvcc's packed values through a .func: result and operands by pointer -----------------------

def _rsqrt_misrounds_independently(bits: int, fmt: str) -> bool:
    """Does some result rsqrt.approx.f32 may return (relative error <= 2^-22.9, PTX ISA) make
    cvt.f32.{f16,bf16} -> rsqrt.approx.f32 -> cvt.rn.{f16,bf16}.f32 differ from the correctly
    rounded 1/sqrt? MPFR at 256 bits for the bound and the exact value; positive finite inputs only
    (the others get NaN, infinity or zero by rule). Results stay in the normal range of both formats."""
    import gmpy2
    from gmpy2 import mpfr

    precision = {"f16": 11, "bf16": 8}[fmt]
    if fmt == "f16":
        value = _f16_value(bits)
    else:
        e, m = (bits >> 7) & 0xFF, bits & 0x7F
        value = None if e == 0xFF else (Fraction(m, 1 << 7) * Fraction(2) ** -126 if e == 0
                                       else Fraction(128 + m, 128) * Fraction(2) ** (e - 127))
        value = -value if value is not None and bits & 0x8000 else value
    if value is None or value <= 0:
        return False
    wide = gmpy2.context(precision=256)
    with wide:  # module functions in the active context: gmpy2 2.2's context.div ignores the context
        exact = gmpy2.rec_sqrt(gmpy2.div(mpfr(value.numerator, 256), mpfr(value.denominator, 256)))
    bound = wide.exp2(mpfr("-22.9", 256))
    lo, hi = wide.mul(exact, 1 - bound), wide.mul(exact, 1 + bound)
    want = mpfr(exact, precision)  # rounded to the format's precision, to nearest even
    seen = False
    for r in _f32_neighbours(float(exact), 4):
        with wide:
            rr = gmpy2.div(mpfr(r.numerator, 256), mpfr(r.denominator, 256))
        if lo <= rr <= hi:
            seen = True
            if mpfr(rr, precision) != want:
                return True
    assert seen, f"no allowed rsqrt.approx result found for {bits:#x}"
    return False


@pytest.mark.parametrize("entry,ref", [("h2rsqrt_f16_func", "rsqrt.rn.f16"), ("k_h2rsqrt_bf16", "rsqrt.rn.bf16")])
def test_h2rsqrt_misrounded_set_matches_an_independent_enumeration(db, entry, ref):
    path = str(ROOT / "examples" / "cuda" / "half2_func.ptx")
    out = compiled.verify_ptx(path, entry, ref, db=db, exhaustive=True)
    assert out.exhaustive and out.inputs_checked == 1 << 16
    assert out.abi.startswith(".func (operands and result by pointer), 2 lanes" if entry.endswith("_func")
                              else ".entry, 2 lanes")
    theirs = {b for b in range(1 << 16) if _rsqrt_misrounds_independently(b, ref[-4:].lstrip("."))}
    assert {int(x[0]) for x in out.misrounded} == theirs
    assert out.verdict == ("counterexample" if theirs else "verified")


def test_by_pointer_func_agrees_with_the_entry_kernel_on_h2sqrt(db):
    inputs = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    by_pointer = _hsqrt_misrounded(db, str(ROOT / "examples" / "cuda" / "half2_func.ptx"), "h2sqrt_f16_func", inputs)
    assert by_pointer == _hsqrt_misrounded(db, str(ROOT / "examples" / "cuda" / "half.ptx"), "k_h2sqrt_f16", inputs)
    assert by_pointer


# --- instructions without a dedicated step run their spec form's model ---------------------------

_REG = {16: "b16", 32: "b32", 64: "b64"}


@pytest.mark.parametrize("opcode", ["neg.f16x2", "abs.bf16x2", "abs.ftz.f16x2", "min.f16x2", "max.NaN.bf16x2",
                                    "min.ftz.NaN.f16x2", "neg.bf16", "min.NaN.f16", "cvt.rni.s32.f16",
                                    "cvt.rzi.s16.f16", "cvt.rn.f16.s32", "cvt.rn.f16.u16", "cvt.rni.s32.bf16",
                                    "cvt.rzi.s32.f32", "cvt.rn.f32.s32", "cvt.rmi.u32.f64", "cvt.rn.satfinite.f16.f32",
                                    "mul.hi.u64", "mul.hi.s64", "mad.hi.u64", "cnot.b32", "add.sat.s32",
                                    "sub.sat.s32", "min.relu.s32"])
def test_surrounding_instructions_match_their_spec_forms(tmp_path, db, opcode):
    """Each instruction nvcc emits around the arithmetic, run by the plan on edge and random bit
    patterns, equals the model's evaluation of its spec form (NaNs by class where the form leaves
    the NaN unspecified)."""
    from tilecheck.model.api import evaluate
    from tilecheck.sim.plan import RunContext
    form = db.resolve(opcode)
    assert form is not None, opcode
    dst, srcs = form.operands[0], form.operands[1:]
    params = ", ".join(f".param .{_REG[s.container_bits]} p{k}" for k, s in enumerate(srcs))
    regs = "".join(f" .reg .{_REG[s.container_bits]} %a{k};\n ld.param.{_REG[s.container_bits]} %a{k}, [p{k}];\n"
                   for k, s in enumerate(srcs))
    body = (f".visible .func (.param .{_REG[dst.container_bits]} r) f({params})\n{{\n"
            f" .reg .{_REG[dst.container_bits]} %d;\n{regs}"
            f" {opcode} %d, {', '.join(f'%a{k}' for k in range(len(srcs)))};\n"
            f" st.param.{_REG[dst.container_bits]} [r], %d;\n ret;\n}}\n")
    path = _write(tmp_path, body)
    plan = compile_function(parse_module(Path(path).read_text(), path).function("f"), db, path)
    rng = np.random.default_rng(11)
    n = 4096
    vals = []
    for s in srcs:
        w = s.container_bits
        edges = [0, 1, (1 << (w - 1)) - 1, 1 << (w - 1), (1 << w) - 1, 0x7C00, 0xFC00, 0x7F80, 0x7E00, 0x3C00, 0x7F800000,
                 0x7FC00000, 0x4F000000, 0xCF000000, 0x41DFFFFFFFC00000]
        edges = [e & ((1 << w) - 1) for e in edges]
        v = rng.integers(0, 1 << w, n, dtype=np.uint64)
        v[:len(edges)] = edges
        if w <= 32:  # pack edge halves into the other element of packed operands too
            v[len(edges):2 * len(edges)] = [e | (e << (w // 2)) & ((1 << w) - 1) for e in edges]
        vals.append(v.astype({16: np.uint16, 32: np.uint32, 64: np.uint64}[w]))
    lanes = plan.new_lanes(n)
    for k, v in enumerate(vals):
        lanes.params[f"p{k}"] = v.astype(np.uint64)
    plan.run(lanes, RunContext(approx="reference"))
    got = lanes.params["r"] & np.uint64((1 << dst.container_bits) - 1)
    with np.errstate(all="ignore"):
        want = np.asarray(evaluate(form, *vals)).astype(np.uint64)
    same = got == want
    efmt = dst.element_format
    if not same.all() and efmt is not None:  # an unspecified NaN: compare by class, element by element
        fmt = get_format(efmt)
        ew, mask = fmt.width, (1 << fmt.width) - 1
        for lane in range(dst.container_bits // ew):
            g = (got >> np.uint64(lane * ew)) & np.uint64(mask)
            w_ = (want >> np.uint64(lane * ew)) & np.uint64(mask)
            both_nan = ((g & np.uint64(fmt.magnitude_mask)) > np.uint64(fmt.exponent_mask)) & \
                       ((w_ & np.uint64(fmt.magnitude_mask)) > np.uint64(fmt.exponent_mask))
            same_lane = (g == w_) | both_nan
            if lane == 0:
                same = same_lane
            else:
                same &= same_lane
    bad = np.flatnonzero(~same)
    assert bad.size == 0, [(hex(int(vals[0][i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:5]]


# --- nvcc's other ways of writing the same code ---------------------------------------------------

def _opcodes(text: str, path: str) -> dict:
    module = parse_module(text, path)
    return {name: [(i.opcode, i.operands) for i in fn.body if hasattr(i, "opcode")]
            for name, fn in module.functions.items() if fn.defined}


def test_lineinfo_loc_lines_hide_no_instruction():
    """``.loc`` lines (nvcc -lineinfo) end without ';': each instruction after one is still there."""
    path = ROOT / "examples" / "cuda" / "half_variants.ptx"
    text = path.read_text()
    assert text.count("\t.loc\t") > 20 and ", inlined_at " in text
    stripped = re.sub(r"^\s*\.loc\b.*\n", "", text, flags=re.M)
    assert _opcodes(text, str(path)) == _opcodes(stripped, str(path))


def test_grid_stride_loop_under_lineinfo_agrees_with_the_plain_kernel(db):
    inputs = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    variants = str(ROOT / "examples" / "cuda" / "half_variants.ptx")
    plain = _hsqrt_misrounded(db, str(ROOT / "examples" / "cuda" / "half.ptx"), "k_hsqrt_f16", inputs)
    assert _hsqrt_misrounded(db, variants, "k_hsqrt_f16_grid_stride", inputs) == plain and plain


def test_operands_by_const_reference_agree_with_operands_by_value(db):
    by_ref = compiled.verify_ptx(str(ROOT / "examples" / "cuda" / "half_variants.ptx"), "hdiv_f16_ref", "div.rn.f16",
                                 db=db, cases=4000)
    by_value = compiled.verify_ptx(str(ROOT / "examples" / "cuda" / "half_func.ptx"), "hdiv_f16_func", "div.rn.f16",
                                   db=db, cases=4000)
    assert by_ref.abi == ".func (operands by pointer)" and by_value.abi == ".func"
    assert by_ref.misrounded == by_value.misrounded and by_ref.misrounded


def test_pointer_parameter_attributes_parse(tmp_path, db):
    """sm_100 kernels declare ``.param .u64 .ptr .global .align 2 NAME``: the same 64-bit pointer."""
    half = (ROOT / "examples" / "cuda" / "half.ptx").read_text()
    text = re.sub(r"\.param \.u64 (k_hsqrt_f16_param_\d)", r".param .u64 .ptr .global .align 2 \1", half)
    text = text.replace(".param .u64 .ptr .global .align 2 k_hsqrt_f16_param_1", ".param .u64 .ptr .align 1 "
                        "k_hsqrt_f16_param_1")
    assert text.count(".ptr") == 2
    path = tmp_path / "ptr.ptx"
    path.write_text(text)
    inputs = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    assert _hsqrt_misrounded(db, str(path), "k_hsqrt_f16", inputs) == \
        _hsqrt_misrounded(db, str(ROOT / "examples" / "cuda" / "half.ptx"), "k_hsqrt_f16", inputs)


@pytest.mark.parametrize("name,reading", [("rcp.approx.ftz.f32", "either"), ("sqrt.approx.f32", "exact"),
                                          ("rsqrt.approx.ftz.f32", "either"), ("rcp.approx.f32", "correctly-rounded")])
def test_choices_remembered_per_binade_equal_the_direct_ones(db, name, reading):
    """Allowed results taken from the canonical input's table entry, exponent moved, are exactly
    the contract's own: the same sets and representative values, specials and edges included."""
    from tilecheck.sim.choices import ScaledChoices, allowed_choices

    form = db.resolve(name)
    assert ScaledChoices.applies(form)
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.integers(0, 1 << 32, 6000, dtype=np.uint64).astype(np.uint32),
        # one significand in every binade (the table serves them all from one entry per parity)
        (np.arange(1, 255, dtype=np.uint32) << np.uint32(23)) | np.uint32(0x2AAAAB),
        np.array([0, 1, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xBF800000],
                 dtype=np.uint32)])
    table = ScaledChoices(form, reading, "after")
    got = table.choices(x)
    again = table.choices(x[::-1])  # entries now come from the table
    want = allowed_choices(form, [x], ulp_reading=reading)
    as_sets = lambda ch: [frozenset(v[m].tolist()) for v, m in zip(ch.values, ch.valid)]  # noqa: E731
    assert as_sets(got) == as_sets(want)
    assert as_sets(again) == as_sets(want)[::-1]
    assert np.array_equal(got.reference, want.reference) and np.array_equal(got.unbounded, want.unbounded)
    assert table.plain[table.count > 0].mean() > 0.9  # the table, not the direct path, served most lanes


CALLS = str(ROOT / "examples" / "cuda" / "calls.ptx")


def test_a_kernel_calling_a_function_is_verified_through_the_callee(db):
    """nvcc's call.uni (arguments and result in .param of a callseq scope) is inlined: the kernel
    that calls the non-inlined hsqrt misrounds exactly the inputs the function itself misrounds."""
    via_call = compiled.verify_ptx(CALLS, "k_hsqrt_call", "sqrt.rn.f16", db=db, exhaustive=True)
    direct = compiled.verify_ptx(CALLS, "hsqrt_callee", "sqrt.rn.f16", db=db, exhaustive=True)
    assert via_call.exhaustive and via_call.verdict == "counterexample"
    assert via_call.misrounded == direct.misrounded and via_call.misrounded_count == 15
    nested = compiled.verify_ptx(CALLS, "k_frcp_nested_call", "rcp.rn.f32", db=db, cases=2000)
    sample, drawn = compiled.sampled_inputs(compiled.parse_reference("rcp.rn.f32", db), 2000, 0)
    assert nested.verdict == "verified" and nested.inputs_checked == sample[0].size == 2000
    # repeats of the edge and hard draws are replaced by more uniform patterns: 2000 distinct inputs
    assert len(set(sample[0].tolist())) == 2000
    # the breakdown counts each checked input once, for its first source: it adds up to the inputs
    assert nested.sampling == drawn and all(drawn.values()) and sum(drawn.values()) == 2000


@pytest.mark.parametrize("callee,message", [("missing", "does not define"), ("spin", "recursive call")])
def test_calls_that_cannot_be_inlined_are_located_errors(tmp_path, capsys, callee, message):
    body = f"""
.visible .func (.param .b32 r) spin(.param .b32 a)
{{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  {{
  .param .b32 p0;
  st.param.b32 [p0+0], %r1;
  .param .b32 q0;
  call.uni (q0), {callee}, (p0);
  ld.param.b32 %r2, [q0+0];
  }}
  st.param.b32 [r], %r2;
  ret;
}}
"""
    path = _write(tmp_path, body)
    assert main(["verify", path, "--entry", "spin", "--against", "rcp.rn.f32", "--cases", "10"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:13:" in err and message in err


STORE_LOOP = """
.visible .entry accumulate(.param .u64 pin, .param .u64 pout, .param .u32 trips)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r5, [trips];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  mov.u32 %r2, 0;
$L_loop:
  add.rn.f32 %f1, %f1, 0f3F800000;
  st.global.f32 [%rd5], %f1;
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r5;
  @%p1 bra $L_loop;
  ret;
}
"""


def test_a_loop_keeps_one_store_record_per_store_instruction(tmp_path, db):
    """Each store instruction keeps one per-lane record that later iterations update (the newest
    store per lane wins), so a long loop takes constant memory and the result is the last store."""
    from tilecheck.sim.plan import Memory

    path = _write(tmp_path, STORE_LOOP)
    plan = compile_function(parse_module(Path(path).read_text(), path).function("accumulate"), db, path)
    n = 256
    x = np.arange(n, dtype=np.float32)
    memory = Memory([("pin", x.view(np.uint8).copy()), ("pout", np.zeros(4 * n, dtype=np.uint8))])
    lanes = plan.new_lanes(n)
    lanes.params.update(pin=np.full(n, memory.pointer(0), dtype=np.uint64),
                        pout=np.full(n, memory.pointer(1), dtype=np.uint64), trips=np.full(n, 3000, dtype=np.uint64))
    plan.run(lanes, RunContext(memory=memory, block=n, threads=n))
    assert len(lanes.stores) == 1 and not lanes.loads
    region, nbytes, offs, vals, done = lanes.stores[0]
    assert region == 1 and done.all() and np.array_equal(offs, np.arange(n) * 4)
    assert np.array_equal(vals.astype(np.uint32).view(np.float32), x + np.float32(3000))


def test_vector_loads_from_a_parameter(db):
    """``ld.param.v2.f32`` (a float2 parameter) gives each element its own register."""
    body = """
.visible .func (.param .b32 r) first_over_second(.param .align 8 .b8 p[8])
{
  .reg .f32 %f<4>;
  ld.param.v2.f32 {%f1, %f2}, [p];
  div.rn.f32 %f3, %f1, %f2;
  st.param.f32 [r], %f3;
  ret;
}
"""
    plan = compile_function(parse_module(HEADER + body, "v.ptx").function("first_over_second"), db, "v.ptx")
    a = np.array([3.0, 1.0, -0.0], dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = np.array([2.0, 4.0, 5.0], dtype=np.float32).view(np.uint32).astype(np.uint64)
    lanes = plan.new_lanes(3)
    lanes.params["p"] = a | (b << np.uint64(32))
    plan.run(lanes, RunContext())
    assert lanes.params["r"].astype(np.uint32).view(np.float32).tolist() == [1.5, 0.25, -0.0]
    assert str(np.float32(-0.0)) == str(lanes.params["r"].astype(np.uint32).view(np.float32)[2])


@pytest.mark.parametrize("setp,want", [
    ("setp.gt.f16x2", [1, 2, 3, 2]),   # p: the low lanes' comparison, q: the high lanes'
    ("setp.lt.f32", [1, 2, 2, 2]),     # p = (a < b), q = !p (NaN compares false)
])
def test_setp_with_two_destinations(db, setp, want):
    body = f"""
.visible .func (.param .b32 r) cmp2(.param .b32 a, .param .b32 b)
{{
  .reg .pred %p<3>;
  .reg .b32 %r<6>;
  ld.param.b32 %r1, [a];
  ld.param.b32 %r2, [b];
  {setp} %p1|%p2, %r1, %r2;
  selp.b32 %r3, 1, 0, %p1;
  selp.b32 %r4, 2, 0, %p2;
  or.b32 %r5, %r3, %r4;
  st.param.b32 [r], %r5;
  ret;
}}
"""
    plan = compile_function(parse_module(HEADER + body, "p.ptx").function("cmp2"), db, "p.ptx")
    if setp.endswith("x2"):
        h = lambda lo, hi: int(np.array([lo, hi], dtype=np.float16).view(np.uint32)[0])  # noqa: E731
        a = [h(2, 1), h(1, 2), h(3, 3), h(np.nan, 5)]
        b = [h(1, 1)] * 4
    else:
        a = np.array([1.0, 3.0, np.nan, 2.5], dtype=np.float32).view(np.uint32).tolist()
        b = np.array([2.0, 2.0, 2.0, 2.0], dtype=np.float32).view(np.uint32).tolist()
    lanes = plan.new_lanes(4)
    lanes.params["a"], lanes.params["b"] = np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64)
    plan.run(lanes, RunContext())
    assert lanes.params["r"].tolist() == want
