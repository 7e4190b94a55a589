"""The diagnostic record of the tile legality checker and its compiler-style rendering.

A :class:`Diagnostic` says which condition (a stable code from :mod:`tilecheck.tile.codes`)
an apply call breaks, where (``Location`` of the apply call), on which operand and axis, and
what was expected vs found::

    root_ratio.py:9: illegal[TC204]: operand 2 ('b', denominator) axis 1 (repeat): expected extent 4, found 3
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecheck.errors import Location
from tilecheck.tile.codes import CODES


@dataclass(frozen=True)
class Diagnostic:
    """One legality violation (or warning) found in a tile program.

    ``operand`` is the 0-based position in the apply call's operand list (destination first),
    ``operand_name``/``operand_doc`` the form's name and meaning for it (``'b'``, ``denominator``);
    ``axis`` is the 0-based axis of that operand and ``axis_kind`` ``group``/``repeat``/``atom``.
    ``subject`` names what is wrong when it is not an operand (``pred``, ``scope``, ``T.alloc_local``).
    """

    code: str
    message: str = ""
    location: Location | None = None
    severity: str = "error"
    operand: int | None = None
    operand_name: str | None = None
    operand_doc: str | None = None
    axis: int | None = None
    axis_kind: str | None = None
    expected: str | None = None
    found: str | None = None
    subject: str | None = None
    hint: str | None = None

    def __post_init__(self):
        if self.code not in CODES:
            raise ValueError(f"undocumented diagnostic code {self.code!r}; add it to tilecheck/tile/codes.py")

    @property
    def name(self) -> str:
        """The code's short name (``repeat-extent``)."""
        return CODES[self.code].name

    @property
    def line(self) -> int:
        """Source line of the apply call (0 when unknown)."""
        return self.location.line if self.location else 0

    def where(self) -> str:
        """``operand 2 ('b', denominator) axis 1 (repeat)``, or the subject."""
        parts = []
        if self.operand is not None:
            text = f"operand {self.operand}"
            if self.operand_name:
                text += f" ('{self.operand_name}'" + (f", {self.operand_doc})" if self.operand_doc else ")")
            parts.append(text)
        elif self.subject:
            parts.append(self.subject)
        if self.axis is not None:
            parts.append(f"axis {self.axis}" + (f" ({self.axis_kind})" if self.axis_kind else ""))
        return " ".join(parts)

    def summary(self) -> str:
        """The message after the location and code: subject, text, expected vs found."""
        body = self.message
        if self.expected is not None or self.found is not None:
            ef = f"expected {self.expected}, found {self.found}"
            body = f"{body}: {ef}" if body else ef
        where = self.where()
        return f"{where}: {body}" if where else body

    def __str__(self) -> str:
        label = "illegal" if self.severity == "error" else self.severity
        text = f"{label}[{self.code}]: {self.summary()}"
        if self.location is not None:
            text = f"{self.location}: {text}"
        if self.hint:
            text += f"\n    note: {self.hint}"
        return text

    def to_dict(self) -> dict:
        """A JSON-ready record (for ``tilecheck check --json`` and reports)."""
        return {
            "code": self.code, "name": self.name, "severity": self.severity,
            "file": self.location.path if self.location else None, "line": self.line,
            "operand": self.operand, "operand_name": self.operand_name, "axis": self.axis,
            "axis_kind": self.axis_kind, "subject": self.subject, "message": self.message,
            "expected": self.expected, "found": self.found, "hint": self.hint,
        }
