// Packed half2 / bfloat162 values through non-inlined device functions: nvcc passes them by
// pointer (.func f(.param .b64 result, .param .b64 x[, .param .b64 y]) with generic ld/st), and
// the reciprocal square roots as bounds-checked kernels (setp on an unsigned count, early ret).
// Compiled with -rdc=true so that nvcc keeps the functions.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __device__ __noinline__ __half2 h2div_f16_func(__half2 x, __half2 y) { return __h2div(x, y); }
extern "C" __device__ __noinline__ __half2 h2sqrt_f16_func(__half2 x) { return h2sqrt(x); }
extern "C" __device__ __noinline__ __half2 h2rsqrt_f16_func(__half2 x) { return h2rsqrt(x); }
extern "C" __device__ __noinline__ __nv_bfloat162 h2rsqrt_bf16_func(__nv_bfloat162 x) { return h2rsqrt(x); }
extern "C" __device__ __noinline__ __nv_bfloat16 hrsqrt_bf16_func(__nv_bfloat16 x) { return hrsqrt(x); }

#define UNARY_N(NAME, T, EXPR) \
  extern "C" __global__ void NAME(const T* __restrict__ a, T* __restrict__ out, unsigned n) { \
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; T x = a[i]; out[i] = (EXPR); }

UNARY_N(k_h2rsqrt_f16, __half2, h2rsqrt(x))
UNARY_N(k_h2rsqrt_bf16, __nv_bfloat162, h2rsqrt(x))
