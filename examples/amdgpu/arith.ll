; fdiv, llvm.sqrt, llvm.fma and 1.0 / x on half, float and double as AMDGPU kernels:
;   out[i] = op(a[i], b[i], c[i]) for i = workgroup.id.x * 256 + workitem.id.x < n.
; Assembly: tools/regen_corpus.py --amdgpu (llc-19 -march=amdgcn -mcpu=gfx90a/gfx942/gfx1100).
; Manifest and instruction inventory: examples/amdgpu/manifest.yaml, README.md.
;
; Variants (the kernel name's suffix):
;   (none)    no fast-math flags: LangRef promises the correctly rounded result
;   _afn      the afn flag: an approximation is allowed, no accuracy promised
;   _fpmath   !fpmath !{float 2.5}: the OpenCL 2.5 ulp bound on f32 fdiv (1.0 / x too) and sqrt
;   _ftz      "denormal-fp-math-f32"="preserve-sign,preserve-sign": the function runs with f32
;             denormals flushed (the default is "ieee"; f16/f64 stay IEEE either way)
; afn on llvm.fma is kept to show it changes nothing (there is no approximation of an fma).
;
; The workgroup size is fixed at 256 ("amdgpu-flat-work-group-size"="256,256") so the global
; index needs no dispatch packet or implicit argument load. The amdgpu-no-* attributes are the ones
; `opt-19 -passes=amdgpu-attributor` infers for these kernels (less amdgpu-no-agpr); llc does not
; run that pass, and without them it requests every implicit input and the prologue grows.
target triple = "amdgcn-amd-amdhsa"

; the global index; llc's AMDGPU always-inline pass inlines it, so no kernel makes a call
define internal i32 @index() alwaysinline {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 256
  %i = add i32 %base, %tid
  ret i32 %i
}

define amdgpu_kernel void @fdiv_f16(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i64 %k
  %vb = load half, ptr addrspace(1) %pb
  %r = fdiv half %va, %vb
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f16_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i64 %k
  %vb = load half, ptr addrspace(1) %pb
  %r = fdiv afn half %va, %vb
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f16(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %r = call half @llvm.sqrt.f16(half %va)
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f16_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %r = call afn half @llvm.sqrt.f16(half %va)
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f16(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i64 %k
  %vb = load half, ptr addrspace(1) %pb
  %pc = getelementptr inbounds half, ptr addrspace(1) %c, i64 %k
  %vc = load half, ptr addrspace(1) %pc
  %r = call half @llvm.fma.f16(half %va, half %vb, half %vc)
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f16_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i64 %k
  %vb = load half, ptr addrspace(1) %pb
  %pc = getelementptr inbounds half, ptr addrspace(1) %c, i64 %k
  %vc = load half, ptr addrspace(1) %pc
  %r = call afn half @llvm.fma.f16(half %va, half %vb, half %vc)
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f16(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %r = fdiv half 0xH3C00, %va
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f16_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %k
  %va = load half, ptr addrspace(1) %pa
  %r = fdiv afn half 0xH3C00, %va
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %k
  store half %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f32(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %r = fdiv float %va, %vb
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f32_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %r = fdiv afn float %va, %vb
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f32_fpmath(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %r = fdiv float %va, %vb, !fpmath !0
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f32(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = call float @llvm.sqrt.f32(float %va)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f32_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = call afn float @llvm.sqrt.f32(float %va)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f32_fpmath(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = call float @llvm.sqrt.f32(float %va), !fpmath !0
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f32(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i64 %k
  %vc = load float, ptr addrspace(1) %pc
  %r = call float @llvm.fma.f32(float %va, float %vb, float %vc)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f32_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i64 %k
  %vc = load float, ptr addrspace(1) %pc
  %r = call afn float @llvm.fma.f32(float %va, float %vb, float %vc)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f32(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = fdiv float 1.000000e+00, %va
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f32_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = fdiv afn float 1.000000e+00, %va
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f32_fpmath(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = fdiv float 1.000000e+00, %va, !fpmath !0
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f32_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %r = fdiv float %va, %vb
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f32_afn_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %r = fdiv afn float %va, %vb
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f32_fpmath_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %r = fdiv float %va, %vb, !fpmath !0
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f32_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = call float @llvm.sqrt.f32(float %va)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f32_afn_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = call afn float @llvm.sqrt.f32(float %va)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f32_fpmath_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = call float @llvm.sqrt.f32(float %va), !fpmath !0
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f32_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i64 %k
  %vc = load float, ptr addrspace(1) %pc
  %r = call float @llvm.fma.f32(float %va, float %vb, float %vc)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f32_afn_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  %vb = load float, ptr addrspace(1) %pb
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i64 %k
  %vc = load float, ptr addrspace(1) %pc
  %r = call afn float @llvm.fma.f32(float %va, float %vb, float %vc)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f32_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = fdiv float 1.000000e+00, %va
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f32_afn_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = fdiv afn float 1.000000e+00, %va
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f32_fpmath_ftz(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #1 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %va = load float, ptr addrspace(1) %pa
  %r = fdiv float 1.000000e+00, %va, !fpmath !0
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %k
  store float %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f64(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %pb = getelementptr inbounds double, ptr addrspace(1) %b, i64 %k
  %vb = load double, ptr addrspace(1) %pb
  %r = fdiv double %va, %vb
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fdiv_f64_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %pb = getelementptr inbounds double, ptr addrspace(1) %b, i64 %k
  %vb = load double, ptr addrspace(1) %pb
  %r = fdiv afn double %va, %vb
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f64(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %r = call double @llvm.sqrt.f64(double %va)
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @sqrt_f64_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %r = call afn double @llvm.sqrt.f64(double %va)
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f64(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %pb = getelementptr inbounds double, ptr addrspace(1) %b, i64 %k
  %vb = load double, ptr addrspace(1) %pb
  %pc = getelementptr inbounds double, ptr addrspace(1) %c, i64 %k
  %vc = load double, ptr addrspace(1) %pc
  %r = call double @llvm.fma.f64(double %va, double %vb, double %vc)
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @fma_f64_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %pb = getelementptr inbounds double, ptr addrspace(1) %b, i64 %k
  %vb = load double, ptr addrspace(1) %pb
  %pc = getelementptr inbounds double, ptr addrspace(1) %c, i64 %k
  %vc = load double, ptr addrspace(1) %pc
  %r = call afn double @llvm.fma.f64(double %va, double %vb, double %vc)
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f64(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %r = fdiv double 1.000000e+00, %va
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

define amdgpu_kernel void @rcp_f64_afn(ptr addrspace(1) %out, ptr addrspace(1) %a, i32 %n) #0 {
entry:
  %i = call i32 @index()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %k = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %k
  %va = load double, ptr addrspace(1) %pa
  %r = fdiv afn double 1.000000e+00, %va
  %po = getelementptr inbounds double, ptr addrspace(1) %out, i64 %k
  store double %r, ptr addrspace(1) %po
  br label %done
done:
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare half @llvm.sqrt.f16(half)
declare half @llvm.fma.f16(half, half, half)
declare float @llvm.sqrt.f32(float)
declare float @llvm.fma.f32(float, float, float)
declare double @llvm.sqrt.f64(double)
declare double @llvm.fma.f64(double, double, double)

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" "uniform-work-group-size"="true" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" }
attributes #1 = { "denormal-fp-math-f32"="preserve-sign,preserve-sign" "amdgpu-flat-work-group-size"="256,256" "uniform-work-group-size"="true" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" }

; the OpenCL accuracy of single-precision fdiv and sqrt, in ulp
!0 = !{float 2.5}
