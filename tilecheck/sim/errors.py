"""Errors and warnings of the CPU simulator."""

from __future__ import annotations

from tilecheck.errors import TilecheckError


class PtxError(TilecheckError):
    """PTX the simulator cannot parse or does not support, located by line.

    Cause: a construct outside the subset tilecheck emits and executes (another state space, a
    backward branch, a nested scope, an instruction with no model). Fix: the message names the
    line and the construct; the supported subset is listed in :mod:`tilecheck.sim.machine`.
    """

    exit_code = 2

    def __init__(self, message: str, line: int | None = None, source: str | None = None):
        super().__init__(message)
        self.line = line
        self.source = source

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        prefix = f"{self.source}: " if self.source else ""
        return f"{prefix}{where}{self.message}"


class ExecutionError(TilecheckError):
    """Executing PTX went wrong: an out-of-bounds or misaligned access, a division by zero, a bad
    argument or launch. The message names the PTX line and the first offending thread."""

    exit_code = 2

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class OutsideBuffersError(ExecutionError):
    """A global load or store outside (or misaligned in) the buffers a run gave the kernel: the
    ABI's reading of its pointers (one element per thread, say) is not the kernel's."""


class ApproximateReferenceWarning(UserWarning):
    """The CPU backend executed approximate forms: their results are the model's reference value
    (the correctly rounded result under the form's flush-to-zero setting), one of many values the
    form's contract allows. A GPU may return another allowed value; judge it with
    ``tilecheck.allowed(form, result_bits, *operand_bits)``. ``forms`` lists the forms."""

    def __init__(self, message: str, forms: tuple[str, ...] = ()):
        super().__init__(message)
        self.forms = tuple(forms)


class UnsupportedPtxError(TilecheckError):
    """PTX that the compiled-code front end or executor cannot read or run, located ``FILE:line:col``.

    Cause: an instruction, directive or operand outside the supported subset (the message names it:
    ``unsupported instruction 'X'``), or malformed PTX. Fix: nothing in the input is skipped
    silently; rewrite the construct or extend :mod:`tilecheck.sim.plan`.
    """

    exit_code = 2

    def __init__(self, message: str, location=None, unsupported: bool = True):
        super().__init__(message, location)
        self.unsupported = unsupported


class StepLimitError(TilecheckError):
    """A loop ran longer than the step limit: the message names the loop's label and its location.

    Cause: a loop whose trip count depends on the input and exceeds the limit, or one that never
    ends. Fix: raise the limit if the loop is known to end."""

    exit_code = 2
