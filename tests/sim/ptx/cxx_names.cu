// C++ kernels under mangled names (nvcc -arch=sm_90 -ptx cxx_names.cu): a function template with two
// instantiations, a plain non-extern-"C" kernel, a namespaced one and two overloads of one name.
template <typename T>
__global__ void tdiv(const T* a, const T* b, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] / b[i];
}
template __global__ void tdiv<float>(const float*, const float*, float*, int);
template __global__ void tdiv<double>(const double*, const double*, double*, int);

__global__ void div_gs(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __fdiv_rn(a[i], b[i]);
}

namespace ns {
__global__ void rcp(const float* a, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __frcp_rn(a[i]);
}
}  // namespace ns

__global__ void over(const float* a, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __fsqrt_rn(a[i]);
}
__global__ void over(const double* a, double* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __dsqrt_rn(a[i]);
}
