// a / b on float in a grid-stride loop: any grid covers any n, each thread taking every
// (gridDim.x * blockDim.x)-th element.
extern "C" __global__ void k_fdiv_grid_stride(const float* __restrict__ a, const float* __restrict__ b,
                                              float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = a[i] / b[i];
}
