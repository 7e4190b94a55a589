"""Extended-precision integer steps (libdevice's Payne-Hanek argument reduction is made of them):
the carry chain (``add.cc``/``addc``/``sub.cc``/``subc``/``mad.cc``/``madc``), ``shf``, ``clz`` and ``bfi``,
checked against Python's unbounded integers, the carry flag kept as a register across steps, and
a read of a flag no ``.cc`` instruction set refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from tilecheck.sim import wide_int
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import RunContext, compile_function

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
EDGES32 = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
EDGES64 = [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 2, (1 << 64) - 1, 0xFFFFFFFF, 1 << 32]


def _arr(values, width):
    return np.array(values, dtype=np.uint32 if width == 32 else np.uint64)


def _signed(v: int, width: int) -> int:
    return v - (1 << width) if v >> (width - 1) else v


@given(st.sampled_from([32, 64]), st.data())
def test_carry_borrow_and_product_halves_are_exact(width, data):
    word = st.one_of(st.sampled_from(EDGES32 if width == 32 else EDGES64), st.integers(0, (1 << width) - 1))
    a, b = data.draw(st.lists(word, min_size=1, max_size=8)), data.draw(st.lists(word, min_size=8, max_size=8))
    b = b[:len(a)]
    mask = (1 << width) - 1
    for cin in (0, 1):
        flag = np.full(len(a), bool(cin))
        d, out = wide_int.add_carry(_arr(a, width), _arr(b, width), flag, width)
        assert [int(v) for v in d] == [(x + y + cin) & mask for x, y in zip(a, b)]
        assert [bool(v) for v in out] == [x + y + cin > mask for x, y in zip(a, b)]
        d, out = wide_int.sub_borrow(_arr(a, width), _arr(b, width), flag, width)
        assert [int(v) for v in d] == [(x - y - cin) & mask for x, y in zip(a, b)]
        assert [bool(v) for v in out] == [y + cin > x for x, y in zip(a, b)]
    for signed in (False, True):
        lo, hi = wide_int.mul_halves(_arr(a, width), _arr(b, width), width, signed)
        conv = (lambda v: _signed(v, width)) if signed else (lambda v: v)
        products = [conv(x) * conv(y) for x, y in zip(a, b)]
        assert [int(v) for v in lo] == [p & mask for p in products]
        assert [int(v) for v in hi] == [(p >> width) & mask for p in products]


@given(st.sampled_from([32, 64]), st.data())
def test_bit_field_insert_follows_the_isa(width, data):
    word = st.one_of(st.sampled_from(EDGES32 if width == 32 else EDGES64), st.integers(0, (1 << width) - 1))
    small = st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1))  # only the low 8 bits count
    rows = data.draw(st.lists(st.tuples(word, word, small, small), min_size=1, max_size=8))
    a, b = _arr([r[0] for r in rows], width), _arr([r[1] for r in rows], width)
    c, d = _arr([r[2] for r in rows], 32), _arr([r[3] for r in rows], 32)
    got = wide_int.bit_field_insert(a, b, c, d, width)
    for (x, y, start, length), g in zip(rows, got):
        want = y
        for i in range(length & 0xFF):  # the ISA's loop: f = b; f[pos + i] = a[i] while pos + i <= msb
            if (start & 0xFF) + i >= width:
                break
            bit = (x >> i) & 1
            want = (want & ~(1 << ((start & 0xFF) + i))) | (bit << ((start & 0xFF) + i))
        assert int(g) == want, (hex(x), hex(y), start, length)


@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
                min_size=1, max_size=8))
def test_funnel_shifts_follow_the_isa(triples):
    a, b, c = (_arr([t[k] for t in triples], 32) for k in range(3))
    for left in (True, False):
        for clamp in (True, False):
            got = wide_int.funnel_shift(a, b, c, left, clamp)
            for (x, y, z), g in zip(triples, got):
                n = min(z, 32) if clamp else z & 31
                v = (y << 32) | x
                want = ((v << n) >> 32) & 0xFFFFFFFF if left else (v >> n) & 0xFFFFFFFF
                assert int(g) == want, (x, y, z, left, clamp)


@given(st.sampled_from([32, 64]), st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=16))
def test_leading_zeros(width, values):
    values = [v & ((1 << width) - 1) for v in values] + [0, 1, (1 << width) - 1]
    got = wide_int.count_leading_zeros(_arr(values, width), width)
    assert [int(g) for g in got] == [width - v.bit_length() for v in values]


# a 64 x 64 -> 128-bit product from 32-bit limbs through the carry chain (the ISA's own example
# extended to four limbs), then a funnel shift and clz of the high word: every flag read is set by
# the instruction before it
MUL128 = """
.visible .func (.param .b64 hi, .param .b64 lo, .param .b32 f, .param .b32 z) wide(.param .b64 x, .param .b64 y)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<6>;
  ld.param.b64 %rd1, [x];
  ld.param.b64 %rd2, [y];
  mov.b64 {%r1, %r2}, %rd1;
  mov.b64 {%r3, %r4}, %rd2;
  mul.lo.u32 %r10, %r1, %r3;
  mul.hi.u32 %r11, %r1, %r3;
  mad.lo.cc.u32 %r11, %r2, %r3, %r11;
  madc.hi.u32 %r12, %r2, %r3, 0;
  mad.lo.cc.u32 %r11, %r1, %r4, %r11;
  madc.hi.cc.u32 %r12, %r1, %r4, %r12;
  addc.u32 %r13, 0, 0;
  mad.lo.cc.u32 %r12, %r2, %r4, %r12;
  madc.hi.u32 %r13, %r2, %r4, %r13;
  mov.b64 %rd3, {%r10, %r11};
  mov.b64 %rd4, {%r12, %r13};
  sub.cc.u32 %r14, %r10, %r12;
  subc.u32 %r15, %r11, %r13;
  shf.l.wrap.b32 %r16, %r14, %r15, %r1;
  clz.b64 %r17, %rd4;
  st.param.b64 [hi], %rd4;
  st.param.b64 [lo], %rd3;
  xor.b32 %r18, %r16, %r17;
  st.param.b32 [f], %r18;
  st.param.b32 [z], %r17;
  ret;
}
"""


def _plan(tmp_path, body: str, name: str, db):
    path = tmp_path / "k.ptx"
    path.write_text(HEADER + body)
    return compile_function(parse_module(path.read_text(), str(path)).function(name), db, str(path))


def test_a_carry_chain_computes_a_128_bit_product(tmp_path, db):
    rng = np.random.default_rng(7)
    xs = [0, 1, (1 << 64) - 1, 1 << 63, 0xFFFFFFFF, 0xFFFFFFFF00000000] + [int(v) for v in rng.integers(0, 2**63, 40)]
    ys = [(1 << 64) - 1, 0, (1 << 64) - 1, 3, 0xFFFFFFFF, 0xFFFFFFFF] + [int(v) * 2 + 1 for v in rng.integers(0, 2**62, 40)]
    plan = _plan(tmp_path, MUL128, "wide", db)
    lanes = plan.new_lanes(len(xs))
    lanes.params["x"] = np.array(xs, dtype=np.uint64)
    lanes.params["y"] = np.array(ys, dtype=np.uint64)
    plan.run(lanes, RunContext(approx="reference"))
    for k, (x, y) in enumerate(zip(xs, ys)):
        p = x * y
        lo, hi = p & (2**64 - 1), p >> 64
        assert int(lanes.params["lo"][k]) == lo and int(lanes.params["hi"][k]) == hi, (hex(x), hex(y))
        diff = (lo - hi) & (2**64 - 1)  # sub.cc / subc on the 32-bit limbs
        n = (x & 0xFFFFFFFF) & 31
        funnel = (((diff << n) >> 32) & 0xFFFFFFFF)
        z = 64 - hi.bit_length()
        assert int(lanes.params["z"][k]) & 0xFFFFFFFF == z
        assert int(lanes.params["f"][k]) & 0xFFFFFFFF == funnel ^ z


@pytest.mark.parametrize("body, why", [
    # no .cc before the addc
    ("  add.u32 %r3, %r1, %r2;\n  addc.u32 %r4, %r1, %r2;\n", "reads the carry flag"),
    # the flag set on one side of a branch only
    ("  add.cc.u32 %r3, %r1, %r2;\n  bra $L1;\n$L1:\n  addc.u32 %r4, %r1, %r2;\n", "reads the carry flag"),
    # set under a guard, read under none
    ("  setp.eq.u32 %p1, %r1, 0;\n  @%p1 add.cc.u32 %r3, %r1, %r2;\n  addc.u32 %r4, %r1, %r2;\n", "same guard"),
    # the same guard's name, but the predicate rewritten in between
    ("  setp.eq.u32 %p1, %r1, 0;\n  @%p1 add.cc.u32 %r3, %r1, %r2;\n  setp.ne.u32 %p1, %r1, 0;\n"
     "  @%p1 addc.u32 %r4, %r1, %r2;\n", "same guard"),
])
def test_a_flag_no_cc_instruction_sets_is_refused(tmp_path, db, body, why):
    kernel = (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n  .reg .pred %p<2>;\n  .reg .b32 %r<6>;\n"
              "  ld.param.b32 %r1, [a];\n  mov.b32 %r2, 7;\n" + body + "  st.param.b32 [r], %r4;\n  ret;\n}\n")
    with pytest.raises(UnsupportedPtxError, match=why) as info:
        _plan(tmp_path, kernel, "f", db)
    assert info.value.location.line > 0


def test_a_flag_set_and_read_under_one_guard_runs(tmp_path, db):
    kernel = (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n  .reg .pred %p<2>;\n  .reg .b32 %r<6>;\n"
              "  ld.param.b32 %r1, [a];\n  mov.b32 %r4, 5;\n  setp.ne.u32 %p1, %r1, 0;\n"
              "  @%p1 add.cc.u32 %r3, %r1, -1;\n  @%p1 addc.u32 %r4, 0, 0;\n  st.param.b32 [r], %r4;\n  ret;\n}\n")
    plan = _plan(tmp_path, kernel, "f", db)
    lanes = plan.new_lanes(3)
    lanes.params["a"] = np.array([0, 1, 0xFFFFFFFF], dtype=np.uint64)
    plan.run(lanes, RunContext(approx="reference"))
    assert [int(v) & 0xFFFFFFFF for v in lanes.params["r"]] == [5, 1, 1]  # a + 0xFFFFFFFF carries unless a = 0


@pytest.mark.parametrize("fn,ptx,entry", [("sin", "triton/sin_f32.ptx", "sin_kernel"),
                                          ("cos", "triton/cos_f32.ptx", "cos_kernel"),
                                          ("sin", "cuda/fast_trig.ptx", "k_sinf")])
def test_libdevice_sine_and_cosine_run_within_cudas_two_ulp(db, fn, ptx, entry):
    # Triton's tl.sin/tl.cos (libdevice's sinf/cosf, examples/triton) and nvcc's sinf on the
    # simulator against MPFR: inputs of every magnitude, half of them at or above 105615 where the
    # Payne-Hanek reduction (mad.lo.cc/madc.hi over a constant table, shf.l.wrap, a 32-bit-addressed
    # local array; nvcc's also bfi.b64) runs. CUDA documents 2 ulp for both; a carry, funnel shift,
    # bit-field insert or local address off by one bit lands the reduced argument in another
    # quadrant (errors of 2^23 ulp and more)
    import gmpy2

    from tilecheck.verify import compiled

    root = Path(__file__).resolve().parents[2] / "examples"
    p = compiled.prepare(str(root / ptx), entry, "mul.rn.f32(a, 0.0)", db=db)
    rng = np.random.default_rng(11)
    big = rng.uniform(np.log2(105615.0), 127.9, 300)
    x = np.concatenate([np.exp2(big) * rng.choice([-1, 1], 300), rng.uniform(-100, 100, 300)]).astype(np.float32)
    got = compiled.run_inputs(p, [x.view(np.uint32)]).got.astype(np.uint32).view(np.float32)
    ctx = gmpy2.context(precision=400)
    worst = 0.0
    for xi, g in zip(x, got):
        exact = (ctx.sin if fn == "sin" else ctx.cos)(gmpy2.mpfr(float(xi)))
        if abs(exact) < 2.0 ** -126:  # the kernel flushes subnormal results (.ftz)
            continue
        ulp = gmpy2.mpfr(2) ** (gmpy2.get_exp(exact) - 24)
        worst = max(worst, float(abs(gmpy2.mpfr(float(g)) - exact) / ulp))
    assert worst <= 2.0, worst
