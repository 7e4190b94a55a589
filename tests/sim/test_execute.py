"""``tilecheck.sim.execute``: single-instruction kernels of every form against direct model evaluation,
hand-written PTX (the reference template, integer ops, special registers), and located errors."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tilecheck.emit import single_instruction_kernel
from tilecheck.errors import UsageError
from tilecheck.formats import get_format
from tilecheck.inputs.edges import edge_values
from tilecheck.inputs.forms import form_operands
from tilecheck.model.api import allowed, evaluate, reference
from tilecheck.sim import ExecutionError, PtxError, execute
from tilecheck.spec.database import load_database


def _seed(*key) -> int:
    """A seed that is the same in every process (``hash`` of a str is randomised per process, so a
    failure seeded from it would not reproduce)."""
    return zlib.crc32(repr(key).encode())


N = 70          # elements; the launch has 96 threads, so 26 take the bounds-guard branch
BLOCK = 32


def _element_bits(fmt_name, count, rng):
    """Edge-biased bit patterns of one element format: every edge value, then random patterns."""
    fmt = get_format(fmt_name)
    edges = np.array(edge_values(fmt), dtype=np.uint64)
    pick = rng.integers(0, len(edges), size=count)
    random = rng.integers(0, 1 << fmt.width, size=count, dtype=np.uint64)
    return np.where(rng.random(count) < 0.7, edges[pick], random)


def _sources(form, n, rng):
    def lane(form, fmt, k, rng, arity):
        return [_element_bits(fmt, k, rng) for _ in range(arity)]

    return form_operands(form, n, rng, lane)


def _forms():
    db = load_database()
    return [pytest.param(f.name, id=f.name) for f in db.kernel_forms()]


@pytest.mark.parametrize("predicated", [False, True], ids=["plain", "pred"])
@pytest.mark.parametrize("name", _forms())
def test_single_instruction_kernel_matches_the_model(name, predicated):
    db = load_database()
    form = db.form(name)
    rng = np.random.default_rng(_seed(name, predicated))
    kernel = single_instruction_kernel(form, "sm_100", predicated=predicated, db=db)
    sources = _sources(form, N, rng)
    out_param = next(p for p in kernel.params if p.role == "output")
    old = rng.integers(0, 1 << 62, size=N * out_param.per_thread, dtype=np.uint64).astype(out_param.dtype)
    out = old.copy()
    mask = (rng.random(N) < 0.5).astype(np.uint32) if predicated else None
    result = execute(kernel, None, kernel.arguments(sources, out, mask), grid=-(-N // BLOCK), block=BLOCK, db=db)
    if form.kind == "memory":
        expected = sources[0]
    elif form.kind == "exact":
        expected = evaluate(form, *sources)
    else:
        expected = reference(form, *sources)
        assert allowed(form, out if not predicated else expected, *sources).all()
    if predicated:
        keep = np.repeat(mask == 0, out_param.per_thread)
        expected = np.where(keep, old, expected)
    assert out.dtype == expected.dtype
    mismatch = np.flatnonzero(out != expected)
    assert mismatch.size == 0, f"{name}: element {mismatch[0]}: sim {out[mismatch[0]]:#x}, model {expected[mismatch[0]]:#x}"
    assert result.approximate == ((name,) if form.kind == "contract" else ())
    assert result.threads == 96


TEMPLATE = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 p_a, .param .u64 p_b, .param .u64 p_out,
                  .param .u64 p_mask, .param .u32 p_n)
{
    .reg .pred %p<3>;  .reg .b32 %r<8>;  .reg .f32 %v<4>;  .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [p_a];   ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_out]; ld.param.u64 %rd8, [p_mask]; ld.param.u32 %r1, [p_n];
    cvta.to.global.u64 %rd1, %rd1;  cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd3, %rd3;  cvta.to.global.u64 %rd8, %rd8;
    mov.u32 %r2, %ctaid.x;  mov.u32 %r3, %ntid.x;  mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;                         // bounds guard
    mul.wide.u32 %rd4, %r5, 4;             // 8 for f64, 2 for f16/bf16
    add.s64 %rd5, %rd1, %rd4;  add.s64 %rd6, %rd2, %rd4;  add.s64 %rd7, %rd3, %rd4;
    ld.global.f32 %v1, [%rd5];
    ld.global.f32 %v2, [%rd6];
    add.s64 %rd10, %rd8, %rd4;  ld.global.u32 %r6, [%rd10];
    setp.ne.u32 %p2, %r6, 0;
    ld.global.f32 %v3, [%rd7];             // dest pre-loaded with the OLD out[i]
    @%p2 div.rn.f32 %v3, %v1, %v2;         // predicated: no write when %p2 false
    st.global.f32 [%rd7], %v3;
DONE:
    ret;
}
"""


def test_reference_template_kernel():
    # the hand-written kernel of reference/ptx-semantics.md §2.1, run as given
    rng = np.random.default_rng(5)
    n = 50
    a = rng.uniform(-10, 10, n).astype(np.float32)
    b = rng.uniform(1, 3, n).astype(np.float32)
    out = np.full(n + 3, -1.0, np.float32)  # three elements beyond n stay untouched
    mask = (np.arange(n) % 3 != 0).astype(np.uint32)
    execute(TEMPLATE, "k", {"p_a": a, "p_b": b, "p_out": out, "p_mask": mask, "p_n": np.uint32(n)}, grid=2, block=32, db=load_database())
    expected = np.where(mask != 0, (a.astype(np.float64) / b).astype(np.float32), np.float32(-1.0))
    assert np.array_equal(out[:n], expected) and np.all(out[n:] == -1.0)


INTEGER_KERNEL = """
.version 7.8
.target sm_90
.address_size 64
.visible .entry ints(.param .u64 p_in, .param .u64 p_out, .param .s32 p_k)
{
    .reg .pred %p<4>;
    .reg .b16 %h<3>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p_in];
    ld.param.u64 %rd2, [p_out];
    ld.param.s32 %r30, [p_k];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v2.s32 {%r2, %r3}, [%rd4];
    mul.wide.u32 %rd5, %r1, 64;
    add.s64 %rd6, %rd2, %rd5;
    div.s32 %r4, %r2, %r3;
    rem.s32 %r5, %r2, %r3;
    div.u32 %r6, %r2, %r3;
    shl.b32 %r7, %r2, %r30;
    shr.s32 %r8, %r2, %r30;
    shr.u32 %r9, %r2, %r30;
    min.s32 %r10, %r2, %r3;
    max.u32 %r11, %r2, %r3;
    mul.hi.s32 %r12, %r2, %r3;
    mul.lo.s32 %r13, %r2, %r3;
    mad.lo.s32 %r14, %r2, %r3, -7;
    neg.s32 %r15, %r2;
    setp.lt.s32 %p1, %r2, %r3;
    selp.s32 %r16, %r2, %r3, %p1;
    cvt.u16.u32 %h1, %r2;
    cvt.s32.s16 %r17, %h1;
    xor.b32 %r18, %r2, %r3;
    not.b32 %r19, %r2;
    setp.hi.u32 %p2, %r2, %r3;
    and.pred %p3, %p1, %p2;
    selp.u32 %r20, 1, 0, %p3;
    st.global.v4.b32 [%rd6], {%r4, %r5, %r6, %r7};
    st.global.v4.b32 [%rd6+16], {%r8, %r9, %r10, %r11};
    st.global.v4.b32 [%rd6+32], {%r12, %r13, %r14, %r15};
    st.global.v4.b32 [%rd6+48], {%r16, %r17, %r18, %r20};
    ret;
}
"""


def _s32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def test_integer_subset_against_python():
    rng = np.random.default_rng(11)
    pairs = rng.integers(-2**31, 2**31, size=(64, 2), dtype=np.int64)
    pairs[pairs[:, 1] == 0, 1] = 3  # (row 4 divides by zero on purpose)
    pairs[:5] = [[-7, 2], [7, -2], [-2**31, 3], [5, 7], [9, 0]]
    data = pairs.astype(np.int32)
    out = np.zeros((64, 16), dtype=np.uint32)
    k = 5
    execute(INTEGER_KERNEL, "ints", [data, out, k], grid=1, block=64, db=load_database())
    for i, (a, b) in enumerate(pairs.tolist()):
        if b == 0:  # "an unspecified, machine-specific value", not a trap: the model's representative, 0
            assert out[i][:3].tolist() == [0, 0, 0]
            continue
        ua, ub = a & 0xFFFFFFFF, b & 0xFFFFFFFF
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        want = [q, a - q * b, ua // ub, (ua << k), a >> k, ua >> k, min(a, b), max(ua, ub), (a * b) >> 32,
                a * b, a * b - 7, -a, a if a < b else b, _s32((a & 0xFFFF) - (1 << 16) if a & 0x8000 else a & 0xFFFF),
                ua ^ ub, int(a < b and ua > ub)]
        assert [v & 0xFFFFFFFF for v in want] == out[i].tolist(), (a, b)


SPECIALS = """
.version 7.8
.target sm_90
.address_size 64
.visible .entry specials(.param .u64 p_out)
.maxntid 64, 1, 1
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p_out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;  mov.u32 %r2, %tid.y;  mov.u32 %r3, %ntid.x;  mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %nctaid.x;  mov.u32 %r6, %laneid;  mov.u32 %r7, %warpid;
    mad.lo.u32 %r8, %r2, %r3, %r1;       // linear thread index in the block
    mov.u32 %r9, %ntid.y;
    mul.lo.u32 %r9, %r9, %r3;
    mad.lo.u32 %r9, %r4, %r9, %r8;        // global thread index
    mul.wide.u32 %rd2, %r9, 32;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
    st.global.v4.u32 [%rd3+16], {%r5, %r6, %r7, %r8};
    ret;
}
"""


def test_special_registers():
    out = np.zeros((3 * 40, 8), dtype=np.uint32)
    execute(SPECIALS, None, [out], grid=3, block=(20, 2), db=load_database())
    g = np.arange(120)
    t, b = g % 40, g // 40
    want = np.stack([t % 20, t // 20, np.full(120, 20), b, np.full(120, 3), t % 32, t // 32, t], axis=1)
    assert np.array_equal(out, want)


def _kernel(body: str, regs: str = ".reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .f32 %f<4>;") -> str:
    return (".version 7.8\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u64 p_a)\n{\n" + regs + "\n" + body + "\nret;\n}\n")


@pytest.mark.parametrize("body, message, line", [
    ("ld.param.u64 %rd1, [p_a];\ntex.1d.v4.f32.s32 {%f1, %f2, %f3, %f0}, [%rd1];",
     "unsupported instruction 'tex.1d.v4.f32.s32'", 8),
    ("ld.param.u64 %rd1, [p_a];\nld.shared.f32 %f1, [%rd1];", "unsupported ld.shared", 8),
    ("L1:\nadd.s32 %r1, %r1, 1;\nbra L1;", "unsupported backward branch", 9),
    ("mov.u32 %r9, 1;", "register %r9 is not declared", 7),
    ("div.rn.f32 %f1, %f2;", "div.rn.f32 takes 3 operands", 7),
    ("add.rn.f16 %f1, %f2, %f3;", "register %f1 is 32-bit", 7),
    ("{ add.s32 %r1, %r1, 1; }", "nested { } scopes are not supported", 7),
    ("brev.b32 %r1, %r2;", "unsupported instruction 'brev.b32'", 7),
    ("ld.global.f32 %f1, [%rd1+%r1];", "unsupported address", 7),
])
def test_unsupported_ptx_is_a_located_error(body, message, line):
    with pytest.raises(PtxError) as info:
        execute(_kernel(body), "k", [np.zeros(4, np.float32)], db=load_database())
    assert info.value.line == line
    assert f"line {line}: " in str(info.value) and message in str(info.value)


def test_module_level_errors():
    with pytest.raises(PtxError, match="line 4: unsupported module-level statement"):
        execute(".version 7.8\n.target sm_90\n.address_size 64\n.global .f32 x;\n", None, [], db=load_database())
    with pytest.raises(PtxError, match="no kernel 'nope'"):
        execute(_kernel(""), "nope", [np.zeros(1, np.float32)], db=load_database())


def test_access_errors():
    load = "ld.param.u64 %rd1, [p_a];\nld.global.f32 %f1, [%rd1+{}];"
    with pytest.raises(ExecutionError, match="out-of-bounds"):
        execute(_kernel(load.format(16)), "k", [np.zeros(4, np.float32)], db=load_database())
    with pytest.raises(ExecutionError, match="misaligned"):
        execute(_kernel(load.format(2)), "k", [np.zeros(4, np.float32)], db=load_database())
    with pytest.raises(ExecutionError, match="misaligned"):
        execute(_kernel("ld.param.u64 %rd1, [p_a];\nld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd1+4];"), "k",
                [np.zeros(8, np.float32)], db=load_database())


def test_launch_and_argument_errors():
    kernel = single_instruction_kernel("sqrt.rn.f32", "sm_90", db=load_database())
    a, out = np.full(4, 0x3F800000, np.uint32), np.zeros(4, np.uint32)  # sqrt(1.0)
    with pytest.raises(UsageError, match="takes 3 argument"):
        execute(kernel, None, [a, out], db=load_database())
    with pytest.raises(UsageError, match="no parameter"):
        execute(kernel, None, {"src_a": a, "out": out, "n": 4, "m": 1}, db=load_database())
    with pytest.raises(UsageError, match="read-only"):
        execute(kernel, None, [a, _readonly(out), np.uint32(4)], db=load_database())
    with pytest.raises(UsageError, match="out of range"):
        execute(kernel, None, [a, out, -1], db=load_database())
    with pytest.raises(ExecutionError, match="requires block"):
        execute(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n.reqntid 32, 1, 1\n{\nret;\n}\n",
                None, [], block=64, db=load_database())
    by_name = execute(kernel, None, {"src_a": a, "param_out": out, "n": np.uint32(4)}, grid=1, block=4, db=load_database())
    assert by_name.instructions > 0 and np.all(out == 0x3F800000)


def _readonly(array):
    view = array.view()
    view.setflags(write=False)
    return view
