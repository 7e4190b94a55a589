"""Single-instruction kernels for the instructions around the arithmetic (registry kind ``function``).

``cvt``, ``setp``, ``selp``, ``mov``, ``abs``, ``neg``, ``min``, ``max``, ``copysign``, ``testp``, integer
and logic operations: their operands have different widths (``cvt.rn.f16.f32`` reads 32 bits and
writes 16, ``shl.b64`` shifts by a 32-bit amount, ``selp`` reads a predicate), and ``setp`` may
write two predicates. The ABI extends :mod:`tilecheck.emit.kernel`'s:

=================  ============  =======================================================================
parameter          PTX type      meaning
=================  ============  =======================================================================
``param_src_<x>``  ``.u64``      one global array per source operand ``x``, in operand order, holding
                                 the operand's own containers: uint8/uint16/uint32/uint64 by the width
                                 of its type; a predicate source is a uint32 array (nonzero: true)
``param_out``      ``.u64``      the first destination's array (same containers; a predicate as uint32
                                 0 or 1, written through ``selp.u32``)
``param_out_q``    ``.u64``      ``setp`` only, where the form takes ``p|q`` (every type but scalar
                                 ``.f16``/``.bf16``): the second destination, as ``param_out``
``param_mask``     ``.u64``      predicated kernels: uint32, thread ``i`` executes iff ``mask[i] != 0``;
                                 the outputs hold the old values, kept where the mask is 0
``param_n``        ``.u32``      number of elements (bounds guard, as in the arithmetic kernels)
=================  ============  =======================================================================

An 8-bit operand (``cvt.s8.f32``) lives in a 16-bit register as PTX requires; the kernel loads it
with ``ld.global.u8`` and stores the low byte with ``st.global.u8``.
"""

from __future__ import annotations

import numpy as np

from tilecheck.emit.abi import KernelParam
from tilecheck.emit.common import RegisterFile, bounds_guard, register_class, single_entry
from tilecheck.emit.ptx import GENERATED, INDENT, module_text, param_name
from tilecheck.spec.forms import Form

CONTAINER = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
PREDICATE = np.dtype(np.uint32)
"""How a predicate operand or result is held in a kernel's global array."""


def two_destinations(form: Form) -> bool:
    """Whether the kernel of ``form`` writes ``p|q``: every ``setp`` but scalar ``.f16``/``.bf16``
    (ptxas rejects a second destination there)."""
    return form.family == "setp" and form.type not in ("f16", "bf16")


def operand_dtype(operand) -> np.dtype:
    """The dtype of the global array holding ``operand`` (uint32 for predicates)."""
    return PREDICATE if operand.ptx_type == "pred" else CONTAINER[operand.container_bits]


def destination_names(form: Form) -> list[str]:
    """The kernel's output parameter suffixes in order: ``out`` (and ``out_q`` for ``p|q``)."""
    return ["out", "out_q"] if two_destinations(form) else ["out"]


def build(form: Form, target: str, version: str, predicated: bool, name: str):
    """The kernel text and parameters of ``form`` (see the module docstring); returns
    ``(ptx, params)`` with :class:`~tilecheck.emit.kernel.KernelParam` entries."""
    regs = RegisterFile()
    lines: list[str] = []
    emit = lines.append
    sources = list(form.sources)
    (dst,) = form.destinations
    outs = destination_names(form)
    params = [KernelParam(param_name(f"src_{o.name}"), "u64", "source", o.name, operand_dtype(o), 1)
              for o in sources]
    params += [KernelParam(param_name(n), "u64", "output", dst.name if n == "out" else "q", operand_dtype(dst), 1)
               for n in outs]
    if predicated:
        params.append(KernelParam(param_name("mask"), "u64", "mask", None, PREDICATE, 1))
    params.append(KernelParam(param_name("n"), "u32", "count"))

    _, i_reg, _ = bounds_guard(regs, emit, param_name("n"))
    offsets: dict[int, str] = {}
    address: dict[str, str] = {}
    for p in params[:-1]:
        size = p.dtype.itemsize
        if size not in offsets:
            offsets[size] = regs.new("b64")
            emit(f"mul.wide.u32 {offsets[size]}, {i_reg}, {size};")
        reg = regs.new("b64")
        emit(f"ld.param.u64 {reg}, [{p.name}];")
        emit(f"cvta.to.global.u64 {reg}, {reg};")
        emit(f"add.s64 {reg}, {reg}, {offsets[size]};")
        address[p.name] = reg

    def load(operand, at: str) -> str:
        """A register holding the operand's value read from ``[at]``."""
        if operand.ptx_type == "pred":
            word, pred = regs.new("b32"), regs.new("pred")
            emit(f"ld.global.u32 {word}, [{at}];")
            emit(f"setp.ne.u32 {pred}, {word}, 0;")
            return pred
        reg = regs.new(register_class(operand.register_type))
        emit(f"ld.global.{_access(operand)} {reg}, [{at}];")
        return reg

    text = {o.name: load(o, address[param_name(f"src_{o.name}")]) for o in sources}
    guard_text = ""
    if predicated:
        m, p = regs.new("b32"), regs.new("pred")
        emit(f"ld.global.u32 {m}, [{address[param_name('mask')]}];")
        emit(f"setp.ne.u32 {p}, {m}, 0;")
        guard_text = f"@{p} "
    if predicated:  # preserve semantics: every destination starts as the old output
        dst_regs = [load(dst, address[param_name(n)]) for n in outs]
    else:
        dst_regs = [regs.new("pred" if dst.ptx_type == "pred" else register_class(dst.register_type))
                    for _ in outs]
    dst_text = "|".join(dst_regs)
    operands = [dst_text if o.role == "dst" else text[o.name] for o in form.operands]
    emit(f"{guard_text}{form.name} {', '.join(operands)};")
    for reg, n in zip(dst_regs, outs):
        at = address[param_name(n)]
        if dst.ptx_type == "pred":
            word = regs.new("b32")
            emit(f"selp.u32 {word}, 1, 0, {reg};")
            emit(f"st.global.u32 [{at}], {word};")
        else:
            emit(f"st.global.{_access(dst)} [{at}], {reg};")

    entry = single_entry(name, params, regs.declarations(), lines, INDENT)
    abi = ", ".join(f"{p.name[len('param_'):]}: {p.dtype.name}[n]" if p.dtype is not None
                    else f"{p.name[len('param_'):]}: u32" for p in params)
    what = ", ".join(f"src_{o.name}[i]" for o in sources)
    result = " and out_q[i] = its second destination" if len(outs) == 2 else ""
    comments = [GENERATED + f": single-instruction kernel {name}, {target}, PTX ISA {version}.",
                f"ABI ({name}): {abi}; thread i < n: out[i] = the instruction applied to ({what}){result}"
                + ("; only where mask[i] != 0 (the outputs keep their old values elsewhere)" if predicated else "")
                + "; predicates are held as uint32 0/1."]
    return module_text(version, target, comments, [entry]), tuple(params)


def _access(operand) -> str:
    """The ld/st type moving one container of ``operand`` (``u8`` for 8-bit types, else ``bN``)."""
    bits = operand.container_bits
    return "u8" if bits == 8 else f"b{bits}"
