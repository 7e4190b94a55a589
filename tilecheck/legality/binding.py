"""Bind a call's operands to the form's operand specs: count and kind (TC004, TC008, TC102,
TC301, TC302, TC601).

Register operands (role ``dst``/``src``) must be local buffer views or, for single-register read
inputs, scalar expressions. The memory operand of ld/st (role ``addr``) must be a global tensor
view whose final axis counts the words of the access (the vector length of the register operand).
"""

from __future__ import annotations

from tilecheck.legality.context import CallContext, Operand
from tilecheck.tile.exprs import Expr
from tilecheck.tile.ir import Opaque
from tilecheck.tile.views import View


def _memory_space(form) -> str:
    for space in ("global", "shared", "local", "const", "param"):
        if space in form.modifiers or any(m.startswith(space + "::") for m in form.modifiers):
            return space
    return "generic"


def bind_operands(ctx: CallContext) -> bool:
    """Fill ``ctx.operands``; False when the operand count is wrong (then no operand is checked)."""
    form, call = ctx.form, ctx.call
    specs = form.operands
    if len(call.operands) != len(specs):
        names = ", ".join(s.name + (f" ({s.doc})" if s.doc else "") for s in specs)
        ctx.add("TC004", f"{form.name} takes {len(specs)} operand(s): {names}", subject="operands",
                expected=len(specs), found=len(call.operands))
        return False
    register_specs = [s for s in specs if s.role != "addr"]
    has_dst = any(s.role == "dst" for s in specs)
    for index, (value, spec) in enumerate(zip(call.operands, specs)):
        if spec.role == "addr":
            pair = register_specs[0] if register_specs else spec
            atom = max((s.registers for s in register_specs), default=1)
            operand = Operand(index, value, spec, "memory", pair, atom, written=not has_dst)
        else:
            operand = Operand(index, value, spec, "register", spec, spec.registers, written=spec.role == "dst")
        ctx.operands.append(operand)
        _check_kind(ctx, operand, form)
    return True


def _check_kind(ctx: CallContext, op: Operand, form) -> None:
    value, i = op.value, op.index
    if isinstance(value, Opaque):
        ctx.add("TC008", "an operand must be a tensor view or a scalar expression", operand=i,
                expected="a view (T.alloc_local / a T.Tensor parameter) or a scalar such as T.float32(4)",
                found=f"{value!r} ({value.type_name})")
        op.usable = False
        return
    if isinstance(value, View) and value.poisoned:
        op.usable = False  # the view itself was already diagnosed where it was made
        return
    if op.kind == "memory":
        space = _memory_space(form)
        if isinstance(value, Expr):
            ctx.add("TC601", f"the memory operand of {form.name} must be a global tensor view", operand=i,
                    expected="a view of a T.Tensor parameter", found=f"scalar {value!r}")
            op.usable = False
        elif not value.buffer.is_global:
            ctx.add("TC601", f"the memory operand of {form.name} must be a global tensor view", operand=i,
                    expected="a view of a T.Tensor parameter", found=f"local register buffer {value.buffer.name!r}",
                    hint="ld/st move data between a global tensor and registers; registers are not addressable")
            op.usable = False
        elif space != "global":
            ctx.add("TC601", f"{form.name} addresses .{space} memory; tile programs have only global tensors",
                    operand=i, expected="a .global form", found=f".{space}")
            op.usable = False
        return
    if isinstance(value, Expr):
        if op.written:
            ctx.add("TC301", "a destination must be a local register tensor", operand=i,
                    expected="a local buffer view", found=f"scalar {value!r}")
            op.usable = False
        elif op.spec.registers > 1:
            ctx.add("TC302", f"a scalar can replace only a single-register input; this operand spans "
                             f"{op.spec.registers} registers", operand=i,
                    expected=f"a tensor view ending in ({op.spec.registers},)", found=f"scalar {value!r}")
            op.usable = False
        return
    if value.buffer.is_global:
        memory = form.kind == "memory"
        ctx.add("TC102", "register operands must be local registers owned by the issuing thread", operand=i,
                expected="a local buffer view (T.alloc_local)", found=f"global tensor {value.buffer.name!r}",
                hint=("the other operand is the memory one" if memory else
                      "load it first: T.cuda.tile.apply(T.ptx[\"ld.global...\"], r, tensor)"))
        op.usable = False
