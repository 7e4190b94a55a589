// a / b on float, four elements per thread, the loop unrolled by `#pragma unroll` as throughput
// code writes it: thread t of a block handles t, t + blockDim.x, t + 2 blockDim.x, t + 3 blockDim.x
// of its block's 4 * blockDim.x elements (coalesced), each guarded by the bound.
extern "C" __global__ void k_fdiv_unroll4(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ out, int n) {
  int base = blockIdx.x * blockDim.x * 4 + threadIdx.x;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    int i = base + j * blockDim.x;
    if (i < n) out[i] = a[i] / b[i];
  }
}
