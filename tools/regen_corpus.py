"""Regenerate the committed PTX of the compiled-code corpus (examples/cuda, examples/llvm).

    python tools/regen_corpus.py            # needs nvcc (CUDA 13) and llc-19 on PATH

nvcc -arch=sm_90 -ptx for every examples/cuda/*.cu (float_div.cu also with -use_fast_math,
-prec-div=false and -ftz=true; half_func.cu, half2_func.cu, calls.cu and half_variants.cu with -rdc=true so the device functions stay;
half_variants.cu with -lineinfo and, as half_variants_debug.ptx, with -G (a debug build: .local stack
frames, generic loads and stores), their .file names relative to examples/cuda), and
llc-19 -march=nvptx64 -mcpu=sm_75/sm_80/sm_90 for examples/llvm/*.ll. The PTX is committed; the
tests and tools/findings.py read the committed files, so neither needs the compilers.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CUDA = ROOT / "examples" / "cuda"
LLVM = ROOT / "examples" / "llvm"
NVCC_VARIANTS = {"float_div.cu": {"": [], "_fast_math": ["-use_fast_math"], "_prec_div_false": ["-prec-div=false"],
                                  "_ftz": ["-ftz=true"]},
                 "half_func.cu": {"": ["-rdc=true"]}, "half2_func.cu": {"": ["-rdc=true"]}, "calls.cu": {"": ["-rdc=true"]},
                 "half_variants.cu": {"": ["-rdc=true", "-lineinfo"], "_debug": ["-rdc=true", "-G"]}}
LLC_CPUS = ("sm_75", "sm_80", "sm_90")


def run(cmd: list[str]) -> None:
    """Run one compiler command, failing loudly."""
    print(" ".join(cmd))
    subprocess.run(cmd, check=True)


def main() -> int:
    """Regenerate everything the present compilers can; returns an exit status."""
    nvcc, llc = shutil.which("nvcc"), shutil.which("llc-19")
    if nvcc is None and llc is None:
        print("neither nvcc nor llc-19 found: nothing regenerated", file=sys.stderr)
        return 2
    if nvcc:
        for cu in sorted(CUDA.glob("*.cu")):
            for suffix, flags in NVCC_VARIANTS.get(cu.name, {"": []}).items():
                out = cu.with_name(cu.stem + suffix + ".ptx")
                run([nvcc, "-arch=sm_90", "-ptx", *flags, str(cu), "-o", str(out)])
                if "-lineinfo" in flags or "-G" in flags:
                    # .file names the source absolutely: keep it checkout-independent
                    out.write_text(out.read_text().replace(f'"{CUDA}/', '"'))
    if llc:
        for ll in sorted(LLVM.glob("*.ll")):
            for cpu in LLC_CPUS:
                out = ll.with_name(f"{ll.stem}_{cpu}.ptx")
                run([llc, "-march=nvptx64", f"-mcpu={cpu}", str(ll), "-o", str(out)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
