// __half division eight lanes per thread: one 128-bit uint4 load per operand reinterpreted as four
// __half2, __h2div on each pair, one 128-bit store (the ld.global.v4.u32 pattern of hand-vectorised
// f16 code).
#include <cuda_fp16.h>

extern "C" __global__ void k_h2div_uint4(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                         uint4* __restrict__ out, int n8) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n8) {
    uint4 x = a[i], y = b[i], r;
    const __half2* hx = reinterpret_cast<const __half2*>(&x);
    const __half2* hy = reinterpret_cast<const __half2*>(&y);
    __half2* hr = reinterpret_cast<__half2*>(&r);
#pragma unroll
    for (int j = 0; j < 4; ++j) hr[j] = __h2div(hx[j], hy[j]);
    out[i] = r;
  }
}
