"""The instruction inventory of the AMD corpus (examples/amdgpu/arith_*.s), as Markdown.

    python tools/amdgpu_inventory.py > /tmp/inventory.md   # the tables of examples/amdgpu/README.md

For each kernel it prints the arithmetic between the loads and the store: the backward data slice
of the stored register (every instruction whose result reaches the store, stopping at the loads),
plus the MODE writes (s_denorm_mode, s_setreg*, s_round_mode), which change the arithmetic without
a register in between. Address arithmetic, waits and s_delay_alu hints are left out because they do
not feed the stored value. Then it counts every mnemonic, inside the slices and outside them (the
kernel scaffolding a front end must still parse). A reading aid, not a verifier: the slice knows only
the implicit operands these kernels use (the vcc read of v_div_fmas and of VOPD v_dual_cndmask, the
tied accumulator of v_fmac, the partial 16-bit write of v_fma_mixlo).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AMDGPU = ROOT / "examples" / "amdgpu"
CPUS = ("gfx90a", "gfx942", "gfx1100")
MODE_WRITES = ("s_denorm_mode", "s_setreg_imm32_b32", "s_setreg_b32", "s_round_mode")
HINTS = ("s_waitcnt", "s_delay_alu", "s_nop", "s_clause")   # scheduling only: no data, no mode
_REG = re.compile(r"\b(v|s)(?:(\d+)|\[(\d+):(\d+)\])|\b(vcc|exec|scc)(?:_lo|_hi)?\b")


def kernels(text: str) -> dict[str, list[str]]:
    """Each kernel's instruction lines (comments, labels and directives dropped), by symbol."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\w+):", line)
        if m and not line.startswith("."):
            name = m.group(1)
            out[name] = []
            continue
        code = line.split(";", 1)[0].strip()
        if name and code and not code.startswith(".") and not code.endswith(":"):
            out[name].append(code)
            if code == "s_endpgm":
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
    if "fmac" in op or "_mac_" in op or "fma_mix" in op:   # tied accumulator / partial 16-bit write
        uses |= regs(ops[0])
    if op.startswith(("v_div_fmas", "v_dual_cndmask")):  # implicit vcc reads (VOPC, VOP2 cndmask name it)
        uses.add("vcc")
    if op.startswith("s_cselect"):
        uses.add("scc")
    return defs, uses


def is_load(op: str) -> bool:
    """A memory load: where a slice stops (its result comes from outside the arithmetic)."""
    return bool(re.match(r"(global|buffer|flat)_load|s_load", op))


def arithmetic(body: list[str]) -> list[str]:
    """The instructions between the loads and the store that make the stored value, in order."""
    store = max(i for i, ins in enumerate(body) if re.match(r"(global|buffer|flat)_store", ins))
    live, keep = regs(split(body[store])[1][1]), []
    for ins in reversed(body[:store]):
        op, ops = split(ins)
        if op in MODE_WRITES:
            keep.append(ins)
            continue
        if op in HINTS or op.startswith("s_waitcnt") or not ops:
            continue
        defs, uses = defs_uses(op, ops)
        if is_load(op):
            live -= defs
            continue
        if defs & live:
            live = (live - defs) | uses
            keep.append(ins)
    return keep[::-1]


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


def main() -> int:
    """Print the inventory."""
    sys.stdout.write(inventory())
    return 0


if __name__ == "__main__":
    sys.exit(main())
