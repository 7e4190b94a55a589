"""Single-instruction kernels of ``cvta``: an address is right when the value read through it is.

``cvta.SPACE.u64 d, a`` turns a ``SPACE`` address into a generic one, ``cvta.to.SPACE.u64`` a generic
address into a ``SPACE`` one. The kernel puts a known 32-bit value at an address of the space the
conversion starts from, converts that address with the instruction under test and reads 32 bits
through the result (a generic ``ld.u32`` or ``ld.SPACE.u32``). ABI (the memory kernels' shape):

=================  ======================================================================
``param_src_a``    uint32 per thread: the value placed in the space (``.global``, ``.shared``
                   and ``.local``; ``.const`` reads :data:`CONST_TABLE`, ``.param`` reads ``n``)
``param_out``      uint32 per thread: what was read through the converted address
``param_mask``     predicated kernels: ``@p cvta``; where the mask is 0 the destination keeps its
                   initial address: ``.global``: element ``n-1-i`` of ``src_a`` (each access
                   stays in one buffer); ``.shared``/``.local``: a slot holding the thread's
                   old output; ``.const``: table entry :data:`CONST_OFF` or the thread's old
                   output; ``.param``: ``param_n`` or the old output
``param_n``        the number of threads with an element
=================  ======================================================================

So thread ``i`` must read :func:`expected_value`. The ``.u32`` forms have no kernel: ptxas 13
assembles no 32-bit address (``32-Bit compilation is no longer supported``; with
``.address_size 64`` it rejects them), measured with CUDA 13.0.
"""

from __future__ import annotations

import numpy as np

from tilecheck.emit.abi import KernelParam
from tilecheck.emit.common import EmitError, RegisterFile, bounds_guard, single_entry
from tilecheck.emit.ptx import GENERATED, INDENT, module_text, param_name

CONST_TABLE = (0x3F800000, 0x7FC00001, 0x80000000, 0x00000001, 0xA5A5A5A5)
"""The ``.const`` array a ``cvta.const`` kernel reads: thread ``i`` element ``i % 4``."""
CONST_OFF = 4
"""The entry a masked-off thread of a predicated ``cvta.to.const`` kernel reads."""
SLOTS = 1024
"""``.shared`` slots per CTA (one per thread; a CTA has at most 1024 threads)."""
U32 = np.dtype(np.uint32)


def space_of(form) -> tuple[str, bool]:
    """(state space, whether the conversion goes to it) of a ``cvta`` form."""
    return form.semantics.get("space"), "to" in form.modifiers


def expected_value(form, sources: np.ndarray, n: int, mask=None, old=None) -> np.ndarray:
    """What thread ``i`` reads through the converted address (see the module docstring)."""
    space, to = space_of(form)
    idx = np.arange(sources.size)
    if space == "const":
        want = np.array(CONST_TABLE, dtype=U32)[idx % 4]
    elif space == "param":
        want = np.full(sources.size, n, dtype=U32)
    else:
        want = sources.astype(U32)
    if mask is None:
        return want
    off = np.asarray(mask) == 0
    if space == "global":
        kept = sources.astype(U32)[::-1]
    elif space == "const" and to:
        kept = np.full(sources.size, CONST_TABLE[CONST_OFF], dtype=U32)
    elif space == "param" and to:
        kept = np.full(sources.size, n, dtype=U32)
    else:
        kept = np.asarray(old, dtype=U32)
    return np.where(off, kept, want)


def build(form, target: str, version: str, predicated: bool, name: str):
    """The kernel text and parameters of a ``cvta`` form; ``(ptx, params)``."""
    space, to = space_of(form)
    regs = RegisterFile()
    lines: list[str] = []
    emit = lines.append
    params = [KernelParam(param_name("src_a"), "u64", "source", "a", U32, 1),
              KernelParam(param_name("out"), "u64", "output", "d", U32, 1)]
    if predicated:
        params.append(KernelParam(param_name("mask"), "u64", "mask", None, U32, 1))
    params.append(KernelParam(param_name("n"), "u32", "count"))
    n_reg, i_reg, tid = bounds_guard(regs, emit, param_name("n"), keep_tid=True)
    offset = regs.new("b64")
    emit(f"mul.wide.u32 {offset}, {i_reg}, 4;")
    generic, glob = {}, {}
    for p in params[:-1]:
        g, a = regs.new("b64"), regs.new("b64")
        emit(f"ld.param.u64 {g}, [{p.name}];")
        emit(f"add.s64 {g}, {g}, {offset};")  # kernel pointers are generic addresses
        emit(f"cvta.to.global.u64 {a}, {g};")
        generic[p.role], glob[p.role] = g, a
    value, old = regs.new("b32"), regs.new("b32")
    emit(f"ld.global.u32 {value}, [{glob['source']}];")
    pred = ""
    if predicated:
        m, p = regs.new("b32"), regs.new("pred")
        emit(f"ld.global.u32 {m}, [{glob['mask']}];")
        emit(f"setp.ne.u32 {p}, {m}, 0;")
        pred = f"@{p} "
        emit(f"ld.global.u32 {old}, [{glob['output']}];")
    variables: list[str] = []
    # `start`: the address in the space the conversion starts from, holding the value;
    # `initial`: where a masked-off thread's destination points (its old output)
    if space == "global":
        start = generic["source"] if to else glob["source"]
        # a masked-off thread reads element n-1-i of the same buffer (one buffer per access)
        mirror, m64 = regs.new("b32"), regs.new("b64")
        emit(f"sub.u32 {mirror}, {n_reg}, {i_reg};")
        emit(f"sub.u32 {mirror}, {mirror}, 1;")
        emit(f"mul.wide.u32 {m64}, {mirror}, 4;")
        initial = regs.new("b64")
        emit(f"ld.param.u64 {initial}, [{param_name('src_a')}];")
        if to:
            emit(f"cvta.to.global.u64 {initial}, {initial};")
        emit(f"add.s64 {initial}, {initial}, {m64};")
    elif space in ("shared", "local"):
        slot = regs.new("b64")
        var = f"tc_{space}"
        if space == "shared":
            variables.append(f".shared .align 4 .b8 {var}[{8 * SLOTS}];")
            t64 = regs.new("b64")
            emit(f"mul.wide.u32 {t64}, {tid}, 4;")
            emit(f"mov.u64 {slot}, {var};")
            emit(f"add.s64 {slot}, {slot}, {t64};")
        else:
            variables.append(f".local .align 4 .b8 {var}[8];")
            emit(f"mov.u64 {slot}, {var};")
        emit(f"st.{space}.u32 [{slot}], {value};")
        old_slot = regs.new("b64")
        emit(f"add.s64 {old_slot}, {slot}, {4 * SLOTS if space == 'shared' else 4};")
        if predicated:
            emit(f"st.{space}.u32 [{old_slot}], {old};")
        if to:  # the generic address of the slot comes from the opposite conversion
            start = regs.new("b64")
            emit(f"cvta.{space}.u64 {start}, {slot};")
            initial = old_slot
        else:
            start = slot
            # a generic address of the old slot: one memory per access, as for the others
            initial = regs.new("b64")
            emit(f"cvta.{space}.u64 {initial}, {old_slot};")
    elif space == "const":
        table = f"{name}_const"  # module scope: unique, so kernels share a module
        variables.append(f".const .align 4 .b32 {table}[5] = {{" + ", ".join(f"0x{v:08X}" for v in CONST_TABLE) + "};")
        base, pick, t64 = regs.new("b64"), regs.new("b32"), regs.new("b64")
        emit(f"mov.u64 {base}, {table};")
        emit(f"and.b32 {pick}, {i_reg}, 3;")
        emit(f"mul.wide.u32 {t64}, {pick}, 4;")
        slot = regs.new("b64")
        emit(f"add.s64 {slot}, {base}, {t64};")
        if to:
            start = regs.new("b64")
            emit(f"cvta.const.u64 {start}, {slot};")
            initial = regs.new("b64")
            emit(f"add.s64 {initial}, {base}, {4 * CONST_OFF};")
        else:
            start, initial = slot, generic["output"]
    elif space == "param":
        base = regs.new("b64")
        emit(f"mov.u64 {base}, {param_name('n')};")
        if to:
            start = regs.new("b64")
            emit(f"cvta.param.u64 {start}, {base};")
            initial = base
        else:
            start, initial = base, generic["output"]
    else:
        raise EmitError(f"{form.name}: no kernel for cvta of the {space} space")
    dst, got = regs.new("b64"), regs.new("b32")
    if predicated:
        emit(f"mov.b64 {dst}, {initial};")
    emit(f"{pred}{form.name} {dst}, {start};")
    emit(f"ld.{space + '.' if to else ''}u32 {got}, [{dst}];")
    emit(f"st.global.u32 [{glob['output']}], {got};")

    entry = single_entry(name, params, regs.declarations() + [v for v in variables if not v.startswith(".const")],
                         lines, INDENT)
    comments = [GENERATED + f": single-instruction kernel {name}, {target}, PTX ISA {version}.",
                f"ABI ({name}): src_a: uint32[n], out: uint32[n]" + (", mask: uint32[n]" if predicated else "")
                + ", n: u32; thread i < n reads 32 bits through the address the instruction yields "
                "(tilecheck.emit.cvta_kernel)."]
    module_vars = [[v] for v in variables if v.startswith(".const")]
    return module_text(version, target, comments, module_vars + [entry]), tuple(params)
