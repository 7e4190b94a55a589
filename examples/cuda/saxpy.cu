// BLAS's saxpy as CUDA samples write it: y = a * x + y in place (y is read and written), the scalar
// a passed by value; with nvcc's default -fmad=true the multiply-add is one fma.rn.f32.
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// the same, four elements per thread through float4 (n counts float4s)
extern "C" __global__ void saxpy4(int n4, float a, const float4* __restrict__ x, float4* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 u = x[i], v = y[i];
    v.x = a * u.x + v.x;
    v.y = a * u.y + v.y;
    v.z = a * u.z + v.z;
    v.w = a * u.w + v.w;
    y[i] = v;
  }
}
