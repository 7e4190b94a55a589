"""Loader for the ``amdgpu-integer`` schema (``spec/amdgpu-int``): the AMD instructions without a float spec.

The AMDGCN simulator executes integer, bit, lane-mask and scalar instructions from one table
(:mod:`tilecheck.amdgpu.intops`) and handles selects, lane moves, memory, branches, MODE writes and
no-ops itself (:mod:`tilecheck.amdgpu.machine`). The project's rule is that every instruction it
executes is named in the spec database with the manual's semantics and an encoding ``llvm-mc-19``
judges; ``spec/amdgpu-int/*.yaml`` is where those instructions are named (one file per family,
one entry per mnemonic). This module reads those files into :class:`IntegerInstruction` records:

* :func:`load_integer_instructions` reads a spec root's ``amdgpu-int`` folder on its own;
* :func:`load_integer_family` is the database's loader for the schema (``database.LOADERS``), so
  :func:`tilecheck.spec.database.load_database` also keeps them in ``db.extras["amdgpu-integer"]``.

Every problem is located (``spec/amdgpu-int/scalar.yaml:12:7: error: ...``) and raised together as
one :class:`~tilecheck.errors.SpecError` (exit code 2). It sits in the ``spec`` layer and imports
only ``errors``, ``specio`` and :mod:`tilecheck.spec.forms`: it does not depend on the simulator,
so the tests compare the two instead (``tests/amdgpu/test_integer_specs.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tilecheck.errors import Location, Problem, SpecError
from tilecheck.spec.amdgpu import Encoding as IntegerEncoding  # one record for every AMD encoding
from tilecheck.spec.forms import Reference
from tilecheck.specio.files import display_path, schema_problems, spec_root
from tilecheck.specio.yamlio import LocatedDocument, load_yaml

SCHEMA = "amdgpu-integer"
FOLDER = "amdgpu-int"
EXTRAS_KEY = "amdgpu-integer"
SEMANTICS = ("intops", "simulator")


@dataclass(frozen=True)
class IntegerInstruction:
    """One instruction of ``spec/amdgpu-int``: ``pseudo`` is the manual's pseudo-code in one line,
    ``semantics`` says which code computes it (``intops`` or ``simulator``)."""

    name: str
    family: str
    pseudo: str
    reference: Reference
    semantics: str
    encodings: tuple[IntegerEncoding, ...]
    location: Location
    notes: str = ""


def _parse_bytes(text: str) -> tuple[int, ...]:
    return tuple(int(b, 16) for b in text.split(","))


def _family(doc: LocatedDocument, path: Path, problems: list[Problem]) -> list[IntegerInstruction]:
    """The entries of one schema-valid file (problems appended, located)."""
    data = doc.data
    family = data["family"]
    if family != path.stem:
        problems.append(Problem(doc.locate(("family",)), f"family {family!r} must equal the file stem {path.stem!r}"))
    found: list[IntegerInstruction] = []
    seen: dict[str, Location] = {}
    for i, entry in enumerate(data["instructions"]):
        here = ("instructions", i)
        name = entry["name"]
        if name in seen:
            problems.append(Problem(doc.locate(here + ("name",)), f"instruction {name} listed twice (first at {seen[name]})"))
            continue
        seen[name] = doc.locate(here + ("name",))
        encodings = tuple(IntegerEncoding(e["asm"], e["mcpu"], e.get("mattr", ""), _parse_bytes(e["bytes"]), e["source"],
                                          doc.locate(here + ("encodings", k)))
                          for k, e in enumerate(entry["encodings"]))
        for k, e in enumerate(encodings):
            # the asm must name the instruction: a copy-pasted line would check another opcode's bytes
            mnemonic = e.asm.split()[0] if e.asm.split() else ""
            if mnemonic.removesuffix("_e32").removesuffix("_e64") != name:
                problems.append(Problem(doc.locate(here + ("encodings", k, "asm")),
                                        f"encoding {e.asm!r} is not an instance of {name}"))
        ref = entry["reference"]
        found.append(IntegerInstruction(name, family, " ".join(entry["pseudo"].split()),
                                        Reference(ref["document"], ref["section"], ref.get("anchor", "")),
                                        entry["semantics"], encodings, doc.locate(here), entry.get("notes", "")))
    return found


def load_integer_family(doc: LocatedDocument, path: Path, db, problems: list[Problem]) -> None:
    """Loader for ``schema: amdgpu-integer`` (registered in ``database.LOADERS``): the file's
    entries into ``db.extras["amdgpu-integer"]`` (``{name: IntegerInstruction}``); a name defined
    in two files is a problem at the second."""
    table = db.extras.setdefault(EXTRAS_KEY, {})
    for instr in _family(doc, path, problems):
        if instr.name in table:
            problems.append(Problem(instr.location, f"instruction {instr.name} also defined at {table[instr.name].location}"))
            continue
        table[instr.name] = instr


class _Holder:
    """The one attribute of a database :func:`load_integer_family` writes (``extras``)."""

    def __init__(self) -> None:
        self.extras: dict[str, dict] = {}


def load_integer_instructions(root: str | Path | None = None) -> dict[str, IntegerInstruction]:
    """Every instruction of ``ROOT/amdgpu-int/*.yaml`` (default root: :func:`spec_root`), by name.

    Each file is read with line and column locations and checked against
    ``ROOT/schema/amdgpu-integer.schema.json``; raises :class:`SpecError` listing every problem
    (YAML syntax, schema, family/file-stem mismatch, duplicate names, an encoding line of another
    mnemonic), each as ``FILE:line:col: error: ...``.
    """
    root_path = Path(root) if root else spec_root()
    folder = root_path / FOLDER
    files = sorted(folder.glob("*.yaml"))
    problems: list[Problem] = []
    if not files:
        problems.append(Problem(Location(display_path(folder, root_path)), "no amdgpu-integer files found"))
    holder = _Holder()
    for path in files:
        shown = display_path(path, root_path)
        try:
            doc = load_yaml(path, shown)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        schema = doc.data.get("schema") if isinstance(doc.data, dict) else None
        if schema != SCHEMA:
            problems.append(Problem(doc.locate(("schema",)), f"schema must be {SCHEMA!r} in {FOLDER}/, found {schema!r}"))
            continue
        found = schema_problems(doc, SCHEMA, root_path)
        if found:
            problems.extend(found)
            continue
        load_integer_family(doc, path, holder, problems)
    if problems:
        raise SpecError(problems)
    return dict(holder.extras.get(EXTRAS_KEY, {}))
