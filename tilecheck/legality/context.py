"""Per-call checking state shared by the condition modules: the resolved form, the scope's group
axes, each operand's role, and the list diagnostics are added to (with operand names filled in).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecheck.tile.diagnostics import Diagnostic
from tilecheck.tile.coords import axis_kind
from tilecheck.tile.views import View


@dataclass
class Operand:
    """One operand of a call bound to the form's operand spec.

    ``kind`` is ``register`` or ``memory``; ``type_spec`` is the operand spec whose PTX type the
    operand's dtype must carry (for a memory operand: the paired register operand's spec);
    ``atom`` is the required final extent; ``written`` marks destinations (register results, and
    the memory operand of a store). ``usable`` turns false once a diagnostic makes further checks
    of this operand meaningless; ``rank_ok`` once its axes can be split into group/repeat/atom.
    """

    index: int
    value: object
    spec: object
    kind: str
    type_spec: object
    atom: int
    written: bool
    usable: bool = True
    rank_ok: bool = False
    dtype_ok: bool = True
    owned: bool = True

    @property
    def view(self) -> View | None:
        """The operand's view when it is a usable tensor operand."""
        return self.value if isinstance(self.value, View) and self.usable else None


@dataclass
class CallContext:
    """What the checks of one apply call need and produce."""

    call: object
    program: object
    form: object = None
    scope: str | None = None
    axes: tuple = ()
    operands: list[Operand] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def n_group(self) -> int:
        """Number of group axes of the call's scope."""
        return len(self.axes)

    def add(self, code: str, message: str = "", *, operand: int | None = None, axis: int | None = None,
            expected=None, found=None, subject: str | None = None, hint: str | None = None,
            severity: str = "error") -> None:
        """Record a diagnostic at the call's line; operand names and axis kinds are filled in."""
        name = doc = kind = None
        if operand is not None and self.form is not None and operand < len(self.form.operands):
            spec = self.form.operands[operand]
            # the spec's doc may go on ("destination register(s); a {r0, ...} vector ..."): keep its head
            name, doc = spec.name, (spec.doc.split(";")[0].strip() or None) if spec.doc else None
        if operand is not None and axis is not None:
            value = self.call.operands[operand]
            if isinstance(value, View):
                kind = axis_kind(axis, value.ndim, self.n_group)
        self.diagnostics.append(Diagnostic(
            code, message, self.call.location, severity=severity, operand=operand, operand_name=name,
            operand_doc=doc, axis=axis, axis_kind=kind, expected=None if expected is None else str(expected),
            found=None if found is None else str(found), subject=subject, hint=hint))
