"""Where the spec database lives, and schema validation of its files.

The ``spec/`` folder is data only. In a wheel it is shipped as ``tilecheck/_data/spec``; in a
checkout (editable install, or running from the source tree) it is the top-level ``spec/``.
``TILECHECK_SPEC_DIR`` overrides both, which tests use to load deliberately broken databases.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import jsonschema

from tilecheck.errors import Location, Problem, SpecError
from tilecheck.specio.yamlio import LocatedDocument

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def spec_root() -> Path:
    """The folder holding ``schema/``, ``formats/``, ``ptx/``, ``amdgpu/`` and ``sequences/``."""
    override = os.environ.get("TILECHECK_SPEC_DIR")
    if override:
        return Path(override)
    shipped = _PACKAGE_DIR / "_data" / "spec"
    if shipped.is_dir():
        return shipped
    return _PACKAGE_DIR.parent / "spec"


def display_path(path: Path, root: Path | None = None) -> str:
    """``spec/ptx/div.yaml`` style name for a file under the spec root (used in messages)."""
    root = root or spec_root()
    try:
        return "spec/" + path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


@lru_cache(maxsize=None)
def _schema(root: str, name: str) -> dict:
    path = Path(root) / "schema" / f"{name}.schema.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecError([Problem(Location(str(path)), f"cannot load schema: {exc}")]) from None


def schema_problems(doc: LocatedDocument, schema_name: str, root: Path | None = None) -> list[Problem]:
    """Validate ``doc`` against ``spec/schema/<schema_name>.schema.json``; return every problem."""
    schema = _schema(str(root or spec_root()), schema_name)
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for err in sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path))):
        where = doc.locate(tuple(err.absolute_path))
        field = "/".join(str(p) for p in err.absolute_path) or "(document)"
        problems.append(Problem(where, f"{field}: {_short(err)}"))
    return problems


def _short(err: jsonschema.ValidationError) -> str:
    """A one-line schema message (jsonschema's own can print whole sub-documents)."""
    if err.validator == "additionalProperties":
        return err.message.replace("Additional properties are not allowed", "unknown field(s):")
    if err.validator in ("oneOf", "anyOf"):
        return f"does not match any allowed shape ({err.validator})"
    msg = err.message
    return msg if len(msg) < 200 else msg[:197] + "..."
