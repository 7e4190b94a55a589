"""What a page was built from: the tilecheck version, a digest of the spec files, the ptxas version
(when one is found) and the time, shown in every page's footer."""

from __future__ import annotations

import hashlib
import time

from tilecheck import __version__, ptxas
from tilecheck.errors import TilecheckError


def spec_digest(db) -> str:
    """``spec sha256:<12 hex>``: a digest of every spec file's bytes, in path order."""
    h = hashlib.sha256()
    for path in sorted(p for p in db.root.rglob("*") if p.is_file() and p.suffix in (".yaml", ".json")):
        h.update(str(path.relative_to(db.root)).encode())
        h.update(path.read_bytes())
    return f"sha256:{h.hexdigest()[:12]}"


def built_from(db) -> dict:
    """The footer facts of a page built now from ``db``."""
    try:
        version = ptxas.ptxas_version()
    except TilecheckError:
        version = None
    return {"tilecheck": __version__, "spec": spec_digest(db), "ptxas": version,
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
