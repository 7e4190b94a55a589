// Kernels without extern "C", so their .entry names are C++-mangled: a template instantiated for
// float and double (tdiv<float>, tdiv<double>) and a plain function (sqrt_kernel(const float*,
// float*)). Compiled with -lineinfo (.loc lines, .file, a DWARF .section).
template <typename T>
__global__ void tdiv(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[i] / b[i];
}
template __global__ void tdiv<float>(const float*, const float*, float*);
template __global__ void tdiv<double>(const double*, const double*, double*);

__global__ void sqrt_kernel(const float* a, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = sqrtf(a[i]);
}
