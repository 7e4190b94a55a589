"""Recorded vector files: results of forms on given operands, one case per line.

The format (UTF-8 text)::

    # tilecheck vectors 1
    # gpu: NVIDIA H200
    # compute_capability: 90
    # driver: 13000
    # date: 2025-11-29T10:12:00Z
    # source: tools/gpu_campaign.py, gpu backend (jit)
    # Free comments start with '#', anywhere.
    div.rn.f32 0x3f800000 0x40400000 0x3eaaaaab
    sqrt.rn.f32 0x40000000 0x3fb504f3      # text after '#' is a comment
    add.rn.f16x2 0x3c003c00 0x40000000 0x42003c00

* A case line is ``FORM OPERAND_HEX... RESULT_HEX``: the form in any qualifier order tilecheck
  accepts, one hex bit pattern per source operand in PTX source order, then the result. Packed
  operands (``f16x2``, ``f32x2``) are one container each, element 0 in the low bits. Hex digits
  may carry a ``0x`` prefix; a pattern must fit its container.
* Header: ``# key: value`` lines before the first case line. The keys tilecheck writes are
  ``gpu``, ``compute_capability``, ``driver`` (``cudaDriverGetVersion``), ``date`` (ISO 8601 UTC),
  ``source`` (what produced the file), and optionally ``runtime``, ``cupy``, ``ptxas``, ``code``
  (``jit``: PTX through the driver, ``cubin``: assembled by the local ptxas), ``target``. Missing
  keys are reported as unknown, never an error; the optional first line ``# tilecheck vectors 1``
  names the format version.
* Blank lines are ignored; ``#`` starts a comment anywhere on a line. A file whose name ends in
  ``.gz`` is gzip-compressed text.

Reading collects every malformed line (unknown form, wrong operand count, bad hex, a pattern too
wide) and raises :class:`VectorFileError` listing each as ``FILE:LINE: error: ...`` (exit 2).
"""

from __future__ import annotations

import datetime
import gzip
import os
import re
from dataclasses import dataclass, field

from tilecheck.errors import IllegalFormError, Location, Problem, TilecheckError, UnknownFormError, UsageError
from tilecheck.spec.types import PTX_TYPES

__all__ = ["VectorCase", "VectorFile", "VectorFileError", "read_vectors", "VectorWriter", "HEADER_KEYS",
           "MAGIC"]

MAGIC = "# tilecheck vectors 1"
"""The first line tilecheck writes (optional when reading)."""

HEADER_KEYS = ("gpu", "compute_capability", "driver", "date", "source")
"""Header keys that name where the results came from (shown as 'unknown' when absent)."""

_HEADER = re.compile(r"^#\s*([A-Za-z_][A-Za-z0-9_ -]*?)\s*:\s*(.*?)\s*$")
_HEX = re.compile(r"^(0[xX])?([0-9a-fA-F]+)$")


class VectorFileError(TilecheckError):
    """A vector file that cannot be read: every malformed line, located (``FILE:LINE: error: ...``).

    Fix: correct the lines shown; the format is described in :mod:`tilecheck.diff.vectors`.
    """

    exit_code = 2

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(first.message, first.location)

    def __str__(self) -> str:
        lines = [str(p) for p in self.problems[:50]]
        if len(self.problems) > 50:
            lines.append(f"... and {len(self.problems) - 50} more")
        if len(self.problems) > 1:
            lines.append(f"{len(self.problems)} bad lines")
        return "\n".join(lines)


@dataclass(frozen=True)
class VectorCase:
    """One recorded case: the form's canonical name, operand and result bits, its line number."""

    form: str
    operands: tuple[int, ...]
    result: int
    line: int


@dataclass
class VectorFile:
    """A parsed vector file: ``header`` fields and ``cases`` in file order."""

    path: str
    header: dict[str, str] = field(default_factory=dict)
    cases: list[VectorCase] = field(default_factory=list)

    def origin(self) -> str:
        """One line naming where the results came from (unknown fields say so)."""
        return ", ".join(f"{k} {self.header.get(k, 'unknown')}" for k in HEADER_KEYS)


def _parse_hex(token: str, bits: int) -> tuple[int | None, str]:
    match = _HEX.match(token)
    if match is None:
        return None, f"{token!r} is not a hex bit pattern"
    value = int(match.group(2), 16)
    if value >> bits:
        return None, f"{token!r} does not fit in {bits} bits"
    return value, ""


def read_vectors(path: str, *, db) -> VectorFile:
    """Parse the vector file at ``path`` (forms resolved against ``db``, default: the built-in
    spec database). Raises :class:`VectorFileError` with every malformed line, or
    :class:`~tilecheck.errors.UsageError` when the file cannot be read."""
    try:
        with _open_text(path, "r") as fh:
            text = fh.read()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read vector file: {exc}") from exc
    out = VectorFile(path)
    problems: list[Problem] = []
    seen_case = False
    forms: dict[str, object] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#"):
            match = _HEADER.match(stripped)
            if match and not seen_case and stripped != MAGIC:
                out.header[match.group(1).strip().lower().replace(" ", "_")] = match.group(2)
            continue
        body = stripped.split("#", 1)[0].split()
        if not body:
            continue
        seen_case = True
        where = Location(path, number)
        name = body[0]
        form = forms.get(name)
        if form is None:
            try:
                form = db.form(name)
            except (UnknownFormError, IllegalFormError) as exc:
                problems.append(Problem(where, exc.message))
                continue
            forms[name] = form
        if form.kind == "memory":
            problems.append(Problem(where, f"{form.name} moves bits; vector files hold arithmetic forms"))
            continue
        want = len(form.sources)
        fields = body[1:]
        if len(fields) != want + 1:
            names = " ".join(o.name.upper() for o in form.sources)
            problems.append(Problem(where, f"{form.name} takes {want} operand(s) and a result "
                                           f"({form.name} {names} RESULT), got {len(fields)} field(s)"))
            continue
        width = form.container_bits
        values, bad = [], ""
        for token in fields:
            value, bad = _parse_hex(token, width)
            if value is None:
                break
            values.append(value)
        if bad:
            problems.append(Problem(where, f"{form.name}: {bad}"))
            continue
        out.cases.append(VectorCase(form.name, tuple(values[:-1]), values[-1], number))
    if problems:
        raise VectorFileError(problems)
    return out


def _open_text(path: str, mode: str):
    """A text file, gzip-compressed when the name ends in ``.gz``."""
    if path.endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def utc_now() -> str:
    """The current time as ISO 8601 UTC (for the ``date`` header field)."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class VectorWriter:
    """Write a vector file case by case, flushed as it goes (a killed run keeps what it wrote).

    ``header`` fields are written first (``date`` added when missing); :meth:`case` appends one
    line; :meth:`comment` a ``#`` line. Use as a context manager.
    """

    def __init__(self, path: str, header: dict):
        self.path = path
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        self._fh = _open_text(path, "w")
        self.count = 0
        fields = dict(header)
        fields.setdefault("date", utc_now())
        self._fh.write(MAGIC + "\n")
        for key, value in fields.items():
            self._fh.write(f"# {key}: {value}\n")
        self._fh.flush()

    def comment(self, text: str) -> None:
        """A comment line (one per line of ``text``)."""
        for line in str(text).splitlines() or [""]:
            self._fh.write(f"# {line}\n")

    def case(self, form, operands, result: int, comment: str = "") -> None:
        """One case line: ``form`` (a Form or name), operand bits, result bits."""
        name = getattr(form, "name", str(form))
        type_ = getattr(form, "type", name.rsplit(".", 1)[-1])
        digits = PTX_TYPES[type_].bits // 4
        fields = " ".join(f"0x{int(v):0{digits}x}" for v in (*operands, result))
        self._fh.write(f"{name} {fields}" + (f"  # {comment}" if comment else "") + "\n")
        self.count += 1

    def line(self, text: str) -> None:
        """One line as it is, flushed (files whose lines are not forms' cases, such as the GPU
        campaign's corpus files, keep this header)."""
        self._fh.write(text.rstrip("\n") + "\n")
        self._fh.flush()

    def cases(self, form, operands, results, comments=None) -> None:
        """Many case lines: ``operands`` one array per source, ``results`` an array."""
        columns = [list(map(int, o)) for o in operands]
        res = list(map(int, results))
        for i, r in enumerate(res):
            self.case(form, [c[i] for c in columns], r, comments[i] if comments else "")
        self._fh.flush()

    def close(self) -> None:
        """Flush and close the file."""
        self._fh.flush()
        self._fh.close()

    def __enter__(self) -> "VectorWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
