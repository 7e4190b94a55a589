"""Triton 3.9's own scalar kernels (tests/sim/ptx/triton, written by tools/triton_opcodes.py: BLOCK
128, 4 warps, one element per thread) run whole -- masked loads, the arithmetic or conversion, the
store -- and compared element by element with MPFR (gmpy2) at the destination format: fma.rn.bf16,
fma.rn.f16, min/max on halves, -x and |x| as Triton writes them (xor/and on the bits), sub.f64 and
the rounding conversions between the four float types."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import Memory, RunContext, compile_function

pytest.importorskip("gmpy2", reason="gmpy2 (the MPFR oracle, in the [test] extra) is not installed")
from support import mpfr_oracle as ops  # noqa: E402

PTX = Path(__file__).resolve().parent / "ptx" / "triton"
THREADS = 128
DT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
T = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64"}

# file stem -> (operand formats, result format, the scalar opcode the oracle evaluates)
KERNELS = {
    "fma_bf16_s": (["bf16"] * 3, "bf16", "fma.rn.bf16"),
    "fma_fp16_s": (["f16"] * 3, "f16", "fma.rn.f16"),
    "min_bf16_s": (["bf16"] * 2, "bf16", "min.bf16"),
    "max_fp16_s": (["f16"] * 2, "f16", "max.f16"),
    "neg_bf16_s": (["bf16"], "bf16", "neg.bf16"),
    "abs_fp16_s": (["f16"], "f16", "abs.f16"),
    "sub_fp64_s": (["f64"] * 2, "f64", "sub.f64"),
    "cvt_fp32_to_bf16_s": (["f32"], "bf16", "cvt"),
    "cvt_fp32_to_fp16_s": (["f32"], "f16", "cvt"),
    "cvt_fp64_to_bf16_s": (["f64"], "bf16", "cvt"),
    "cvt_fp16_to_bf16_s": (["f16"], "bf16", "cvt"),
    "cvt_bf16_to_fp64_s": (["bf16"], "f64", "cvt"),
    "cvt_fp64_to_fp32_s": (["f64"], "f32", "cvt"),
}


def _run_kernel(plan, fn, inputs: list[np.ndarray], out_width: int) -> np.ndarray:
    """One CTA of THREADS threads: pointers to the inputs, the output, n = THREADS, two scratch
    pointers (Triton's extra parameters); the stored elements in thread order."""
    regions = [(f"in{k}", a.view(np.uint8).copy()) for k, a in enumerate(inputs)]
    regions += [("out", np.zeros(THREADS * out_width // 8, dtype=np.uint8)), ("s1", np.zeros(8, dtype=np.uint8)),
                ("s2", np.zeros(8, dtype=np.uint8))]
    memory = Memory(regions)
    lanes = plan.new_lanes(THREADS)
    names = [p.name for p in fn.params]
    k = len(inputs)
    for j in range(k + 1):
        lanes.params[names[j]] = np.full(THREADS, memory.pointer(j), dtype=np.uint64)
    lanes.params[names[k + 1]] = np.full(THREADS, THREADS, dtype=np.uint64)
    for j in (k + 2, k + 3):
        lanes.params[names[j]] = np.full(THREADS, memory.pointer(j - 1), dtype=np.uint64)
    plan.run(lanes, RunContext(approx="reference", memory=memory, block=THREADS, threads=THREADS))
    (region, nbytes, offs, vals, done), = lanes.stores
    assert region == k and nbytes == out_width // 8 and done.all()
    out = np.zeros(THREADS, dtype=np.uint64)
    out[(np.asarray(offs) // nbytes).astype(np.int64)] = vals
    return out


@pytest.mark.parametrize("stem", list(KERNELS))
def test_triton_kernel_matches_mpfr(db, stem):
    formats, dst, opcode = KERNELS[stem]
    path = PTX / f"{stem}.ptx"
    fn = parse_module(path.read_text(), str(path)).function(f"k_{['unary', 'binary', 'ternary'][len(formats) - 1]}")
    assert fn.launch == {".reqntid": (THREADS, 1, 1)}
    plan = compile_function(fn, db, str(path))
    rng = np.random.default_rng(len(stem))
    for batch in range(8):  # 1024 inputs, edges first
        srcs = [ops.edge_bits(f, rng, THREADS) for f in formats]
        if batch:
            srcs = [rng.permutation(s) for s in srcs]
        got = [int(g) for g in _run_kernel(plan, fn, [s.astype(DT[ops.WIDTH[f]]) for s, f in zip(srcs, formats)],
                                           ops.WIDTH[dst])]
        if opcode == "cvt":
            want = [None if ops.is_nan(int(x), formats[0]) else
                    ops.encode(ops.rounded(dst, "cvt", ops.decode(int(x), formats[0])), dst) for x in srcs[0]]
        else:
            want = [ops.oracle_scalar(opcode, dst, [int(s[i]) for s in srcs]) for i in range(THREADS)]
        ops.check(got, want, dst, f"{stem} batch {batch}", srcs)
