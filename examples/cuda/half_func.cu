// The same operations as non-inlined device functions (the .func ABI: operands in, result out).
// Compiled with -rdc=true so that nvcc keeps the functions.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __device__ __noinline__ __half hdiv_f16_func(__half x, __half y) { return __hdiv(x, y); }
extern "C" __device__ __noinline__ __nv_bfloat16 hdiv_bf16_func(__nv_bfloat16 x, __nv_bfloat16 y) { return __hdiv(x, y); }
extern "C" __device__ __noinline__ __half hsqrt_f16_func(__half x) { return hsqrt(x); }
