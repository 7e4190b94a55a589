// Sine, cosine and the hyperbolic tangent as CUDA code written for speed spells them: the __sinf/
// __cosf intrinsics (sin.approx.ftz.f32, cos.approx.ftz.f32), the full-range sinf (no approximate
// instruction: a polynomial, Payne-Hanek's reduction for large arguments) and tanh.approx.f32 in
// inline asm (no intrinsic exposes it). Each is checked against the PTX form whose bound it is
// meant to meet.
extern "C" __global__ void k_fast_sinf(const float *a, float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = __sinf(a[i]);
}

extern "C" __global__ void k_fast_cosf(const float *a, float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = __cosf(a[i]);
}

extern "C" __global__ void k_sinf(const float *a, float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = sinf(a[i]);
}

extern "C" __global__ void k_tanh_approx(const float *a, float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(a[i]));
    o[i] = r;
  }
}
