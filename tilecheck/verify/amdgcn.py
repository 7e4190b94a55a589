"""Verify the AMDGCN that LLVM and Triton write: ``tilecheck verify FILE.s --entry K --against REF``.

The kernel is run by the wave simulator (:mod:`tilecheck.amdgpu.machine`) with symbolic data to
find its layout, then every stored element's expression is evaluated over the inputs
(:mod:`tilecheck.amdgpu.evaluate`) for every result each approximate instruction's contract allows
(``--semantics documented|observed`` picks the spec variant of every instruction).

**Layout.** Discovery runs three launches: one workgroup with a large count (the elements one
workgroup stores: ``P``, which must be ``0..P-1`` of the output); workgroups 0 and 1 with a count
of ``1.5 P + 1`` (a partial last workgroup: exactly the first ``count`` elements are stored, each
once); and workgroup ``FAR`` alone (its elements follow at ``FAR * P``). The buffer the kernel
stores to is the output; the buffers its stored elements depend on are the operands, in parameter
order; a pointer never read is unused; the one integer parameter is the count. ``--params`` states
the roles instead (``in,in,out,n``), and the runs must agree with it. Every stored element must
depend on its own element of each operand and nothing else (:func:`~tilecheck.amdgpu.symbolic.demanded_loads`),
else the kernel is refused as not elementwise.

**Classes.** Elements whose expressions have equal signatures (the same instructions, modes and
constants on the same relative loads) are one function; one element of each class is evaluated
over every input. An element's class is found in the discovery launches: a kernel whose code
depended on the workgroup index beyond its addressing in other workgroups than 0, 1 and FAR would
not be seen (the report names the workgroups run).

**Verdicts** as for PTX (:class:`tilecheck.verify.compiled.Outcome`): verified (every input, every
allowed choice equals REF), counterexample, or unknown where a contract could only be sampled and
nothing failed (V_RCP_F64's 2^29 ulp: its lanes are counted as unknown, not as verified).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field

import numpy as np

from tilecheck.amdgpu.asm import parse_asm_file
from tilecheck.amdgpu.evaluate import evaluate_parts
from tilecheck.amdgpu.machine import BUFFER_BASE, BUFFER_STRIDE, Buffer, launch, prepare_function
from tilecheck.amdgpu.steps import OutsideBuffersError, UnsupportedAmdgcnError
from tilecheck.amdgpu.symbolic import OP, arg_nodes, demanded_loads, order, signature
from tilecheck.errors import UsageError
from tilecheck.spec.contract import applied_reading
from tilecheck.verify import compiled
from tilecheck.verify.compiled import BlockResult, Outcome, Tally

FAR = 4099
BIG_COUNT = 1 << 28
EXHAUSTIVE_BLOCK = 1 << 18  # four divisors of a 16-bit binary run: a contract's enumeration costs per call
SEMANTICS = ("observed", "documented")


@dataclass
class ElementClass:
    """Elements that compute one function: the representative's ``parts`` and the ``count`` of
    elements seen in discovery."""

    parts: list
    element: int
    count: int = 1


@dataclass
class Prepared:
    """A kernel ready to evaluate: its steps, graph, classes, operand buffers and reference."""

    path: str
    entry: str
    against: str
    ref: object
    fn: object
    classes: list
    operands: list          # buffer indices of the operands, in operand order
    output: int
    count_arg: str | None
    elements_per_group: int
    group_size: int
    variant: str
    roles: list = field(default_factory=list)
    count_granule: int = 1  # the count must be a multiple of this (whole vectors)
    provisional: bool = False  # judge under provisional contracts too (--approx provisional)

    @property
    def abi(self) -> str:
        """The layout found, in words (the report's first line)."""
        count = ""
        if self.count_arg:
            count = f"; count {self.count_arg}"
            if self.count_granule > 1:
                count += (f" (a multiple of {self.count_granule}: the kernel reads whole vectors past any other "
                          "count)")
        return (f"elementwise: {self.elements_per_group} elements per workgroup of {self.group_size} work-items "
                f"(wave{self.fn.wavefront_size}); operands {', '.join(self.roles_text('in'))}; output "
                f"{self.roles_text('out')[0]}{count}"
                + (f"; {len(self.classes)} element classes" if len(self.classes) > 1 else ""))

    def roles_text(self, role: str) -> list:
        return [name for name, r in self.roles if r == role]


def _kernarg(fn, buffers_at: dict, count: int, counts_at: list) -> bytes:
    """The kernarg segment: each pointer its buffer's base, each integer in ``counts_at`` the count,
    everything else (the hidden arguments included) zero: an elementwise kernel that read them would
    compute other addresses, which the discovery launches then refuse."""
    size = int((fn.descriptor or {}).get(".amdhsa_kernarg_size", 0) or 0)
    size = max(size, max((a.offset + a.size for a in fn.args), default=0))
    seg = bytearray(size + 64)
    for k, a in enumerate(fn.args):
        if k in buffers_at:
            seg[a.offset:a.offset + 8] = int(buffers_at[k]).to_bytes(8, "little")
        elif k in counts_at:
            seg[a.offset:a.offset + a.size] = int(count).to_bytes(a.size, "little", signed=False)
    return bytes(seg)


def _group_size(fn) -> int:
    md = fn.metadata or {}
    reqd = md.get(".reqd_workgroup_size")
    if reqd:
        return int(reqd[0])
    return int(md.get(".max_flat_workgroup_size", 256))


class _Discovery:
    """The discovery launches of one kernel (see the module docstring)."""

    def __init__(self, fn, steps, db, ref, variant: str, params: str | None, path: str):
        self.fn, self.steps, self.db, self.ref, self.variant = fn, steps, db, ref, variant
        self.path = path
        self.S = ref.fmt.width // 8
        self.group_size = _group_size(fn)
        self.pointers = [k for k, a in enumerate(fn.args) if a.value_kind == "global_buffer"]
        self.ints = [k for k, a in enumerate(fn.args) if a.value_kind == "by_value" and a.size in (4, 8)]
        self.stated = _parse_params(params, fn, path) if params else None
        if self.stated is not None:
            self.count_args = [k for k, r in self.stated.items() if r == "n"]
        else:
            self.count_args = self.ints[:1] if len(self.ints) == 1 else self.ints

    def run(self, groups: list, count: int):
        buffers = []
        at = {}
        size = max(count, 1) * self.S
        for j, k in enumerate(self.pointers):
            base = BUFFER_BASE + j * BUFFER_STRIDE
            buffers.append(Buffer(base, size, f"parameter {_arg_name(self.fn, k)}"))
            at[k] = base
        seg = _kernarg(self.fn, at, count, self.count_args)
        return launch(self.fn, self.steps, self.db, buffers=buffers, kernarg=seg, groups=groups,
                      group_size=self.group_size, variant=self.variant)

def _parse_params(text: str, fn, path: str) -> dict:
    roles = [r.strip() for r in text.split(",")]
    visible = [k for k, a in enumerate(fn.args) if not a.value_kind.startswith("hidden")]
    if len(roles) != len(visible) or any(r not in ("in", "out", "n", "-") for r in roles):
        raise UsageError(f"--params {text}: give one role (in, out, n or -) for each of the kernel's "
                         f"{len(visible)} parameters, in order", fn.location)
    return {k: r for k, r in zip(visible, roles)}


def _elements(launch_, output: int, S: int) -> dict:
    """Output element index -> its parts ``(arg, source bit offset, bits, element bit position)``,
    from the stored bytes; raises where an element is stored by two lanes with different values."""
    by_element: dict = {}
    for (buf, off), rec in launch_.stored.items():
        if buf != output:
            continue
        e, pos = divmod(off, S)
        by_element.setdefault(e, {})[pos] = rec
    out = {}
    for e, bytes_ in by_element.items():
        if len(bytes_) != S:
            raise UnsupportedAmdgcnError(f"element {e} of the output is only partly stored ({len(bytes_)} of {S} bytes)")
        parts = []
        for pos in range(S):
            rec = bytes_[pos]
            others = rec.__dict__.get("others")
            if others and any(o[2] != rec.arg or o[3] != rec.byte for o in others):
                raise UnsupportedAmdgcnError(f"element {e} of the output is stored by several lanes with "
                                             "different values", rec.step.instr.location)
            if parts and parts[-1][0] == rec.arg and parts[-1][1] + parts[-1][2] == 8 * rec.byte \
                    and parts[-1][3] + parts[-1][2] == 8 * pos:
                a, off, bits, p = parts[-1]
                parts[-1] = (a, off, bits + 8, p)
            else:
                parts.append((rec.arg, 8 * rec.byte, 8, 8 * pos))
        out[e] = parts
    return out


def _halves_of(node, halves: set) -> list:
    """Which 16-bit halves of each argument an OP node's demanded halves depend on (see
    :func:`tilecheck.amdgpu.symbolic.demanded_loads`): exact rules for moves, masks, shifts by
    multiples of 16, packs and selects; every half of every argument otherwise."""
    step, mode, args = node.key
    everything = [{0, 1, 2, 3} for _ in args]
    if isinstance(step, str):  # merge16: low half from the first, high from the second
        return [{0} & halves, {1} & halves]
    if step.kind == "vload":
        hi = "_hi" in step.instr.mnemonic  # ..._d16_hi, ..._d16_hi_b16
        return [{0}, {0} & halves] if hi else [{0}, {1} & halves]
    m = step.instr.mnemonic
    consts = [a[1] if a[0] == "c" else None for a in args]
    if step.kind == "pack":
        return [{0} if 0 in halves else set(), {0} if 1 in halves else set()]
    if step.kind == "cndmask":
        return [set(halves), set(halves), {0}]
    if m == "v_mov_b32":
        return [set(halves)]
    if m == "v_and_b32" and (consts[0] is not None or consts[1] is not None):
        c = consts[0] if consts[0] is not None else consts[1]
        keep = {h for h in (0, 1) if h in halves and (c >> (16 * h)) & 0xFFFF}
        return [keep if consts[0] is None else set(), keep if consts[1] is None else set()]
    if m in ("v_or_b32", "v_xor_b32"):
        return [set(halves), set(halves)]
    if m in ("v_lshlrev_b32", "v_lshrrev_b32") and consts[0] is not None and consts[0] % 16 == 0:
        k = (consts[0] & 31) // 16
        src = {h - k for h in halves if 0 <= h - k < 2} if m == "v_lshlrev_b32" else {h + k for h in halves if h + k < 2}
        return [set(), src]
    if m == "v_perm_b32" and consts[2] is not None:
        sel = consts[2]
        a_h, b_h = set(), set()
        for h in halves:
            for byte in (2 * h, 2 * h + 1):
                s = (sel >> (8 * byte)) & 0xFF
                if s < 4:
                    b_h.add(s // 2)
                elif s < 8:
                    a_h.add((s - 4) // 2)
                elif s < 12:
                    a_h.update({0, 1})
                    b_h.update({0, 1})
        return [a_h, b_h, set()]
    if step.kind == "mix":  # op_sel_hi: an f16 operand, in the half op_sel names; else all 32 bits
        op_sel, op_sel_hi = step.mods.get("op_sel", (0, 0, 0)), step.mods.get("op_sel_hi", (1, 1, 1))
        out = [({1} if op_sel[k] else {0}) if op_sel_hi[k] else {0, 1} for k in range(3)]
        if len(args) > 3:  # mixlo keeps the high half of its destination, mixhi the low half
            kept = {1} if step.instr.mnemonic.endswith("lo_f16") else {0}
            out.append(kept & halves)
        return out
    if step.kind in ("float", "int"):
        out = []
        widths = list(step.widths)
        if step.float_op is not None and step.float_op.addend_is_dst:
            widths.append(step.float_op.sources[-1])  # v_fmac: the old destination is the addend
        for k, a in enumerate(args):
            w = widths[k] if k < len(widths) else 32
            if w == 16 and step.kind != "mix":
                sel = step.mods.get("src0_sel" if k == 0 else "src1_sel" if k == 1 else "") if k < 2 else None
                op_sel = step.mods.get("op_sel")
                hi = (sel == "WORD_1") or bool(op_sel and k < len(op_sel) and op_sel[k])
                out.append({1} if hi else {0})
            elif w == 64:
                out.append({0, 1, 2, 3})
            else:
                out.append({0, 1})
        # an instruction that keeps part of its old destination reads that part only
        return out
    return everything


def prepare(path: str, entry: str, against: str, *, db, semantics: str = "observed",
            params: str | None = None, provisional: bool = False) -> Prepared:
    """Parse, simulate and classify (see the module docstring)."""
    if semantics not in SEMANTICS:
        raise UsageError(f"--semantics must be one of {', '.join(SEMANTICS)} for AMDGCN")
    module = parse_asm_file(path)
    try:
        fn = module.function(entry)
    except KeyError:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise UsageError(f"{path}: no kernel named {entry!r} (kernels: {names})") from None
    if not fn.is_kernel:
        raise UsageError(f"{path}: {entry} is not a kernel (no .amdhsa_kernel descriptor)", fn.location)
    ref = compiled.parse_reference(against, db)
    steps = prepare_function(fn, db)
    d = _Discovery(fn, steps, db, ref, semantics, params, path)
    S = d.S
    if not d.pointers:
        raise UsageError(f"{entry}: the kernel has no pointer parameters: not an elementwise kernel", fn.location)
    if d.stated is None and len(d.count_args) > 1:
        raise UsageError(f"{entry}: {len(d.count_args)} integer parameters; say which one is the element count with "
                         "--params (in, out, n or - per parameter)", fn.location)
    first = d.run([0], BIG_COUNT)
    outputs = sorted({buf for buf, _ in first.stored})
    if len(outputs) != 1:
        raise UsageError(f"{entry}: the kernel stores to {len(outputs)} buffers (one output expected)", fn.location)
    output = outputs[0]
    elems = _elements(first, output, S)
    P = len(elems)
    if not P or sorted(elems) != list(range(P)):
        raise UsageError(f"{entry}: workgroup 0 stores elements {_span(sorted(elems))} of the output, not "
                         f"0..{P - 1}: not a layout of consecutive elements", fn.location)
    granule, second, count = 1, None, 2 * P
    if d.count_args:
        # a partial second workgroup; a kernel that assumes the count a multiple of its vector
        # width (Triton's tt.divisibility on n) reads past the end of a count that is not
        for granule in (1, 2, 4, 8, 16, 32):
            count = P + P // 2 + granule if granule > 1 else P + P // 2 + 1
            count -= count % granule
            try:
                second = d.run([0, 1], count)
                break
            except OutsideBuffersError:
                if granule == 32:
                    raise
    else:
        second = d.run([0, 1], count)
    far = d.run([FAR], (FAR + 1) * P)
    e2 = _elements(second, output, S)
    if d.count_args and sorted(e2) != list(range(count)):
        raise UsageError(f"{entry}: with a count of {count} (workgroup 1 partial), the stored elements are "
                         f"{_span(sorted(e2))}, not 0..{count - 1}: the count does not bound the elements (or "
                         "counts other units; --params states the roles)", fn.location)
    e3 = _elements(far, output, S)
    if sorted(e3) != list(range(FAR * P, (FAR + 1) * P)):
        raise UsageError(f"{entry}: workgroup {FAR} stores elements {_span(sorted(e3))}, not the "
                         f"{P} following {FAR * P}", fn.location)
    graphs = [(second, e2), (far, e3)]
    buffer_of = {j: k for j, k in enumerate(d.pointers)}
    classes: dict = {}
    used: set = set()
    for launch_, elems_ in graphs:
        for e, parts in sorted(elems_.items()):
            loads = demanded_loads(launch_.graph, [(a, off, bits) for a, off, bits, _ in parts], _halves_of)
            if "undef" in loads:
                raise UsageError(f"{entry}: output element {e} depends on the unspecified upper half of a "
                                 "16-bit result", fn.location)
            for n, halves in loads.items():
                buf, off, nb, _ = launch_.graph.nodes[n].key
                for h in halves:
                    lo = off + 2 * h
                    if buf == output:
                        raise UsageError(f"{entry}: output element {e} depends on what the output buffer held "
                                         "(not elementwise)", fn.location)
                    if not (e * S <= lo < (e + 1) * S):
                        raise UsageError(f"{entry}: not elementwise: output element {e} depends on byte {lo} of "
                                         f"{_arg_name(fn, buffer_of[buf])}, in element {lo // S}", fn.location)
                used.add(buf)
    operands = sorted(used)
    if d.stated is not None:
        stated_in = [j for j, k in buffer_of.items() if d.stated.get(k) == "in"]
        stated_out = [j for j, k in buffer_of.items() if d.stated.get(k) == "out"]
        if stated_out != [output] or sorted(stated_in) != operands:
            raise UsageError(f"{entry}: --params does not match the kernel: it reads "
                             f"{', '.join(_arg_name(fn, buffer_of[j]) for j in operands)} and writes "
                             f"{_arg_name(fn, buffer_of[output])}", fn.location)
    arity = getattr(ref, "arity", None)
    if arity is not None and arity != len(operands):
        raise UsageError(f"{entry}: the kernel's elements depend on {len(operands)} input buffer(s) "
                         f"({', '.join(_arg_name(fn, buffer_of[j]) for j in operands)}), {against} takes {arity}",
                         fn.location)
    for launch_, elems_ in graphs:
        g = launch_.graph
        for e, parts in sorted(elems_.items()):
            def rename(n, e=e, g=g):
                buf, off, nb, signed = g.nodes[n].key
                return (operands.index(buf) if buf in operands else -1, off - e * S, nb, signed)
            sig = signature(g, [(a, off, bits) for a, off, bits, _ in parts], rename)
            cls = classes.get(sig)
            if cls is None:
                classes[sig] = ElementClass(parts, e, 1)
                classes[sig].graph = g
            else:
                cls.count += 1
    roles = []
    for k, a in enumerate(fn.args):
        if a.value_kind.startswith("hidden"):
            continue
        name = a.name or f"arg{k}"
        if k in d.pointers:
            j = d.pointers.index(k)
            roles.append((name, "out" if j == output else "in" if j in operands else "-"))
        elif k in d.count_args:
            roles.append((name, "n"))
        else:
            roles.append((name, "-"))
    count_arg = next((n for n, r in roles if r == "n"), None)
    p = Prepared(path, fn.name, against, ref, fn, list(classes.values()), operands, output, count_arg,
                 P, d.group_size, semantics, roles)
    p.count_granule = granule
    p.provisional = provisional
    return p


def _arg_name(fn, k: int) -> str:
    """A parameter's name in the metadata (Triton writes none: ``arg{k}``)."""
    return fn.args[k].name or f"arg{k}"


def _span(xs: list) -> str:
    if not xs:
        return "none"
    return f"{xs[0]}..{xs[-1]} ({len(xs)})" if len(xs) > 3 else ", ".join(map(str, xs))


def _leaf(cls: ElementClass, p: Prepared, ops: list):
    """The loads of ``cls``'s representative as input bits in place (bytes of other elements
    zero: no stored element depends on them)."""
    S = p.ref.fmt.width // 8
    g = cls.graph

    def leaf(n: int) -> np.ndarray:
        buf, off, nb, signed = g.nodes[n].key
        rel = off - cls.element * S
        if buf not in p.operands:
            return np.zeros(ops[0].shape[0], np.uint64)
        x = ops[p.operands.index(buf)].astype(np.uint64)
        # the bytes [rel, rel + nb) of the element, as the register holds them
        if rel >= 0:
            v = x >> np.uint64(8 * rel)
        else:
            v = (x << np.uint64(-8 * rel))
        v &= np.uint64((1 << (8 * nb)) - 1)
        if signed and nb < 4:
            sign = (v >> np.uint64(8 * nb - 1)) & np.uint64(1)
            v = np.where(sign == 1, v | (np.uint64(0xFFFFFFFF) ^ np.uint64((1 << (8 * nb)) - 1)), v)
        return v
    return leaf


def run_inputs(p: Prepared, ops: list, *, ulp_reading: str = "either", keep: bool = False):
    # p.provisional: judge under the spec's provisional bounds too (--approx provisional)
    """Judge every class on the inputs ``ops`` (one array per operand): a
    :class:`~tilecheck.verify.compiled.BlockResult`."""
    n = ops[0].shape[0]
    ref = p.ref
    fmt = ref.fmt
    u = fmt.uint
    bad = np.zeros(n, bool)
    value_in = np.zeros(n, bool)
    nan_in = np.zeros(n, bool)
    unknown = np.zeros(n, bool)
    lanes = 0
    expected = ref.expected([o.astype(u) for o in ops])
    got_any = np.zeros(n, np.uint64)
    evals = []
    for cls in p.classes:
        ev = evaluate_parts(cls.graph, cls.parts, _leaf(cls, p, ops), n, variant=p.variant, keep_values=keep,
                            provisional=p.provisional, reading=ulp_reading)
        evals.append(ev)
        lanes += ev.origin.shape[0]
        g = ev.value.astype(u)
        exp_l = expected[ev.origin]
        per_ops = [o.astype(u)[ev.origin] for o in ops] if ref.contract else []
        ok = ref.judge(g, per_ops, exp_l, ulp_reading) | ~ev.judged  # an unjudged lane is unknown, never wrong
        got_any[ev.origin] = ev.value
        if not ok.all():
            bad[ev.origin[~ok]] = True
            mag = u(fmt.magnitude_mask)
            gm, em = g & mag, exp_l.astype(u) & mag
            both_nan = (gm > u(fmt.exponent_mask)) & (em > u(fmt.exponent_mask))
            by_value = ~ok & ~((gm == 0) & (em == 0)) & ~both_nan
            value_in[ev.origin[by_value]] = True
            nan_in[ev.origin[~ok & both_nan]] = True
        if not (ev.complete & ev.judged).all():
            unknown[ev.origin[~(ev.complete & ev.judged)]] = True
    unknown |= ref.unknown([o.astype(u) for o in ops], ulp_reading)  # inputs where the reference itself bounds nothing
    nan_in &= ~value_in
    res = BlockResult(bad, unknown & ~bad, lanes, got_any, value_in, nan_in)
    if keep:
        return res, evals
    return res


def verify_amdgcn(path: str, entry: str, against: str, *, db, exhaustive: bool | None = None,
                  cases: int | None = None, seed: int = 0, semantics: str = "observed", params: str | None = None,
                  ulp_reading: str = "either", progress=None, input_: list | None = None,
                  approx: str = "all") -> Outcome:
    """Verify one kernel (see the module docstring); ``input_`` checks one input (a repro)."""
    t0 = time.time()
    if approx not in ("all", "provisional"):
        raise UsageError("--approx for AMDGCN: 'all' (documented bounds; a provisional one leaves its inputs "
                         "unknown) or 'provisional' (judge under the spec's provisional bounds too)")
    p = prepare(path, entry, against, db=db, semantics=semantics, params=params, provisional=approx == "provisional")
    ref = p.ref
    arity = len(p.operands)
    domain = 1 << (ref.fmt.width * arity)
    tally = Tally()
    if input_ is not None:
        if len(input_) != arity:
            raise UsageError(f"--input needs {arity} operand(s), got {len(input_)}")
        try:
            ops = [np.array([int(x, 0)], dtype=np.uint64) for x in input_]
        except ValueError:
            raise UsageError(f"--input {','.join(input_)}: operands are hex (0x...) or decimal integers") from None
        tally.add(ops, run_inputs(p, ops, ulp_reading=ulp_reading))
        sampling, is_exhaustive = {"given": 1}, False
    else:
        if exhaustive is None:
            exhaustive = compiled.covers_domain(domain, cases, small=1 << 16)
        if exhaustive and domain > compiled.EXHAUSTIVE_LIMIT:
            raise UsageError(f"--exhaustive: {domain} inputs is more than {compiled.EXHAUSTIVE_LIMIT} (16-bit unary "
                             "and binary, 32-bit unary)")
        if exhaustive:
            total = domain
            done = 0
            while done < total:
                stop = min(total, done + EXHAUSTIVE_BLOCK)
                ops = [o.astype(np.uint64) for o in compiled.exhaustive_block(ref, done, stop)]
                tally.add(ops, run_inputs(p, ops, ulp_reading=ulp_reading))
                done = stop
                if progress is not None:
                    progress(done, total)
            sampling, is_exhaustive = {"exhaustive": total}, True
        else:
            n = cases or compiled.DEFAULT_CASES
            ops, sampling = compiled.sampled_inputs(ref, n, seed)
            ops = [o.astype(np.uint64) for o in ops]
            for start in range(0, ops[0].shape[0], EXHAUSTIVE_BLOCK):
                block = [o[start:start + EXHAUSTIVE_BLOCK] for o in ops]
                tally.add(block, run_inputs(p, block, ulp_reading=ulp_reading))
                if progress is not None:
                    progress(min(start + EXHAUSTIVE_BLOCK, n), n)
            is_exhaustive = False
    seconds = time.time() - t0
    counterexamples = [explain(p, [np.array([v], np.uint64) for v in case], ulp_reading)
                       for case in (tally.first_value + tally.first_nan + tally.first_zero)[:3]]
    unknown_inputs = [{"inputs": [ref.fmt.hex(int(v)) for v in case], "reasons": _unknown_reasons(p)}
                      for case in tally.unknown_examples[:3]]
    verdict = "counterexample" if tally.misrounded else "unknown" if tally.unknown else "verified"
    o = Outcome(path, p.entry, against, verdict, is_exhaustive, tally.checked, tally.lanes,
                [tuple(int(x) for x in row) for row in tally.inputs], tally.misrounded, tally.unknown,
                tally.by_value, counterexamples, ulp_reading, approx, p.abi, sampling, _approx_names(p), seconds, [],
                tally.by_nan, unknown_inputs)
    o.prepared = None
    o.misrounded_map = tally.map
    o.format = ref.fmt.name
    o.readings = {"semantics": semantics, **_applied_readings(p, ulp_reading)}
    return o


def _applied_readings(p: Prepared, ulp_reading: str) -> dict:
    """Per contract form the kernel runs, the reading its bound is read under (``exact``,
    ``correctly-rounded``, ``either``, or ``relative`` for the f64 bounds), as the PTX report says."""
    out = {}
    for cls in p.classes:
        for node in cls.graph.nodes:
            if node.kind == OP and not isinstance(node.key[0], str) and node.key[0].approximate:
                form = node.key[0].float_op.form
                out[form.name] = applied_reading(form.variant(p.variant).contract, ulp_reading)
    return dict(sorted(out.items()))


def _approx_names(p: Prepared) -> list:
    names = set()
    for cls in p.classes:
        for node in cls.graph.nodes:
            if node.kind == OP and not isinstance(node.key[0], str) and node.key[0].approximate:
                names.add(f"{node.key[0].instr.name} ({node.key[0].float_op.form.name})")
    return sorted(names)


def _unknown_reasons(p: Prepared) -> list:
    out = []
    for cls in p.classes:
        for node in cls.graph.nodes:
            if node.kind == OP and not isinstance(node.key[0], str) and node.key[0].approximate:
                st = node.key[0]
                c = st.float_op.form.variant(p.variant).contract
                if not (c.provisional and not p.provisional) and c.bound.kind != "relative":
                    continue  # enumerated whole: not why an input is unknown
                if c.provisional and not p.provisional:
                    why = (f"no document states a bound for {st.float_op.form.name}: the spec's bound "
                           f"({c.describe()}) is provisional (--approx provisional judges under it)")
                else:
                    why = (f"{st.float_op.form.name}'s contract ({c.describe()}) allows more results than can be "
                           "enumerated: a sample of them was tried, so passing is not verified")
                out.append({"line": st.instr.line, "instruction": st.instr.text.strip(),
                            "operands": [str(x) for x in st.srcs[:1]], "why": why})
    seen, uniq = set(), []
    for r in out:
        if r["line"] not in seen:
            seen.add(r["line"])
            uniq.append(r)
    return uniq


def explain(p: Prepared, ops: list, ulp_reading: str) -> dict:
    """One misrounded input in full: the operands, expected and got, the result each approximate
    instruction returned on the failing path and what its contract allows, a repro command."""
    ref = p.ref
    fmt = ref.fmt
    u = fmt.uint
    expected = int(ref.expected([o.astype(u) for o in ops])[0])
    inputs = []
    for o, ofmt in zip(ops, ref.operand_formats):
        v = int(o[0])
        text, cls_ = ofmt.describe(v)
        inputs.append({"hex": ofmt.hex(v), "value": text, "class": cls_})
    got, choices = expected, []
    for cls in p.classes:
        ev = evaluate_parts(cls.graph, cls.parts, _leaf(cls, p, ops), 1, variant=p.variant, keep_values=True,
                            reading=ulp_reading)
        g = ev.value.astype(u)
        ok = ref.judge(g, [o.astype(u)[ev.origin] for o in ops] if ref.contract else [],
                       np.full(g.shape, expected, dtype=u), ulp_reading)
        if ok.all():
            continue
        lane = int(np.flatnonzero(~ok)[0])
        got = int(g[lane])
        for node_id, chosen in sorted(ev.forks.items()):
            st = cls.graph.nodes[node_id].key[0]
            allowed = sorted({int(v) for v, o in zip(ev.forks[node_id], ev.origin)})
            ffmt = st.float_op.form.fmt
            choices.append({"instruction": st.instr.text.strip(), "line": st.instr.line,
                            "returned": ffmt.hex(int(chosen[lane])),
                            "position": f"choice {allowed.index(int(chosen[lane])) + 1} of {len(allowed)}",
                            "allowed": "{" + ", ".join(f"{ffmt.hex(v)} ({ffmt.describe(v)[0]})" for v in allowed) + "}"})
        break
    repro = (f"tilecheck verify {p.path} --entry {p.entry} --against {shlex.quote(p.against)} --input "
             + ",".join(ofmt.hex(int(o[0])) for o, ofmt in zip(ops, ref.operand_formats))
             + (f" --semantics {p.variant}" if p.variant != "observed" else "")
             + (f" --ulp-reading {ulp_reading}" if ulp_reading != "either" else ""))
    return {"inputs": inputs, "expected": {"hex": fmt.hex(expected), "value": fmt.describe(expected)[0]},
            "got": {"hex": fmt.hex(got), "value": fmt.describe(got)[0], "lane": 0},
            "approximate_choices": choices, "registers": {}, "register_path": [], "repro": repro}


def element_instructions(p: Prepared) -> list[str]:
    """The instructions that compute the first class's stored element, in program order, each
    once (mnemonics as written; a VOPD half by its own name): what a findings row shows."""
    cls = p.classes[0]
    roots = [n for a, *_ in cls.parts for n in arg_nodes(a)]
    steps = {}
    for n in order(cls.graph, roots):
        node = cls.graph.nodes[n]
        if node.kind == OP and not isinstance(node.key[0], str) and node.key[0].kind not in ("vload",):
            st = node.key[0]
            steps[(st.instr.line, st.instr.col, st.index)] = st.instr.name
    return [steps[k] for k in sorted(steps)]
