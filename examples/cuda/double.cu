// Elementwise kernels around CUDA's double-precision division, reciprocal and square roots.
#define UNARY(NAME, EXPR) \
  extern "C" __global__ void NAME(const double* a, double* out) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; double x = a[i]; out[i] = (EXPR); }
#define BINARY(NAME, EXPR) \
  extern "C" __global__ void NAME(const double* a, const double* b, double* out) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; double x = a[i]; double y = b[i]; out[i] = (EXPR); }

BINARY(k_ddiv_rn, __ddiv_rn(x, y))
BINARY(k_ddiv_rz, __ddiv_rz(x, y))
BINARY(k_ddiv_ru, __ddiv_ru(x, y))
BINARY(k_ddiv_rd, __ddiv_rd(x, y))
UNARY(k_drcp_rn, __drcp_rn(x))
UNARY(k_drcp_rz, __drcp_rz(x))
UNARY(k_drcp_ru, __drcp_ru(x))
UNARY(k_drcp_rd, __drcp_rd(x))
UNARY(k_dsqrt_rn, __dsqrt_rn(x))
UNARY(k_dsqrt_rz, __dsqrt_rz(x))
UNARY(k_dsqrt_ru, __dsqrt_ru(x))
UNARY(k_dsqrt_rd, __dsqrt_rd(x))
UNARY(k_drsqrt, rsqrt(x))
