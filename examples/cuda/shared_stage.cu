// a / b on float staged through shared memory: each block copies its 256 elements of a and b from
// global to __shared__ arrays, synchronises, divides from shared memory and stores to global (the
// tile-load pattern of kernels that reuse operands; here each is used once).
#define TILE 256

extern "C" __global__ void __launch_bounds__(TILE) k_fdiv_shared(const float* __restrict__ a,
                                                                 const float* __restrict__ b,
                                                                 float* __restrict__ out, int n) {
  __shared__ float sa[TILE], sb[TILE];
  int i = blockIdx.x * TILE + threadIdx.x;
  sa[threadIdx.x] = i < n ? a[i] : 1.0f;
  sb[threadIdx.x] = i < n ? b[i] : 1.0f;
  __syncthreads();
  if (i < n) out[i] = sa[threadIdx.x] / sb[threadIdx.x];
}
