"""Emitted kernels with their ABI, and the single-instruction kernels of the differential engine.

:func:`single_instruction_kernel` wraps one spec form in a kernel whose ABI is:

=================  ============  =======================================================================
parameter          PTX type      meaning
=================  ============  =======================================================================
``param_src_<x>``  ``.u64``      one global array per *source* operand ``x`` of the form, in operand
                                 order. Register sources hold containers (uint16/uint32/uint64 per the
                                 form's ``container_bits``; ``registers`` of them per thread). The memory
                                 source of an ``ld`` form is the memory buffer it loads from.
``param_out``      ``.u64``      the output array: the destination registers (``registers`` containers
                                 per thread), or, for an ``st`` form, the memory it stores to
``param_mask``     ``.u64``      predicated kernels only: a uint32 array, thread ``i`` executes the
                                 instruction iff ``mask[i] != 0``; the output must hold the *old* values
                                 (they are kept where the mask is 0: preserve semantics)
``param_n``        ``.u32``      number of elements; thread ``i = ctaid.x * ntid.x + tid.x`` handles
                                 element ``i`` when ``i < n`` (bounds guard), so any 1-D grid of at
                                 least ``n`` threads works
=================  ============  =======================================================================

Element ``i`` of an operand spanning ``k`` registers (``ld/st .v2/.v4``) is containers
``[i*k, (i+1)*k)``; register ``j`` of the vector is container ``i*k + j`` (memory order). The
kernel name is ``tc_`` + the form name with dots replaced by underscores (+ ``_pred``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecheck.emit.common import EmitError, RegisterFile, register_class
from tilecheck.emit.ptx import GENERATED, INDENT, module_text, param_name
from tilecheck.errors import IllegalFormError, UsageError
from tilecheck.spec.forms import Form

UINT = {16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


@dataclass(frozen=True)
class KernelParam:
    """One ``.param`` of an emitted kernel.

    ``role``: ``source``, ``output``, ``mask``, ``count`` (single-instruction kernels) or ``tensor``,
    ``scalar`` (program kernels). ``operand`` is the form operand (``a``) or program parameter name;
    ``dtype`` the element dtype a pointer parameter's array holds (None for plain scalars);
    ``per_thread`` how many elements of it one thread uses.
    """

    name: str
    ptx_type: str
    role: str
    operand: str | None = None
    dtype: np.dtype | None = None
    per_thread: int = 1


@dataclass(frozen=True)
class EmittedKernel:
    """A PTX module holding one kernel, with what is needed to launch it.

    ``ptx`` is the module text, ``name`` the ``.entry`` name, ``version`` its ``.version``,
    ``params`` the parameters in order (see the module docstring for single-instruction kernels).
    Program kernels carry the launch they must run with (``grid``, ``block``: 1-3 extents; the
    PTX fixes the block with ``.reqntid``); single-instruction kernels run with any 1-D launch
    covering ``n`` threads (both None).
    """

    name: str
    ptx: str
    version: str
    target: str
    params: tuple[KernelParam, ...]
    form: str | None = None
    predicated: bool = False
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None

    def arguments(self, sources, out, mask=None) -> list:
        """The argument list of a single-instruction kernel, in parameter order, ``n`` included.

        ``sources``: one array per source parameter; ``out``: the output array (holding the old
        values for a predicated kernel); ``mask``: uint32 array (predicated kernels only).
        """
        if self.form is None:
            raise UsageError(f"{self.name} is a program kernel; pass its arguments in parameter order")
        src_params = [p for p in self.params if p.role == "source"]
        sources = list(sources)
        if len(sources) != len(src_params):
            raise UsageError(f"{self.name} takes {len(src_params)} source array(s), got {len(sources)}")
        out_param = next(p for p in self.params if p.role == "output")
        n = out.size // out_param.per_thread
        args = []
        for p, a in zip(src_params, sources):
            _check_array(self.name, p, a, n)
            args.append(a)
        _check_array(self.name, out_param, out, n)
        args.append(out)
        if self.predicated:
            if mask is None:
                raise UsageError(f"{self.name} is predicated: pass a uint32 mask array")
            mask_param = next(p for p in self.params if p.role == "mask")
            _check_array(self.name, mask_param, mask, n)
            args.append(mask)
        elif mask is not None:
            raise UsageError(f"{self.name} is not predicated: it takes no mask")
        args.append(np.uint32(n))
        return args


def _check_array(kernel: str, param: KernelParam, array, n: int) -> None:
    if not isinstance(array, np.ndarray):
        raise UsageError(f"{kernel}: {param.name} needs a numpy array, got {type(array).__name__}")
    if array.dtype.itemsize != param.dtype.itemsize:
        raise UsageError(f"{kernel}: {param.name} holds {param.dtype} containers, got dtype {array.dtype}")
    if array.size != n * param.per_thread:
        raise UsageError(f"{kernel}: {param.name} needs {n * param.per_thread} elements ({param.per_thread} per "
                         f"thread for n={n}), got {array.size}")


def kernel_name(form_name: str, predicated: bool = False) -> str:
    """``div.rn.f32`` -> ``tc_div_rn_f32`` (``tc_div_rn_f32_pred`` when predicated)."""
    return "tc_" + form_name.replace(".", "_") + ("_pred" if predicated else "")


def single_instruction_kernel(form, target: str, predicated: bool = False, *, db) -> EmittedKernel:
    """A kernel running one instance of ``form`` per thread (ABI: the module docstring).

    ``form`` is a :class:`~tilecheck.spec.forms.Form` or a spelling; it must be legal on
    ``target`` (else :class:`~tilecheck.errors.IllegalFormError`). ``.version`` is the lowest the
    form and the target accept.
    """
    tinfo = db.target(target)
    spelling = form.name if isinstance(form, Form) else str(form)
    verdict = db.verdict(spelling, tinfo.name)
    if not verdict.legal:
        raise IllegalFormError(f"{spelling}: {verdict.reason}", reason=verdict.reason, ptxas=verdict.ptxas)
    form = verdict.form
    if form.kind == "memory" and not db.in_kernel_pipeline(form):
        raise EmitError(f"{form.name}: no single-instruction kernel for a {form.semantics.get('space')}"
                        f"{' .nc' if form.semantics.get('nc') else ''} memory form (the kernels address global "
                        "buffers; tilecheck verify FILE.ptx runs it in compiled PTX)")
    if not db.in_kernel_pipeline(form):
        raise EmitError(f"{form.name}: no single-instruction kernel for forms of kind {form.kind!r}")
    version = db.min_version(form, tinfo.name)
    version_text = f"{version[0]}.{version[1]}"
    return _Single(form, tinfo.name, version_text, predicated).build()


class _Single:
    def __init__(self, form, target: str, version: str, predicated: bool):
        self.form, self.target, self.version, self.predicated = form, target, version, predicated
        self.regs = RegisterFile()
        self.lines: list[str] = []

    def build(self) -> EmittedKernel:
        """The kernel text and its :class:`EmittedKernel`."""
        form = self.form
        name = kernel_name(form.name, self.predicated)
        key = form.semantics.key
        register_ops = [o for o in form.operands if o.role != "addr"]
        value = register_ops[0]  # every register operand of a form has one type and width
        bytes_ = value.container_bits // 8
        k = value.registers
        stride = bytes_ * k
        container = UINT[value.container_bits]
        params = []
        if key == "mem.ld":
            sources = [o for o in form.operands if o.role == "addr"]
        else:
            sources = [o for o in form.operands if o.role == "src"]
        for o in sources:
            params.append(KernelParam(param_name(f"src_{o.name}"), "u64", "source", o.name, container, k))
        out_operand = next(o for o in form.operands if (o.role == "addr" if key == "mem.st" else o.role == "dst"))
        params.append(KernelParam(param_name("out"), "u64", "output", out_operand.name, container, k))
        if self.predicated:
            params.append(KernelParam(param_name("mask"), "u64", "mask", None, np.dtype(np.uint32), 1))
        params.append(KernelParam(param_name("n"), "u32", "count"))

        emit = self.lines.append
        n_reg, ctaid, ntid, i_reg = (self.regs.new("b32") for _ in range(4))
        emit(f"ld.param.u32 {n_reg}, [{param_name('n')}];")
        emit(f"mov.u32 {ctaid}, %ctaid.x;")
        emit(f"mov.u32 {ntid}, %ntid.x;")
        emit(f"mov.u32 {i_reg}, %tid.x;")
        emit(f"mad.lo.u32 {i_reg}, {ctaid}, {ntid}, {i_reg};")
        guard = self.regs.new("pred")
        emit(f"setp.ge.u32 {guard}, {i_reg}, {n_reg};")
        emit(f"@{guard} bra $L__exit;")
        offset = self.regs.new("b64")
        emit(f"mul.wide.u32 {offset}, {i_reg}, {stride};")
        address = {}
        for p in params[:-1]:
            reg = self.regs.new("b64")
            emit(f"ld.param.u64 {reg}, [{p.name}];")
            emit(f"cvta.to.global.u64 {reg}, {reg};")
            if p.role == "mask" and stride != 4:
                mask_offset = self.regs.new("b64")
                emit(f"mul.wide.u32 {mask_offset}, {i_reg}, 4;")
                emit(f"add.s64 {reg}, {reg}, {mask_offset};")
            else:
                emit(f"add.s64 {reg}, {reg}, {offset};")
            address[p.role if p.role != "source" else p.operand] = reg
        cls = register_class(value.register_type)
        bits = value.container_bits

        def at(base: str, j: int) -> str:
            return f"[{base}]" if j == 0 else f"[{base}+{j * bytes_}]"

        operand_text = {}
        for o in form.operands:
            if o.role == "src":
                names = [self.regs.new(cls) for _ in range(o.registers)]
                for j, r in enumerate(names):
                    emit(f"ld.global.b{bits} {r}, {at(address[o.name], j)};")
                operand_text[o.name] = names[0] if o.registers == 1 else "{" + ", ".join(names) + "}"
        pred = ""
        if self.predicated:
            m = self.regs.new("b32")
            p = self.regs.new("pred")
            emit(f"ld.global.u32 {m}, [{address['mask']}];")
            emit(f"setp.ne.u32 {p}, {m}, 0;")
            pred = f"@{p} "
        dst_names = []
        for o in form.operands:
            if o.role == "dst":
                dst_names = [self.regs.new(cls) for _ in range(o.registers)]
                if self.predicated:
                    # preserve semantics: the destination holds the old output where the mask is 0
                    for j, r in enumerate(dst_names):
                        emit(f"ld.global.b{bits} {r}, {at(address['output'], j)};")
                operand_text[o.name] = dst_names[0] if o.registers == 1 else "{" + ", ".join(dst_names) + "}"
            elif o.role == "addr":
                operand_text[o.name] = f"[{address['output'] if key == 'mem.st' else address[o.name]}]"
        emit(f"{pred}{form.name} {', '.join(operand_text[o.name] for o in form.operands)};")
        for j, r in enumerate(dst_names):
            emit(f"st.global.b{bits} {at(address['output'], j)}, {r};")
        entry = [f".visible .entry {name}("]
        entry += [f"{INDENT}.param .{p.ptx_type} {p.name}" + ("," if i < len(params) - 1 else "")
                  for i, p in enumerate(params)]
        entry += [")", "{"] + [INDENT + d for d in self.regs.declarations()] + [""]
        entry += [INDENT + line for line in self.lines] + ["$L__exit:", INDENT + "ret;", "}"]
        abi = ", ".join(f"{p.name[len('param_'):]}" + (f": {p.dtype.name}[{p.per_thread}n]" if p.dtype is not None
                                                       and p.role != "mask" else
                                                       (": uint32[n]" if p.role == "mask" else ": u32"))
                        for p in params)
        what = {"mem.ld": "loads src_a's element i into out", "mem.st": "stores src_b's element i to out"}.get(
            key, "out[i] = the instruction applied to (" + ", ".join(f"src_{o.name}[i]" for o in sources) + ")")
        # the form's spelling appears once in the text: in the instruction
        comments = [GENERATED + f": single-instruction kernel {name}, {self.target}, PTX ISA {self.version}.",
                    f"ABI ({name}): {abi}; thread i < n {what}"
                    + ("; only where mask[i] != 0 (out keeps its old value elsewhere)" if self.predicated else "")
                    + "."]
        text = module_text(self.version, self.target, comments, [entry])
        return EmittedKernel(name, text, self.version, self.target, tuple(params), form.name, self.predicated)
