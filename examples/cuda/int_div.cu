// Integer division and remainder, C's operators: div.s32 on int, rem.u32 on unsigned. The PTX ISA leaves
// the result of a zero divisor unspecified (and rem's sign for negative operands machine-dependent):
// those inputs are unknown, the others are checked against the integer arithmetic of the operands.
extern "C" __global__ void k_idiv_s32(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] / b[i];
}
// C's remainder of unsigned operands: rem.u32
extern "C" __global__ void k_irem_u32(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] % b[i];
}
