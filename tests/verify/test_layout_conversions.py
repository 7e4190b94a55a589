"""Triton's layout conversions through shared memory, run and judged like its plain kernels.

When only the operand pointers of ``a / b`` on 16-bit floats are 16-byte aligned, Triton 3.9 loads
them as vectors but stores the result in another layout, converting through shared memory: with
``stmatrix.trans`` and ``bar.warp.sync`` in a one-warp CTA (BLOCK 512, 1 warp), ``stmatrix`` then
``ldmatrix.trans`` (BLOCK 2048, 8 warps), ``st.shared.v4`` then ``ldmatrix`` and the unpacking
``cvt.u16.u32`` (BLOCK 4096, 4 warps). tests/verify/ptx/div_*_aligned_inputs.ptx are those kernels:
examples/triton/kernels.py's ``div_kernel`` compiled by Triton 3.9 for sm_90 with
``tt.divisibility`` 16 on ``a_ptr`` and ``b_ptr`` only (no attribute on the result pointer or the
count), written by ``tools/regen_corpus.py --triton`` (``TRITON_ALIGNED_INPUTS``). Each must misround exactly the inputs the corpus's plain kernel
(examples/triton/div_{f16,bf16}.ptx, one element per thread, no shared memory) misrounds on the same
sampled inputs: a wrong element order in the matrix load or store would misplace elements (refused)
or judge them against other inputs (a different set).

The matrix instructions are also checked alone against the PTX ISA's description of the fragment
(thread ``t`` holds word ``t % 4`` of row ``t // 4`` of each matrix, rows addressed by threads
``8 * j + r``; ``.trans``: the matrix transposed), written out here element by element."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.verify.compiled import verify_ptx

from support.kernel_run import run_kernel, stored_words

ROOT = Path(__file__).resolve().parents[2]
PTX = Path(__file__).resolve().parent / "ptx"
CASES = 4000


def _misrounded(db, path: Path, fmt: str) -> tuple[set, object]:
    rows = []
    out = verify_ptx(str(path), "div_kernel", f"div.rn.{fmt}", db=db, cases=CASES, seed=3, processes=False,
                     misrounded=rows.append)
    return {tuple(int(x) for x in r) for block in rows for r in block}, out


@pytest.mark.parametrize("stem,fmt", [("div_f16_b512_w1_aligned_inputs", "f16"),
                                      ("div_bf16_b2048_w8_aligned_inputs", "bf16"),
                                      ("div_f16_b4096_w4_aligned_inputs", "f16")])
def test_layout_converted_kernels_misround_what_the_plain_kernel_does(db, stem, fmt):
    converted, out = _misrounded(db, PTX / f"{stem}.ptx", fmt)
    plain, base = _misrounded(db, ROOT / "examples" / "triton" / f"div_{fmt}.ptx", fmt)
    assert out.inputs_checked == base.inputs_checked == CASES and not out.exhaustive
    assert plain and converted == plain
    assert out.verdict == "counterexample" and out.misrounded_count == base.misrounded_count == len(plain)


def _word_kernel(body: str) -> str:
    """One warp: thread t loads four words, runs ``body`` (which stores them to the shared array
    ``m`` of 32 rows of 16 bytes and reads row t back into %r10..%r13), stores those."""
    return f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
  .shared .align 16 .b8 m[1024];
  .reg .b32 %r<24>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v4.b32 {{%r2, %r3, %r4, %r5}}, [%rd4];
  mov.u32 %r6, m;
{body}
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.b32 [%rd5], {{%r10, %r11, %r12, %r13}};
  ret;
}}
"""


def _run_words(db, tmp_path, body: str, words: np.ndarray) -> np.ndarray:
    """One warp runs :func:`_word_kernel` of ``body`` on ``words`` (32 x 4); the words stored."""
    path = tmp_path / "k.ptx"
    path.write_text(_word_kernel(body))
    lanes = run_kernel(db, path, "k", [words.reshape(-1), np.zeros(128, np.uint32)], 32, block=32)
    return stored_words(lanes, 128).reshape(32, 4)


def _halves(words: np.ndarray) -> np.ndarray:
    """(32, 4, 2): each thread's registers split into their low and high 16-bit halves."""
    return np.stack([words & 0xFFFF, words >> 16], axis=-1)


# thread p gives the address of row slot 5p mod 32 (a permutation: the rows land out of order)
ADDRESS = """  mul.lo.u32 %r7, %r1, 5;
  and.b32 %r7, %r7, 31;
  shl.b32 %r7, %r7, 4;
  add.s32 %r7, %r6, %r7;
"""
READ_BACK = """  shl.b32 %r8, %r1, 4;
  add.s32 %r8, %r6, %r8;
  ld.shared.v4.b32 {%r10, %r11, %r12, %r13}, [%r8];
"""


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_puts_each_threads_words_in_the_rows_other_threads_address(db, tmp_path, trans):
    words = np.random.default_rng(11).integers(0, 1 << 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    op = "stmatrix.sync.aligned.m8n8.x4" + (".trans" if trans else "") + ".shared.b16"
    body = ADDRESS + f"  {op} [%r7], {{%r2, %r3, %r4, %r5}};\n  bar.warp.sync -1;\n" + READ_BACK
    got = _run_words(db, tmp_path, body, words)
    h = _halves(words)
    want = np.zeros((32, 8), dtype=np.uint32)  # row slot -> its 8 elements
    for giver in range(32):
        j, r = divmod(giver, 8)            # thread 8j + r addresses row r of matrix j
        for e in range(8):                 # element e of that row
            if trans:                      # element (r, e) of the stored matrix is (e, r) of the fragment
                want[(5 * giver) % 32, e] = h[4 * e + r // 2, j, r % 2]
            else:                          # fragment (r, e): thread 4r + e // 2, half e % 2
                want[(5 * giver) % 32, e] = h[4 * r + e // 2, j, e % 2]
    assert (got == (want[:, 0::2] | (want[:, 1::2] << 16))).all()


def test_ldmatrix_trans_gives_each_thread_a_column_of_the_rows_other_threads_address(db, tmp_path):
    words = np.random.default_rng(12).integers(0, 1 << 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    body = ("  shl.b32 %r8, %r1, 4;\n  add.s32 %r8, %r6, %r8;\n"
            "  st.shared.v4.b32 [%r8], {%r2, %r3, %r4, %r5};\n  bar.sync 0;\n" + ADDRESS +
            "  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r10, %r11, %r12, %r13}, [%r7];\n")
    got = _run_words(db, tmp_path, body, words)
    rows = _halves(words).reshape(32, 8)   # row slot q holds thread q's words: 8 elements
    want = np.zeros((32, 4, 2), dtype=np.uint32)
    for t in range(32):
        for j in range(4):
            for h in range(2):             # element t // 4 of row 2 (t % 4) + h of matrix j
                giver = 8 * j + 2 * (t % 4) + h
                want[t, j, h] = rows[(5 * giver) % 32, t // 4]
    assert (got == (want[..., 0] | (want[..., 1] << 16))).all()


def test_a_warp_barrier_in_a_cta_of_several_warps_is_refused(db, tmp_path):
    path = tmp_path / "k.ptx"
    own_row = "  shl.b32 %r7, %r1, 4;\n  add.s32 %r7, %r6, %r7;\n"  # each warp's rows apart: no race
    path.write_text(_word_kernel(own_row + "  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r7], {%r2, %r3, %r4, %r5};\n"
                                 "  bar.warp.sync -1;\n" + READ_BACK))
    with pytest.raises(UnsupportedPtxError, match="bar.warp.sync in a CTA of 64 threads") as err:
        run_kernel(db, path, "k", [np.zeros(64 * 4, np.uint32), np.zeros(64 * 4, np.uint32)], 64, block=64)
    assert err.value.location is not None and err.value.location.line > 0


@pytest.mark.parametrize("opcode,moves", [
    ("cvt.u16.u32", True), ("cvt.s16.s32", True), ("cvt.u32.u32", True), ("cvt.u8.s64", True),
    ("cvt.u32.u16", False), ("cvt.s64.s32", False),     # extensions: the high bits are not the source's
    ("cvt.sat.u16.u32", False), ("cvt.rn.f16.f32", False), ("cvt.f32.f16", False), ("add.s32", False),
    ("mov.b32", True), ("ld.shared.b16", True),
])
def test_only_moves_of_bits_pass_an_element_through_shared_memory_unchanged(opcode, moves):
    from tilecheck.sim.frontend import Instr
    from tilecheck.verify.layout import _moves_bits
    assert _moves_bits(Instr(1, 1, opcode, opcode, ())) is moves
