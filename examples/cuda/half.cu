// Elementwise kernels out[i] = f(a[i], ...) around CUDA's half-precision division family.
// PTX: tools/regen_corpus.py (nvcc -arch=sm_90 -ptx); verified by tools/findings.py.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define UNARY(NAME, T, EXPR) \
  extern "C" __global__ void NAME(const T* a, T* out) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; T x = a[i]; out[i] = (EXPR); }
#define BINARY(NAME, T, EXPR) \
  extern "C" __global__ void NAME(const T* a, const T* b, T* out) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; T x = a[i]; T y = b[i]; out[i] = (EXPR); }

BINARY(k_hdiv_f16, __half, __hdiv(x, y))
BINARY(k_h2div_f16, __half2, __h2div(x, y))
UNARY(k_hsqrt_f16, __half, hsqrt(x))
UNARY(k_h2sqrt_f16, __half2, h2sqrt(x))
UNARY(k_hrcp_f16, __half, hrcp(x))
UNARY(k_h2rcp_f16, __half2, h2rcp(x))
UNARY(k_hrsqrt_f16, __half, hrsqrt(x))

BINARY(k_hdiv_bf16, __nv_bfloat16, __hdiv(x, y))
BINARY(k_h2div_bf16, __nv_bfloat162, __h2div(x, y))
UNARY(k_hsqrt_bf16, __nv_bfloat16, hsqrt(x))
UNARY(k_h2sqrt_bf16, __nv_bfloat162, h2sqrt(x))
UNARY(k_hrcp_bf16, __nv_bfloat16, hrcp(x))
UNARY(k_h2rcp_bf16, __nv_bfloat162, h2rcp(x))
UNARY(k_hrsqrt_bf16, __nv_bfloat16, hrsqrt(x))
