// a / b on float: compiled with default flags, -use_fast_math, -prec-div=false and -ftz=true.
extern "C" __global__ void k_fdiv_op(const float* a, const float* b, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = a[i] / b[i]; }
