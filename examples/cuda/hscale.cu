// Scaling a __half array by a __half argument: the argument reaches the kernel as two aligned bytes
// (.param .align 2 .b8 a[2]), read by value like a float's .param .f32.
#include <cuda_fp16.h>

extern "C" __global__ void hscale(const __half* __restrict__ x, __half* __restrict__ y, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hmul(x[i], a);
}
