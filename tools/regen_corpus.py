"""Regenerate the corpus's committed compiler output: PTX (examples/cuda, llvm, triton) and AMDGPU assembly (examples/amdgpu).

    python tools/regen_corpus.py [--cuda] [--llvm] [--amdgpu] [--triton] [--triton-amdgpu]   # no flag: every part whose compiler is here
    /tmp/triton-venv/bin/python tools/regen_corpus.py --triton  # the Triton part (pip install triton==3.9)
    /tmp/triton-venv/bin/python tools/regen_corpus.py --triton-amdgpu  # Triton for AMD gfx942 (examples/amdgpu/triton)

--cuda needs nvcc (CUDA 13) on PATH, --llvm and --amdgpu llc-19, --triton and --triton-amdgpu an importable
Triton (3.9; no GPU: it compiles ahead of time).

nvcc -arch=sm_90 -ptx for every examples/cuda/*.cu (float_div.cu also with -use_fast_math,
-prec-div=false and -ftz=true; half_func.cu, half2_func.cu, calls.cu and half_variants.cu with -rdc=true so the device functions stay;
half_variants.cu with -lineinfo and, as half_variants_debug.ptx, with -G (a debug build: .local stack
frames, generic loads and stores), their .file names relative to examples/cuda; fmad.cu also with
-fmad=false; mangled.cu with -lineinfo). nvcc names -lineinfo/-G builds' internal symbols with a
per-compile hash (_INTERNAL_xxxxxxxx in .debug_str): regenerating changes those lines and nothing
else, so leave the file as committed unless its source changed. Then
llc-19 -march=nvptx64 -mcpu=sm_75/sm_80/sm_90 for examples/llvm/*.ll, llc-19 -march=amdgcn
-mcpu=gfx90a/gfx942/gfx1100 for examples/amdgpu/arith.ll (and examples/amdgpu/manifest.yaml, written
from the kernel names and the .s), and Triton for the kernels of
examples/triton/kernels.py (TRITON_CASES below: each kernel, element type, BLOCK, num_warps, vector
or scalar accesses, target and FP fusion) with examples/triton/manifest.yaml (and the
layout-conversion fixtures of tests/verify/ptx: TRITON_ALIGNED_INPUTS), and with
--triton-amdgpu the same kernels for GPUTarget("hip", "gfx942", 64) into examples/amdgpu/triton
(TRITON_AMDGPU_CASES: the sm_90 TRITON_CASES of one pointer type not marked amd=False, under their
stems, plus div_f16_b1024_w4) with its
manifest.yaml (the llc manifest's entry shape: function, file, entry, against, inputs, claim,
denormal modes, wave; then the Triton case and the SHA-256 of the .text Triton linked). The
DWARF compile directory, the checkout's absolute path, is written as "examples/triton", so the
files are byte-reproducible. The PTX and the assembly are committed;
the tests and tools/findings.py read the committed files, so neither needs the compilers, and
tilecheck does not depend on Triton.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CUDA = ROOT / "examples" / "cuda"
LLVM = ROOT / "examples" / "llvm"
TRITON = ROOT / "examples" / "triton"
AMDGPU = ROOT / "examples" / "amdgpu"
NVCC_VARIANTS = {"float_div.cu": {"": [], "_fast_math": ["-use_fast_math"], "_prec_div_false": ["-prec-div=false"],
                                  "_ftz": ["-ftz=true"]},
                 "half_func.cu": {"": ["-rdc=true"]}, "half2_func.cu": {"": ["-rdc=true"]}, "calls.cu": {"": ["-rdc=true"]},
                 "half_variants.cu": {"": ["-rdc=true", "-lineinfo"], "_debug": ["-rdc=true", "-G"]},
                 "fmad.cu": {"": [], "_fmad_false": ["-fmad=false"]},
                 "mangled.cu": {"": ["-lineinfo"]}}
LLC_CPUS = ("sm_75", "sm_80", "sm_90")
# CDNA2 (wave64), CDNA3 (wave64, no s_denorm_mode either), RDNA3 (wave32 by default, s_denorm_mode)
AMDGPU_CPUS = ("gfx90a", "gfx942", "gfx1100")


@dataclass(frozen=True)
class TritonCase:
    """One committed Triton PTX file: what is compiled and how, and what a user checks it against."""

    stem: str                  # examples/triton/{stem}.ptx
    kernel: str                # a @triton.jit function of examples/triton/kernels.py
    dtype: str                 # Triton's pointer element type: fp16 bf16 fp32 fp64 (i8 u8 i16 i32 i64 u32: integers)
    source: str                # the Triton expression the kernel stores
    against: tuple[str, ...]   # the --against references a user would check
    documented: str            # what Triton 3.9's documentation says of the operation
    block: int = 128
    num_warps: int = 4
    vector: bool = False       # tt.divisibility 16 on every pointer and the count: 128-bit accesses
    capability: int = 90
    fp_fusion: bool | None = None  # enable_fp_fusion; None: the default (TRITON_DEFAULT_FP_FUSION=1)
    note: str = ""
    # the findings table's inputs: "exhaustive" or a sampled count (None: tools/findings.py's default),
    # or a dict of them for the references it names (the others: the default)
    inputs: str | dict | None = None
    pointers: tuple = ()       # each pointer's element type, in order, where they differ (dtype: the result's)
    amd: bool = True           # also compiled for gfx942 (examples/amdgpu/triton) where it has one pointer type


SCALAR_ARGS = {"alpha": "fp32"}
"""Kernel arguments passed by value (examples/triton/kernels.py), with their Triton types."""

# Triton 3.9's docstrings, quoted where they say something about the result
DOC_DIV = ("nothing for the / operator; tl.fdiv(x, y, ieee_rounding=False): 'if True, use IEEE "
           "round-to-nearest division'")
DOC_DIV_RN = "tl.math.div_rn: 'precise division (rounding to nearest wrt the IEEE standard)'"
DOC_SQRT = "tl.sqrt: 'fast square root' (no bound stated)"
DOC_SQRT_RN = "tl.sqrt_rn: 'precise square root (rounding to nearest wrt the IEEE standard)'"
DOC_RSQRT = "tl.math.rsqrt: 'inverse square root' (no bound stated)"
DOC_FMA = "tl.fma: 'fused multiply-add'"
DOC_TO = "tensor.to(dtype): 'casts a tensor to the given dtype' (float16 to float32 is exact)"
DOC_MUL = "nothing for the * operator (mixed types promote to the wider float)"
DOC_CLAMP = ("tl.clamp: 'Clamps the input tensor x within the range [min, max]'; propagate_nan (default NONE): "
             "'whether to propagate NaN values'")
DOC_NEG = "nothing for the unary - operator"
DOC_MAXIMUM = ("tl.maximum: 'Computes the element-wise maximum of x and y'; propagate_nan (default NONE): "
               "'whether to propagate NaN values'")
DOC_WHERE = "tl.where: 'Returns a tensor of elements from either x or y, depending on condition'"
DOC_COMPARE = "nothing for the > operator on tensors (a boolean tensor, int1)"
DOC_CLASS = "libdevice.{test}: no docstring (CUDA's {test}f: 'a nonzero value if and only if' the argument is NaN / infinite)"
DOC_RCP_RN = ("libdevice.rcp_rn: no docstring (libdevice's __nv_frcp_rn: 'Compute the reciprocal of x in "
              "round-to-nearest-even mode')")
DOC_RSQRT_RN = ("libdevice.rsqrt_rn: no docstring (libdevice's __nv_frsqrt_rn: 'Compute the reciprocal square "
                "root of x in round-to-nearest-even mode')")
DOC_DIV_RZ = ("libdevice.div_rz: no docstring (libdevice's __nv_fdiv_rz: 'Divide two floating point values x by y "
              "in round-towards-zero mode')")
DOC_FLOOR = "tl.floor: 'Computes the element-wise floor of x'"
DOC_CEIL = "tl.ceil: 'Computes the element-wise ceil of x'"
DOC_EXP2 = "tl.exp2: 'Computes the element-wise exponential (base 2) of x' (no bound stated)"
DOC_EXP = "tl.exp: 'Computes the element-wise exponential of x' (no bound stated)"
# tl.exp as Triton 3.9 lowers it: x times log2(e) rounded to float32 (0x3fb8aa3b), then ex2.approx.f32;
# the reference is that contract applied to the exact product (an approximate outermost call)
EXP_AS_EX2 = "ex2.approx.f32(mul.rn.f32(a, 1.44269502162933349609375))"
# tl.exp on a widened half, rounded back: every half some allowed ex2.approx.f32 result rounds to
EXP_UP_AS_EX2 = "cvt.rn.f16.f32(ex2.approx.f32(mul.rn.f32(cvt.f32.f16(a), 1.44269502162933349609375)))"
DOC_COPYSIGN = "libdevice.copysign: no docstring (CUDA's copysignf(x, y): 'the magnitude of x and the sign of y')"
DOC_SIGMOID = "tl.sigmoid: 'Computes the element-wise sigmoid of x' (no bound stated)"
# tl.sigmoid as Triton 3.9 lowers it: 2^(x times -log2(e)), plus one, then 1 / that by div.full.f32 --
# a composition of two contracts: every quotient div.full.f32 allows for every sum
DOC_FAST_LOG = ("libdevice.fast_log2f / fast_logf: no docstring (CUDA's __log2f / __logf: 'fast approximate "
                "base 2 / natural logarithm', subnormals flushed)")
DOC_FAST_SIN = "libdevice.fast_sinf: no docstring (CUDA's __sinf: 'fast approximate sine', subnormals flushed)"
DOC_SIN = "tl.sin: 'Computes the element-wise sine of x' (no bound stated; libdevice's sinf, CUDA's sinf: 2 ulp)"
DOC_COS = "tl.cos: 'Computes the element-wise cosine of x' (no bound stated; libdevice's cosf, CUDA's cosf: 2 ulp)"
DOC_TANH_ASM = "tl.inline_asm_elementwise: the instruction's own PTX ISA contract (relative error 2^-11)"
# libdevice's fast_logf as Triton 3.9 lowers it: lg2.approx.ftz.f32, then a mul.f32 by ln 2 rounded to float32
FAST_LOG_AS_LG2 = "mul.rn.f32(lg2.approx.ftz.f32(a), 0.693147182464599609375)"
SIGMOID_AS_EX2 = "div.full.f32(1.0, add.rn.f32(ex2.approx.f32(mul.rn.f32(a, -1.44269502162933349609375)), 1.0))"
DIV_UP = "div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))"
DIV_DOWN = "cvt.rn.f16.f32(div.rn.f32(a, b))"
# its lowering's own contract (div.full.f32 on the widened halves): judged per input, about 0.5 M inputs/s
# on 2 cores, so sampled (the exhaustive sweep against DIV_UP ran at about 1.9 M/s)
DIV_UP_FULL = "div.full.f32(cvt.f32.f16(a), cvt.f32.f16(b))"
MUL_THEN_ADD = "add.rn.f32(mul.rn.f32(a, b), c)"  # two roundings: what a * b + c means without fusion
DOC_MUL_ADD = "nothing for * and +; the compile option enable_fp_fusion allows contracting them into fma"
SUFFIX = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64"}
INT_SUFFIX = {"i8": "s8", "u8": "u8", "i16": "s16", "i32": "s32", "i64": "s64", "u32": "u32"}  # Triton's integer types, as PTX spells them
TRITON_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "i8": "int8",
                "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64", "u32": "uint32"}
DOC_CAST = "tensor.to(dtype): 'casts a tensor to the given dtype' (no rounding stated)"


def _div(dtype: str, stem: str | None = None, **kw) -> TritonCase:
    """``a / b`` on ``dtype``: the correctly rounded division, and for float32 the div.full.f32 it emits."""
    t = SUFFIX[dtype]
    against = ("div.rn.f32", "div.full.f32") if t == "f32" else (f"div.rn.{t}",)
    return TritonCase(stem or f"div_{t}", "div_kernel", dtype, "a / b", against, DOC_DIV, **kw)


TRITON_CASES = [
    # the first six (tests/sim/test_triton_ptx.py reads them): one element per thread, scalar
    _div("fp32"),
    TritonCase("div_rn_f32", "div_rn_kernel", "fp32", "tl.math.div_rn(a, b)", ("div.rn.f32",), DOC_DIV_RN),
    TritonCase("sqrt_f32", "sqrt_kernel", "fp32", "tl.sqrt(a)", ("sqrt.rn.f32", "sqrt.approx.ftz.f32"), DOC_SQRT),
    TritonCase("sqrt_rn_f32", "sqrt_rn_kernel", "fp32", "tl.sqrt_rn(a)", ("sqrt.rn.f32",), DOC_SQRT_RN,
               inputs="exhaustive"),
    _div("fp16"),
    _div("bf16", inputs="exhaustive"),
    _div("fp64"),
    # 128-bit vector accesses: BLOCK 1024 over 128 threads is 8 elements per thread (one v4.b32 per
    # operand for 16-bit types, two for f32, four v2.b64 for f64)
    *[_div(d, f"div_{SUFFIX[d]}_v", block=1024, vector=True, inputs="exhaustive" if d == "bf16" else None)
      for d in ("fp16", "bf16", "fp32", "fp64")],
    # 1.0 / x: the same division with a constant numerator; a one-input kernel, so the user's
    # reference is the reciprocal
    *[TritonCase(f"rcp_{SUFFIX[d]}", "rcp_kernel", d, "1.0 / x", (f"rcp.rn.{SUFFIX[d]}",), DOC_DIV)
      for d in ("fp16", "bf16", "fp32", "fp64")],
    # a constant divisor: Triton 3.9 multiplies by div.approx.f32(1.0, 3.0) (LLVM's fdiv with arcp),
    # which is neither the division nor the div.full.f32 that a / b of two tensors gives
    TritonCase("div_const_f32", "div_const_kernel", "fp32", "x / 3.0",
               ("div.rn.f32(a, 3.0)", "div.full.f32(a, 3.0)", "mul.rn.f32(div.approx.f32(1.0, 3.0), a)"), DOC_DIV,
               amd=False, inputs="65536",
               note="x times div.approx.f32(1.0, 3.0): a product with an approximate reciprocal"),
    TritonCase("sqrt_f64", "sqrt_kernel", "fp64", "tl.sqrt(a)", ("sqrt.rn.f64",), DOC_SQRT),
    TritonCase("sqrt_f16_up", "sqrt_up_kernel", "fp16", "tl.sqrt(x.to(tl.float32)).to(x.dtype)", ("sqrt.rn.f16",),
               DOC_SQRT, note="tl.sqrt(x) on fp16 is a compile error in Triton 3.9: upcast"),
    TritonCase("sqrt_rn_f16_up", "sqrt_rn_up_kernel", "fp16", "tl.sqrt_rn(x.to(tl.float32)).to(x.dtype)",
               ("sqrt.rn.f16",), DOC_SQRT_RN, note="tl.sqrt_rn(x) on fp16 is a compile error in Triton 3.9: upcast"),
    *[TritonCase(f"rsqrt_{SUFFIX[d]}", "rsqrt_kernel", d, "tl.math.rsqrt(x)", against, DOC_RSQRT)
      for d, against in (("fp32", ("rsqrt.rn.f32", "rsqrt.approx.ftz.f32")), ("fp64", ("rsqrt.rn.f64", "rsqrt.approx.f64")))],
    TritonCase("rsqrt_f16_up", "rsqrt_up_kernel", "fp16", "tl.math.rsqrt(x.to(tl.float32)).to(x.dtype)",
               ("rsqrt.rn.f16",), DOC_RSQRT, note="tl.math.rsqrt(x) on fp16 is a compile error in Triton 3.9: upcast"),
    # the same upcasts on bfloat16: its subnormals stay subnormal in float32, where the .ftz forms
    # Triton emits for tl.sqrt and tl.math.rsqrt read them as zero
    TritonCase("sqrt_bf16_up", "sqrt_up_kernel", "bf16", "tl.sqrt(x.to(tl.float32)).to(x.dtype)", ("sqrt.rn.bf16",),
               DOC_SQRT, note="tl.sqrt(x) on bf16 is a compile error in Triton 3.9: upcast"),
    TritonCase("sqrt_rn_bf16_up", "sqrt_rn_up_kernel", "bf16", "tl.sqrt_rn(x.to(tl.float32)).to(x.dtype)",
               ("sqrt.rn.bf16",), DOC_SQRT_RN, note="tl.sqrt_rn(x) on bf16 is a compile error in Triton 3.9: upcast"),
    TritonCase("rsqrt_bf16_up", "rsqrt_up_kernel", "bf16", "tl.math.rsqrt(x.to(tl.float32)).to(x.dtype)",
               ("rsqrt.rn.bf16",), DOC_RSQRT, note="tl.math.rsqrt(x) on bf16 is a compile error in Triton 3.9: upcast"),
    *[TritonCase(f"fma_{SUFFIX[d]}", "fma_kernel", d, "tl.fma(a, b, c)", (f"fma.rn.{SUFFIX[d]}",), DOC_FMA)
      for d in ("fp32", "fp16", "bf16", "fp64")],
    # sm_75 has no bf16 arithmetic: Triton computes in float32 and converts back (with integer
    # rounding code: cvt.rn.bf16.f32 is sm_80), two roundings where tl.fma promises one
    TritonCase("fma_bf16_sm75", "fma_kernel", "bf16", "tl.fma(a, b, c)",
               ("fma.rn.bf16", "cvt.rn.bf16.f32(fma.rn.f32(cvt.f32.bf16(a), cvt.f32.bf16(b), cvt.f32.bf16(c)))"),
               DOC_FMA, capability=75, amd=False,
               note="sm_75: fma.rn.f32 of the widened operands, rounded to bfloat16 by integer code"),
    TritonCase("mul_add_f32_fused", "mul_add_kernel", "fp32", "a * b + c", ("fma.rn.f32", MUL_THEN_ADD), DOC_MUL_ADD,
               fp_fusion=True, note="enable_fp_fusion=True: one fma.rn.f32"),
    TritonCase("mul_add_f32_unfused", "mul_add_kernel", "fp32", "a * b + c", ("fma.rn.f32", MUL_THEN_ADD), DOC_MUL_ADD,
               fp_fusion=False, note="enable_fp_fusion=False: mul.rn.f32 then add.rn.f32 (two roundings: "
                                     "not fma.rn.f32, the exact reference is the two-step expression)"),
    # other launch shapes of f16 a / b: 8 elements per thread with scalar and with vector accesses,
    # and one element per thread over 8 warps
    _div("fp16", "div_f16_b512_w2", block=512, num_warps=2),
    _div("fp16", "div_f16_b512_w2_v", block=512, num_warps=2, vector=True),
    _div("fp16", "div_f16_b256_w8", block=256, num_warps=8),
    # two halves per thread in one 32-bit access, the count in elements
    _div("fp16", "div_f16_b256_w4_v", block=256, num_warps=4, vector=True),
    # 512 floats per thread (BLOCK 16384 on one warp: 128 128-bit vectors a thread), far past the
    # discovery's tried counts: the stores' own count is the layout's
    _div("fp32", "div_f32_b16384_w1_v", block=16384, num_warps=1, vector=True, amd=False),
    # a BLOCK smaller than the CTA's 128 threads: half of them store nothing (their stores masked off)
    _div("fp16", "div_f16_b64_w4", block=64, num_warps=4),
    # other targets
    *[_div(d, f"div_{SUFFIX[d]}_sm{cap}", capability=cap) for cap in (80, 100) for d in ("fp16", "fp32")],
    # operands of another width than the result (each pointer its own element type)
    TritonCase("widen_f16_f32", "widen_kernel", "fp32", "x.to(tl.float32)", ("cvt.f32.f16(a)",), DOC_TO,
               pointers=("fp16", "fp32")),
    # 128-bit accesses of two widths: the halves pass between threads through shared memory (a
    # layout conversion), followed byte by byte back to their loads
    TritonCase("widen_f16_f32_v", "widen_kernel", "fp32", "x.to(tl.float32)", ("cvt.f32.f16(a)",), DOC_TO,
               block=1024, vector=True, pointers=("fp16", "fp32"), amd=False),
    TritonCase("div_up_f16_f32", "div_up_kernel", "fp32", "a.to(tl.float32) / b.to(tl.float32)",
               (DIV_UP,), DOC_DIV, pointers=("fp16", "fp16", "fp32"), inputs="exhaustive"),
    # the division in the load layout, then the quotients through shared memory to the storing threads
    TritonCase("div_up_f16_f32_v", "div_up_kernel", "fp32", "a.to(tl.float32) / b.to(tl.float32)",
               (DIV_UP, DIV_UP_FULL), DOC_DIV, block=1024, vector=True,
               pointers=("fp16", "fp16", "fp32"), amd=False, inputs={DIV_UP_FULL: "65536"}),
    TritonCase("div_down_f32_f16", "div_down_kernel", "fp16", "(a / b).to(tl.float16)", (DIV_DOWN,), DOC_DIV,
               pointers=("fp32", "fp32", "fp16")),
    TritonCase("div_down_f32_f16_v", "div_down_kernel", "fp16", "(a / b).to(tl.float16)", (DIV_DOWN,), DOC_DIV,
               block=1024, vector=True, pointers=("fp32", "fp32", "fp16")),
    TritonCase("mul_mixed_f16_f32", "mul_mixed_kernel", "fp32", "a * b", ("mul.rn.f32(cvt.f32.f16(a), b)",),
               DOC_MUL, pointers=("fp16", "fp32", "fp32"), note="a float16 times a float32: Triton promotes a"),
    # tl.clamp with bounds of one magnitude: Triton emits min.xorsign.abs (|x| against 1.0, the sign
    # of x), not max then min; the second reference is that instruction, the first what clamping means
    *[TritonCase(f"clamp_{SUFFIX[d]}{'_v' if vec else ''}", "clamp_kernel", d, "tl.clamp(x, -1.0, 1.0)",
                 (f"min.{SUFFIX[d]}(max.{SUFFIX[d]}(a, -1.0), 1.0)", f"min.xorsign.abs.{SUFFIX[d]}(a, 1.0)"), DOC_CLAMP,
                 block=1024 if vec else 128, vector=vec, amd=False, inputs="exhaustive" if d == "fp32" else None)
      for d, vec in (("fp32", False), ("fp16", False), ("bf16", False), ("fp16", True))],
    # -x on 16-bit vectors: an xor.b32 on two elements at once, never unpacked; tl.maximum, whose
    # reference is a bare value-function form name
    *[TritonCase(f"neg_{SUFFIX[d]}_v", "neg_kernel", d, "-x", (f"neg.{SUFFIX[d]}",), DOC_NEG, block=1024,
                 vector=True, amd=False) for d in ("fp16", "bf16")],
    *[TritonCase(f"maximum_{SUFFIX[d]}{'_v' if vec else ''}", "maximum_kernel", d, "tl.maximum(a, b)",
                 (f"max.{SUFFIX[d]}",), DOC_MAXIMUM, block=1024 if vec else 128, vector=vec, amd=False,
                 inputs="exhaustive" if d == "bf16" else "65536")
      for d, vec in (("fp32", False), ("bf16", True))],
    # ReLU as users write it: on 16-bit vectors one setp.gt.f16x2 gives a predicate per element; max(x, +0)
    # is the same function (NaN and -0 give +0)
    *[TritonCase(f"relu_{SUFFIX[d]}_v", "relu_kernel", d, "tl.where(x > 0, x, 0)",
                 (f"max.{SUFFIX[d]}(a, 0.0)", f"selp.b16(a, 0, setp.gt.{SUFFIX[d]}(a, 0.0))"),
                 DOC_WHERE, block=1024, vector=True, amd=False) for d in ("fp16", "bf16")],
    # choices as PTX makes them (setp, selp): the leaky ReLU, with 0.01 rounded to the tensor's type
    *[TritonCase(f"leaky_relu_{SUFFIX[d]}{'_v' if vec else ''}", "leaky_relu_kernel", d,
                 "tl.where(x > 0, x, x * 0.01)",
                 (f"selp.{'f32' if d == 'fp32' else 'b16'}(a, mul.rn.{SUFFIX[d]}(a, {c}), setp.gt.{SUFFIX[d]}(a, 0.0))",),
                 DOC_WHERE, block=1024 if vec else 128, vector=vec, amd=False,
                 inputs="exhaustive" if d == "fp32" else None)
      for d, vec, c in (("fp32", False, "0.00999999977648258209228515625"), ("fp16", True, "0.01000213623046875"),
                        ("bf16", False, "0.010009765625"))],
    # a boolean tensor is stored a byte per element; tl.where reads one, any non-zero byte selecting a
    *[TritonCase(f"greater_{SUFFIX[d]}{'_v' if vec else ''}", "greater_kernel", "i1", "a > b",
                 (f"cvt.u8.u16(selp.u16(1, 0, setp.gt.{SUFFIX[d]}(a, b)))",), DOC_COMPARE,
                 block=1024 if vec else 128, vector=vec, amd=False, pointers=(d, d, "i1"),
                 inputs="exhaustive" if d == "fp16" else None)
      for d, vec in (("fp32", False), ("fp16", True))],
    TritonCase("where_f32", "where_kernel", "fp32", "tl.where(c, a, b)",
               ("selp.f32(b, c, setp.ne.u16(cvt.u16.u8(a), 0))",), DOC_WHERE, amd=False,
               pointers=("i1", "fp32", "fp32", "fp32")),
    TritonCase("maximum_nan_f64_v", "maximum_nan_kernel", "fp64", "tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)",
               ("selp.f64(nan, max.f64(a, b), setp.nan.f64(a, b))",), DOC_MAXIMUM, block=512, vector=True, amd=False,
               note="PTX has no max.NaN.f64: a NaN chosen by setp.nan.f64, the result of max.f64 otherwise"),
    # the base-2 exponential: tl.exp2 is one ex2.approx.ftz.f32 (2 ulp from the correctly rounded
    # 2^x, subnormals flushed); tl.exp multiplies by log2(e) first
    TritonCase("exp2_f32", "exp2_kernel", "fp32", "tl.exp2(x)", ("ex2.approx.ftz.f32", "ex2.approx.f32"), DOC_EXP2,
               amd=False),
    TritonCase("exp_f32", "exp_kernel", "fp32", "tl.exp(x)", (EXP_AS_EX2,), DOC_EXP, amd=False,
               note="no PTX form computes e^x exactly: the reference is the lowering's own contract"),
    # compositions: an approximate result converted, and two approximations in a row
    TritonCase("exp_up_f16", "exp_up_kernel", "fp16", "tl.exp(x.to(tl.float32)).to(x.dtype)", (EXP_UP_AS_EX2,),
               DOC_EXP, amd=False, note="the reference is the lowering's own contract, rounded to float16"),
    TritonCase("sigmoid_f32", "sigmoid_kernel", "fp32", "tl.sigmoid(x)", (SIGMOID_AS_EX2,), DOC_SIGMOID, amd=False,
               note="no PTX form computes the sigmoid exactly: the reference is the lowering's own "
                                    "composition of contracts"),
    # the base-2 logarithm: libdevice's fast intrinsics are one lg2.approx.ftz.f32 (absolute 2^-22 on
    # (0.5, 2), relative 2^-22 elsewhere, subnormals flushed); the one without .ftz finds the flush
    TritonCase("fast_log2_f32", "fast_log2_kernel", "fp32", "libdevice.fast_log2f(x)",
               ("lg2.approx.ftz.f32", "lg2.approx.f32"), DOC_FAST_LOG, amd=False,
               note="no PTX form computes log2 exactly: the reference is the instruction's own contract"),
    TritonCase("fast_log_f32", "fast_log_kernel", "fp32", "libdevice.fast_logf(x)", (FAST_LOG_AS_LG2,), DOC_FAST_LOG,
               amd=False,
               note="no PTX form computes ln exactly: the reference is the lowering's own contract"),
    # cache hints (eviction_policy, cache_modifier): the accesses' qualifiers change no bits moved
    TritonCase("div_hinted_f32", "div_hinted_kernel", "fp32", "a / b (eviction_policy, cache_modifier)",
               ("div.rn.f32", "div.full.f32"), DOC_DIV, amd=False,
               note="ld.global.L1::evict_last.L2::cache_hint with a createpolicy operand, ld.global.cg, st.global.cs"),
    TritonCase("div_hinted_f32_v", "div_hinted_kernel", "fp32", "a / b (eviction_policy, cache_modifier)",
               ("div.rn.f32", "div.full.f32"), DOC_DIV, block=1024, vector=True, amd=False,
               note="as div_hinted_f32, with 128-bit accesses"),
    # PTX's copysign.f32 d, a, b is b's magnitude with a's sign: C's copysign(x, y) is copysign.f32(b, a)
    TritonCase("copysign_f32", "copysign_kernel", "fp32", "libdevice.copysign(x, y)",
               ("copysign.f32(b, a)", "copysign.f32"), DOC_COPYSIGN, amd=False,
               note="PTX's operand order is not C's: the bare form, applied to (x, y), is y's magnitude with x's sign"),
    # a float's class, as a boolean: the reference tests it with testp (the ISA's class test), the
    # kernel computes it otherwise (setp on |x|)
    *[TritonCase(f"{test}_f32", f"{test}_kernel", "i1", f"libdevice.{test}(x)",
                 (f"cvt.u8.u16(selp.u16(1, 0, testp.{cls}.f32(a)))",), DOC_CLASS.format(test=test), amd=False,
                 pointers=("fp32", "i1"), inputs="exhaustive")
      for test, cls in (("isnan", "notanumber"), ("isinf", "infinite"))],
    # libdevice's correctly rounded float32 intrinsics, documented as IEEE roundings (no word of
    # subnormals; nvcc's __frcp_rn is rcp.rn.f32 unless -ftz=true): Triton's are the .ftz forms
    TritonCase("rcp_rn_f32", "rcp_rn_kernel", "fp32", "libdevice.rcp_rn(x)", ("rcp.rn.f32", "rcp.rn.ftz.f32"),
               DOC_RCP_RN, amd=False, note="rcp.rn.ftz.f32: Triton links libdevice for flush-to-zero"),
    TritonCase("rsqrt_rn_f32", "rsqrt_rn_kernel", "fp32", "libdevice.rsqrt_rn(x)", ("rsqrt.rn.f32",),
               DOC_RSQRT_RN, amd=False,
               note="rsqrt.approx.ftz.f32 refined by fma.rn.ftz.f32 steps (flushing subnormals)"),
    TritonCase("div_rz_f32", "div_rz_kernel", "fp32", "libdevice.div_rz(a, b)", ("div.rz.f32", "div.rz.ftz.f32"),
               DOC_DIV_RZ, amd=False, note="div.rz.ftz.f32: Triton links libdevice for flush-to-zero"),
    # sine and the hyperbolic tangent as instructions, each against its own form (their ISA bounds:
    # tilecheck/model/sincos.py, tanh.py)
    TritonCase("fast_sin_f32", "fast_sin_kernel", "fp32", "libdevice.fast_sinf(x)", ("sin.approx.ftz.f32",),
               DOC_FAST_SIN, amd=False,
               note="the ISA bounds sin.approx on [-100pi, 100pi] only; under .ftz the inputs whose bound "
                    "reaches a flushed zero are no single run of values: both unknown"),
    # libdevice's sinf/cosf: exact arithmetic only (fma polynomials; for large |x| Payne-Hanek's reduction
    # through mad.lo.cc/madc.hi, shf.l.wrap and a local array), so the kernel's result is one value per
    # input; the only PTX forms of sine and cosine are the approximate instructions, whose absolute bounds
    # hold on [-100pi, 100pi] only
    *[TritonCase(f"{fn}_f32{'_v' if vec else ''}", f"{fn}_kernel", "fp32", f"tl.{fn}(x)", (f"{fn}.approx.f32",), doc,
                 amd=False, block=1024 if vec else 128, vector=vec,
                 note=f"no PTX form computes {fn} exactly: judged against {fn}.approx's absolute bound, which the "
                      "ISA states on [-100pi, 100pi] only (every input beyond is unknown)")
      for fn, doc in (("sin", DOC_SIN), ("cos", DOC_COS)) for vec in (False, True)],
    TritonCase("tanh_asm_f32", "tanh_asm_kernel", "fp32", 'inline_asm_elementwise("tanh.approx.f32 $0, $1;")',
               ("tanh.approx.f32",), DOC_TANH_ASM, amd=False,
               note="the instruction against its own contract: relative error 2^-11 over the entire range"),
    # rounding to an integral value: float32 tl.floor and tl.ceil are the .ftz conversions
    *[TritonCase(f"{op}_{SUFFIX[d]}", f"{op}_kernel", d, f"tl.{op}(x)", (f"cvt.{mode}.{SUFFIX[d]}.{SUFFIX[d]}",), doc,
                 amd=False, inputs="exhaustive" if d == "fp32" else None)
      for op, mode, doc in (("floor", "rmi", DOC_FLOOR), ("ceil", "rpi", DOC_CEIL)) for d in ("fp32", "fp64")],
]
# conversions between integers and floats: x.to(dtype) is one cvt, toward zero from a float (the C cast)
# and to nearest from an integer; a narrower integer than 16 bits goes through a 16-bit one
def _convert(src: str, dst: str, vector: bool = False, against: tuple = (), inputs=None, note: str = "",
             block: int | None = None) -> TritonCase:
    """Triton's x.to(dst) of src elements, against the one cvt it means (and ``against`` besides);
    ``block``: a BLOCK other than 128 (1024 with vectors), named in the stem."""
    ptx = {**SUFFIX, **INT_SUFFIX}
    rounding = "rzi" if dst in INT_SUFFIX else "rn"
    stem = f"convert_{ptx[src]}_{ptx[dst]}{'_v' if vector else ''}{f'_b{block}' if block else ''}"
    return TritonCase(stem, "convert_kernel", dst,
                      f"x.to(tl.{TRITON_NAMES[dst]})", (f"cvt.{rounding}.{ptx[dst]}.{ptx[src]}", *against)
                      if (src, dst) != ("i8", "bf16") else against, DOC_CAST,
                      block=block or (1024 if vector else 128), vector=vector, pointers=(src, dst), amd=False,
                      inputs=inputs, note=note)


TO_INT8 = "cvt.s8.s16(cvt.rzi.s16.f32(a))"  # Triton's float32 -> int8: toward zero to int16, then its low byte
TO_UINT8 = "cvt.u8.u16(cvt.rzi.u16.f16(a))"  # float16 -> uint8 likewise through uint16
TRITON_CASES += [
    _convert("fp32", "i32", inputs="exhaustive"), _convert("i32", "fp32", inputs="exhaustive"),
    _convert("i32", "fp32", vector=True), _convert("fp32", "u32"), _convert("u32", "fp32"),
    _convert("fp16", "i16"), _convert("i16", "fp16"), _convert("fp16", "i16", vector=True),
    _convert("i32", "fp16"), _convert("bf16", "i32"), _convert("i32", "bf16"),
    _convert("fp64", "i64"), _convert("i64", "fp64"),
    # bytes: ld/st.global.b8
    _convert("u8", "fp32"), _convert("i8", "fp16", vector=True),
    _convert("i8", "bf16", against=("cvt.rn.bf16.s16(cvt.s16.s8(a))",),
             note="PTX has no cvt.rn.bf16.s8: the reference is the lowering's sign extension, then the conversion"),
    _convert("fp32", "i8", against=(TO_INT8,),
             note="Triton converts to int16 and stores the low byte: out-of-range values wrap where cvt.rzi.s8.f32 "
                  "saturates"),
    _convert("fp16", "u8", against=(TO_UINT8,),
             note="Triton converts to uint16 and stores the low byte: values past 255 wrap where cvt.rzi.u8.f16 "
                  "saturates"),
    # two bytes per thread, packed into one st.global.b16: the int8 kernel masks element 0's low byte
    # before or-ing element 1's in above it; the uint8 kernel does not mask it
    _convert("fp32", "i8", vector=True, block=256, against=(TO_INT8,),
             note="two elements per thread in one 16-bit store; element 0's int16 masked to its low byte"),
    _convert("fp32", "u8", vector=True, block=256, against=(TO_UINT8.replace("f16", "f32"),),
             note="two elements per thread in one 16-bit store; element 0's uint16 is not masked: its high byte "
                  "lands on element 1's"),
    # BLOCK 2048: the layout conversion between the widths goes through shared memory and
    # ldmatrix (the operands before the conversion, or the results after it)
    _convert("i8", "fp32", vector=True, block=2048, note="converted, then passed between threads by st.shared and ldmatrix"),
    _convert("fp16", "i64", vector=True, block=2048, note="passed between threads by st.shared and ldmatrix, then converted"),
    _convert("fp16", "u8", vector=True, block=256, against=(TO_UINT8,),
             note="as convert_f32_u8_v_b256, from float16"),
    # sm_80 has no cvt.rn.bf16.f64 (sm_90): Triton rounds to float32 to odd (cvt.rn.f32.f64, then one
    # step toward the input's side where that was inexact and even), then cvt.rn.bf16.f32 -- one
    # correct rounding, where the plain composition of the two conversions rounds twice
    TritonCase("convert_f64_bf16_sm80", "convert_kernel", "bf16", "x.to(tl.bfloat16)",
               ("cvt.rn.bf16.f64", "cvt.rn.bf16.f32(cvt.rn.f32.f64(a))"), DOC_CAST, capability=80,
               pointers=("fp64", "bf16"), amd=False,
               note="sm_80: float32 rounded to odd, then to bfloat16 (cvt.rn.bf16.f64 is sm_90)"),
]
# the 8-bit floats: Triton 3.9 on sm_90 converts with cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2}
# (bfloat16 through float32) and back with cvt.rn.f16x2.{e4m3x2,e5m2x2}, one lane used where a
# thread holds one element; there is no scalar conversion, so the reference names the packed form
# (its lane's conversion). float8e4nv to bfloat16 goes through cvt.bf16.f16, a spelling the ISA leaves
# without a rounding: refused
DOC_FP8 = ("tensor.to(dtype): 'casts a tensor to the given dtype' (fp_downcast_rounding: 'rtne' by default; "
           "no saturation stated)")


def _fp8(src: str, dst: str, against: tuple, vector: bool = False, inputs=None, note: str = "") -> TritonCase:
    """Triton's x.to(dst) between float and 8-bit float elements (convert_kernel)."""
    short = {**SUFFIX, "fp8e4nv": "e4m3", "fp8e5": "e5m2"}
    return TritonCase(f"convert_{short[src]}_{short[dst]}{'_v' if vector else ''}", "convert_kernel", dst,
                      f"x.to(tl.{FP8_NAMES.get(dst, TRITON_NAMES.get(dst))})", against, DOC_FP8,
                      block=1024 if vector else 128, vector=vector, pointers=(src, dst), amd=False, inputs=inputs,
                      note=note)


FP8_NAMES = {"fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}
TRITON_CASES += [
    _fp8("fp32", "fp8e4nv", ("cvt.rn.satfinite.e4m3x2.f32",), inputs="exhaustive"),
    _fp8("fp32", "fp8e4nv", ("cvt.rn.satfinite.e4m3x2.f32",), vector=True),
    _fp8("fp32", "fp8e5", ("cvt.rn.satfinite.e5m2x2.f32",), inputs="exhaustive"),
    _fp8("fp16", "fp8e4nv", ("cvt.rn.satfinite.e4m3x2.f16x2",), inputs="exhaustive"),
    _fp8("fp16", "fp8e5", ("cvt.rn.satfinite.e5m2x2.f16x2",), vector=True, inputs="exhaustive"),
    _fp8("bf16", "fp8e4nv", ("cvt.rn.satfinite.e4m3x2.f32(cvt.f32.bf16(a))",), inputs="exhaustive",
         note="through float32: two bfloat16 widened in an inline-asm block, one cvt.rn.satfinite.e4m3x2.f32"),
    _fp8("fp8e4nv", "fp16", ("cvt.rn.f16x2.e4m3x2",), inputs="exhaustive"),
    _fp8("fp8e5", "fp16", ("cvt.rn.f16x2.e5m2x2",), vector=True, inputs="exhaustive"),
    _fp8("fp8e4nv", "fp32", ("cvt.f32.f16(cvt.rn.f16x2.e4m3x2(a))",), inputs="exhaustive"),
    _fp8("fp8e4nv", "bf16", ("cvt.rn.bf16.f32(cvt.f32.f16(cvt.rn.f16x2.e4m3x2(a)))",), inputs="exhaustive",
         note="through float16 and cvt.bf16.f16, which has no rounding modifier: the ISA requires one"),
]
# operands given by value: a float32 argument (``alpha``) scales every element; the references name
# the operands in parameter order (x, [y,] alpha: a, [b,] b or c)
SCALE_F16_CR = "cvt.rn.f16.f64(mul.rn.f64(cvt.f64.f16(a), cvt.f64.f32(b)))"  # the exact product, rounded once
TRITON_CASES += [
    TritonCase("scale_f32", "scale_kernel", "fp32", "x * alpha", ("mul.rn.f32",), DOC_MUL, amd=False,
               note="alpha: a float32 argument, one value for every element of a launch"),
    TritonCase("scale_f16_v", "scale_kernel", "fp16", "x * alpha", (
        SCALE_F16_CR, "cvt.rn.f16.f32(mul.rn.f32(cvt.f32.f16(a), b))"), DOC_MUL, block=1024, vector=True, amd=False,
               note="the float16 tensor times a float32 argument: the product in float32, then float16 (two "
                    "roundings); the first reference is the exact product rounded once to float16"),
    TritonCase("scale_inplace_f16_v", "scale_inplace_kernel", "fp16", "x * alpha (in place)", (
        SCALE_F16_CR, "cvt.rn.f16.f32(mul.rn.f32(cvt.f32.f16(a), b))"), DOC_MUL, block=1024, vector=True, amd=False,
               note="x *= alpha: the buffer read is the buffer written"),
    TritonCase("axpy_f32", "axpy_kernel", "fp32", "alpha * x + y", (
        "fma.rn.f32(c, a, b)", "add.rn.f32(mul.rn.f32(c, a), b)"), DOC_MUL, amd=False,
               note="FP fusion (Triton's default) contracts alpha * x + y into one fma"),
]
# integer arithmetic: PTX's integer forms as references (8-bit elements are computed in 16-bit
# registers and stored as their low byte)
DOC_INT = "nothing for + and * on integer tensors (two's complement, wrapping, as C's unsigned arithmetic)"
DOC_INT_DIV = ("nothing for // and % on integer tensors (C's: the quotient truncated toward zero, the remainder "
               "with the dividend's sign; a zero divisor is undefined)")
INT8_ADD = "cvt.s8.s16(add.s16(cvt.s16.s8(a), cvt.s16.s8(b)))"
INT8_MUL = "cvt.s8.s16(mul.lo.s16(cvt.s16.s8(a), cvt.s16.s8(b)))"
UINT8_MAX = "cvt.u8.u16(max.u16(cvt.u16.u8(a), cvt.u16.u8(b)))"
TRITON_CASES += [
    TritonCase("add_s32", "add_kernel", "i32", "a + b", ("add.s32",), DOC_INT, amd=False),
    TritonCase("mul_s32_v", "mul_kernel", "i32", "a * b", ("mul.lo.s32",), DOC_INT, block=1024, vector=True,
               amd=False),
    TritonCase("add_s8_v", "add_kernel", "i8", "a + b", (INT8_ADD,), DOC_INT, block=1024, vector=True, amd=False,
               note="int8 added in 16-bit registers, the low byte stored"),
    TritonCase("mul_s8", "mul_kernel", "i8", "a * b", (INT8_MUL,), DOC_INT, amd=False),
    TritonCase("maximum_u8", "maximum_kernel", "u8", "tl.maximum(a, b)", (UINT8_MAX,), DOC_MAXIMUM, amd=False),
    # integer division: a zero divisor's result (and a signed remainder's sign) the ISA leaves open
    TritonCase("floordiv_s32", "floordiv_kernel", "i32", "a // b", ("div.s32",), DOC_INT_DIV, amd=False),
    TritonCase("mod_s32_v", "mod_kernel", "i32", "a % b", ("rem.s32",), DOC_INT_DIV, block=1024, vector=True,
               amd=False),
    TritonCase("mod_u16", "mod_kernel", "u16", "a % b", ("rem.u16",), DOC_INT_DIV, amd=False),
]
# test fixtures, not corpus rows (tests/verify/test_layout_conversions.py): a / b with only the
# operand pointers 16-byte aligned, which Triton converts to the store's layout through shared
# memory (stmatrix.trans and bar.warp.sync on one warp; stmatrix and ldmatrix.trans; st.shared and
# ldmatrix): (file stem, dtype, BLOCK, num_warps)
TRITON_FIXTURES = ROOT / "tests" / "verify" / "ptx"
TRITON_ALIGNED_INPUTS = [("div_f16_b512_w1_aligned_inputs", "fp16", 512, 1),
                         ("div_bf16_b2048_w8_aligned_inputs", "bf16", 2048, 8),
                         ("div_f16_b4096_w4_aligned_inputs", "fp16", 4096, 4)]
# the source expressions Triton 3.9 refuses to compile, with its message (checked on every run)
TRITON_REFUSED = [("sqrt_kernel", "fp16", "tl.sqrt(a)"), ("sqrt_rn_kernel", "fp16", "tl.sqrt_rn(a)"),
                  ("sqrt_rn_kernel", "fp64", "tl.sqrt_rn(a)"), ("rsqrt_kernel", "fp16", "tl.math.rsqrt(x)"),
                  ("sqrt_kernel", "bf16", "tl.sqrt(a)"), ("rsqrt_kernel", "bf16", "tl.math.rsqrt(x)"),
                  ("floor_kernel", "fp16", "tl.floor(x)"), ("floor_kernel", "bf16", "tl.floor(x)"),
                  ("ceil_kernel", "fp16", "tl.ceil(x)"), ("ceil_kernel", "bf16", "tl.ceil(x)")]


def run(cmd: list[str]) -> None:
    """Run one compiler command, failing loudly."""
    print(" ".join(cmd))
    subprocess.run(cmd, check=True)


def regen_cuda(nvcc: str) -> None:
    """nvcc -arch=sm_90 -ptx every examples/cuda/*.cu with each of its NVCC_VARIANTS (a file of
    device helpers only, such as inline_asm.cu, which ``tilecheck check`` reads as C++, has no
    kernel to compile)."""
    for cu in sorted(CUDA.glob("*.cu")):
        if "__global__" not in cu.read_text():
            continue
        for suffix, flags in NVCC_VARIANTS.get(cu.name, {"": []}).items():
            out = cu.with_name(cu.stem + suffix + ".ptx")
            run([nvcc, "-arch=sm_90", "-ptx", *flags, str(cu), "-o", str(out)])
            if "-lineinfo" in flags or "-G" in flags:
                # .file names the source absolutely: keep it checkout-independent
                out.write_text(out.read_text().replace(f'"{CUDA}/', '"'))


def regen_llvm(llc: str) -> None:
    """llc-19 every examples/llvm/*.ll for each of LLC_CPUS."""
    for ll in sorted(LLVM.glob("*.ll")):
        for cpu in LLC_CPUS:
            out = ll.with_name(f"{ll.stem}_{cpu}.ptx")
            run([llc, "-march=nvptx64", f"-mcpu={cpu}", str(ll), "-o", str(out)])


# examples/amdgpu kernel names: {op}_{type}[_afn][_fpmath][_ftz]; what each op computes and is checked against
AMDGPU_OPS = {"fdiv": ("div", "fdiv {ty}"), "rcp": ("rcp", "fdiv {ty} 1.0, x"),
              "sqrt": ("sqrt", "llvm.sqrt.{t}"), "fma": ("fma", "llvm.fma.{t}")}
AMDGPU_TYPES = {"f16": "half", "f32": "float", "f64": "double"}


def _amdgpu_entry(kernel: str, cpu: str, asm: str) -> str:
    """One manifest row: the kernel's operation, reference, LangRef claim and its descriptor's denormal modes."""
    op, t, *variants = kernel.split("_")
    form, text = AMDGPU_OPS[op]
    ftz = "ftz" in variants
    against = f"{form}.rn{'.ftz' if ftz else ''}.{t}"
    words = [text.format(ty=AMDGPU_TYPES[t], t=t)] + [
        {"afn": "afn", "fpmath": "!fpmath 2.5", "ftz": "denormal-fp-math-f32 preserve-sign"}[v] for v in variants]
    # the LangRef's words: no flag = correctly rounded; afn = any approximation; !fpmath = an ulp bound
    claim = ("LangRef: afn allows an approximation; no accuracy promised" if "afn" in variants else
             "LangRef: !fpmath 2.5 ulp allowed" if "fpmath" in variants else "LangRef: correctly rounded to nearest")
    if ftz:
        claim += "; f32 denormal inputs and results may be flushed to signed zero (preserve-sign)"
    inputs = "exhaustive" if t == "f16" and op in ("sqrt", "rcp") else 16384 if t == "f64" else 65536
    block = re.search(rf"^\s*\.amdhsa_kernel {kernel}\n(.*?)\.end_amdhsa_kernel", asm, re.M | re.S).group(1)
    modes = {k: re.search(rf"\.amdhsa_float_denorm_mode_{k} (\d+)", block).group(1) for k in ("32", "16_64")}
    return (f"  - {{function: {_yaml_str(', '.join(words) + f' (llc -mcpu={cpu})')}, "
            f"file: examples/amdgpu/arith_{cpu}.s, entry: {kernel}, against: {against}, inputs: {inputs},\n"
            f"     claim: {_yaml_str(claim)}, denorm_mode_32: {modes['32']}, denorm_mode_16_64: {modes['16_64']}}}")


def regen_amdgpu(llc: str, out: Path = AMDGPU) -> None:
    """llc-19 -march=amdgcn examples/amdgpu/arith.ll for each of AMDGPU_CPUS into ``out``, then the manifest
    (read from what was just written, so a regeneration elsewhere is compared whole)."""
    ll = AMDGPU / "arith.ll"
    kernels = re.findall(r"^define amdgpu_kernel void @(\w+)", ll.read_text(), re.M)
    lines = ["# LLVM 19 AMDGPU output (llc-19 -march=amdgcn -mcpu=gfx90a/gfx942/gfx1100) of examples/amdgpu/arith.ll,",
             "# written by `python tools/regen_corpus.py --amdgpu`. Per entry: against (the correctly rounded",
             "# reference form; .ftz where the function flushes f32 denormals), claim (what the LangRef promises",
             "# for the IR: no flag = correctly rounded, afn = no accuracy promised, !fpmath 2.5 = 2.5 ulp),",
             "# denorm_mode_32 / _16_64 (the kernel descriptor's .amdhsa_float_denorm_mode_*: 3 = denormals",
             "# kept, 0 = flushed, the MODE the wave starts in). Per target: wave (the wavefront size).",
             "targets:"]
    rows = []
    for cpu in AMDGPU_CPUS:
        s = out / f"arith_{cpu}.s"
        run([llc, "-march=amdgcn", f"-mcpu={cpu}", str(ll), "-o", str(s)])
        asm = s.read_text()
        waves = set(re.findall(r"^\s*\.wavefront_size:\s*(\d+)", asm, re.M))
        if len(waves) != 1:
            raise SystemExit(f"{s.name}: wavefront sizes {sorted(waves)}: expected one")
        lines.append(f"  - {{cpu: {cpu}, file: examples/amdgpu/arith_{cpu}.s, wave: {waves.pop()}}}")
        rows += [_amdgpu_entry(k, cpu, asm) for k in kernels]
    (out / "manifest.yaml").write_text("\n".join(lines + ["entries:"] + rows) + "\n")


def _triton_compile(triton, kernels, kernel: str, dtype: str, block: int = 128, num_warps: int = 4,
                    vector: bool = False, capability: int = 90, fp_fusion: bool | None = None,
                    target: tuple | None = None, pointers: tuple = (), aligned: tuple | None = None):
    """Triton's compiled kernel (ahead of time, no GPU) of ``kernels.<kernel>`` on ``dtype`` pointers
    (for ``GPUTarget("cuda", capability, 32)``, or ``GPUTarget(*target)``: ("hip", "gfx942", 64)).
    ``aligned``: the arguments given ``tt.divisibility`` 16, where not every one (``vector``) is."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = getattr(kernels, kernel)
    names = fn.arg_names
    types = iter(pointers or ())
    signature = {name: ("i32" if name == "n" else "constexpr" if name == "BLOCK" else
                        SCALAR_ARGS[name] if name in SCALAR_ARGS else "*" + (next(types, dtype)))
                 for name in names}
    # divisibility 16 on the pointers (16-byte aligned) and the count (no ragged vector): what lets
    # Triton use 128-bit accesses; without it every access is one element
    attrs = {(i,): [["tt.divisibility", 16]] for i, name in enumerate(names)
             if name != "BLOCK" and name not in SCALAR_ARGS} if vector else {}
    if aligned is not None:
        attrs = {(i,): [["tt.divisibility", 16]] for i, name in enumerate(names) if name in aligned}
    options = {"num_warps": num_warps}
    if fp_fusion is not None:
        options["enable_fp_fusion"] = fp_fusion
    src = ASTSource(fn=fn, signature=signature, constexprs={"BLOCK": block}, attrs=attrs)
    return triton.compile(src, target=GPUTarget(*(target or ("cuda", capability, 32))), options=options)


def _triton_fusion_mechanisms(triton, kernels) -> str:
    """Which of the two switches changes ``a * b + c``'s PTX, measured: a manifest comment line."""
    ops = {}
    for env in ("1", "0"):
        os.environ["TRITON_DEFAULT_FP_FUSION"] = env
        for opt in (None, True, False):
            ptx = _triton_compile(triton, kernels, "mul_add_kernel", "fp32", fp_fusion=opt).asm["ptx"]
            ops[env, opt] = "fma.rn.f32" if "fma.rn.f32" in ptx else "mul.rn.f32+add.rn.f32" if (
                "mul.rn.f32" in ptx and "add.rn.f32" in ptx) else "?"
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
    return (f"TRITON_DEFAULT_FP_FUSION=1: {ops['1', None]}, =0: {ops['0', None]};\n# enable_fp_fusion=True: "
            f"{ops['1', True]} (also under =0: {ops['0', True]}), False: {ops['1', False]} "
            f"(also under =1: {ops['1', False]})")


def _yaml_ref(ref: str) -> str:
    """A reference in the manifest: a form name as it is, an expression quoted."""
    return ref if re.fullmatch(r"[\w.]+", ref) else _yaml_str(ref)


def _yaml_str(text: str) -> str:
    """``text`` as a double-quoted YAML scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def regen_triton() -> None:
    """Compile every TritonCase into examples/triton and write examples/triton/manifest.yaml."""
    # Triton 3.9's default, stated (and its warning that 3.10 turns it off silenced)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    spec = importlib.util.spec_from_file_location("kernels", TRITON / "kernels.py")
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    fusion = _triton_fusion_mechanisms(triton, kernels)
    lines = [f"# Triton {triton.__version__} PTX of the elementwise kernels of examples/triton/kernels.py",
             "# (offs = pid * BLOCK + arange(0, BLOCK); mask = offs < n; load; one operation; store), compiled",
             "# ahead of time (no GPU) by `python tools/regen_corpus.py --triton` (pip install triton). The tests",
             "# read these files: tilecheck does not depend on Triton.",
             "#",
             "# per file: entry, dtype (Triton's pointer type), source (the stored expression), block (BLOCK),",
             "# num_warps (elements per thread: block / (32 * num_warps)), vector (tt.divisibility 16 on every",
             "# pointer and the count: 128-bit ld/st.global.v4.b32 or .v2.b64; no: one element per access),",
             "# target (the PTX's .target; GPUTarget(\"cuda\", capability, 32)), fp_fusion (enable_fp_fusion;",
             "# default: on, TRITON_DEFAULT_FP_FUSION=1), against (the references a user checks with",
             "# `tilecheck verify FILE --entry ENTRY --against REF`; the first is the correctly rounded",
             "# operation), documented (what Triton's documentation says of the operation), inputs (the",
             "# findings table's inputs where not tools/findings.py's default: exhaustive or a sampled count,",
             "# or per reference: {REF: inputs}, the references it leaves out at the default).",
             "# FP fusion, measured on a * b + c (either switch changes the PTX; enable_fp_fusion wins over",
             f"# the variable): {fusion}.",
             f"triton: \"{triton.__version__}\"",
             "entries:"]
    for case in TRITON_CASES:
        compiled = _triton_compile(triton, kernels, case.kernel, case.dtype, case.block, case.num_warps, case.vector,
                                   case.capability, case.fp_fusion, pointers=case.pointers)
        entry, ptx = compiled.metadata.name, compiled.asm["ptx"]
        # .file names the kernels absolutely: keep the corpus checkout-independent
        ptx = ptx.replace(f'"{ROOT}/', '"')
        (TRITON / f"{case.stem}.ptx").write_text(ptx)
        target = re.search(r"^\.target\s+(\S+)", ptx, re.M).group(1)
        print(f"{case.stem}.ptx: {entry} ({case.dtype}: {case.source}, BLOCK {case.block}, {case.num_warps} warps, "
              f"{'vector' if case.vector else 'scalar'}, {target})")
        fp = "default" if case.fp_fusion is None else "on" if case.fp_fusion else "off"
        row = (f"  - {{file: examples/triton/{case.stem}.ptx, entry: {entry}, dtype: {case.dtype}, "
               f"source: {_yaml_str(case.source)}, block: {case.block}, num_warps: {case.num_warps}, "
               f"vector: {'yes' if case.vector else 'no'}, target: {target}, fp_fusion: {fp},\n"
               f"     against: [{', '.join(map(_yaml_ref, case.against))}], documented: {_yaml_str(case.documented)}")
        if case.note:
            row += f",\n     note: {_yaml_str(case.note)}"
        if isinstance(case.inputs, dict):
            row += f", inputs: {{{', '.join(f'{_yaml_ref(r)}: {n}' for r, n in case.inputs.items())}}}"
        elif case.inputs:
            row += f", inputs: {case.inputs}"
        if case.pointers:
            row += f", pointers: [{', '.join(case.pointers)}]"
        lines.append(row + "}")
    for stem, dtype, block, warps in TRITON_ALIGNED_INPUTS:
        compiled = _triton_compile(triton, kernels, "div_kernel", dtype, block, warps, aligned=("a_ptr", "b_ptr"))
        (TRITON_FIXTURES / f"{stem}.ptx").write_text(compiled.asm["ptx"].replace(f'"{ROOT}/', '"'))
        print(f"tests/verify/ptx/{stem}.ptx: div_kernel ({dtype}, BLOCK {block}, {warps} warps, operands aligned)")
    lines.append("# source expressions Triton refuses to compile (no PTX), with its message")
    lines.append("refused:")
    for kernel, dtype, source in TRITON_REFUSED:
        try:
            _triton_compile(triton, kernels, kernel, dtype)
        except Exception as exc:  # Triton raises its CompilationError; the message is what matters
            message = str(exc).strip().splitlines()[-1].strip()
        else:
            raise SystemExit(f"{source} on {dtype} compiles now: move it to TRITON_CASES")
        lines.append(f"  - {{source: {_yaml_str(source)}, dtype: {dtype}, error: {_yaml_str(message)}}}")
    (TRITON / "manifest.yaml").write_text("\n".join(lines) + "\n")


# examples/amdgpu/triton: the same kernels for AMD (Triton's HIP backend, ahead of time, no GPU):
# every gfx942-meaningful TRITON_CASES entry (the sm_80/sm_100 target variants have no AMD
# counterpart) under its NVIDIA stem, plus f16 a / b at BLOCK 1024 over 4 waves of 64 without
# tt.divisibility (4 elements per thread, one access each)
TRITON_AMDGPU = AMDGPU / "triton"
TRITON_AMDGPU_ARCH = "gfx942"
TRITON_AMDGPU_WAVE = 64
TRITON_AMDGPU_CASES = [c for c in TRITON_CASES if c.capability == 90 and not c.pointers and c.amd] + [
    _div("fp16", "div_f16_b1024_w4", block=1024, num_warps=4)]
# the environment knobs that change Triton's AMD output, at their defaults
TRITON_AMDGPU_ENV = {"TRITON_DEFAULT_FP_FUSION": "1", "AMDGCN_USE_BUFFER_OPS": "1",
                     "AMDGCN_ANALYZE_SMALL_TENSOR_RANGE": "0", "AMDGCN_SCALARIZE_PACKED_FOPS": "0"}


def _triton_amdgpu_against(case: TritonCase) -> str:
    """The one correctly rounded reference of an AMD entry: what ``case`` computes, rounded once
    (the two-step expression for a * b + c with fusion off)."""
    if case.fp_fusion is False:
        return MUL_THEN_ADD
    return case.against[0]


def _triton_amdgpu_inputs(case: TritonCase) -> str | int:
    """Exhaustive for a one-input 16-bit kernel (65536 bit patterns), 65536 random inputs otherwise."""
    unary = case.kernel not in ("div_kernel", "div_rn_kernel", "fma_kernel", "mul_add_kernel")
    return "exhaustive" if unary and case.dtype in ("fp16", "bf16") else 65536


def elf_section(data: bytes, name: str) -> bytes:
    """The contents of section ``name`` of a little-endian ELF64 file (a code object or a .o)."""
    import struct

    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    for sh_name, _type, _flags, _addr, offset, size in headers:
        start = strtab[4] + sh_name
        if data[start:data.index(b"\0", start)].decode() == name:
            return data[offset:offset + size]
    raise KeyError(name)


def _triton_amdgpu_asm(triton, kernels, case: TritonCase) -> tuple[str, str, str]:
    """The kernel's name, its gfx942 assembly (the checkout's path taken out) and the SHA-256 of the
    .text of the code object Triton linked from it."""
    compiled = _triton_compile(triton, kernels, case.kernel, case.dtype, case.block, case.num_warps, case.vector,
                               fp_fusion=case.fp_fusion, target=("hip", TRITON_AMDGPU_ARCH, TRITON_AMDGPU_WAVE))
    asm = compiled.asm["amdgcn"]
    # the DWARF compile directory (.file, .debug_str and its comment) names the checkout: make it relative
    asm = asm.replace(f'"{TRITON}"', '"examples/triton"').replace(f"; {TRITON}\n", "; examples/triton\n")
    if str(ROOT) in asm:
        raise SystemExit(f"{case.stem}: the assembly still names {ROOT}")
    import hashlib

    return compiled.metadata.name, asm, hashlib.sha256(elf_section(compiled.asm["hsaco"], ".text")).hexdigest()


def regen_triton_amdgpu(out: Path = TRITON_AMDGPU) -> None:
    """Compile every TRITON_AMDGPU_CASES entry for gfx942 into ``out`` (``{stem}.s``) and write
    ``out/manifest.yaml`` (read from what was just written, like the llc manifest)."""
    saved = {k: os.environ.get(k) for k in TRITON_AMDGPU_ENV}
    os.environ.update(TRITON_AMDGPU_ENV)
    try:
        import triton

        spec = importlib.util.spec_from_file_location("kernels", TRITON / "kernels.py")
        kernels = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kernels)
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        for case in TRITON_AMDGPU_CASES:
            entry, asm, text_sha256 = _triton_amdgpu_asm(triton, kernels, case)
            (out / f"{case.stem}.s").write_text(asm)
            rows.append(_triton_amdgpu_entry(case, entry, asm, text_sha256))
            print(f"{case.stem}.s: {entry} ({case.dtype}: {case.source}, BLOCK {case.block}, {case.num_warps} waves, "
                  f"{'vector' if case.vector else 'scalar'}, {TRITON_AMDGPU_ARCH})")
        version = triton.__version__
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    lines = [f"# Triton {version} AMDGCN assembly (GPUTarget(\"hip\", \"{TRITON_AMDGPU_ARCH}\", {TRITON_AMDGPU_WAVE})) of the",
             "# elementwise kernels of examples/triton/kernels.py, the same cases as examples/triton/manifest.yaml",
             "# (same stems, BLOCK and num_warps; a warp is a wave of 64 here, so num_warps 4 is 256 threads),",
             "# written ahead of time (no GPU) by `python tools/regen_corpus.py --triton-amdgpu` (pip install triton).",
             "# The knobs that change the output are set to Triton's defaults while compiling: "
             + ", ".join(f"{k}={v}" for k, v in TRITON_AMDGPU_ENV.items()) + ".",
             "# Per entry: function (the stored expression and how it was compiled), file, entry, against (the",
             "# correctly rounded reference form; for a * b + c with fusion off, the two-step expression), inputs",
             "# (exhaustive: every 16-bit pattern of a one-input kernel), claim (what Triton's documentation says,",
             "# as in examples/triton/manifest.yaml's documented), denorm_mode_32 / _16_64 (the kernel descriptor's",
             "# .amdhsa_float_denorm_mode_*: 3 = denormals kept), wave (the metadata's .wavefront_size); then",
             "# dtype, source, block, num_warps, vector (tt.divisibility 16 on every pointer and n), fp_fusion,",
             "# text_sha256 (of the .text of the code object Triton linked itself: llvm-mc-19 assembles the .s,",
             f"# its .amdgcn_target line respelled amdgcn-amd-amdhsa--{TRITON_AMDGPU_ARCH}, to the same bytes).",
             f"triton: \"{version}\"",
             f"cpu: {TRITON_AMDGPU_ARCH}",
             "entries:"]
    (out / "manifest.yaml").write_text("\n".join(lines + rows) + "\n")


def _triton_amdgpu_entry(case: TritonCase, entry: str, asm: str, text_sha256: str) -> str:
    """One manifest row of the Triton AMD corpus."""
    block = re.search(rf"^\s*\.amdhsa_kernel {entry}\n(.*?)\.end_amdhsa_kernel", asm, re.M | re.S).group(1)
    modes = {k: re.search(rf"\.amdhsa_float_denorm_mode_{k} (\d+)", block).group(1) for k in ("32", "16_64")}
    waves = set(re.findall(r"^\s*\.wavefront_size:\s*(\d+)", asm, re.M))
    if len(waves) != 1:
        raise SystemExit(f"{case.stem}.s: wavefront sizes {sorted(waves)}: expected one")
    fp = "default" if case.fp_fusion is None else "on" if case.fp_fusion else "off"
    how = (f"BLOCK {case.block}, num_warps {case.num_warps}, {'vector' if case.vector else 'scalar'}"
           + ("" if case.fp_fusion is None else f", enable_fp_fusion={case.fp_fusion}"))
    function = f"{case.source} on {case.dtype} (Triton, {TRITON_AMDGPU_ARCH}, {how})"
    return (f"  - {{function: {_yaml_str(function)}, file: examples/amdgpu/triton/{case.stem}.s, entry: {entry}, "
            f"against: {_yaml_ref(_triton_amdgpu_against(case))}, inputs: {_triton_amdgpu_inputs(case)},\n"
            f"     claim: {_yaml_str(case.documented)}, denorm_mode_32: {modes['32']}, "
            f"denorm_mode_16_64: {modes['16_64']}, wave: {waves.pop()},\n"
            f"     dtype: {case.dtype}, source: {_yaml_str(case.source)}, block: {case.block}, "
            f"num_warps: {case.num_warps}, vector: {'yes' if case.vector else 'no'}, fp_fusion: {fp},\n"
            f"     text_sha256: {text_sha256}"
            + (f",\n     note: {_yaml_str(case.note)}" if case.note else "") + "}")


def _triton_importable() -> bool:
    """Whether this interpreter has Triton (the venv of the usage line, say)."""
    return importlib.util.find_spec("triton") is not None


def main(argv: list[str] | None = None) -> int:
    """Regenerate the parts asked for, or every part whose compiler is here; returns an exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for part in ("cuda", "llvm", "amdgpu", "triton"):
        parser.add_argument(f"--{part}", action="store_true", help=f"regenerate examples/{part}")
    parser.add_argument("--triton-amdgpu", action="store_true",
                        help="regenerate examples/amdgpu/triton (Triton for gfx942)")
    args = parser.parse_args(argv)
    nvcc, llc, has_triton = shutil.which("nvcc"), shutil.which("llc-19"), _triton_importable()
    names = ("cuda", "llvm", "amdgpu", "triton", "triton_amdgpu")
    asked = [p for p in names if getattr(args, p)]
    here = {"cuda": nvcc is not None, "llvm": llc is not None, "amdgpu": llc is not None, "triton": has_triton,
            "triton_amdgpu": has_triton}
    parts = asked or [p for p, ok in here.items() if ok]
    missing = [p for p in parts if not here[p]]
    if missing:
        print(f"no compiler for {', '.join(missing)} (nvcc, llc-19, import triton): nothing regenerated",
              file=sys.stderr)
        return 2
    if not parts:
        print("none of nvcc, llc-19, triton found: nothing regenerated", file=sys.stderr)
        return 2
    if "cuda" in parts:
        regen_cuda(nvcc)
    if "llvm" in parts:
        regen_llvm(llc)
    if "amdgpu" in parts:
        regen_amdgpu(llc)
    if "triton" in parts:
        regen_triton()
    if "triton_amdgpu" in parts:
        regen_triton_amdgpu()
    return 0

if __name__ == "__main__":
    sys.exit(main())
