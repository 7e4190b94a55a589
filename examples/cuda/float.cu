// Elementwise kernels around CUDA's single-precision division, reciprocal and square roots.
#define UNARY(NAME, EXPR) \
  extern "C" __global__ void NAME(const float* a, float* out) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; float x = a[i]; out[i] = (EXPR); }
#define BINARY(NAME, EXPR) \
  extern "C" __global__ void NAME(const float* a, const float* b, float* out) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; float x = a[i]; float y = b[i]; out[i] = (EXPR); }

BINARY(k_fdividef, __fdividef(x, y))
BINARY(k_fdiv_rn, __fdiv_rn(x, y))
BINARY(k_fdiv_rz, __fdiv_rz(x, y))
BINARY(k_fdiv_ru, __fdiv_ru(x, y))
BINARY(k_fdiv_rd, __fdiv_rd(x, y))
UNARY(k_frcp_rn, __frcp_rn(x))
UNARY(k_frcp_rz, __frcp_rz(x))
UNARY(k_frcp_ru, __frcp_ru(x))
UNARY(k_frcp_rd, __frcp_rd(x))
UNARY(k_fsqrt_rn, __fsqrt_rn(x))
UNARY(k_fsqrt_rz, __fsqrt_rz(x))
UNARY(k_fsqrt_ru, __fsqrt_ru(x))
UNARY(k_fsqrt_rd, __fsqrt_rd(x))
UNARY(k_frsqrt_rn, __frsqrt_rn(x))
UNARY(k_sqrtf_default, sqrtf(x))
UNARY(k_rsqrtf_default, rsqrtf(x))
