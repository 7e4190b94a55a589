"""Turn ``tilecheck verify`` targets into work items.

A target is a form (any qualifier order), a family (``div``), an ISA (``ptx``, ``amdgpu``), a
program file (``*.py``) or a sequence (``amdgpu.fdiv64``). No target means every PTX form, every
example program and every sequence.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from tilecheck.errors import UnknownFormError, UsageError, echo
from tilecheck.tile.loader import display_path


@dataclass(frozen=True)
class Item:
    """One thing to verify: kind is ``form``, ``program`` or ``sequence``."""

    kind: str
    name: str
    payload: object = None


def example_programs() -> list[Path]:
    """The example tile programs shipped with tilecheck (``examples/*.py``)."""
    here = Path(__file__).resolve().parent.parent
    for folder in (here / "_data" / "examples", here.parent / "examples"):
        if folder.is_dir():
            return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    return []


def _sequences(db) -> list[str]:
    return sorted(db.extras.get("sequences", {}))


def _form(name: str, db):
    """The legal form ``name`` spells: IllegalFormError (exit 1) for a forbidden combination,
    UnknownFormError (exit 2) naming the nearest verify targets for anything unknown."""
    try:
        return db.form(name)
    except UnknownFormError as exc:
        if "did you mean" in exc.message:
            raise
        vocabulary = ["ptx", "amdgpu", *db.families, *db.extras.get("sequences", {}), *db.forms]
        close = difflib.get_close_matches(name.strip().lower(), vocabulary, n=3, cutoff=0.6)
        if not close:
            raise
        raise UnknownFormError(f"unknown verify target {echo(name)}; did you mean {', '.join(close)}? "
                               "(forms, families, ptx, amdgpu, sequences or program files)") from None


def resolve(names: list[str], db) -> list[Item]:
    """Work items for ``names`` (all of them when empty), without duplicates, in a stable order."""
    items: list[Item] = []
    if not names:
        items += [Item("form", f.name, f) for f in db.ptx_forms()]
        items += [Item("program", display_path(str(p)), p) for p in example_programs()]
        items += [Item("sequence", s) for s in _sequences(db)]
        return items
    for name in names:
        path = Path(name)
        if name.endswith(".py") or path.is_file():
            if not path.is_file():
                raise UsageError(f"program file {echo(name)} not found")
            if path.suffix != ".py":
                raise UsageError(f"{echo(name)} is not a program file (*.py); a vector file goes with --vectors")
            items.append(Item("program", name, path))
        elif name == "ptx":
            items += [Item("form", f.name, f) for f in db.ptx_forms()]
        elif name == "amdgpu":
            items += [Item("sequence", s) for s in _sequences(db) if s.startswith("amdgpu.")]
            if not any(i.kind == "sequence" for i in items):
                raise UnknownFormError("no AMD GPU sequences in the spec database")
        elif name in db.families:
            items += [Item("form", f.name, f) for f in db.families[name].forms]
        elif name in db.extras.get("sequences", {}):
            items.append(Item("sequence", name))
        else:
            form = _form(name, db)
            items.append(Item("form", form.name, form))
    seen, unique = set(), []
    for it in items:
        if (it.kind, it.name) not in seen:
            seen.add((it.kind, it.name))
            unique.append(it)
    return unique
