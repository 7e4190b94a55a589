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

import numpy as np

from tilecheck.emit import cvta_kernel, function_kernel
from tilecheck.emit.abi import EmittedKernel, KernelParam
from tilecheck.emit.common import EmitError, RegisterFile, bounds_guard, register_class, single_entry
from tilecheck.emit.ptx import GENERATED, INDENT, module_text, param_name
from tilecheck.errors import IllegalFormError
from tilecheck.spec.forms import Form

UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


def kernel_name(form_name: str, predicated: bool = False) -> str:
    """``div.rn.f32`` -> ``tc_div_rn_f32`` (``tc_div_rn_f32_pred`` when predicated)."""
    return "tc_" + form_name.replace(".", "_") + ("_pred" if predicated else "")


def no_kernel_reason(form) -> str | None:
    """Why a legal form has no single-instruction kernel (None: it has one). Only the 32-bit
    ``cvta`` forms: ptxas 13 assembles no 32-bit address."""
    if form.family == "cvta" and form.type != "u64":
        return ("ptxas 13 assembles no 32-bit address ('32-Bit compilation is no longer supported'; with "
                ".address_size 64 it rejects the instruction)")
    return None


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
    version = db.min_version(form, tinfo.name)
    version_text = f"{version[0]}.{version[1]}"
    if no_kernel_reason(form) is not None:
        raise EmitError(f"{form.name}: no single-instruction kernel: {no_kernel_reason(form)}")
    if form.kind == "function":
        name = kernel_name(form.name, predicated)
        builder = cvta_kernel if form.family == "cvta" else function_kernel
        ptx, params = builder.build(form, tinfo.name, version_text, predicated, name)
        return EmittedKernel(name, ptx, version_text, tinfo.name, params, form.name, predicated)
    return _Single(form, tinfo.name, version_text, predicated).build()


class _Single:
    def __init__(self, form, target: str, version: str, predicated: bool):
        self.form, self.target, self.version, self.predicated = form, target, version, predicated
        self.regs = RegisterFile()
        self.lines: list[str] = []
        self.variables: list[str] = []  # .local declarations of the body

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
        _, i_reg, _ = bounds_guard(self.regs, emit, param_name("n"))
        offset = self.regs.new("b64")
        emit(f"mul.wide.u32 {offset}, {i_reg}, {stride};")
        space = form.semantics.get("space") if form.kind == "memory" else "global"
        # the buffer the instruction itself addresses: a generic access keeps the generic pointer
        memory_side = {"mem.ld": "source", "mem.st": "output"}.get(key)
        address = {}
        for p in params[:-1]:
            reg = self.regs.new("b64")
            emit(f"ld.param.u64 {reg}, [{p.name}];")
            if not (space == "generic" and p.role == memory_side):
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

        def braces(names: list[str]) -> str:
            return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"

        staged = _Staging(self, space, form, k, bits, name) if space in ("local", "param") else None
        operand_text = {}
        for o in form.operands:
            if o.role == "src":
                names = [self.regs.new(cls) for _ in range(o.registers)]
                for j, r in enumerate(names):
                    emit(f"ld.global.b{bits} {r}, {at(address[o.name], j)};")
                operand_text[o.name] = braces(names)
        pred = ""
        if self.predicated:
            m = self.regs.new("b32")
            p = self.regs.new("pred")
            self.mask_word = m
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
                operand_text[o.name] = braces(dst_names)
            elif o.role == "addr" and staged is not None:
                operand_text[o.name] = f"[{staged.symbol}]"
            elif o.role == "addr":
                operand_text[o.name] = f"[{address['output'] if key == 'mem.st' else address[o.name]}]"
        instruction = f"{pred}{form.name} {', '.join(operand_text[o.name] for o in form.operands)};"
        if staged is None:
            emit(instruction)
        else:
            value = None if key == "mem.ld" else operand_text[form.operands[1].name]
            staged.around(address.get("a"), address["output"], at, instruction, value)
            dst_names = staged.result or dst_names  # a .local load leaves its own destinations
        for j, r in enumerate(dst_names):
            emit(f"st.global.b{bits} {at(address['output'], j)}, {r};")
        entry = single_entry(name, params, self.regs.declarations() + self.variables, self.lines, INDENT)
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
        functions = [staged.echo()] if staged is not None and space == "param" else []
        text = module_text(self.version, self.target, comments, functions + [entry])
        return EmittedKernel(name, text, self.version, self.target, tuple(params), form.name, self.predicated)


ECHO = "tc_echo"
"""Prefix of the names of the device function a ``.param`` kernel calls (``<kernel>_echo``: names are
unique, so kernels share a module) and of its parameters: it returns its argument (a call sequence
is where ``st.param`` and ``ld.param`` of a variable happen)."""


class _Staging:
    """The element's round trip through a ``.local`` variable or a call's ``.param`` variables,
    around the instruction under test. The other half of the round trip moves the same bytes with
    the plain bit type (``.u`` when the form itself is ``.b``, so the spelling under test appears
    once). ``st.param`` under test runs in the callee, storing its return value: ptxas refuses a
    predicated ``st.param`` to a call's argument ('Illegal to predicate instruction st.param')."""

    def __init__(self, single: "_Single", space: str, form, k: int, bits: int, kernel: str):
        self.single, self.space, self.form, self.k, self.bits = single, space, form, k, bits
        self.function = f"{kernel}_echo"
        self.size = k * max(1, bits // 8)
        self.align = min(self.size, 16)
        helper = f"b{bits}" if form.type != f"b{bits}" else f"u{bits}"
        self.helper = (f".v{k}" if k > 1 else "") + f".{helper}"
        self.load = form.semantics.key == "mem.ld"
        if space == "local":
            self.symbol = "tc_local"
            single.variables.append(f".local .align {self.align} .b8 tc_local[{self.size}];")
        else:
            self.symbol = "tc_ret" if self.load else f"{ECHO}_ret"
        self.result: list[str] = []

    def _regs(self, regs=None) -> list[str]:
        value = next(o for o in self.form.operands if o.role != "addr")
        return [(regs or self.single.regs).new(register_class(value.register_type)) for _ in range(self.k)]

    @staticmethod
    def _braces(names: list[str]) -> str:
        return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"

    def _copy_in(self, base: str, at) -> list[str]:
        """Registers holding the element at ``base`` (global)."""
        names = self._regs()
        for j, r in enumerate(names):
            self.single.lines.append(f"ld.global.b{self.bits} {r}, {at(base, j)};")
        return names

    def _decl(self, name: str) -> str:
        return f".param .align {self.align} .b8 {name}[{self.size}];"

    def around(self, source: str | None, output: str, at, instruction: str, value: str | None) -> None:
        """Emit the round trip with ``instruction`` in its place (``.param``: the callee holds
        it). ``source``: the global element a load moves; ``output``: the global old output;
        ``value``: the registers a store under test stores. :attr:`result` then names the
        registers holding what came back (empty: the load's own destinations)."""
        emit = self.single.lines.append
        moved = self._braces(self._copy_in(source, at)) if self.load else value
        if self.space == "local":
            if self.load:
                emit(f"st.local{self.helper} [{self.symbol}], {moved};")
            elif self.single.predicated:
                emit(f"st.local{self.helper} [{self.symbol}], {self._braces(self._copy_in(output, at))};")
            emit(instruction)
            if not self.load:
                self.result = self._regs()
                emit(f"ld.local{self.helper} {self._braces(self.result)}, [{self.symbol}];")
            return
        emit("{")
        args = ["tc_arg"]
        emit(self._decl("tc_arg"))
        emit(f"st.param{self.helper} [tc_arg], {moved};")
        if self.single.predicated:
            args += ["tc_old", "tc_mask"]
            emit(self._decl("tc_old"))
            emit(f"st.param{self.helper} [tc_old], {self._braces(self._copy_in(output, at))};")
            emit(".param .b32 tc_mask;")
            emit(f"st.param.b32 [tc_mask], {self.single.mask_word};")
        emit(self._decl("tc_ret"))
        emit(f"call.uni (tc_ret), {self.function}, ({', '.join(args)});")
        self.result = self._regs()
        emit(f"ld.param{self.helper} {self._braces(self.result)}, [tc_ret];")
        emit("}")

    def echo(self) -> list[str]:
        """The ``.func`` returning its argument's bytes through the instruction under test (for a
        predicated kernel only where its mask argument is nonzero; the old bytes elsewhere)."""
        regs = RegisterFile()
        names = self._regs(regs)
        params = [f".param .align {self.align} .b8 {ECHO}_arg[{self.size}]"]
        body: list[str] = []
        guard = ""
        if self.single.predicated:
            params += [f".param .align {self.align} .b8 {ECHO}_old[{self.size}]", f".param .b32 {ECHO}_mask"]
            old, word, p = self._regs(regs), regs.new("b32"), regs.new("pred")
            body += [f"ld.param{self.helper} {self._braces(old)}, [{ECHO}_old];",
                     f"ld.param.b32 {word}, [{ECHO}_mask];", f"setp.ne.u32 {p}, {word}, 0;"]
            guard = f"@{p} "
            if self.load:  # the loaded registers start as the old output
                names = old
            else:
                body.append(f"st.param{self.helper} [{ECHO}_ret], {self._braces(old)};")
        if self.load:
            body += [f"{guard}{self.form.name} {self._braces(names)}, [{ECHO}_arg];",
                     f"st.param{self.helper} [{ECHO}_ret], {self._braces(names)};"]
        else:
            body = [f"ld.param{self.helper} {self._braces(names)}, [{ECHO}_arg];"] + body
            body.append(f"{guard}{self.form.name} [{ECHO}_ret], {self._braces(names)};")
        return [f".func (.param .align {self.align} .b8 {ECHO}_ret[{self.size}]) {self.function}({', '.join(params)})",
                "{"] \
            + [INDENT + d for d in regs.declarations()] + [INDENT + line for line in body + ["ret;"]] + ["}"]
