"""How an approximate form's error bound is read: the two ulp readings and the reading applied.

The PTX ISA bounds several approximate instructions in "ulp" without defining the term. Two
readings exist, and they allow different values:

* ``exact`` -- ``|r - x| <= k * ulp(x)``, measured from the exact real result ``x`` (``ulp(x)`` is
  the spacing of the result format in ``x``'s binade, never below the subnormal spacing).
  ``rcp.approx.f32(3)`` may then return only 0x3eaaaaaa or 0x3eaaaaab.
* ``correctly-rounded`` -- the CUDA C++ Programming Guide's: ``r`` is at most ``k`` representable
  values away from ``RN(x)``, the correctly rounded (nearest-even) result, counting the values of
  the format in real-number order (the two zeros are one value, infinity is one step past the
  largest finite number). ``rcp.approx.f32(3) = 0x3eaaaaac`` and ``div.full.f32(1, 3) =
  0x3eaaaaad`` are allowed under it, and so is the largest finite number for a result that
  overflows.

``either`` (the default) allows what either reading allows: where the documents do not say which
is meant, a verifier must not reject what one of them permits. Relative-error bounds
(``sqrt.approx``, ``rsqrt.approx``: ``|r - x| <= 2^t * |x|``) have one reading only -- relative
error is defined against the exact value -- so the option does not change them and the reading
reported is ``relative``. Exact (correctly rounded) forms report ``none``.

:class:`Contract` is the one frozen type of an approximate instruction's contract, loaded from the
``contract:`` blocks of ``spec/ptx/*.yaml`` and ``spec/amdgpu/*.yaml`` (schema: the ``contract``
definitions of ``spec/schema/ptx-instruction.schema.json``); the reference model, the Z3 encoding
and the AMD code read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilecheck.errors import UsageError
from tilecheck.spec.registry import SPECIAL_RESULT_WORDS, SPECIAL_WORDS

ULP_READINGS = ("either", "exact", "correctly-rounded")
"""The values of every ``ulp_reading`` option (API keyword, CLI ``--ulp-reading``)."""

ULP_READING_DEFAULT = "either"
"""Allow what either reading allows unless a stricter reading is asked for."""

APPLIED_READINGS = ULP_READINGS + ("relative", "absolute", "none")
"""What :func:`applied_reading` may report."""


def check_ulp_reading(value) -> str:
    """``value`` if it names a reading, else :class:`~tilecheck.errors.UsageError`."""
    if value not in ULP_READINGS:
        raise UsageError(f"ulp_reading must be one of {', '.join(ULP_READINGS)}, got {value!r}")
    return value


def applied_reading(contract, requested: str = ULP_READING_DEFAULT) -> str:
    """The reading a contract check uses for ``requested``: ``none`` without a contract (exact
    forms), ``relative`` or ``absolute`` for those bounds (one reading each), else the ulp reading --
    ``either`` narrowed to the readings the contract's source admits."""
    check_ulp_reading(requested)
    if contract is None:
        return "none"
    if contract.ulp is None:
        return "absolute" if contract.bound.kind == "absolute" else "relative"
    if requested != "either":
        return requested
    readings = tuple(contract.readings)
    return "either" if len(readings) != 1 else readings[0]


CLASS_WORDS = tuple(SPECIAL_WORDS)
"""Operand class words of special-value tables and rule conditions (unsigned words: both signs;
``finite`` includes zeros and subnormals)."""

_HEX = re.compile(r"^0x[0-9a-fA-F]+$")


def class_word_problem(word: str, *, result: bool = False) -> str | None:
    """Why ``word`` is not an operand class word (``result``: a result word) of a special-value
    table or rule condition; None when it is one. Hex bits are accepted in tables."""
    known = SPECIAL_RESULT_WORDS if result else CLASS_WORDS
    if word in known or _HEX.match(str(word)):
        return None
    what = "result" if result else "class"
    return f"unknown {what} word {word!r} (known: {', '.join(known)}, or hex bits)"


RULE_RESULTS = ("nan", "signed-zero", "unbounded", "unmodelled")
"""What a domain rule fixes: a NaN, a zero with the exact result's sign, nothing (no bound), or
nothing tilecheck judges (a documented bound on a function it does not model yet: unknown)."""

FREE_RESULTS = ("unbounded", "unmodelled")
"""The rule results that leave the lane's result free (any result stands; the input is unknown)."""


@dataclass(frozen=True)
class Bound:
    """The error bound: ``kind`` ``ulp`` (``size`` = k ulps, ``readings`` the ulp readings the
    source admits) or ``relative`` (``|r - x| <= 2**size * |x|``). ``subnormal_ulps``: a relative
    bound that also allows this many subnormal spacings where ``|x|`` is below the smallest normal
    (AMD's V_RCP_F64 "2^29 ulp"). ``absolute``: ``(t, lo, hi)`` -- where the operand's magnitude
    lies strictly between ``2**lo`` and ``2**hi`` a relative bound is ``|r - x| <= 2**t`` instead
    (``lg2.approx.f32``: 2^-22 on (0.5, 2)). ``ranges``: an absolute bound by the operand's
    magnitude, pairs ``(k, t)``: |a| <= k pi bounds the error by ``2**t``, the first pair that holds
    deciding, nothing beyond the last (``sin.approx.f32``: ((2, -20.5), (100, -14.7)))."""

    kind: str
    size: float
    readings: tuple[str, ...] = ()
    subnormal_ulps: float | None = None
    absolute: tuple[float, int, int] | None = None
    ranges: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class OperandCondition:
    """A rule's condition on one operand: one of ``classes`` (empty: any), ``|x| > 2**above_log2``,
    ``|x| < 2**below_log2`` -- every given part must hold."""

    classes: tuple[str, ...] = ()
    above_log2: int | None = None
    below_log2: int | None = None


@dataclass(frozen=True)
class Rule:
    """A domain rule: when each ``(operand index, condition)`` of ``when`` holds, the result is
    ``result`` (one of :data:`RULE_RESULTS`)."""

    when: tuple[tuple[int, OperandCondition], ...]
    result: str
    source: str = ""


@dataclass(frozen=True)
class Special:
    """One exact special case: operand class words (or hex bits) -> result word or hex bits."""

    operands: tuple[str, ...]
    result: str


@dataclass(frozen=True)
class Contract:
    """Acceptance rule of an approximate instruction: bound, domain rules, special-value table.

    ``operation`` is the exact function approximated (``div``, ``rcp``, ``sqrt``, ``rsqrt``);
    ``flush_inputs``/``flush_outputs`` say whether subnormal operands read, and subnormal results
    are written, as signed zeros (PTX: the ``.ftz`` qualifier; AMD: the instruction's data).
    Lanes are decided by the first matching rule, else the special-value table, else the bound.
    """

    bound: Bound
    source: str
    operation: str = ""
    rules: tuple[Rule, ...] = ()
    specials: tuple[Special, ...] = ()
    provisional: bool = False
    notes: str = ""
    flush_inputs: bool = False
    flush_outputs: bool = False

    @property
    def ulp(self) -> float | None:
        """k of a k-ulp bound (None for a relative bound)."""
        return self.bound.size if self.bound.kind == "ulp" else None

    @property
    def relative_log2(self) -> float | None:
        """t of a relative bound 2^t (None for an ulp bound)."""
        return self.bound.size if self.bound.kind == "relative" else None

    @property
    def readings(self) -> tuple[str, ...]:
        """The ulp readings the source admits (empty for a relative bound)."""
        return self.bound.readings if self.bound.kind == "ulp" else ()

    def describe(self) -> str:
        """The bound in words, e.g. ``2 ulp (readings: exact, correctly-rounded)``."""
        if self.bound.kind == "ulp":
            return f"{self.bound.size:g} ulp (readings: {', '.join(self.readings)})"
        if self.bound.kind == "absolute":
            if self.bound.ranges:
                parts = [f"2^{t:g} for |a| <= {k}pi" for k, t in self.bound.ranges]
                return f"absolute error {', '.join(parts)}, none beyond"
            return f"absolute error 2^{self.bound.size:g}"
        text = f"relative error 2^{self.bound.size:g}"
        if self.bound.absolute is not None:
            t, lo, hi = self.bound.absolute
            text += f" (absolute error 2^{t:g} for |a| in (2^{lo}, 2^{hi}))"
        return text


@dataclass(frozen=True)
class SignRule:
    """What an error bound grants about the sign (``spec/rules/contracts.yaml``, stated once).

    ``rule`` ``ieee``: every allowed result of a bound has the sign IEEE 754 gives the exact
    result, and a zero result is the zero of that sign, so no allowed set crosses zero under
    either ulp reading. ``statement`` and ``short`` are what reports quote; ``sources`` the ISA
    and standard text the rule rests on."""

    rule: str
    statement: str
    short: str
    sources: tuple[str, ...]

    def describe(self) -> str:
        """One line for reports, next to the ulp reading: ``sign: <short>``."""
        return f"sign rule: {self.short}"


def power_of_two(text: str) -> int:
    """The exponent N of ``"2^N"`` (schema-checked spelling)."""
    return int(text.split("^", 1)[1])
