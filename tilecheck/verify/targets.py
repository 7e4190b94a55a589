"""Turn ``tilecheck verify`` targets into work items.

A target is a form (any qualifier order), a family (``div``), an ISA (``ptx``, ``amdgpu``), a
program file (``*.py``), a sequence (``amdgpu.fdiv64``), an AMD form (``v_fma_f32``) or an AMD
family (``v_div_scale``). No target means every PTX form, every example program, every AMD form
and every sequence; ``amdgpu`` means every AMD form and AMD sequence.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from tilecheck.errors import UnknownFormError, UsageError, echo
from tilecheck.spec.amdgpu import amdgpu_forms
from tilecheck.tile.loader import display_path


@dataclass(frozen=True)
class Item:
    """One thing to verify: kind is ``form``, ``program``, ``sequence`` or ``amdgpu-form``."""

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


def _amd_items(db) -> list[Item]:
    """One ``amdgpu-form`` item per AMD instruction form."""
    return [Item("amdgpu-form", name, f) for name, f in amdgpu_forms(db).items()]


def _amd_families(db) -> dict:
    return db.extras.get("amdgpu", {}).get("families", {})


def _form(name: str, db):
    """The legal form ``name`` spells: IllegalFormError (exit 1) for a forbidden combination,
    UnknownFormError (exit 2) naming the nearest verify targets for anything unknown."""
    try:
        return db.form(name)
    except UnknownFormError as exc:
        if "did you mean" in exc.message:
            raise
        vocabulary = ["ptx", "amdgpu", *db.families, *db.extras.get("sequences", {}), *db.forms,
                      *_amd_families(db), *(i.name for i in _amd_items(db))]
        close = difflib.get_close_matches(name.strip().lower(), vocabulary, n=3, cutoff=0.6)
        if not close:
            raise
        raise UnknownFormError(f"unknown verify target {echo(name)}; did you mean {', '.join(close)}? "
                               "(forms, families, ptx, amdgpu, sequences, AMD forms or program files)") from None


def resolve(names: list[str], db) -> list[Item]:
    """Work items for ``names`` (all of them when empty), without duplicates, in a stable order."""
    items: list[Item] = []
    if not names:
        items += [Item("form", f.name, f) for f in db.ptx_forms()]
        items += [Item("program", display_path(str(p)), p) for p in example_programs()]
        items += _amd_items(db)
        items += [Item("sequence", s) for s in _sequences(db)]
        return items
    for name in names:
        path = Path(name)
        if path.is_dir():
            raise UsageError(f"{echo(name)} is a directory; a target is a form, a family, an ISA (ptx, amdgpu), a "
                             "sequence, a program file (*.py) or a compiled file (*.ptx, *.s)")
        if name.endswith(".py") or path.is_file():
            if not path.is_file():
                raise UsageError(f"program file {echo(name)} not found")
            if path.suffix != ".py":
                raise UsageError(f"{echo(name)} is not a program file (*.py); a vector file goes with --vectors")
            items.append(Item("program", name, path))
        elif name == "ptx":
            items += [Item("form", f.name, f) for f in db.ptx_forms()]
        elif name == "amdgpu":
            items += _amd_items(db)
            items += [Item("sequence", s) for s in _sequences(db) if s.startswith("amdgpu.")]
            if not any(i.kind in ("sequence", "amdgpu-form") for i in items):
                raise UnknownFormError("no AMD GPU forms or sequences in the spec database")
        elif name in db.families:
            items += [Item("form", f.name, f) for f in db.families[name].forms]
        elif name in db.extras.get("sequences", {}):
            items.append(Item("sequence", name))
        elif name in _amd_families(db) or any(i.name == name for i in _amd_items(db)):
            # an AMD family or form name (the AMD names never collide with PTX spellings)
            items += [i for i in _amd_items(db) if name in (i.name, i.payload.family)]
        else:
            form = _form(name, db)
            items.append(Item("form", form.name, form))
    seen, unique = set(), []
    for it in items:
        if (it.kind, it.name) not in seen:
            seen.add((it.kind, it.name))
            unique.append(it)
    return unique
