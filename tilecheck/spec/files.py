"""Where the spec database lives, and schema validation of its files.

The ``spec/`` folder is data only. In a wheel it is shipped as ``tilecheck/_data/spec``; in a
checkout (editable install, or running from the source tree) it is the top-level ``spec/``.
``TILECHECK_SPEC_DIR`` overrides both, which tests use to load deliberately broken databases.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

import jsonschema

from tilecheck.errors import Location, Problem, SpecError
from tilecheck.spec.yamlio import LocatedDocument

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def builtin_spec_root() -> Path:
    """The spec folder shipped with tilecheck (``tilecheck/_data/spec`` in a wheel, else the
    checkout's ``spec/``), whatever ``TILECHECK_SPEC_DIR`` says."""
    shipped = _PACKAGE_DIR / "_data" / "spec"
    if shipped.is_dir():
        return shipped
    return _PACKAGE_DIR.parent / "spec"


def spec_root() -> Path:
    """The folder holding ``schema/``, ``formats/``, ``ptx/``, ``amdgpu/`` and ``sequences/``."""
    override = os.environ.get("TILECHECK_SPEC_DIR")
    if override:
        return Path(override)
    return builtin_spec_root()


def display_path(path: Path, root: Path | None = None) -> str:
    """How messages name a spec file: ``spec/ptx/div.yaml`` inside the built-in spec folder, the
    real path (as the root was given) inside any other folder (``TILECHECK_SPEC_DIR``, ``spec check DIR``),
    so that an error points at the file that holds it."""
    root = root or spec_root()
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
    if root.resolve() == builtin_spec_root().resolve():
        return "spec/" + relative
    return str(root / relative)


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
        here = tuple(err.absolute_path)
        extra = _unknown_fields(err)
        if extra:  # each unknown field at its own line and column, not at its parent's
            for key in extra:
                field = "/".join(str(p) for p in here + (key,))
                problems.append(Problem(doc.locate_key(here + (key,)), f"{field}: unknown field"))
            continue
        where = doc.locate(here)
        field = "/".join(str(p) for p in here) or "(document)"
        problems.append(Problem(where, f"{field}: {_short(err)}"))
    return problems


def _unknown_fields(err: jsonschema.ValidationError) -> list:
    """The keys an ``additionalProperties: false`` error is about (empty for any other error)."""
    if err.validator != "additionalProperties" or err.validator_value is not False or not isinstance(err.instance, dict):
        return []
    known = err.schema.get("properties", {})
    patterns = list(err.schema.get("patternProperties", {}))
    return [k for k in err.instance if k not in known and not any(re.search(p, str(k)) for p in patterns)]


def _short(err: jsonschema.ValidationError) -> str:
    """A one-line schema message (jsonschema's own can print whole sub-documents)."""
    if err.validator == "additionalProperties":
        return err.message.replace("Additional properties are not allowed", "unknown field(s):")
    if err.validator in ("oneOf", "anyOf"):
        return f"does not match any allowed shape ({err.validator})"
    msg = err.message
    return msg if len(msg) < 200 else msg[:197] + "..."
