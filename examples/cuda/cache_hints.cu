// Loads and stores with cache hints, as CUDA code written for speed spells them: the __ldcs/__ldlu/
// __ldcg/__ldcv/__ldca and __stcs/__stwt/__stcg intrinsics (ld.global.cs/.lu/.cg/.cv/.ca, st.global.
// cs/.wt/.cg), an L2 prefetch and an L1-bypassing read-only load in inline asm. None changes the bits
// moved: each kernel is checked against the division it computes.
#include <cuda_fp16.h>

extern "C" __global__ void k_fdiv_ldcs(const float* a, const float* b, float* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcs(o + i, __ldcs(a + i) / __ldlu(b + i));
}

extern "C" __global__ void k_fdiv_ldcg_float4(const float4* a, const float4* b, float4* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 x = __ldcg(a + i), y = __ldcv(b + i);
    __stwt(o + i, make_float4(x.x / y.x, x.y / y.y, x.z / y.z, x.w / y.w));
  }
}

extern "C" __global__ void k_fdiv_prefetch_no_allocate(const float* a, const float* b, float* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    asm volatile("prefetch.global.L2 [%0];" :: "l"(a + i));
    float x;
    asm volatile("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(x) : "l"(a + i));
    o[i] = x / __ldg(b + i);
  }
}

extern "C" __global__ void k_h2div_ldca_stcg(const __half2* a, const __half2* b, __half2* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcg(o + i, __h2div(__ldca(a + i), __ldcs(b + i)));
}
