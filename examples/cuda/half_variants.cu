// The same half-precision operations written the ways CUDA code often writes them: a grid-stride
// loop, a size_t bound, the output pointer first, C++ operators on __half / __nv_bfloat16 /
// __half2, and a device function on const references (operands by pointer, result returned).
// Compiled with -rdc=true (the device function stays) and -lineinfo (.loc lines, .file, a DWARF
// .section), as profiling builds are.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void k_hsqrt_f16_grid_stride(const __half* __restrict__ a, __half* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = hsqrt(a[i]);
}
extern "C" __global__ void k_hdiv_f16_size_t(const __half* a, const __half* b, __half* out, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __hdiv(a[i], b[i]);
}
extern "C" __global__ void k_hrcp_f16_out_first(__half* out, const __half* a) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  out[i] = hrcp(a[i]);
}
extern "C" __global__ void k_div_operator_f16(const __half* a, const __half* b, __half* out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  out[i] = a[i] / b[i];
}
extern "C" __global__ void k_div_operator_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  out[i] = a[i] / b[i];
}
extern "C" __global__ void k_div_operator_f16x2(const __half2* a, const __half2* b, __half2* out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  out[i] = a[i] / b[i];
}
extern "C" __device__ __noinline__ __half hdiv_f16_ref(const __half& x, const __half& y) { return __hdiv(x, y); }
