"""Operand shapes: ``(*group, *repeat, atom)`` agreement (TC201-TC205).

Group axes must have the scope's extents, every tensor operand the same repeat axes (the first
tensor operand with enough axes is the reference), and the final extent the operand's native
register count: 1 for scalar and packed forms, the vector length for ld/st ``.v2``/``.v4``.
"""

from __future__ import annotations

from tilecheck.legality.context import CallContext
from tilecheck.tile.coords import split_shape


def check_shapes(ctx: CallContext) -> None:
    """Report rank, group, repeat and atom mismatches of the usable tensor operands."""
    g = ctx.n_group
    tensors = [op for op in ctx.operands if op.view is not None]
    for op in tensors:
        if op.view.ndim < g + 1:
            names = ", ".join(a.name for a in ctx.axes)
            need = f"({names}, *repeat, atom)" if names else "(*repeat, atom)"
            ctx.add("TC201", f"a tensor operand at scope '{ctx.scope}' has shape {need}", operand=op.index,
                    expected=f"at least {g + 1} axes", found=f"shape {op.view.shape}")
            continue
        op.rank_ok = True
        for k, axis in enumerate(ctx.axes):
            if axis.extent is not None and op.view.shape[k] != axis.extent:
                ctx.add("TC202", "", operand=op.index, axis=k, expected=f"extent {axis.extent} ({axis.name})",
                        found=op.view.shape[k], hint=f"scope '{ctx.scope}' has group axes "
                        + ", ".join(f"{a.name}={a.extent}" for a in ctx.axes))
    ranked = [op for op in tensors if op.rank_ok]
    if not ranked:
        return
    reference = ranked[0]
    _, ref_repeat, _ = split_shape(reference.view.shape, g)
    ref_name = f"operand {reference.index} ('{reference.spec.name}')"
    for op in ranked:
        _, repeat, atom = split_shape(op.view.shape, g)
        if op is not reference and len(repeat) != len(ref_repeat):
            ctx.add("TC203", "tensor operands disagree on the number of repeat axes", operand=op.index,
                    expected=f"{len(ref_repeat)} repeat axes {ref_repeat}", found=f"{len(repeat)} {repeat} (shape {op.view.shape})",
                    hint=f"{ref_name} has shape {reference.view.shape}")
            continue
        if op is not reference:
            for j, (want, have) in enumerate(zip(ref_repeat, repeat)):
                if want != have:
                    ctx.add("TC204", "", operand=op.index, axis=g + j, expected=f"extent {want}", found=have,
                            hint=f"{ref_name} has repeat shape {ref_repeat}")
        if atom != op.atom:
            ctx.add("TC205", "the final axis counts native registers", operand=op.index, axis=op.view.ndim - 1,
                    expected=f"extent {op.atom}", found=atom, hint=_atom_hint(ctx, op))


def _atom_hint(ctx: CallContext, op) -> str:
    form = ctx.form
    if op.kind == "memory":
        return f"{form.name} moves {op.atom} word(s) per instruction; end the memory view in ({op.atom},)"
    spec = op.spec
    if spec.lanes > 1:
        return (f"{form.name} packs {spec.lanes} {spec.element_format} values in one {spec.register_type} register; "
                "the atom counts registers, not packed values: view the storage as "
                f"uint{spec.container_bits} words")
    return f"{form.name} operand '{spec.name}' is {op.atom} {spec.register_type} register(s)"
