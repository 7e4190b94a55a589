// Device helpers that embed PTX in inline asm, the way TVM's T.ptx code, CUTLASS-style headers and
// hand-written kernels do. `tilecheck check examples/cuda/inline_asm.cu` judges the PTX inside
// (tilecheck.legality.inline_asm extracts it). Only __device__ helpers: nvcc -ptx of this file
// alone emits no function (tools/regen_corpus.py gives an empty module); include it to use them.
#include <cuda_bf16.h>

// TVM-style: one correctly rounded division, the PTX spelled out so no flag can change it.
__device__ __forceinline__ float div_rn(float a, float b) {
  float d;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

// the double reciprocal approximation: .ftz is mandatory on the f64 form
__device__ __forceinline__ double rcp_approx(double x) {
  double r;
  asm volatile("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  return r;
}

// two floats to a packed bf16x2, round to nearest even (the first source goes to the upper half)
__device__ __forceinline__ unsigned pack_bf16x2(float hi, float lo) {
  unsigned packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;"
      : "=r"(packed)
      : "f"(hi), "f"(lo));
  return packed;
}

// CUTLASS-style 128-bit read-only global load
__device__ __forceinline__ uint4 ldg_nc_v4(const void* ptr) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr));
  return v;
}

// y if c != 0, else x: a scoped predicate register and a predicated mov
__device__ __forceinline__ unsigned select_nonzero(unsigned c, unsigned x, unsigned y) {
  asm volatile(
      "{\n\t"
      ".reg .pred p;\n\t"
      "setp.ne.b32 p, %1, 0;\n\t"   // p = (c != 0)
      "@p mov.b32 %0, %2;\n"
      "}\n"
      : "+r"(x)
      : "r"(c), "r"(y));
  return x;
}

// a special register (%% is one % in the PTX) and an early-clobber output
__device__ __forceinline__ unsigned lane_plus(unsigned k) {
  unsigned out;
  asm volatile("mov.u32 %0, %%laneid;\n\t"
               "add.u32 %0, %0, %1;"
               : "=&r"(out)
               : "r"(k));
  return out;
}

// the same division as a macro (continuation lines)
#define DIV_RN_F32(d, a, b) \
  asm("div.rn.f32 %0, %1, %2;" \
      : "=f"(d) : "f"(a), "f"(b))
