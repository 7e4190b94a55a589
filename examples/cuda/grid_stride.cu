#include <cuda_bf16.h>

// a / b on float in a grid-stride loop: any grid covers any n, each thread taking every
// (gridDim.x * blockDim.x)-th element.
extern "C" __global__ void k_fdiv_grid_stride(const float* __restrict__ a, const float* __restrict__ b,
                                              float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = a[i] / b[i];
}
// the same loop unrolled four times (#pragma unroll 4): four stores a thread, the k-th iteration's
// at element i + k * (gridDim.x * blockDim.x), each after its own exit test
extern "C" __global__ void k_fdiv_grid_stride_unroll4(const float* __restrict__ a, const float* __restrict__ b,
                                                      float* __restrict__ out, int n) {
#pragma unroll 4
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = a[i] / b[i];
}
// __fdividef in both shapes: the fast division misrounds the same inputs whichever copy of the
// loop body divides them
extern "C" __global__ void k_fdividef_grid_stride(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = __fdividef(a[i], b[i]);
}
extern "C" __global__ void k_fdividef_grid_stride_unroll4(const float* __restrict__ a, const float* __restrict__ b,
                                                          float* __restrict__ out, int n) {
#pragma unroll 4
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = __fdividef(a[i], b[i]);
}
// h2sqrt on bfloat162 pairs in a grid-stride loop unrolled twice: n2 counts pairs, each store
// writes two elements, the k-th iteration's at pair i + k * (gridDim.x * blockDim.x)
extern "C" __global__ void k_h2sqrt_bf16_grid_stride_unroll2(const __nv_bfloat162* __restrict__ a,
                                                             __nv_bfloat162* __restrict__ out, int n2) {
#pragma unroll 2
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x) out[i] = h2sqrt(a[i]);
}
// the stride held in a variable before an unrolled loop: nvcc 13 counts the iterations with a
// div.u32 by the stride (the remainder loop runs (count mod 4) iterations, then groups of four)
extern "C" __global__ void k_fdiv_grid_stride_unroll4_counted(const float* a, const float* b, float* out, int n) {
  int stride = blockDim.x * gridDim.x;
#pragma unroll 4
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = a[i] / b[i];
}
// the count in 64 bits (size_t, long long), as code for large arrays writes it: the count is a
// .u64 parameter, the type of a pointer (compared, never dereferenced: a count); nvcc 13 counts the
// iterations with div.u64, or div.u32 when both fit in 32 bits, and unrolls by 4 after a remainder loop
extern "C" __global__ void k_fdiv_grid_stride_size_t(const float* a, const float* b, float* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) out[i] = a[i] / b[i];
}
extern "C" __global__ void k_fdividef_grid_stride_i64(const float* a, const float* b, float* out, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = __fdividef(a[i], b[i]);
}
