"""The Triton kernels of the committed Triton corpus (examples/triton/*.ptx).

Every kernel is elementwise: program ``pid`` owns ``BLOCK`` consecutive elements, ``offs = pid *
BLOCK + arange(0, BLOCK)``, lanes at or past ``n`` are masked off, the operands are loaded, one
operation is applied and the result stored. How many elements a thread computes and whether the
accesses are vectors is decided at compile time (``BLOCK``, ``num_warps`` and the
``tt.divisibility`` attributes of the arguments), not here: see ``tools/regen_corpus.py
--triton``, which imports this file, and ``manifest.yaml`` beside it, which lists what each
committed PTX file was compiled with.

The PTX's ``.loc``/``.file`` lines point into this file, so moving a kernel changes them.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def div_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a / b (Triton's division operator)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a / b, mask=mask)


@triton.jit
def div_rn_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.math.div_rn(a, b)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.math.div_rn(a, b), mask=mask)


@triton.jit
def sqrt_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sqrt(a)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt(a), mask=mask)


@triton.jit
def sqrt_rn_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sqrt_rn(a)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt_rn(a), mask=mask)


@triton.jit
def rcp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = 1.0 / x (a Python float numerator: it takes the tensor's type)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 1.0 / x, mask=mask)


@triton.jit
def rsqrt_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.math.rsqrt(x)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.math.rsqrt(x), mask=mask)


@triton.jit
def fma_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.fma(a, b, c)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    c = tl.load(c_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.fma(a, b, c), mask=mask)


@triton.jit
def mul_add_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a * b + c (one fma or a rounded product and a sum: the compile's FP fusion decides)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    c = tl.load(c_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * b + c, mask=mask)


# Triton 3.9 refuses tl.sqrt, tl.sqrt_rn and tl.math.rsqrt on float16 ("Expected dtype ['fp32',
# 'fp64'] but got fp16"): a user upcasts, computes in float32 and rounds back, as these do.


@triton.jit
def sqrt_up_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sqrt(x.to(tl.float32)).to(x.dtype)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt(x.to(tl.float32)).to(x.dtype), mask=mask)


@triton.jit
def sqrt_rn_up_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sqrt_rn(x.to(tl.float32)).to(x.dtype)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt_rn(x.to(tl.float32)).to(x.dtype), mask=mask)


@triton.jit
def rsqrt_up_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.math.rsqrt(x.to(tl.float32)).to(x.dtype)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.math.rsqrt(x.to(tl.float32)).to(x.dtype), mask=mask)


# Operands of another width than the result: the pointers' element types differ
# (tools/regen_corpus.py gives each its own).


@triton.jit
def widen_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x.to(tl.float32) (float16 in, float32 out)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x.to(tl.float32), mask=mask)


@triton.jit
def div_up_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a.to(tl.float32) / b.to(tl.float32) (float16 in, float32 out)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a.to(tl.float32) / b.to(tl.float32), mask=mask)


@triton.jit
def div_down_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = (a / b).to(tl.float16) (float32 in, float16 out)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (a / b).to(tl.float16), mask=mask)


@triton.jit
def mul_mixed_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a * b with a float16 and b float32 (Triton promotes a: the product is float32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * b, mask=mask)


@triton.jit
def clamp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.clamp(x, -1.0, 1.0) (bounds of one magnitude, which Triton lowers to min.xorsign.abs)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.clamp(x, -1.0, 1.0), mask=mask)


@triton.jit
def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = -x (Triton flips the sign bits with xor.b32, two 16-bit elements a word at a time)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, -x, mask=mask)


@triton.jit
def maximum_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.maximum(a, b)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(a, b), mask=mask)


@triton.jit
def exp2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.exp2(x) (Triton emits ex2.approx.ftz.f32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.exp2(x), mask=mask)


@triton.jit
def exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.exp(x) (Triton emits mul.f32 by log2(e), then ex2.approx.f32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.exp(x), mask=mask)


@triton.jit
def exp_up_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.exp(x.to(tl.float32)).to(x.dtype) (ex2.approx.f32 between two conversions)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.exp(x.to(tl.float32)).to(x.dtype), mask=mask)


@triton.jit
def sigmoid_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sigmoid(x) (Triton emits ex2.approx.f32 of -x log2(e), adds one, divides with div.full.f32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sigmoid(x), mask=mask)


# Rounding to an integral value
@triton.jit
def floor_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.floor(x) (Triton 3.9 emits cvt.rmi.ftz.f32.f32 for float32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.floor(x), mask=mask)


@triton.jit
def ceil_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.ceil(x) (Triton 3.9 emits cvt.rpi.ftz.f32.f32 for float32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.ceil(x), mask=mask)


# The base-2 logarithm through libdevice's fast intrinsics (tl.log and tl.log2 are polynomials)
@triton.jit
def fast_log2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.fast_log2f(x) (Triton 3.9 emits lg2.approx.ftz.f32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.fast_log2f(x), mask=mask)


@triton.jit
def fast_log_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.fast_logf(x) (Triton 3.9 emits lg2.approx.ftz.f32, then mul.f32 by ln 2)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.fast_logf(x), mask=mask)


# Sine and the hyperbolic tangent as instructions: the ISA bounds them, tilecheck does not model them yet
@triton.jit
def fast_sin_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.fast_sinf(x) (Triton 3.9 emits sin.approx.ftz.f32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.fast_sinf(x), mask=mask)


@triton.jit
def tanh_asm_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tanh.approx.f32 of x through inline asm (Triton has no tl.tanh instruction)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, y, mask=mask)


# Conversions between integers and floats: the pointers' element types say which (Triton's x.to(dtype)
# truncates float to integer toward zero and rounds integer to float to nearest)
@triton.jit
def convert_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x.to(out's element type)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.where(x > 0, x, 0), the ReLU (on 16-bit vectors one setp.gt.f16x2 compares two
    elements, each predicate selecting its own element)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, 0), mask=mask)


@triton.jit
def sin_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sin(x): libdevice's sinf (no approximate instruction: a polynomial after an argument
    reduction that, for |x| >= 105615, is Payne-Hanek's through a carry chain and local memory)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sin(x), mask=mask)


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.cos(x): libdevice's cosf (the same reduction as sin_kernel's)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.cos(x), mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    """out = x * alpha: ``alpha`` a float32 argument, one value for every element (a parameter
    ``.param .f32`` the kernel reads: an operand given by value)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha, mask=mask)


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    """out = alpha * x + y, ``alpha`` a float32 argument (BLAS's axpy)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a + b (integer tensors: wrapping arithmetic in the element's width)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.jit
def mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a * b (integer tensors: the low half of the product)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * b, mask=mask)


@triton.jit
def scale_inplace_kernel(x_ptr, alpha, n, BLOCK: tl.constexpr):
    """x *= alpha in place: the buffer holds the operand before the launch and the result after."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * alpha, mask=mask)


@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.where(x > 0, x, x * 0.01), the leaky ReLU (0.01 rounded to the tensor's type; on
    16-bit vectors setp.gt.f16x2 and mul.f16x2, each element selected by selp.b16)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, x * 0.01), mask=mask)


@triton.jit
def greater_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a > b, a boolean tensor (Triton stores an int1 as one byte, 1 or 0)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a > b, mask=mask)


@triton.jit
def where_kernel(c_ptr, a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.where(c, a, b) with ``c`` a boolean tensor (one byte per element: any non-zero
    byte selects a)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = tl.load(c_ptr + offs, mask=mask)
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(c, a, b), mask=mask)


@triton.jit
def maximum_nan_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL) (float64 has no max.NaN: Triton
    selects a NaN by setp.nan, and orders the zeros by their bits)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL), mask=mask)


@triton.jit
def floordiv_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a // b on integer tensors (Triton divides as C does: the quotient truncated toward
    zero, one div.s32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a // b, mask=mask)


@triton.jit
def mod_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a % b on integer tensors (C's remainder, the dividend's sign: one rem)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a % b, mask=mask)


# libdevice's copysign(x, y): PTX's copysign takes the sign from its first source, so Triton 3.9 emits
# copysign.f32 d, y, x
@triton.jit
def copysign_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.copysign(x, y): x's magnitude with y's sign."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.copysign(x, y), mask=mask)


# Cache hints, as production kernels write them: eviction_policy on sm_80+ makes a cache policy
# (createpolicy) for .L1::evict_last.L2::cache_hint loads; cache_modifier picks .cg loads and .cs stores
@triton.jit
def div_hinted_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a / b with cache hints on every access (the bits moved are the plain kernel's)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, eviction_policy="evict_last")
    b = tl.load(b_ptr + offs, mask=mask, cache_modifier=".cg")
    tl.store(out_ptr + offs, a / b, mask=mask, cache_modifier=".cs")


# Classification: libdevice's isnan and isinf on float32 give Triton booleans (a byte per element);
# Triton 3.9 lowers them to setp on |x| (abs, then setp.nan / setp.eq with +inf), not testp
@triton.jit
def isnan_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.isnan(x)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.isnan(x), mask=mask)


@triton.jit
def isinf_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.isinf(x)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.isinf(x), mask=mask)


# libdevice's correctly rounded float32 intrinsics: Triton links libdevice for flush-to-zero, so
# each is the .ftz form of its instruction
@triton.jit
def rcp_rn_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.rcp_rn(x)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.rcp_rn(x), mask=mask)


@triton.jit
def div_rz_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.div_rz(a, b)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.div_rz(a, b), mask=mask)


@triton.jit
def div_const_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x / 3.0 (a Python float divisor)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x / 3.0, mask=mask)


@triton.jit
def rsqrt_rn_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = libdevice.rsqrt_rn(x)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.rsqrt_rn(x), mask=mask)
