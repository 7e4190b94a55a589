// a / b on float through float4: one 128-bit load per operand and one 128-bit store per thread
// (ld.global.v4.f32 / st.global.v4.f32), four quotients per thread. The pointers must be 16-byte
// aligned and the count a multiple of 4, as vectorised CUDA code assumes.
extern "C" __global__ void k_fdiv_float4(const float4* __restrict__ a, const float4* __restrict__ b,
                                         float4* __restrict__ out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 x = a[i], y = b[i];
    out[i] = make_float4(x.x / y.x, x.y / y.y, x.z / y.z, x.w / y.w);
  }
}
