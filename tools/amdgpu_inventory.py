"""The instruction inventory of the AMD corpus (examples/amdgpu/arith_*.s), as Markdown.

    python tools/amdgpu_inventory.py > /tmp/inventory.md   # the tables of examples/amdgpu/README.md
    python tools/amdgpu_inventory.py --triton              # those of examples/amdgpu/triton/README.md

For each kernel it prints the arithmetic between the loads and the store: the backward data slice
of the stored register (every instruction whose result reaches the store, stopping at the loads),
plus the MODE writes (s_denorm_mode, s_setreg*, s_round_mode), which change the arithmetic without
a register in between. Address arithmetic, waits and s_delay_alu hints are left out because they do
not feed the stored value. Then it counts every mnemonic, inside the slices and outside them (the
kernel scaffolding a front end must still parse). A reading aid, not a verifier: the slice knows only
the implicit operands these kernels use (the vcc read of v_div_fmas and of VOPD v_dual_cndmask, the
tied accumulator of v_fmac, the partial 16-bit write of v_fma_mixlo).

Triton's kernels (--triton) store several elements per thread, in several stores or in one vector
store, and put blocks after the first s_endpgm: a kernel's body runs to its .Lfunc_end label, and
each stored register (a 64-bit pair for fp64) is sliced on its own, backwards in program order.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AMDGPU = ROOT / "examples" / "amdgpu"
TRITON_AMDGPU = AMDGPU / "triton"
CPUS = ("gfx90a", "gfx942", "gfx1100")
MODE_WRITES = ("s_denorm_mode", "s_setreg_imm32_b32", "s_setreg_b32", "s_round_mode")
HINTS = ("s_waitcnt", "s_delay_alu", "s_nop", "s_clause")   # scheduling only: no data, no mode
_REG = re.compile(r"\b(v|s)(?:(\d+)|\[(\d+):(\d+)\])|\b(vcc|exec|scc)(?:_lo|_hi)?\b")


def kernels(text: str, *, whole: bool = False) -> dict[str, list[str]]:
    """Each kernel's instruction lines (comments, labels and directives dropped), by symbol: up to
    the first s_endpgm, or with ``whole`` up to the function's .Lfunc_end label (Triton places
    blocks after an s_endpgm)."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\w+):", line)
        if m and not line.startswith("."):
            name = m.group(1)
            out[name] = []
            continue
        if whole and line.startswith(".Lfunc_end"):
            name = None
            continue
        code = line.split(";", 1)[0].strip()
        if name and code and not code.startswith(".") and not code.endswith(":"):
            out[name].append(code)
            if code == "s_endpgm" and not whole:
                name = None
    return out


def regs(operand: str) -> set[str]:
    """The 32-bit registers an operand names (v[2:3] is v2 and v3; vcc_lo is vcc)."""
    out = set()
    for m in _REG.finditer(operand):
        if m.group(5):
            out.add(m.group(5))
        elif m.group(2):
            out.add(m.group(1) + m.group(2))
        else:
            out.update(f"{m.group(1)}{r}" for r in range(int(m.group(3)), int(m.group(4)) + 1))
    return out


def split(ins: str) -> tuple[str, list[str]]:
    """Mnemonic and top-level comma-separated operands."""
    op, _, rest = ins.partition(" ")
    parts, depth, cur = [], 0, ""
    for ch in rest:
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return op, parts + ([cur.strip()] if cur.strip() else [])


def defs_uses(op: str, ops: list[str]) -> tuple[set[str], set[str]]:
    """Registers written and read by one instruction (the implicit ones these kernels use)."""
    if any("::" in o for o in ops):                 # gfx11 VOPD: two halves, each its dst first
        halves = [split(h.strip()) for h in (op + " " + ", ".join(ops)).split("::")]
        d, u = zip(*(defs_uses(o, rest) for o, rest in halves))
        return set().union(*d), set().union(*u)
    if op.startswith("v_cmpx"):                     # writes exec (gfx10+ _e32 names no destination)
        return {"exec"}, set().union(*map(regs, ops))
    if op.startswith("s_cmp"):
        return {"scc"}, set().union(*map(regs, ops))
    ndst = 2 if re.match(r"v_div_scale|v_add_co_u32|v_sub_co_u32|v_addc_co|v_add_co_ci|v_subb", op) else 1
    defs, uses = set().union(*map(regs, ops[:ndst])), set().union(*map(regs, ops[ndst:]))
    if "fmac" in op or "_mac_" in op or re.match(r"v_(fma|mad)_mix(lo|hi)", op):  # tied accumulator / 16-bit write
        uses |= regs(ops[0])
    if op.startswith(("v_div_fmas", "v_dual_cndmask")):  # implicit vcc reads (VOPC, VOP2 cndmask name it)
        uses.add("vcc")
    if op.startswith("s_cselect"):
        uses.add("scc")
    return defs, uses


def is_load(op: str) -> bool:
    """A memory load: where a slice stops (its result comes from outside the arithmetic)."""
    return bool(re.match(r"(global|buffer|flat)_load|s_load", op))


def is_store(ins: str) -> bool:
    """A memory store (its second operand is the stored data)."""
    return bool(re.match(r"(global|buffer|flat)_store", ins))


def backward_slice(body: list[str], store: int, live: set[str], loaded: frozenset[str] = frozenset()) -> list[int]:
    """Indices of the instructions before ``body[store]`` whose results reach ``live`` (stopping at
    loads), and of the MODE writes, in program order. A move of 0, or of a register in ``loaded``, into
    a register in ``loaded`` (the registers some load writes) stops the slice as a load does: it is
    the value a masked-off lane holds instead of the load (Triton's ``other``), not arithmetic."""
    keep = []
    for i in range(store - 1, -1, -1):
        op, ops = split(body[i])
        if op in MODE_WRITES:
            keep.append(i)
            continue
        if op in HINTS or op.startswith("s_waitcnt") or not ops:
            continue
        defs, uses = defs_uses(op, ops)
        if is_load(op) or (re.match(r"v_mov_b(32|64)", op) and defs <= loaded
                              and (ops[1] == "0" or (regs(ops[1]) and regs(ops[1]) <= loaded))):
            live = live - defs
            continue
        if defs & live:
            live = (live - defs) | uses
            keep.append(i)
    return keep[::-1]


def arithmetic(body: list[str]) -> list[str]:
    """The instructions between the loads and the store that make the stored value, in order."""
    store = max(i for i, ins in enumerate(body) if is_store(ins))
    return [body[i] for i in backward_slice(body, store, regs(split(body[store])[1][1]))]


def mnemonic(ins: str) -> str:
    """The mnemonic; a gfx11 dual issue (VOPD) as ``v_dual_x::v_dual_y``."""
    return "::".join(split(h.strip())[0] for h in ins.split("::"))


def base(op: str) -> str:
    """The mnemonic without its encoding suffix (v_rcp_f32_e32 -> v_rcp_f32), for the sequence table."""
    return re.sub(r"_(e32|e64|dpp|sdwa)$", "", op)


def compact(ops: list[str]) -> str:
    """``a; a; b`` as ``a x2; b``."""
    out: list[list] = []
    for op in ops:
        if out and out[-1][0] == op:
            out[-1][1] += 1
        else:
            out.append([op, 1])
    return "; ".join(op if n == 1 else f"{op} x{n}" for op, n in out)


def inventory(root: Path = AMDGPU) -> str:
    """The README's inventory: a sequence table, the mnemonic counts, the scaffolding line."""
    seqs: dict[str, dict[str, str]] = {}
    inside, outside, kernels_with = Counter(), Counter(), Counter()
    for cpu in CPUS:
        for name, body in kernels((root / f"arith_{cpu}.s").read_text()).items():
            arith = arithmetic(body)
            mnems = [mnemonic(i) for i in arith]
            seqs.setdefault(name, {})[cpu] = compact([base(m) for m in mnems])
            inside.update(mnems)
            kernels_with.update(set(mnems))
            rest = Counter(mnemonic(i) for i in body)
            rest.subtract(mnems)
            outside.update(+rest)
    out = ["| kernel | targets | instructions (between the loads and the store) |", "|---|---|---|"]
    for name, by_cpu in seqs.items():
        groups: dict[str, list[str]] = {}
        for cpu, seq in by_cpu.items():
            groups.setdefault(seq, []).append(cpu)
        for seq, cpus in groups.items():
            label = "all" if len(cpus) == len(CPUS) else ", ".join(cpus)
            out.append(f"| `{name}` | {label} | {seq} |")
    out += ["", f"| mnemonic | count | kernels (of {sum(len(v) for v in seqs.values())}) |", "|---|---|---|"]
    out += [f"| `{op}` | {n} | {kernels_with[op]} |" for op, n in sorted(inside.items(), key=lambda kv: (-kv[1], kv[0]))]
    out += ["", "Scaffolding (outside the slices, all kernels and targets): "
            + ", ".join(f"`{op}` {n}" for op, n in sorted(outside.items(), key=lambda kv: (-kv[1], kv[0])))]
    return "\n".join(out) + "\n"


STORE_BITS = {"byte": 8, "short": 16, "short_d16_hi": 16, "dword": 32, "dwordx2": 64, "dwordx3": 96, "dwordx4": 128}
ELEMENT_BITS = {"fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64}


def stored_units(data: str, element_bits: int) -> list[set[str]]:
    """The registers of a store's data operand, one set per unit sliced: a 64-bit pair for 64-bit
    elements, else one 32-bit register (two packed 16-bit elements in a wider store)."""
    names = sorted(regs(data), key=lambda r: int(r[1:]))
    step = 2 if element_bits == 64 else 1
    return [set(names[i:i + step]) for i in range(0, len(names), step)]


def triton_slices(body: list[str], element_bits: int) -> tuple[list[str], list[list[int]]]:
    """The store mnemonics of a Triton kernel and, per stored unit, its slice (instruction indices)."""
    stores, slices = [], []
    loaded = frozenset().union(*(defs_uses(*split(ins))[0] for ins in body if is_load(split(ins)[0])))
    for i, ins in enumerate(body):
        if is_store(ins):
            op, ops = split(ins)
            stores.append(op)
            slices += [backward_slice(body, i, unit, loaded) for unit in stored_units(ops[1], element_bits)]
    return stores, slices


def _triton_entries(root: Path) -> list[dict]:
    import yaml

    return yaml.safe_load((root / "manifest.yaml").read_text())["entries"]


def triton_inventory(root: Path = TRITON_AMDGPU) -> str:
    """examples/amdgpu/triton/README.md's inventory: per kernel its stores (and the elements one thread
    stores), the distinct slices of its stored units, the mnemonic counts and the scaffolding line."""
    out = ["| file | stores per thread (elements) | instructions of one stored unit (between the loads and the store) |",
           "|---|---|---|"]
    inside, outside, kernels_with, total = Counter(), Counter(), Counter(), 0
    for entry in _triton_entries(root):
        bits = ELEMENT_BITS[entry["dtype"]]
        body = kernels((ROOT / entry["file"]).read_text(), whole=True)[entry["entry"]]
        stores, slices = triton_slices(body, bits)
        total += 1
        elements = sum(STORE_BITS[op.split("_store_", 1)[1]] for op in stores) // bits
        seqs: Counter = Counter()
        used: set[int] = set()
        for sl in slices:
            mnems = [mnemonic(body[i]) for i in sl]
            seqs[compact([base(m) for m in mnems])] += 1
            inside.update(mnemonic(body[i]) for i in sl if i not in used)
            used |= set(sl)
        kernels_with.update({mnemonic(body[i]) for i in used})
        rest = Counter(mnemonic(body[i]) for i in range(len(body)) if i not in used)
        outside.update(rest)
        store_text = "; ".join(f"{op} x{n}" if n > 1 else op for op, n in Counter(stores).items())
        cell = "<br>".join(seq if n == 1 else f"({n}x) {seq}" for seq, n in seqs.items())
        out.append(f"| `{Path(entry['file']).name}` | {store_text} ({elements}) | {cell} |")
    out += ["", f"| mnemonic | count | kernels (of {total}) |", "|---|---|---|"]
    out += [f"| `{op}` | {n} | {kernels_with[op]} |" for op, n in sorted(inside.items(), key=lambda kv: (-kv[1], kv[0]))]
    out += ["", "Scaffolding (outside the slices, all kernels): "
            + ", ".join(f"`{op}` {n}" for op, n in sorted(outside.items(), key=lambda kv: (-kv[1], kv[0])))]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the inventory (--triton: the Triton AMD corpus's)."""
    argv = sys.argv[1:] if argv is None else argv
    sys.stdout.write(triton_inventory() if argv == ["--triton"] else inventory())
    return 0


if __name__ == "__main__":
    sys.exit(main())
