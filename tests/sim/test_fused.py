"""Fused regions (tilecheck/sim/fused.py) against the plan's own numpy steps, bit for bit.

Every function of the committed corpus runs on the same inputs (edge values, the operation's hard
cases, uniform patterns) with fusion on and off: every lane's output, the misrounded, unknown and
by-value sets and the lane counts must agree. Single fused operations are compared with the model
over special values, and deliberately wrong tables (a double-rounded fma, a wrong NaN pattern)
must be caught.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
import yaml

from tilecheck.inputs.edges import edge_values, nan_values
from tilecheck.model import api
from tilecheck.sim import fused
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import RunContext, compile_function
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = [ROOT / "examples" / "cuda" / "manifest.yaml", ROOT / "examples" / "llvm" / "manifest.yaml"]
# corpus functions without a manifest entry, with the operation they compute
EXTRA = [("examples/cuda/calls.ptx", "hsqrt_callee", "sqrt.rn.f16"),
         ("examples/cuda/calls.ptx", "hdiv_callee", "div.rn.f16"),
         ("examples/cuda/half_variants.ptx", "k_hdiv_f16_size_t", "div.rn.f16"),
         ("examples/cuda/half_variants.ptx", "k_hrcp_f16_out_first", "rcp.rn.f16"),
         ("examples/cuda/half_variants.ptx", "k_div_operator_f16x2", "div.rn.f16"),
         ("examples/cuda/half_variants_debug.ptx", "k_hdiv_f16_size_t", "div.rn.f16"),
         ("examples/cuda/half_variants_debug.ptx", "k_hrcp_f16_out_first", "rcp.rn.f16"),
         ("examples/cuda/half_variants_debug.ptx", "k_div_operator_f16", "div.rn.f16"),
         ("examples/cuda/half_variants_debug.ptx", "k_div_operator_bf16", "div.rn.bf16")]


def _corpus():
    out = []
    for m in MANIFESTS:
        for e in yaml.safe_load(m.read_text())["entries"]:
            out.append((e["file"], e["entry"], e["against"]))
    return sorted(set(out) | set(EXTRA))


CORPUS = _corpus()
SHIPPED_MIN_LANES = fused.MIN_LANES
SHIPPED_MIN_STEPS = fused.MIN_STEPS


@pytest.fixture(autouse=True)
def fuse_small_runs(monkeypatch):
    """These tests run a few thousand lanes, and single instructions followed by a move: fuse
    them all the same."""
    monkeypatch.setattr(fused, "MIN_LANES", 0)
    monkeypatch.setattr(fused, "MIN_STEPS", 2)


def _run(p, ops, **ctx):
    args = dict(p.ctx_args, **ctx)
    return compiled.run_block(p.plan, p.abi, p.ref, compiled._pack(p.abi, p.ref, ops), args)


def _same(a, b):
    assert a.lanes == b.lanes
    assert np.array_equal(a.got, b.got)
    assert np.array_equal(a.bad, b.bad)
    assert np.array_equal(a.unknown, b.unknown)
    assert np.array_equal(a.by_value, b.by_value)


def test_every_corpus_function_is_listed(db):
    """Each kernel of every corpus file is compared below, or has nothing fused (a ``.func`` helper
    runs inlined into its callers' plans, compared with them)."""
    listed = {(f, e) for f, e, _ in CORPUS}
    files = sorted(ROOT.glob("examples/cuda/*.ptx")) + sorted(ROOT.glob("examples/llvm/**/*.ptx"))
    for path in files:
        rel = str(path.relative_to(ROOT))
        module = parse_module(path.read_text(), rel)
        for name, fn in module.functions.items():
            if (rel, name) not in listed and fn.kind == "entry":
                plan = compile_function(module.function(name), db, rel)
                assert not plan.regions, f"{rel}:{name} has fused regions but no comparison"


@pytest.mark.parametrize("path,entry,against", CORPUS, ids=[f"{Path(f).stem}:{e}" for f, e, _ in CORPUS])
def test_corpus_fused_equals_numpy_steps(db, path, entry, against, monkeypatch):
    p = compiled.prepare(str(ROOT / path), entry, against, db=db)
    ops, _ = compiled.sampled_inputs(p.ref, 768, seed=5)
    ran = []
    real = fused.Region.run
    monkeypatch.setattr(fused.Region, "run",
                        lambda self, lanes, live: (ran.append(self.start), real(self, lanes, live)))
    # every allowed approximate result on all inputs; tininess "before" and the reference value
    # (no forking) on a third of them
    for ctx, k in ((dict(), None), (dict(tininess="before"), 256), (dict(approx="reference"), 256)):
        some = [o[:k] for o in ops]
        on = _run(p, some, fuse=True, **ctx)
        off = _run(p, some, fuse=False, **ctx)
        _same(on, off)
    assert bool(ran) == bool(p.plan.regions)


# ---------------------------------------------------------------------------------------------
# single operations

FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _specials(type_: str, rng, n: int) -> np.ndarray:
    """Edge patterns of a type (zeros, subnormal boundaries, infinities, NaNs of either sign and
    payload) and random patterns, ``n`` in all."""
    if type_ in FLOAT_BITS:
        edges = np.array(edge_values(type_) + nan_values(type_), dtype=np.uint64)
        base = np.concatenate([edges, edges + np.uint64(1)])
        bits = FLOAT_BITS[type_]
    else:
        bits = 1 if type_ == "pred" else int(type_[1:])
        top = (1 << bits) - 1
        base = np.array(sorted(v for v in {0, 1, 2, 3, 15, 16, 31, 32, 33, 63, 64, 65, top, top - 1, top >> 1,
                                           (top >> 1) + 1} if v <= top), dtype=np.uint64)
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    rand = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    pick = rng.integers(0, 4, n)
    out = np.where(pick < 3, base[rng.integers(0, base.size, n)], rand) & mask
    return out


def _bits(type_: str) -> int:
    return 1 if type_ == "pred" else FLOAT_BITS.get(type_) or int(type_[1:])


def _one(db, opcode: str, dst: str, srcs: list[str], operands: list[np.ndarray], fuse: bool,
         dreg: int | None = None, tininess: str = "after") -> np.ndarray:
    """Run ``opcode d, s0, s1, ...`` (a predicate source comes from setp on a u32 parameter, a
    predicate result leaves through selp) followed by a move: a fused region of at least two steps."""
    lines, regs = [], []
    for j, t in enumerate(srcs):
        if t == "pred":
            regs += [f".reg .b32 %t{j};", f".reg .pred %s{j};"]
            lines += [f"ld.param.b32 %t{j}, [p{j}];", f"setp.ne.u32 %s{j}, %t{j}, 0;"]
        else:
            regs.append(f".reg .b{_bits(t)} %s{j};")
            lines.append(f"ld.param.b{_bits(t)} %s{j}, [p{j}];")
    ow = 32 if dst == "pred" else (dreg or _bits(dst))
    if dst == "pred":
        regs += [".reg .pred %d;", ".reg .b32 %e;"]
        tail = ["selp.u32 %e, 1, 0, %d;"]
    else:
        regs += [f".reg .b{ow} %d;", f".reg .b{ow} %e;"]
        tail = [f"mov.b{ow} %e, %d;"]
    args = ", ".join(f"%s{j}" for j in range(len(srcs)))
    params = ", ".join(f".param .b{32 if t == 'pred' else _bits(t)} p{j}" for j, t in enumerate(srcs))
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            f".visible .func (.param .b{ow} r) one({params})\n{{\n" + "\n".join(regs + lines)
            + f"\n{opcode} %d, {args};\n" + "\n".join(tail) + f"\nst.param.b{ow} [r], %e;\nret;\n}}\n")
    plan = compile_function(parse_module(text, "one.ptx").function("one"), db, "one.ptx")
    assert plan.regions, f"{opcode}: nothing fused"
    lanes = plan.new_lanes(operands[0].shape[0])
    for j, o in enumerate(operands):
        lanes.params[f"p{j}"] = o.astype(np.uint64)
    plan.run(lanes, RunContext(fuse=fuse, tininess=tininess))
    return lanes.params["r"] & np.uint64((1 << ow) - 1 if ow < 64 else 0xFFFFFFFFFFFFFFFF)


ARITH = ["add.rn.f32", "sub.f32", "mul.rn.f32", "fma.rn.f32", "add.rn.ftz.f32", "mul.rn.ftz.f32",
         "fma.rn.ftz.f32", "add.rn.f16", "sub.rn.f16", "mul.rn.f16", "fma.rn.f16", "fma.rn.ftz.f16",
         "add.rn.bf16", "mul.rn.bf16", "fma.rn.bf16", "add.rn.f64", "sub.f64", "mul.rn.f64"]


@pytest.mark.parametrize("opcode", ARITH)
def test_fused_arithmetic_equals_the_model(db, opcode):
    """add/sub/mul/fma to nearest over special values, against the model and the numpy step."""
    type_ = opcode.split(".")[-1]
    arity = 3 if opcode.startswith("fma") else 2
    rng = np.random.default_rng(zlib.crc32(opcode.encode()))
    ops = [_specials(type_, rng, 6000) for _ in range(arity)]
    if arity == 3:  # products that nearly cancel the addend: the fma's single rounding shows
        ops[2][:2000] = api.evaluate(f"mul.rn.{type_}", ops[0][:2000], ops[1][:2000]) ^ np.uint64(
            1 << (_bits(type_) - 1))
    want = api.evaluate(opcode, *[o.astype(np.dtype(f"uint{_bits(type_)}")) for o in ops]).astype(np.uint64)
    for tininess in ("after", "before"):
        got = _one(db, opcode, type_, [type_] * arity, ops, True, tininess=tininess)
        assert np.array_equal(got, _one(db, opcode, type_, [type_] * arity, ops, False, tininess=tininess))
        if tininess == "after":
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, f"{opcode}{[hex(int(o[bad[0]])) for o in ops]}: {hex(int(got[bad[0]]))}"


OTHERS = [
    ("cvt.f32.f16", "f32", ["f16"], None), ("cvt.ftz.f32.f16", "f32", ["f16"], None),
    ("cvt.f32.bf16", "f32", ["bf16"], None), ("cvt.ftz.f32.bf16", "f32", ["bf16"], None),
    ("cvt.rn.f16.f32", "f16", ["f32"], None), ("cvt.rn.ftz.f16.f32", "f16", ["f32"], None),
    ("cvt.rn.bf16.f32", "bf16", ["f32"], None), ("cvt.rn.ftz.bf16.f32", "bf16", ["f32"], None),
    ("cvt.s64.s32", "s64", ["s32"], None), ("cvt.u64.u32", "u64", ["u32"], None),
    ("cvt.u16.u32", "u16", ["u32"], None), ("cvt.s16.s32", "s16", ["s32"], 32), ("cvt.s32.s16", "s32", ["s16"], 64),
    ("abs.f16", "f16", ["f16"], None), ("neg.f16", "f16", ["f16"], None), ("abs.ftz.f16", "f16", ["f16"], None),
    ("neg.bf16", "bf16", ["bf16"], None), ("abs.f32", "f32", ["f32"], None), ("neg.ftz.f32", "f32", ["f32"], None),
    ("abs.f64", "f64", ["f64"], None), ("neg.f64", "f64", ["f64"], None),
    ("setp.lt.f16", "pred", ["f16", "f16"], None), ("setp.gtu.f32", "pred", ["f32", "f32"], None),
    ("setp.ftz.le.f32", "pred", ["f32", "f32"], None), ("setp.nan.f64", "pred", ["f64", "f64"], None),
    ("setp.num.bf16", "pred", ["bf16", "bf16"], None), ("setp.neu.f16", "pred", ["f16", "f16"], None),
    ("setp.eq.f32", "pred", ["f32", "f32"], None), ("setp.lt.s32", "pred", ["s32", "s32"], None),
    ("setp.hi.u16", "pred", ["u16", "u16"], None), ("setp.eq.b32", "pred", ["b32", "b32"], None),
    ("setp.ge.s64", "pred", ["s64", "s64"], None), ("setp.lt.and.f32", "pred", ["f32", "f32", "pred"], None),
    ("setp.eq.xor.s16", "pred", ["s16", "s16", "pred"], None),
    ("selp.b32", "b32", ["b32", "b32", "pred"], None), ("selp.f16", "f16", ["f16", "f16", "pred"], None),
    ("and.b32", "b32", ["b32", "b32"], None), ("or.b16", "b16", ["b16", "b16"], None),
    ("xor.b64", "b64", ["b64", "b64"], None), ("not.b32", "b32", ["b32"], None),
    ("and.pred", "pred", ["pred", "pred"], None), ("not.pred", "pred", ["pred"], None),
    ("shl.b32", "b32", ["b32", "u32"], None), ("shr.u32", "u32", ["u32", "u32"], None),
    ("shr.s32", "s32", ["s32", "u32"], None), ("shr.s16", "s16", ["s16", "u32"], None),
    ("shl.b64", "b64", ["b64", "u32"], None), ("shr.s64", "s64", ["s64", "u32"], None),
    ("add.s32", "s32", ["s32", "s32"], None), ("sub.u64", "u64", ["u64", "u64"], None),
    ("mul.lo.s32", "s32", ["s32", "s32"], None), ("mul.lo.u64", "u64", ["u64", "u64"], None),
    ("mul.wide.s32", "s64", ["s32", "s32"], None), ("mul.wide.u32", "u64", ["u32", "u32"], None),
    ("mul.wide.s16", "s32", ["s16", "s16"], None), ("mul.hi.s32", "s32", ["s32", "s32"], None),
    ("mul.hi.u32", "u32", ["u32", "u32"], None), ("mad.lo.s32", "s32", ["s32", "s32", "s32"], None),
    ("mad.wide.u16", "u32", ["u16", "u16", "u32"], None), ("mad.hi.s32", "s32", ["s32", "s32", "s32"], None),
    ("min.s32", "s32", ["s32", "s32"], None), ("max.u32", "u32", ["u32", "u32"], None),
    ("neg.s32", "s32", ["s32"], None), ("abs.s32", "s32", ["s32"], None), ("abs.s16", "s16", ["s16"], None),
    ("mov.b32", "b32", ["b32"], None), ("mov.u16", "u16", ["u16"], None), ("mov.f64", "f64", ["f64"], None),
]


@pytest.mark.parametrize("opcode,dst,srcs,dreg", OTHERS, ids=[o[0] for o in OTHERS])
def test_fused_operation_equals_the_numpy_step(db, opcode, dst, srcs, dreg):
    """Moves, conversions, abs/neg, comparisons, selection, logic, shifts and integer arithmetic
    over edge and random patterns; the numpy steps are checked against the spec forms elsewhere
    (tests/sim/test_compiled_ptx.py), and against the model here where it evaluates the form."""
    rng = np.random.default_rng(zlib.crc32(opcode.encode()))
    ops = [_specials(t, rng, 4000) for t in srcs]
    got = _one(db, opcode, dst, srcs, ops, True, dreg)
    assert np.array_equal(got, _one(db, opcode, dst, srcs, ops, False, dreg))
    if dreg is None and "pred" not in srcs:
        form = db.resolve(opcode)
        want = np.asarray(api.evaluate(form, *ops)).astype(np.uint64)
        assert np.array_equal(got, want)


def _mutated_fma_plan(db, mutate):
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .func (.param .b32 r) one(.param .b32 a, .param .b32 b, .param .b32 c)\n{\n"
            ".reg .f32 %f<8>;\nld.param.f32 %f1, [a];\nld.param.f32 %f2, [b];\nld.param.f32 %f3, [c];\n"
            "fma.rn.f32 %f4, %f1, %f2, %f3;\nmov.f32 %f5, %f4;\nst.param.f32 [r], %f5;\nret;\n}\n")
    plan = compile_function(parse_module(text, "m.ptx").function("one"), db, "m.ptx")
    (region,) = plan.regions.values()
    mutate(region)
    return plan


def _fma_cases(n=20000):
    rng = np.random.default_rng(3)
    a = _specials("f32", rng, n)
    b = _specials("f32", rng, n)
    c = api.evaluate("mul.rz.f32", a.astype(np.uint32), b.astype(np.uint32)).astype(np.uint64) ^ np.uint64(1 << 31)
    c[n // 2:] = _specials("f32", rng, n - n // 2)
    return a, b, c


def _run_plan(plan, ops, fuse=True):
    lanes = plan.new_lanes(ops[0].shape[0])
    for name, o in zip("abc", ops):
        lanes.params[name] = o
    plan.run(lanes, RunContext(fuse=fuse))
    return lanes.params["r"] & np.uint64(0xFFFFFFFF)


def test_a_double_rounded_fma_is_caught(db):
    """A table whose fma rounds the product first (mul, then add: two roundings) differs from the
    numpy step on the hard cases; the correct table does not."""
    ops = _fma_cases()

    def double_rounding(region):
        row = region.prog[0].copy()
        mul = row.copy()
        mul[fused.P3] = fused._FOPS["mul"]
        mul[fused.DST] = region.nslots  # a new work row for the rounded product
        add = row.copy()
        add[fused.P3] = fused._FOPS["add"]
        add[fused.A], add[fused.B] = region.nslots, row[fused.C]
        region.prog = np.concatenate([mul[None], add[None], region.prog[1:]])
        region.kon = np.concatenate([region.kon[:1], region.kon])
        region.nslots += 1

    good = _mutated_fma_plan(db, lambda r: None)
    assert np.array_equal(_run_plan(good, ops), _run_plan(good, ops, fuse=False))
    bad = _mutated_fma_plan(db, double_rounding)
    assert not np.array_equal(_run_plan(bad, ops), _run_plan(bad, ops, fuse=False))


def test_a_wrong_nan_pattern_is_caught(db):
    """A fused fma whose NaN result is the default NaN instead of the form's canonical one."""
    ops = _fma_cases()

    def default_nan(region):
        region.kon[0, fused.K_NAN] = 0x7FC00000

    bad = _mutated_fma_plan(db, default_nan)
    assert not np.array_equal(_run_plan(bad, ops), _run_plan(bad, ops, fuse=False))


def test_fusion_can_be_turned_off(db, monkeypatch):
    """TILECHECK_FUSE=0 makes the run context's default 'off'; the flag itself turns it off too."""
    monkeypatch.setenv(fused.ENV, "0")
    assert RunContext().fuse is False
    monkeypatch.delenv(fused.ENV)
    assert RunContext().fuse is True
    plan = _mutated_fma_plan(db, lambda r: r.kon.__setitem__((0, fused.K_NAN), 0x7FC00000))
    ops = _fma_cases(200)
    monkeypatch.setattr(fused.Region, "run", lambda *a: pytest.fail("fused region ran"))
    _run_plan(plan, ops, fuse=False)


@pytest.mark.parametrize("path,entry,against,start", [
    ("examples/cuda/half.ptx", "k_hdiv_f16", "div.rn.f16", 0x3C000000),
    ("examples/cuda/float.ptx", "k_frsqrt_rn", "rsqrt.rn.f32", 0x00000000)])
def test_an_exhaustive_block_reports_the_same_fused(db, path, entry, against, start, monkeypatch):
    """One block of the exhaustive enumeration, as the verifier runs it (the thresholds as
    shipped): the same misrounded inputs, examples and lane counts either way."""
    monkeypatch.setattr(fused, "MIN_LANES", SHIPPED_MIN_LANES)
    monkeypatch.setattr(fused, "MIN_STEPS", SHIPPED_MIN_STEPS)
    p = compiled.prepare(str(ROOT / path), entry, against, db=db)
    stop = start + compiled.EXHAUSTIVE_BLOCK
    tallies = []
    for fuse in (True, False):
        p.ctx_args["fuse"] = fuse
        tallies.append(compiled.run_range(p, start, stop))
    on, off = tallies
    assert on.lanes >= fused.MIN_LANES
    assert (on.checked, on.lanes, on.misrounded, on.by_value, on.unknown) == \
        (off.checked, off.lanes, off.misrounded, off.by_value, off.unknown)
    assert on.inputs == off.inputs and on.first_value == off.first_value and on.first_zero == off.first_zero


PENDING_FORK = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r, .param .b32 r2, .param .b32 r3) one(.param .b32 a, .param .b32 b, .param .b32 c)
{
  .reg .f32 %f<6>;
  .reg .b32 %r<6>;
  ld.param.f32 %f1, [a];
  ld.param.b32 %r1, [b];
  ld.param.b32 %r3, [c];
  rcp.approx.ftz.f32 %f2, %f1;
  mul.f32 %f3, %f2, %f1;
  add.u32 %r4, %r3, 7;
  mov.b32 %r2, %f3;
  st.param.b32 [r], %r2;
  st.param.b32 [r2], %r1;
  st.param.b32 [r3], %r4;
  ret;
}
"""


@pytest.mark.parametrize("same_divisor", [False, True])
def test_a_fork_before_a_region_leaves_its_copies_to_the_region(db, same_divisor, monkeypatch):
    """rcp.approx forks every lane into its allowed results right before a fused region: the region
    reads the registers the fork left pending through the fork's rows (%f1, %r3), and the one it
    does not read but the code stores afterwards (%r1) is copied. Every lane's outputs equal the
    numpy steps' and belong to the lane's own input (appending and tiled forks alike)."""
    rng = np.random.default_rng(11)
    n = 3000
    a = np.full(n, 0x3FC00001, dtype=np.uint64) if same_divisor else \
        rng.integers(0x3F800000, 0x40000000, n, dtype=np.uint64)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    plan = compile_function(parse_module(PENDING_FORK, "fork.ptx").function("one"), db, "fork.ptx")
    assert list(plan.regions) == [4], "the test needs one region right after the rcp step"
    pending = []
    real = fused.Region.run
    monkeypatch.setattr(fused.Region, "run", lambda self, lanes, live: (
        pending.append(None if lanes.pending is None else sorted(lanes.pending[1])), real(self, lanes, live)))
    outs = {}
    for fuse in (True, False):
        lanes = plan.new_lanes(n)
        lanes.params.update(a=a, b=b, c=c)
        plan.run(lanes, RunContext(fuse=fuse))
        assert lanes.pending is None
        assert lanes.size > n  # rcp.approx allows more than one result on these inputs
        o = lanes.origin
        assert np.array_equal(lanes.params["r2"] & np.uint64(0xFFFFFFFF), b[o])
        assert np.array_equal(lanes.params["r3"] & np.uint64(0xFFFFFFFF), (c[o] + np.uint64(7)) & np.uint64(0xFFFFFFFF))
        # sorting by (input, result) makes the two runs' lane orders comparable
        r = lanes.params["r"] & np.uint64(0xFFFFFFFF)
        order = np.lexsort((r, o))
        outs[fuse] = (o[order], r[order])
    assert pending == [["%f1", "%r1", "%r3"]]
    assert np.array_equal(outs[True][0], outs[False][0]) and np.array_equal(outs[True][1], outs[False][1])
