"""List the opcodes Triton emits for elementwise float kernels (the survey behind
tests/sim/test_triton_arith_independent.py's OPCODES).

    /tmp/triton-venv/bin/python tools/triton_opcodes.py [OUT_DIR]   # needs `pip install triton` (3.9)

Compiles, ahead of time for ``GPUTarget("cuda", 90, 32)`` with 4 warps, a / b, 1.0 / x,
tl.math.div_rn, tl.sqrt, tl.sqrt_rn, tl.math.rsqrt, tl.fma, a * b + c, a + b, a - b, a * b, tl.abs,
-x, tl.minimum, tl.maximum on float16, bfloat16, float32 and float64 pointers, and x.to(T) between
each pair of the four types; each scalar (BLOCK 128: one element per thread) and vectorised (BLOCK
1024 with ``tt.divisibility`` 16 on every pointer and on n: 128-bit accesses, packed x2
arithmetic). Prints each distinct opcode with its count and the kernels Triton refuses; with OUT_DIR,
writes each kernel's PTX there.
"""

from __future__ import annotations

import collections
import itertools
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated (and its warning silenced)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

TYPES = ["fp16", "bf16", "fp32", "fp64"]
ROOT = Path(__file__).resolve().parent.parent


def _offsets(BLOCK):
    return tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def k_unary(a, o, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    """out = OP(x) for the unary operations."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m)
    if OP == "rcp":
        y = 1.0 / x
    elif OP == "sqrt":
        y = tl.sqrt(x)
    elif OP == "sqrt_rn":
        y = tl.sqrt_rn(x)
    elif OP == "rsqrt":
        y = tl.math.rsqrt(x)
    elif OP == "abs":
        y = tl.abs(x)
    elif OP == "neg":
        y = -x
    else:  # "cvt": to the output's element type
        y = x.to(o.dtype.element_ty)
    tl.store(o + offs, y, mask=m)


@triton.jit
def k_binary(a, b, o, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    """out = OP(x, y) for the binary operations."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m)
    y = tl.load(b + offs, mask=m)
    if OP == "div":
        r = x / y
    elif OP == "div_rn":
        r = tl.math.div_rn(x, y)
    elif OP == "add":
        r = x + y
    elif OP == "sub":
        r = x - y
    elif OP == "mul":
        r = x * y
    elif OP == "min":
        r = tl.minimum(x, y)
    else:  # "max"
        r = tl.maximum(x, y)
    tl.store(o + offs, r, mask=m)


@triton.jit
def k_ternary(a, b, c, o, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    """out = tl.fma(x, y, z) or x * y + z."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m)
    y = tl.load(b + offs, mask=m)
    z = tl.load(c + offs, mask=m)
    if OP == "fma":
        r = tl.fma(x, y, z)
    else:  # "muladd"
        r = x * y + z
    tl.store(o + offs, r, mask=m)


OPS = {k_unary: ["rcp", "sqrt", "sqrt_rn", "rsqrt", "abs", "neg"],
       k_binary: ["div", "div_rn", "add", "sub", "mul", "min", "max"], k_ternary: ["fma", "muladd"]}


def compile_one(kernel, pointer_types: list[str], op: str, vectorised: bool) -> str:
    """The PTX of ``kernel`` for ``op`` on pointers of ``pointer_types`` (then n: i32)."""
    names = kernel.arg_names
    signature = dict(zip(names, ["*" + t for t in pointer_types] + ["i32"]))
    signature.update(OP="constexpr", BLOCK="constexpr")
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(pointer_types) + 1)} if vectorised else {}
    src = ASTSource(fn=kernel, signature=signature, constexprs={"OP": op, "BLOCK": 1024 if vectorised else 128},
                    attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]


def jobs():
    """(name, kernel, pointer types, op, vectorised) of every kernel compiled."""
    for kernel, ops in OPS.items():
        arity = len(kernel.arg_names) - 4  # pointers in, then out, n, OP, BLOCK
        for op, t, vec in itertools.product(ops, TYPES, (False, True)):
            yield f"{op}_{t}_{'v' if vec else 's'}", kernel, [t] * (arity + 1), op, vec
    for s, d, vec in itertools.product(TYPES, TYPES, (False, True)):
        if s != d:
            yield f"cvt_{s}_to_{d}_{'v' if vec else 's'}", k_unary, [s, d], "cvt", vec


_OPCODE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_.]*)\s", re.M)


def main(argv: list[str]) -> int:
    """Compile every job, print the opcodes; returns an exit status."""
    out = argv[0] if argv else None
    counts: collections.Counter = collections.Counter()
    refused = []
    for name, kernel, types, op, vec in jobs():
        try:
            ptx = compile_one(kernel, types, op, vec)
        except Exception as exc:  # Triton's compile errors: reported, the survey goes on
            # the message's last line says why (the first only locates the source)
            why = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
            refused.append(f"{name}: {why[-1] if why else type(exc).__name__}")
            continue
        ptx = ptx.replace(f'"{ROOT}/', '"')  # .file names this script absolutely: keep the PTX checkout-independent
        if out:
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, name + ".ptx"), "w", encoding="utf-8") as fh:
                fh.write(ptx)
        body = "\n".join(line.split("//")[0] for line in ptx.splitlines())
        counts.update(_OPCODE.findall(body))
    for opcode in sorted(counts):
        print(f"{counts[opcode]:6d} {opcode}")
    print(f"refused by Triton {triton.__version__} ({len(refused)}):")
    for line in refused:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
