"""Shared memory and CTA barriers in compiled PTX: ``.shared`` variables (module and function
scope), their 32- and 64-bit addresses, ``cvta.shared``/``cvta.to.shared``, ``ld/st.shared`` of
every width and vectors, generic accesses that land in shared memory, ``bar.sync``/``barrier.sync``.

The kernels are nvcc 13's PTX (sm_90) of ``fixtures/shared_staging.cu``, committed as
``fixtures/shared_staging.ptx`` (and ``_fast.ptx``, ``-use_fast_math``); results are checked
against numpy (float32 division in numpy is correctly rounded), not against the simulator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import ExecutionError, UnsupportedPtxError
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import compile_function
from tilecheck.sim import shared
from tilecheck.spec.database import load_database
from tilecheck.verify import compiled

from support.kernel_run import run_kernel

FIX = Path(__file__).resolve().parent / "fixtures"
PTX = FIX / "shared_staging.ptx"
FAST = FIX / "shared_staging_fast.ptx"
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
BLOCK = 256


def _operands(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 3.0, 1e-45, -1e38, 7.0], dtype=np.float32)
    a[:10], b[:10] = special, special[::-1]
    return a, b


def _run(db, path: Path, entry: str, buffers: list, n: int, approx: str = "reference", block: int = BLOCK):
    """Run ``entry`` on ``n`` threads with one global buffer per pointer parameter; returns the lanes."""
    return run_kernel(db, path, entry, buffers, n, approx, block)


def _output(lanes, words: int) -> np.ndarray:
    """The output buffer (``words`` uint32 words) as the lanes' single store record writes it."""
    (region, nbytes, offs, vals, done), = lanes.stores
    assert done.all()
    out = np.zeros(words, dtype=np.uint32)
    words = nbytes // 4
    for j in range(words):
        out[offs // 4 + j] = (vals.astype(np.uint64) >> np.uint64(32 * j)).astype(np.uint32)
    return out


def _same_f32(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-equal, NaNs compared by class (PTX f32 NaN results are an unspecified NaN)."""
    w = want.view(np.uint32)
    nan = np.isnan(want)
    return bool((np.isnan(got.view(np.float32)) == nan).all() and (got[~nan] == w[~nan]).all())


def test_fixture_is_nvcc_output_with_shared_memory():
    text = PTX.read_text()
    assert "Cuda compilation tools, release 13" in text
    for construct in (".shared .align 4 .b8 _ZZ9stage_divE2sa[1024];", "ld.shared.f32", "st.shared.f32",
                      "bar.sync \t0;", "barrier.sync 1, 256;", "cvta.shared.u64", "cvta.to.shared.u64",
                      "st.shared.v4.u32", "ld.shared.v4.f32", "\n.shared .align 4 .b8 staged[1024];"):
        assert construct in text, construct


@pytest.mark.parametrize("n", [1024, 1000])
def test_staging_kernel_divides_each_threads_elements(db, n):
    a, b = _operands(n)
    with np.errstate(all="ignore"):
        want = a / b
    got = _output(_run(db, PTX, "stage_div", [a, b, np.zeros(n, np.float32)], n), n)
    assert _same_f32(got, want)


def test_neighbour_kernel_reads_the_next_threads_elements(db):
    n = 4 * BLOCK
    a, b = _operands(n, 1)
    i = np.arange(n)
    j = i // BLOCK * BLOCK + (i % BLOCK + 1) % BLOCK
    with np.errstate(all="ignore"):
        want = a[j] / b[j]
    got = _output(_run(db, PTX, "neighbour_div", [a, b, np.zeros(n, np.float32)], n), n)
    assert _same_f32(got, want)


def test_neighbour_kernel_in_a_partial_cta_reads_what_no_thread_wrote(db):
    # 1000 threads: the last CTA has 232; thread 999 reads the slot of a thread that does not exist
    a, b = _operands(1000)
    with pytest.raises(ExecutionError, match=r"shared_staging\.ptx:\d+:\d+: thread 999 .*reads shared memory no "
                                             r"thread wrote: shared address 0x[0-9a-f]+ \(_ZZ13neighbour_divE2sa\+928\)"):
        _run(db, PTX, "neighbour_div", [a, b, np.zeros(1000, np.float32)], 1000)


def test_generic_stores_into_module_shared_and_a_counted_barrier(db):
    # put() stores through a generic pointer (cvta.shared.u64, then cvta.to.shared in the callee);
    # barrier.sync 1, 256 counts the whole CTA
    n = 2 * BLOCK
    a, b = _operands(n, 2)
    i = np.arange(n)
    j = i // BLOCK * BLOCK + (i % BLOCK + 1) % BLOCK
    with np.errstate(all="ignore"):
        want = a[j] / b
    got = _output(_run(db, PTX, "stage_generic", [a, b, np.zeros(n, np.float32)], n), n)
    assert _same_f32(got, want)


@pytest.mark.parametrize("half", [0, 1])
def test_vector_stage_rotates_the_neighbours_float4(db, tmp_path, half):
    # st.shared.v4.u32 / ld.shared.v4.f32 as nvcc wrote them; the kernel's 128-bit global store is
    # split into its two 64-bit halves (one run each): the global store records hold 64 bits
    text = PTX.read_text()
    store = "st.global.v4.f32 \t[%rd8], {%f2, %f3, %f4, %f1};"
    assert store in text
    path = tmp_path / "vec.ptx"
    path.write_text(text.replace(store, ["st.global.v2.f32 [%rd8], {%f2, %f3};",
                                         "st.global.v2.f32 [%rd8+8], {%f4, %f1};"][half]))
    n = 2 * BLOCK
    a = np.arange(4 * n, dtype=np.float32) + 0.5
    i = np.arange(n)
    j = i // BLOCK * BLOCK + (i % 64 + 1) % 64
    want = a.reshape(n, 4)[j][:, [1, 2, 3, 0]].reshape(n, 2, 2)[:, half]
    got = _output(_run(db, path, "stage_vec", [a, np.zeros(4 * n, np.float32)], n), 4 * n).reshape(n, 2, 2)[:, half]
    assert (got == want.view(np.uint32)).all()


def test_race_between_threads_is_reported_with_line_and_address(db):
    a, _ = _operands(64)
    with pytest.raises(ExecutionError, match=r"shared_staging\.ptx:\d+:\d+: a data race on shared memory: thread \d+ "
                                             r"writes shared address 0x[0-9a-f]+ \(_ZZ4racyE1s_\$_0\+0\), which thread "
                                             r"\d+ of its CTA wrote with no barrier between"):
        _run(db, PTX, "racy", [a, np.zeros(64, np.float32)], 64)


def test_barrier_in_divergent_code_is_refused(db):
    a, _ = _operands(BLOCK)
    with pytest.raises(UnsupportedPtxError, match=r"shared_staging\.ptx:\d+:\d+: error: thread \d+ of CTA 0 is on "
                                                  r"another path while other threads of its CTA reach this barrier"):
        _run(db, PTX, "divergent_barrier", [a, np.zeros(BLOCK, np.float32)], BLOCK)


def test_forked_copies_storing_different_values_are_refused(db):
    # -use_fast_math: q[tid] = div.approx(a, b) forks each thread into its allowed quotients, and
    # the copies would store different values where other threads read them
    n = BLOCK
    a, b = _operands(n, 3)
    with pytest.raises(UnsupportedPtxError, match=r"copies of thread \d+ .* store different values to shared "
                                                  r"address"):
        _run(db, FAST, "stage_quotient", [a, b, np.zeros(n, np.float32)], n, approx="all")


def test_forks_after_the_barrier_are_exact(db):
    # -use_fast_math stage_div: loads from shared memory, then div.approx forks: every copy's
    # quotient is within the 2-ulp contract of the exact one (normal operands and results)
    n = BLOCK
    rng = np.random.default_rng(4)
    a = rng.uniform(1, 2, n).astype(np.float32)
    b = rng.uniform(1, 2, n).astype(np.float32)
    lanes = _run(db, FAST, "stage_div", [a, b, np.zeros(n, np.float32)], n, approx="all")
    assert lanes.size > n  # forked
    (region, nbytes, offs, vals, done), = lanes.stores
    got = vals.astype(np.uint32).view(np.float32).astype(np.float64)
    exact = a.astype(np.float64)[lanes.origin] / b.astype(np.float64)[lanes.origin]
    rn = exact.astype(np.float32)  # the bound counts ulps from the correctly rounded quotient
    ulp = np.spacing(np.abs(rn)).astype(np.float64)
    assert (offs == lanes.origin * 4).all() and (np.abs(got - rn) <= 2 * ulp).all()


@pytest.mark.parametrize("entry", ["stage_div", "stage_generic2"])
def test_verify_cli_on_staging_kernels(entry, capsys):
    assert main(["verify", str(PTX), "--entry", entry, "--against", "div.rn.f32", "--cases", "4000"]) == 0
    assert "NO COUNTEREXAMPLE" in capsys.readouterr().out


def test_verify_cli_refuses_the_neighbour_kernel_located(capsys):
    # the ABI discovery launches 32-thread CTAs: thread 31 reads the slot of thread 32, of no CTA
    assert main(["verify", str(PTX), "--entry", "neighbour_div", "--against", "div.rn.f32", "--cases", "100"]) == 2
    err = capsys.readouterr().err
    assert "shared_staging.ptx:" in err and "reads shared memory no thread wrote" in err and "Traceback" not in err


# hand-written PTX: constructs nvcc did not emit for the kernels above

def _write(tmp_path, body: str, name: str = "k.ptx") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


WIDTHS = """
.visible .entry widths(.param .u64 pin, .param .u64 pout)
{
  .shared .align 8 .b8 buf[2048];
  .reg .b32 %r<12>;
  .reg .b16 %h<3>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v2.u32 {%r2, %r3}, [%rd4];
  mov.u64 %rd5, buf;
  cvta.shared.u64 %rd6, %rd5;
  add.s64 %rd7, %rd6, %rd3;
  st.v2.u32 [%rd7], {%r2, %r3};
  bar.sync 0;
  cvta.to.shared.u32 %r4, %rd7;
  ld.shared.s8 %r5, [%r4+1];
  ld.shared.u8 %r6, [%r4+1];
  ld.shared.b16 %h1, [%r4+2];
  ld.b64 %rd8, [%rd7];
  cvt.u32.u16 %r7, %h1;
  add.s32 %r8, %r5, %r6;
  add.s32 %r8, %r8, %r7;
  cvt.u64.u32 %rd9, %r8;
  xor.b64 %rd9, %rd9, %rd8;
  add.s64 %rd10, %rd2, %rd3;
  st.global.u64 [%rd10], %rd9;
  ret;
}
"""


def test_widths_generic_accesses_and_sign_extension(db, tmp_path):
    n = 64
    words = np.random.default_rng(5).integers(0, 1 << 32, 2 * n, dtype=np.uint64).astype(np.uint32)
    lanes = _run(db, _write(tmp_path, WIDTHS), "widths", [words, np.zeros(2 * n, np.uint32)], n, block=64)
    (region, nbytes, offs, vals, done), = lanes.stores
    w64 = words.view(np.uint64)
    byte1 = (w64 >> np.uint64(8)) & np.uint64(0xFF)
    s8 = np.where(byte1 >= 128, byte1 + np.uint64(0xFFFFFF00), byte1)
    b16 = (w64 >> np.uint64(16)) & np.uint64(0xFFFF)
    total = (s8 + byte1 + b16) & np.uint64(0xFFFFFFFF)
    assert (offs == np.arange(n) * 8).all() and (vals == (total ^ w64)).all()


def _kernel(body: str, shared_decl: str = ".shared .align 4 .b8 s[1024];") -> str:
    return f"""
{shared_decl}
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
{body}
  add.s64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f2;
  ret;
}}
"""


@pytest.mark.parametrize("body,error,message", [
    ("  ld.shared.f32 %f2, [%r4];", ExecutionError, r"k\.ptx:\d+:\d+: thread 0 \(CTA 0\) reads shared memory no thread "
                                                    r"wrote: shared address 0x1000 \(s\+0\)"),
    # thread i reads slot i+1, then thread i+1 overwrites it: no barrier between
    ("  st.shared.f32 [%r4], %f1;\n  bar.sync 0;\n  xor.b32 %r5, %r2, 4;\n  add.s32 %r6, %r3, %r5;\n"
     "  ld.shared.f32 %f2, [%r6];\n  st.shared.f32 [%r4], %f2;", ExecutionError,
     r"data race on shared memory: thread \d+ writes shared address .*which thread \d+ of its CTA read"),
    ("  st.shared.f32 [%r4+2], %f1;\n  bar.sync 0;\n  mov.f32 %f2, %f1;", ExecutionError,
     r"outside \(or misaligned in\) the \.shared variables"),
    ("  st.shared.f32 [%r4+1024], %f1;\n  mov.f32 %f2, %f1;", ExecutionError,
     r"accesses shared address 0x[0-9a-f]+, outside"),
    ("  st.shared.f32 [%r4], %f1;\n  bar.arrive 0, 64;\n  mov.f32 %f2, %f1;", UnsupportedPtxError,
     r"k\.ptx:\d+:\d+: error: unsupported instruction 'bar\.arrive'"),
    ("  st.shared.f32 [%r4], %f1;\n  bar.warp.sync -1;\n  mov.f32 %f2, %f1;", UnsupportedPtxError,
     r"bar\.warp\.sync in a CTA of 64 threads"),
    ("  st.shared.f32 [%r4], %f1;\n  bar.warp.sync 3;\n  mov.f32 %f2, %f1;", UnsupportedPtxError,
     r"bar\.warp\.sync of the whole warp only"),
    ("  st.shared.f32 [%r4], %f1;\n  bar.sync 0, 32;\n  ld.shared.f32 %f2, [%r4];", UnsupportedPtxError,
     r"a barrier for 32 threads in a CTA of 64"),
    ("  st.f32 [s], %f1;\n  mov.f32 %f2, %f1;", UnsupportedPtxError, r"generic access 'st\.f32' naming the shared"),
])
def test_shared_errors_are_located(db, tmp_path, body, error, message):
    path = _write(tmp_path, _kernel(body))
    a = np.ones(64, np.float32)
    with pytest.raises(error, match=message):
        _run(db, path, "k", [a, np.zeros(64, np.float32)], 64, block=64)


def test_a_barrier_orders_reads_after_writes(db, tmp_path):
    body = "  st.shared.f32 [%r4], %f1;\n  bar.sync 0;\n  xor.b32 %r5, %r2, 4;\n  add.s32 %r6, %r3, %r5;\n" \
           "  ld.shared.f32 %f2, [%r6];\n  barrier.sync.aligned 0;\n  st.shared.f32 [%r6], %f2;"
    a = np.arange(64, dtype=np.float32)
    lanes = _run(db, _write(tmp_path, _kernel(body)), "k", [a, np.zeros(64, np.float32)], 64, block=64)
    assert (_output(lanes, 64).view(np.float32) == a[np.arange(64) ^ 1]).all()


@pytest.mark.parametrize("decl,message", [
    (".extern .shared .align 16 .b8 dyn[64];", r"k\.ptx:5:1: error: unsupported dynamic shared declaration"),
    (".shared .align 4 .b8 s[4] = {1, 2, 3, 4};", r"k\.ptx:5:1: error: unsupported shared declaration"),
])
def test_refused_declarations_exit_2_located(tmp_path, capsys, decl, message):
    path = _write(tmp_path, _kernel("  mov.f32 %f2, %f1;", decl))
    assert main(["verify", str(path), "--entry", "k", "--against", "div.rn.f32", "--cases", "10"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert __import__("re").search(message, err), err


def test_dynamic_shared_memory_stages_elements(tmp_path, capsys):
    """``.extern .shared`` (sized at launch; Triton's global_smem): each thread stores its element,
    a barrier, and its neighbour's comes back (thread i ^ 1): verified against the neighbour's
    value, which ``--against`` cannot state, so the kernel is read as the swap it is; and a
    run after discovery gets only the bytes discovery touched, so an access past them is refused."""
    text = """
.extern .shared .align 16 .b8 s[];
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r7, %ctaid.x;
  mov.u32 %r8, %ntid.x;
  mad.lo.s32 %r9, %r7, %r8, %r1;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  mul.wide.u32 %rd3, %r9, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  st.shared.f32 [%r4], %f1;
  bar.sync 0;
  xor.b32 %r5, %r2, 4;
  add.s32 %r6, %r3, %r5;
  ld.shared.f32 %f0, [%r6];
  bar.sync 0;
  st.shared.f32 [%r6], %f0;
  bar.sync 0;
  ld.shared.f32 %f2, [%r4];
  add.s64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f2;
  ret;
}
"""
    path = _write(tmp_path, text)
    # the value a thread stores is its own element again (swapped twice): out[i] = in[i]
    assert main(["verify", str(path), "--entry", "k", "--against", "neg.f32(neg.f32(a))", "--cases", "2000"]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "NO COUNTEREXAMPLE" in out.out, out.err
    # against the value itself negated, every input fails: the staged value is compared
    assert main(["verify", str(path), "--entry", "k", "--against", "neg.f32(a)", "--cases", "200"]) == 1
    capsys.readouterr()
    plan = compile_function(parse_module(text, str(path)).function("k"), load_database(), str(path))
    assert plan.dynamic_shared == shared.DYNAMIC_SHARED_MOST and plan.shared_bytes == 0
    # discovery fits the launch's bytes to what a CTA of 256 threads touches (4 bytes each)
    p = compiled.prepare(str(path), "k", "neg.f32(neg.f32(a))", db=load_database())
    assert p.plan.dynamic_shared == 256 * 4


def test_function_scope_extern_shared_parses(tmp_path, capsys):
    body = _kernel("  mov.f32 %f2, %f1;", "").replace("{\n", "{\n  .extern .shared .align 16 .b8 s[];\n", 1)
    path = _write(tmp_path, body)
    assert main(["verify", str(path), "--entry", "k", "--against", "neg.f32(neg.f32(a))", "--cases", "10"]) == 0


LDMATRIX = """
.visible .entry ldm(.param .u64 pin, .param .u64 pout)
{
  .shared .align 16 .b8 rows[1024];
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd4];
  mov.u32 %r6, rows;
  shl.b32 %r7, %r1, 4;
  add.s32 %r8, %r6, %r7;
  st.shared.v4.b32 [%r8], {%r2, %r3, %r4, %r5};
  bar.sync 0;
  mul.lo.u32 %r9, %r1, 5;
  and.b32 %r9, %r9, 31;
  shl.b32 %r9, %r9, 4;
  add.s32 %r9, %r6, %r9;
  ldmatrix.sync.aligned.m8n8.COUNT.shared.b16 REGS, [%r9];
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.b32 [%rd5], {%r10, %r11, %r12, %r13};
  ret;
}
"""


@pytest.mark.parametrize("count", [1, 2, 4])
def test_ldmatrix_gives_each_thread_the_words_of_the_rows_other_threads_address(db, tmp_path, count):
    """Thread p writes its 16-byte row to shared memory and gives ldmatrix the address of the row
    of thread 5p mod 32; thread t must receive in register j word t % 4 of the row addressed by
    thread 8j + t // 4 (PTX ISA, ldmatrix: row r of matrix j is addressed by thread 8j + r; thread t
    holds the two elements at word t % 4 of row t // 4). Registers it does not load keep the zero
    written before."""
    n = 32
    words = np.random.default_rng(9).integers(0, 1 << 32, (n, 4), dtype=np.uint64).astype(np.uint32)
    regs = ", ".join(f"%r{10 + j}" for j in range(count))
    body = LDMATRIX.replace("COUNT", f"x{count}").replace("REGS", "{" + regs + "}")
    body = body.replace("  ldmatrix", "".join(f"  mov.b32 %r{10 + j}, 0;\n" for j in range(4)) + "  ldmatrix")
    lanes = _run(db, _write(tmp_path, body), "ldm", [words.reshape(-1), np.zeros(4 * n, np.uint32)], n, block=32)
    got = np.zeros((n, 4), dtype=np.uint32)
    for region, nbytes, offs, vals, done in lanes.stores:
        assert done.all()
        for k in range(nbytes // 4):
            got.reshape(-1)[offs // 4 + k] = (vals.astype(np.uint64) >> np.uint64(32 * k)).astype(np.uint32)
    want = np.zeros((n, 4), dtype=np.uint32)
    for t in range(n):
        for j in range(count):
            giver = 8 * j + t // 4          # the thread that addresses this row
            row_of = (5 * giver) % 32       # the thread whose row that address holds
            want[t, j] = words[row_of, t % 4]
    assert (got == want).all()


@pytest.mark.parametrize("opcode,message", [
    ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8", r"m8n8.x1/.x2/.x4\{.trans\}.shared.b16 only"),
    ("ldmatrix.sync.aligned.m8n8.x4.b16", r"m8n8.x1/.x2/.x4\{.trans\}.shared.b16 only"),
])
def test_ldmatrix_forms_not_modelled_are_located_errors(db, tmp_path, opcode, message):
    body = LDMATRIX.replace("ldmatrix.sync.aligned.m8n8.COUNT.shared.b16 REGS", opcode + " {%r10, %r11, %r12, %r13}")
    path = _write(tmp_path, body)
    with pytest.raises(UnsupportedPtxError, match=message) as err:
        compile_function(parse_module(path.read_text(), str(path)).function("ldm"), db, str(path))
    assert err.value.location is not None and err.value.location.line > 0


def test_ldmatrix_in_a_partial_warp_is_refused(db, tmp_path):
    body = LDMATRIX.replace("COUNT", "x4").replace("REGS", "{%r10, %r11, %r12, %r13}")
    words = np.zeros(64, dtype=np.uint32)
    with pytest.raises(UnsupportedPtxError, match="not with the other threads of its warp"):
        _run(db, _write(tmp_path, body), "ldm", [words, words.copy()], 16, block=32)
