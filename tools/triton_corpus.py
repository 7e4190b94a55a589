"""Generate the committed Triton corpus (examples/triton/*.ptx and its manifest).

    /tmp/triton-venv/bin/python tools/triton_corpus.py      # needs `pip install triton` (3.9)

Triton compiles ahead of time without a GPU (``triton.compile`` on an ``ASTSource`` for
``GPUTarget("cuda", 90, 32)``). Each kernel is elementwise and scalar: BLOCK = 128 with
num_warps = 4, so every thread computes one element with one ``ld.global.b32``/``.b16`` per
operand (no ``tt.divisibility`` attributes, so no vector accesses). Triton is not a dependency of
tilecheck: the PTX is committed, and the tests read the committed files.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated (and its warning silenced)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "triton"
BLOCK = 128
NUM_WARPS = 4


@triton.jit
def div_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = a / b."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a / b, mask=mask)


@triton.jit
def div_rn_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.math.div_rn(a, b)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.math.div_rn(a, b), mask=mask)


@triton.jit
def sqrt_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sqrt(a)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt(a), mask=mask)


@triton.jit
def sqrt_rn_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.sqrt_rn(a)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt_rn(a), mask=mask)


# file stem -> (kernel, element type, Triton source of the operation)
KERNELS = {
    "div_f32": (div_kernel, "fp32", "a / b"),
    "div_rn_f32": (div_rn_kernel, "fp32", "tl.math.div_rn(a, b)"),
    "sqrt_f32": (sqrt_kernel, "fp32", "tl.sqrt(a)"),
    "sqrt_rn_f32": (sqrt_rn_kernel, "fp32", "tl.sqrt_rn(a)"),
    "div_f16": (div_kernel, "fp16", "a / b"),
    "div_bf16": (div_kernel, "bf16", "a / b"),
}


def compile_one(kernel, dtype: str) -> tuple[str, str]:
    """(entry name, PTX text) of ``kernel`` on ``dtype`` pointers for sm_90, BLOCK and NUM_WARPS above."""
    names = kernel.arg_names
    signature = {name: ("i32" if name == "n" else "constexpr" if name == "BLOCK" else "*" + dtype) for name in names}
    src = ASTSource(fn=kernel, signature=signature, constexprs={"BLOCK": BLOCK})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": NUM_WARPS})
    return compiled.metadata.name, compiled.asm["ptx"]


def main() -> int:
    """Compile every kernel of KERNELS into examples/triton and write the manifest; returns an exit status."""
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [f"# Triton {triton.__version__} PTX for sm_90 (GPUTarget(\"cuda\", 90, 32)), BLOCK = {BLOCK},",
             f"# num_warps = {NUM_WARPS} (one element per thread, scalar accesses), FP fusion on",
             f"# (TRITON_DEFAULT_FP_FUSION={os.environ['TRITON_DEFAULT_FP_FUSION']}); written by",
             "# `python tools/triton_corpus.py` (pip install triton; no GPU needed). The tests read these",
             "# files: tilecheck does not depend on Triton.",
             f"triton: \"{triton.__version__}\"",
             "entries:"]
    for stem, (kernel, dtype, source) in KERNELS.items():
        entry, ptx = compile_one(kernel, dtype)
        # .file names this script absolutely: keep the corpus checkout-independent
        ptx = ptx.replace(f'"{ROOT}/', '"')
        (OUT / f"{stem}.ptx").write_text(ptx)
        print(f"{stem}.ptx: {entry} ({dtype}: {source})")
        lines.append(f"  - {{file: examples/triton/{stem}.ptx, entry: {entry}, dtype: {dtype}, source: \"{source}\"}}")
    (OUT / "manifest.yaml").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
