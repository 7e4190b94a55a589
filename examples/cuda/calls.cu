// Kernels that call non-inlined device functions (nvcc's call.uni with .param arguments and a
// .param result in a "callseq" scope): the verifier inlines the callee.
#include <cuda_fp16.h>

extern "C" __device__ __noinline__ __half hsqrt_callee(__half x) { return hsqrt(x); }
extern "C" __device__ __noinline__ __half hdiv_callee(__half x, __half y) { return __hdiv(x, y); }
// a callee that calls another one
extern "C" __device__ __noinline__ float frcp_inner(float x) { return __frcp_rn(x); }
extern "C" __device__ __noinline__ float frcp_outer(float x) { return frcp_inner(x); }

extern "C" __global__ void k_hsqrt_call(const __half* x, __half* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = hsqrt_callee(x[i]);
}
extern "C" __global__ void k_hdiv_call(const __half* x, const __half* y, __half* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = hdiv_callee(x[i], y[i]);
}
extern "C" __global__ void k_frcp_nested_call(const float* x, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = frcp_outer(x[i]);
}
