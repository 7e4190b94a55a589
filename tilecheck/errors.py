"""The exception tree of tilecheck.

Every error a user can cause derives from :class:`TilecheckError`. Each class says what causes it
and how to fix it, and carries the exit code the CLI turns it into (``tilecheck.cli`` is the only
place that converts exceptions to exit codes):

* 1 -- the input was understood and judged bad (an illegal form or program, a mismatch);
* 2 -- the input could not be used at all (malformed spec, unknown form, bad operand, usage,
  missing tool or device).
"""

from __future__ import annotations

from dataclasses import dataclass

ECHO_LIMIT = 60


def echo(text: str, limit: int = ECHO_LIMIT) -> str:
    """``repr`` of user input for a message, shortened to about ``limit`` characters (a 5,000
    character operand is not printed back in full)."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


@dataclass(frozen=True)
class Location:
    """A place in a source file: ``path:line:column`` (1-based; 0 means unknown)."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line and self.column:
            return f"{self.path}:{self.line}:{self.column}"
        if self.line:
            return f"{self.path}:{self.line}"
        return self.path


@dataclass(frozen=True)
class Problem:
    """One located problem, printed compiler-style as ``location: error: message``."""

    location: Location | None
    message: str

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}error: {self.message}"


class TilecheckError(Exception):
    """Base class of every error tilecheck raises on purpose.

    ``exit_code`` is what ``tilecheck`` exits with when this error reaches the CLI.
    """

    exit_code = 2

    def __init__(self, message: str, location: Location | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is not None:
            return f"{self.location}: error: {self.message}"
        return f"error: {self.message}"


class SpecError(TilecheckError):
    """The spec database (YAML files) is malformed.

    Cause: a YAML syntax error, a schema violation, an unknown semantics key, a duplicate form
    name, or two forms claiming the same spelling. All problems found are collected in
    ``problems``, each with its file, line and column. Fix: edit the file at the location shown
    (``spec/README.md`` describes every field).
    """

    exit_code = 2

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        first = self.problems[0] if self.problems else Problem(None, "invalid spec")
        super().__init__(first.message, first.location)

    def __str__(self) -> str:
        lines = [str(p) for p in self.problems]
        if len(self.problems) > 1:
            lines.append(f"{len(self.problems)} problems in the spec database")
        return "\n".join(lines)


class UnknownFormError(TilecheckError, KeyError):
    """A form name that the spec database does not know at all.

    Cause: a typo, or an instruction tilecheck has no spec for. Fix: ``tilecheck spec list``
    shows every known form; the message suggests the closest names.
    """

    exit_code = 2

    def __str__(self) -> str:  # KeyError would quote the message
        return TilecheckError.__str__(self)


class IllegalFormError(TilecheckError, ValueError):
    """A spelling that is known to be illegal, or a legal form used on a target that lacks it.

    Cause: e.g. ``rcp.approx.f64`` (``.ftz`` is mandatory) or ``add.rn.f32x2`` on sm_90.
    ``reason`` says why; ``ptxas`` holds the assembler's message when recorded. Fix: use one
    of the legal spellings the message suggests, or a newer target.
    """

    exit_code = 1

    def __init__(self, message: str, location: Location | None = None, *, reason: str = "",
                 ptxas: str | None = None):
        super().__init__(message, location)
        self.reason = reason or message
        self.ptxas = ptxas


class OperandError(TilecheckError, ValueError):
    """An operand that cannot be turned into bits of the operand's format.

    Cause: bad hex (``0x7fz``), too many digits for the format, or a decimal literal that does not
    parse. Fix: give ``0x`` followed by at most as many hex digits as the format has nibbles, or a
    decimal/``inf``/``nan`` literal.
    """

    exit_code = 2


class ApproximateFormError(TilecheckError, ValueError):
    """``evaluate`` was asked for a single result of an approximate form.

    Cause: approximate forms (``rcp.approx.f32`` and friends) are contracts: many results are
    acceptable, so there is no one reference result. Fix: use ``tilecheck.allowed(form,
    result_bits, *operand_bits)`` to ask whether a result is acceptable, or
    ``tilecheck.model.reference`` for the model's representative value.
    """

    exit_code = 2


class UsageError(TilecheckError):
    """A command line or API call that does not make sense (wrong operand count, bad option).

    Fix: see ``tilecheck --help`` or the function's docstring.
    """

    exit_code = 2


class NotEncodableError(UsageError):
    """A form whose semantics has no encoding in the solver's theory was given to the Z3 layer.

    Cause: the registry marks the key (its ``smt`` field says why): 2^a (``ex2.approx``) is
    transcendental, outside the theory of floating point. Fix: judge it with the reference model
    (``tilecheck.allowed``), which decides its contract exactly; ``prove`` cannot take it.
    """


class ShapeMismatchError(UsageError, ValueError):
    """Operand arrays of one call whose shapes do not broadcast together.

    Fix: give arrays of one shape (or scalars, or shapes numpy broadcasts); the message names
    each operand and its shape.
    """

    exit_code = 2


class SemanticsError(TilecheckError):
    """A ``body:`` in a spec's semantics language does not parse or names an unknown primitive.

    Fix: the location points into the spec file; ``spec/README.md`` lists the language subset and
    the registry primitives.
    """

    exit_code = 2


class ToolNotFoundError(TilecheckError):
    """An external tool (ptxas, llvm-mc) is not installed.

    Fix: install the CUDA toolkit or ``pip install 'tilecheck[ptxas]'`` (ptxas from the
    ``nvidia-cuda-nvcc`` wheel), or set ``TILECHECK_PTXAS`` to its path.
    """

    exit_code = 2


class DeviceUnavailableError(TilecheckError):
    """The GPU backend was requested but no usable NVIDIA GPU/CuPy is present.

    Fix: ``pip install 'tilecheck[gpu]'`` on a machine with an NVIDIA driver, or use
    ``--backend cpu``.
    """

    exit_code = 2


class ClusterError(TilecheckError):
    """The Dask cluster of a sharded campaign could not be reached, or was lost during the run.

    Fix: check the scheduler address (``--scheduler``), then continue with ``--resume``: the
    checkpoint covers every batch merged before the loss.
    """

    exit_code = 2


class EmitError(TilecheckError):
    """A checked (legal) program uses something the emitter cannot express in PTX.

    Cause: e.g. a register view whose registers depend on the lane (PTX registers are static
    names), or a ``pred`` comparing half-precision values. Fix: the message names the call and
    what to change; report it if the program is legitimate.
    """

    exit_code = 2


class ProgramError(TilecheckError):
    """A tile program file could not be loaded (syntax error, no ``@T.function`` in it).

    Fix: the location points to the offending line of the program file.
    """

    exit_code = 2


class IllegalTileOpError(TilecheckError, ValueError):
    """A tile program breaks one or more legality conditions of ``T.cuda.tile.apply``.

    ``diagnostics`` lists every violation found (the checker collects them all), each with a
    stable code, the source line of the apply call, the operand and axis, and expected vs found.
    Fix: follow each diagnostic; ``tilecheck check PROGRAM.py`` prints them compiler-style.
    """

    exit_code = 1

    def __init__(self, diagnostics: list):
        self.diagnostics = list(diagnostics)
        first = self.diagnostics[0] if self.diagnostics else None
        super().__init__(str(first) if first is not None else "illegal tile program",
                         getattr(first, "location", None))

    def __str__(self) -> str:
        lines = [str(d) for d in self.diagnostics]
        lines.append(f"{len(self.diagnostics)} legality violation(s)")
        return "\n".join(lines)
