// Byte data, as quantized code handles it: a char4 dequantized to float4 (one 32-bit load of four
// signed bytes, ld.global.nc.v4.u8, each sign-extended by cvt.s16.s8) and the usual saturating
// quantizer (round to nearest, clamp to [-128, 127], convert; one byte stored per element).
extern "C" __global__ void k_s8_to_f32_x4(const char4* __restrict__ q, float4* __restrict__ out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    char4 v = q[i];
    out[i] = make_float4((float)v.x, (float)v.y, (float)v.z, (float)v.w);
  }
}

extern "C" __global__ void k_f32_to_s8_sat(const float* __restrict__ a, signed char* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (signed char)fminf(fmaxf(rintf(a[i]), -128.0f), 127.0f);
}
