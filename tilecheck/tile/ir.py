"""The IR of a traced tile program: parameters, local buffers, launch config, ordered apply calls.

``@T.function`` turns a Python function into a :class:`Program`. The checker
(:mod:`tilecheck.legality`), the expansion (:mod:`tilecheck.tile.expand`), the emitter and the CPU
simulator read this IR; nothing writes it after tracing. :class:`Program` also offers ``check``,
``validate``, ``expand``, ``emit`` and ``run``: they are carried out by the facade
(:mod:`tilecheck.program`), which sits above the checker, the emitter and the simulator. This
module never imports it at load time; each method looks the facade up by name when called (see
:func:`operations`), so the layers stay one-way and a program traced through
``from tilecheck.tile import T`` has every method a user reaches for.

Operands of an :class:`ApplyCall` are, in the call's order (destination first):

* :class:`~tilecheck.tile.views.View` -- a tensor operand (a local register buffer, or a global
  tensor for the memory operand of ld/st);
* :class:`~tilecheck.tile.exprs.Expr` -- a scalar (``T.float32(4)``, an untyped Python literal,
  a scalar parameter);
* :class:`Opaque` -- anything else the program passed (reported by the checker as TC008).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from types import ModuleType

from tilecheck.errors import Location
from tilecheck.tile.dtypes import DType
from tilecheck.tile.exprs import Expr, ScalarParam
from tilecheck.tile.views import Buffer, View


@dataclass(frozen=True)
class LaunchConfig:
    """``T.cuda.LaunchConfig(grid=..., block=...)``: grid and block extents (x, y, z order).

    ``problem`` is set when an argument was malformed; ``T.device_entry`` reports it (TC804).
    """

    grid: tuple[int, ...] = (1,)
    block: tuple[int, ...] = (1,)
    problem: str | None = None

    @property
    def threads(self) -> int:
        """Threads per block."""
        return math.prod(self.block)

    @property
    def warps(self) -> int:
        """Whole warps per block (threads // 32)."""
        return self.threads // 32


@dataclass(frozen=True, eq=False)
class Instruction:
    """``T.ptx["div.rn.f32"]``: an opcode spelling, resolved by the checker against the spec database."""

    spelling: str

    def __repr__(self) -> str:
        return f'T.ptx["{self.spelling}"]'


@dataclass(frozen=True, eq=False)
class Opaque:
    """A value the program passed where the IR expects a view, expression, instruction or scope."""

    value: object

    @property
    def type_name(self) -> str:
        """The Python type of the value, for messages."""
        return type(self.value).__name__

    def __repr__(self) -> str:
        text = repr(self.value)
        return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class TensorType:
    """``T.Tensor(shape, dtype)``: the annotation of a global tensor parameter.

    ``problem`` is set for a malformed shape or unknown dtype; tracing reports it at the ``def``.
    """

    shape: tuple[int, ...]
    dtype: DType | None
    problem: str | None = None
    problem_code: str = "TC802"


@dataclass(frozen=True, eq=False)
class Param:
    """One kernel parameter: a global tensor (``view`` set) or a scalar (``scalar`` set)."""

    name: str
    index: int
    view: View | None = None
    scalar: ScalarParam | None = None

    @property
    def is_tensor(self) -> bool:
        """True for ``T.Tensor`` parameters."""
        return self.view is not None


@dataclass(frozen=True, eq=False)
class ApplyCall:
    """One ``T.cuda.tile.apply(...)`` as recorded, in program order (``index``), at ``location``.

    ``instruction`` is an :class:`Instruction` (or :class:`Opaque` for a non-instruction),
    ``scope`` the scope string (or :class:`Opaque`), ``pred`` None, an expression, a view or an
    opaque value, ``preserve_dst`` whatever was passed (the checker requires a bool), and
    ``parameters`` the other keywords given (none is legal; reported as TC006).
    """

    index: int
    instruction: Instruction | Opaque
    operands: tuple
    scope: str | Opaque
    pred: object
    preserve_dst: object
    parameters: tuple[tuple[str, object], ...]
    location: Location | None

    @property
    def spelling(self) -> str | None:
        """The opcode spelling, or None when the first argument was not an instruction."""
        return self.instruction.spelling if isinstance(self.instruction, Instruction) else None

    def __repr__(self) -> str:
        return f"ApplyCall#{self.index}({self.instruction!r}, {len(self.operands)} operands, scope={self.scope!r})"


# The module that carries out Program.check/validate/expand/emit/run. It is named, not imported:
# it sits above this layer (it imports the checker, the emitter and the simulator), so importing it
# here at load time would be an upward edge and a cycle.
FACADE = "tilecheck.program"


def operations() -> ModuleType:
    """The facade module (:mod:`tilecheck.program`) that carries out a program's operations.

    Imported by name on first use and cached by Python's module table, so importing the tile
    frontend loads none of the layers above it; the facade's functions ``check``, ``validate``,
    ``expand``, ``emit`` and ``run`` take the program as their first argument.
    """
    return importlib.import_module(FACADE)


class Program:
    """A traced ``@T.function``: the IR of its apply calls, and what can be done to it.

    Attributes: ``name``, ``location`` (the ``def`` line), ``params`` (:class:`Param`),
    ``locals`` (local :class:`~tilecheck.tile.views.Buffer` in allocation order), ``launch``
    (:class:`LaunchConfig` or None), ``calls`` (:class:`ApplyCall` in program order) and
    ``frontend_diagnostics`` (misuse recorded while tracing).

    Methods ``check``, ``validate``, ``expand``, ``emit`` and ``run`` are the facade's
    (:mod:`tilecheck.program`); each takes ``db`` (a spec database, loaded from the spec root once
    when left out).
    """

    def __init__(self, name: str, location: Location | None, params, locals_, launch, calls, diagnostics,
                 function=None):
        self.name = name
        self.location = location
        self.params: tuple[Param, ...] = tuple(params)
        self.locals: tuple[Buffer, ...] = tuple(locals_)
        self.launch: LaunchConfig | None = launch
        self.calls: tuple[ApplyCall, ...] = tuple(calls)
        self.frontend_diagnostics = tuple(diagnostics)
        self.function = function

    @property
    def buffers(self) -> tuple[Buffer, ...]:
        """Global parameter buffers then local buffers."""
        return tuple(p.view.buffer for p in self.params if p.is_tensor) + self.locals

    def describe(self) -> str:
        """A readable listing of the IR (parameters, locals, launch, calls)."""
        lines = [f"program {self.name} ({self.location})"]
        for p in self.params:
            if p.is_tensor:
                b = p.view.buffer
                lines.append(f"  param {p.name}: global {b.dtype} {b.shape}")
            else:
                lines.append(f"  param {p.name}: scalar {p.scalar.dtype}")
        for b in self.locals:
            lines.append(f"  local {b.name}: {b.dtype} {b.shape} layout {b.layout}")
        lines.append(f"  launch {self.launch}")
        for c in self.calls:
            ops = ", ".join(repr(o) for o in c.operands)
            # `is not None`/`is not False`: a pred expression has no truth value (it raises)
            extra = "".join(f", {k}={v!r}" for k, v in (("pred", c.pred), ("preserve_dst", c.preserve_dst))
                            if v is not None and v is not False)
            lines.append(f"  {c.location}: apply {c.instruction!r}, {ops}, scope={c.scope!r}{extra}")
        return "\n".join(lines)

    def check(self, target: str | None = None, db=None) -> list:
        """Every legality violation, as :class:`~tilecheck.tile.diagnostics.Diagnostic` in line order
        (empty: legal); ``target`` (``"sm_90"``) defaults to the spec database's default target."""
        return operations().check(self, target=target, db=db)

    def validate(self, target: str | None = None, db=None) -> None:
        """Raise :class:`~tilecheck.errors.IllegalTileOpError` (a ValueError) listing every violation."""
        operations().validate(self, target=target, db=db)

    def expand(self, target: str | None = None, db=None) -> list:
        """Validate, then every call's instruction instances in code-generation order."""
        return operations().expand(self, target=target, db=db)

    def emit(self, target: str | None, format: str = "ptx", db=None) -> str:
        """PTX (or with ``format="cuda"`` CUDA C++) for this program for ``target`` (``"sm_90"``;
        ``None``: the spec database's default target)."""
        return operations().emit(self, target=target, format=format, db=db)

    def run(self, *arrays, backend: str = "cpu", **options):
        """Execute the program on ``arrays`` (given positionally, in parameter order) and return the
        tensor arguments, outputs written in place (:func:`tilecheck.sim.run_program`)."""
        return operations().run(self, *arrays, backend=backend, **options)

    def __repr__(self) -> str:
        return f"<Program {self.name}: {len(self.calls)} apply call(s)>"


def is_tensor(operand) -> bool:
    """True for a view operand."""
    return isinstance(operand, View)


def is_scalar(operand) -> bool:
    """True for a scalar-expression operand."""
    return isinstance(operand, Expr)


def launch_of(program) -> LaunchConfig:
    """The program's launch configuration; without ``T.device_entry`` the smallest one its scopes
    need: one block of 128 threads for a warpgroup-scope call, 32 for a warp-scope call, else one
    thread (a cta-scope call needs an explicit launch; the checker requires it)."""
    if program.launch is not None:
        return program.launch
    scopes = {c.scope for c in program.calls}
    threads = 128 if "warpgroup" in scopes else 32 if "warp" in scopes else 1
    return LaunchConfig((1,), (threads,))
