; fdiv, llvm.sqrt and llvm.fma on half, bfloat, float and double as NVPTX device functions.
; PTX: tools/regen_corpus.py (llc-19 -march=nvptx64 -mcpu=sm_75/sm_80/sm_90). LangRef: fdiv, llvm.sqrt
; and llvm.fma return the correctly rounded (round-to-nearest-even) result; no fast-math flags here.
target triple = "nvptx64-nvidia-cuda"

define half @fdiv_f16(half %a, half %b) { %r = fdiv half %a, %b
  ret half %r }
define half @sqrt_f16(half %a) { %r = call half @llvm.sqrt.f16(half %a)
  ret half %r }
define half @fma_f16(half %a, half %b, half %c) { %r = call half @llvm.fma.f16(half %a, half %b, half %c)
  ret half %r }
define bfloat @fdiv_bf16(bfloat %a, bfloat %b) { %r = fdiv bfloat %a, %b
  ret bfloat %r }
define bfloat @sqrt_bf16(bfloat %a) { %r = call bfloat @llvm.sqrt.bf16(bfloat %a)
  ret bfloat %r }
define bfloat @fma_bf16(bfloat %a, bfloat %b, bfloat %c) { %r = call bfloat @llvm.fma.bf16(bfloat %a, bfloat %b, bfloat %c)
  ret bfloat %r }
define float @fdiv_f32(float %a, float %b) { %r = fdiv float %a, %b
  ret float %r }
define float @sqrt_f32(float %a) { %r = call float @llvm.sqrt.f32(float %a)
  ret float %r }
define float @fma_f32(float %a, float %b, float %c) { %r = call float @llvm.fma.f32(float %a, float %b, float %c)
  ret float %r }
define double @fdiv_f64(double %a, double %b) { %r = fdiv double %a, %b
  ret double %r }
define double @sqrt_f64(double %a) { %r = call double @llvm.sqrt.f64(double %a)
  ret double %r }
define double @fma_f64(double %a, double %b, double %c) { %r = call double @llvm.fma.f64(double %a, double %b, double %c)
  ret double %r }

declare half @llvm.sqrt.f16(half)
declare half @llvm.fma.f16(half, half, half)
declare bfloat @llvm.sqrt.bf16(bfloat)
declare bfloat @llvm.fma.bf16(bfloat, bfloat, bfloat)
declare float @llvm.sqrt.f32(float)
declare float @llvm.fma.f32(float, float, float)
declare double @llvm.sqrt.f64(double)
declare double @llvm.fma.f64(double, double, double)
