"""Frozen dataclasses for what the spec database holds: families, concrete forms, operands, gates.

These are plain data built by :mod:`tilecheck.spec.database`; every other component reads them
and nothing writes them after loading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from tilecheck.errors import Location, UnknownFormError
from tilecheck.formats import Format
from tilecheck.spec import registry
from tilecheck.spec.contract import Contract, Special  # noqa: F401 - the contract types, re-exported
from tilecheck.spec.types import PTX_TYPES


@dataclass(frozen=True)
class Reference:
    """A citation into a document (pin the version: PTX section numbers move between ISAs)."""

    document: str
    section: str
    anchor: str = ""

    def __str__(self) -> str:
        text = f"{self.document} §{self.section}" if self.section[:1].isdigit() else f"{self.document}, {self.section}"
        return f"{text} ({self.anchor})" if self.anchor else text


@dataclass(frozen=True)
class OperandSpec:
    """One operand of a form.

    ``registers`` is how many native registers the operand spans (the tile atom extent): 1 for
    scalar and packed operands, the vector length for ``ld/st.v2/.v4``. ``ptx_type`` is the
    instruction's type token, ``register_type`` the PTX register type that holds one register.
    ``format`` is the :class:`~tilecheck.formats.Format` of ``element_format`` taken from the
    database that loaded the form (``None`` for bit, integer and address operands).
    """

    name: str
    role: str  # dst | src | addr
    ptx_type: str
    register_type: str
    container_bits: int
    element_format: str | None
    lanes: int
    registers: int
    doc: str = ""
    format: Format | None = None

    @property
    def is_read(self) -> bool:
        return self.role in ("src", "addr")


@dataclass(frozen=True)
class Target:
    """A target gate: lowest ``sm_XX`` and lowest PTX ISA version. ``later``: ``(sm, ptx)`` pairs,
    a lower version that suffices from that ``sm_XX`` on (ptxas takes the 8-bit float conversions
    from sm_89 with PTX ISA 8.1, or from sm_90 with 7.8)."""

    sm: int
    ptx: tuple[int, int]
    later: tuple[tuple[int, tuple[int, int]], ...] = ()

    def ptx_for(self, sm: int | None) -> tuple[int, int]:
        """The lowest PTX ISA version the gate asks of a module for ``sm_XX`` (None: the gate's own)."""
        return min([self.ptx] + [v for s, v in self.later if sm is not None and sm >= s])

    @property
    def ptx_text(self) -> str:
        return f"{self.ptx[0]}.{self.ptx[1]}"

    def __str__(self) -> str:
        later = "".join(f" (from sm_{sm}: PTX ISA {v[0]}.{v[1]}+)" for sm, v in self.later)
        return f"sm_{self.sm}+, PTX ISA {self.ptx_text}+{later}"


@dataclass(frozen=True)
class Semantics:
    """A registry key and its typed parameters (see :mod:`tilecheck.spec.registry`)."""

    key: str
    items: tuple[tuple[str, object], ...] = ()

    @property
    def params(self) -> dict:
        return dict(self.items)

    def get(self, name: str, default=None):
        """One typed parameter (``rounding``, ``ftz``, ...), or ``default``."""
        return self.params.get(name, default)

    @property
    def operation(self) -> str:
        """The operation the key computes (``approx.rcp_hi`` -> ``rcp``; see :mod:`tilecheck.spec.registry`)."""
        return registry.operation_of(self.key)

    @property
    def function(self) -> str:
        """The key's function (``approx.rcp_hi`` -> ``rcp_hi``)."""
        return registry.function_of(self.key)

    @property
    def high_word(self) -> bool:
        """True for the f64 variants computed from the operand's upper 32 bits."""
        return registry.is_high_word(self.key)


@dataclass(frozen=True)
class NanPolicy:
    """What NaN bits a result may carry: ``unspecified``, ``propagate``, ``canonical`` or ``none``."""

    policy: str
    bits: int | None = None
    source: str = ""


@dataclass(frozen=True)
class Example:
    """A documented or recorded vector: operand bits -> result bits for one form."""

    form: str
    operands: tuple[int, ...]
    result: int
    source: str
    variant: str = "documented"
    location: Location | None = None


@dataclass(frozen=True)
class IllegalSpelling:
    """A spelling recorded as illegal, with the reason and ptxas's message.

    ``ptxas_accepts`` marks a spelling the ISA does not define but ptxas assembles anyway (a
    measured leniency; ``reason`` says what ptxas makes of it). ``ptxas_unstable`` marks one whose
    ptxas verdict is not reproducible: the same module sometimes assembles and sometimes fails with
    the recorded message.
    """

    spelling: str
    reason: str
    ptxas: str | None
    location: Location
    ptxas_accepts: bool = False
    ptxas_unstable: bool = False
    reading: tuple[str, ...] = ()  # for a spelling ptxas accepts: the legal forms it may mean (any of them)


@dataclass(frozen=True, eq=False)
class Form:
    """One concrete instruction form, e.g. ``div.rn.ftz.f32``.

    ``formats`` is the formats table of the database that loaded the form (``spec/formats`` of its
    root): :attr:`format` and :meth:`format_of` resolve names in it, so that a database loaded
    from another root computes with that root's formats, never with the default root's.
    """

    name: str
    isa: str
    family: str
    group: str
    opcode: str
    modifiers: tuple[str, ...]
    qualifiers: tuple[tuple[str, str], ...]
    type: str
    operands: tuple[OperandSpec, ...]
    target: Target
    semantics: Semantics
    kind: str  # exact | contract | memory
    nan: NanPolicy
    contract: Contract | None
    reference: Reference
    location: Location
    notes: str = ""
    examples: tuple[Example, ...] = field(default=())
    formats: Mapping[str, Format] = field(default_factory=dict, repr=False)

    @property
    def element_format(self) -> str | None:
        """The name of the number format of each lane (``None`` for bit and integer types)."""
        return PTX_TYPES[self.type].element

    @property
    def format(self) -> Format | None:
        """The :class:`~tilecheck.formats.Format` of each lane, from the form's own database
        (``None`` for bit and integer types)."""
        name = PTX_TYPES[self.type].element
        return None if name is None else self.format_of(name)

    def format_of(self, name: str) -> Format:
        """The format called ``name`` (``f64``, or a PTX type token such as ``f16x2`` for its
        element format) in the form's own database."""
        if name in PTX_TYPES and PTX_TYPES[name].element is not None:
            name = PTX_TYPES[name].element
        try:
            return self.formats[name]
        except KeyError:
            raise UnknownFormError(f"{self.name}: the spec database has no format {name!r}") from None

    @property
    def lanes(self) -> int:
        """Values packed in one register (2 for ``f16x2``)."""
        return PTX_TYPES[self.type].lanes

    @property
    def container_bits(self) -> int:
        """Width of the value of the form's type (the register holding it may be wider)."""
        return PTX_TYPES[self.type].bits

    @property
    def exact(self) -> bool:
        return self.kind == "exact"

    @property
    def sources(self) -> tuple[OperandSpec, ...]:
        return tuple(o for o in self.operands if o.role != "dst")

    @property
    def destinations(self) -> tuple[OperandSpec, ...]:
        return tuple(o for o in self.operands if o.role == "dst")

    def qualifier(self, axis: str, default: str = "") -> str:
        return dict(self.qualifiers).get(axis, default)

    def __repr__(self) -> str:
        return f"Form({self.name!r})"


@dataclass(frozen=True)
class Hint:
    """Qualifiers of one kind that leave the bits of an elementwise kernel's memory access unchanged
    (``ld.global.cg``, ``.L1::evict_last``, ``.L2::cache_hint``, ``ld.volatile``): at most one of
    ``tokens`` per spelling, on forms of ``spaces`` (``global``, ``global.nc``, ``generic``), from
    ``target``; ``operand``: the operand the qualifier adds after the form's own (``cache-policy``),
    or None; ``excludes``: qualifiers it may not be combined with."""

    tokens: tuple[str, ...]
    spaces: tuple[str, ...]
    target: Target
    source: str
    operand: str | None = None
    excludes: tuple[str, ...] = ()  # qualifiers a spelling with one of ``tokens`` may not carry


@dataclass(frozen=True, eq=False)
class Family:
    """One spec file: an instruction family and its expanded forms."""

    name: str
    isa: str
    summary: str
    reference: Reference
    path: str
    forms: tuple[Form, ...]
    illegal: tuple[IllegalSpelling, ...]
    examples: tuple[Example, ...]
    notes: str = ""
    operand_names: tuple[str, ...] = ()
    opcode_qualifiers: tuple[str, ...] = ()  # must directly follow the opcode (div.full)
    hints: tuple[Hint, ...] = ()  # performance qualifiers of memory accesses (ld.global.cg)


@dataclass(frozen=True)
class Verdict:
    """The spec's legality verdict on a spelling for a target."""

    spelling: str
    legal: bool
    form: Form | None
    reason: str = ""
    ptxas: str | None = None
    target: str | None = None


PACKED_CONVERSIONS = ("cvt.pack", "cvt.lanes")
"""Semantics keys of the conversions that produce or read packed values, one conversion per lane."""


def lane_conversion(form: Form) -> Form | None:
    """The conversion one lane of a packed conversion performs, as a scalar ``cvt.float`` form of
    the same name (``cvt.rn.satfinite.e4m3x2.f32``: one f32 to one E4M3; ``cvt.rn.f16x2.e4m3x2``:
    one E4M3 to one f16), or None for any other form. PTX has no scalar conversion to or from the
    8-bit floats: an elementwise reference names the packed form, and means what it does to each lane."""
    if form.kind != "function" or form.semantics.key not in PACKED_CONVERSIONS:
        return None
    dst, src = form.operands[0], next(o for o in form.operands if o.role == "src")
    d_type, s_type = PTX_TYPES[dst.ptx_type], PTX_TYPES[src.ptx_type]
    scalar = {t.element: t.name for t in PTX_TYPES.values() if t.kind == "f"}

    def one(op: OperandSpec, t) -> OperandSpec:
        lane = PTX_TYPES[scalar[t.element]]
        return OperandSpec(op.name, op.role, lane.name, lane.register, lane.bits, lane.element, 1, 1, op.doc,
                           form.format_of(lane.element))

    return Form(form.name, form.isa, form.family, form.group, form.opcode, form.modifiers, form.qualifiers,
                scalar[s_type.element], (one(dst, d_type), one(src, s_type)), form.target,
                Semantics("cvt.float", form.semantics.items), form.kind, form.nan, form.contract, form.reference,
                form.location, form.notes, (), form.formats)
