"""The tile section of the div, rcp and sqrt pages (what the seed tile page carries): the apply
call, operand order, legality conditions with the checker's diagnostic codes, and the
``examples/root_ratio.py`` example with the PTX the emitter produces for it (called in-process,
as ``tilecheck emit examples/root_ratio.py --target sm_90`` would) and its result by the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilecheck.emit import emit_programs
from tilecheck.model import api
from tilecheck.tile.codes import CODES
from tilecheck.tile.loader import load_programs

TILE_FAMILIES = ("div", "rcp", "sqrt")
EXAMPLE = Path("examples") / "root_ratio.py"
EXAMPLE_TARGET = "sm_90"
EXAMPLE_INPUT = (4.0, 16.0, 36.0, 64.0)

# Each legality condition of the seed page and the codes the checker reports when it fails
# (tilecheck/tile/codes.py); the template words the conditions, this names the codes.
CONDITION_CODES = {
    "ownership": ("TC101", "TC102"),
    "shapes": ("TC201", "TC202", "TC203", "TC204", "TC205"),
    "scalars": ("TC301", "TC302", "TC303", "TC304"),
    "overlap": ("TC701",),
    "types": ("TC401",),
    "instruction": ("TC001", "TC002", "TC003", "TC004"),
    "parameters": ("TC006", "TC007", "TC501", "TC502", "TC503", "TC504"),
}


def _example_forms(db) -> list:
    """One representative form per tile family, as the seed's operand-order table lists them."""
    return [db.forms[n] for n in ("div.rn.f32", "rcp.approx.ftz.f32", "sqrt.rn.f32") if n in db.forms]


def tile_section(db, repo: Path) -> dict:
    """The template context of the tile section (``example`` is None where the example file or
    the emitter is unavailable, and the page says so)."""
    codes = {k: [CODES[c] for c in v] for k, v in CONDITION_CODES.items()}
    forms = [{"name": f.name, "order": ", ".join(o.name for o in f.operands),
              "roles": ", ".join(o.doc or o.role for o in f.operands)} for f in _example_forms(db)]
    return {"codes": codes, "forms": forms, "example": _root_ratio(db, repo)}


def _root_ratio(db, repo: Path) -> dict | None:
    path = repo / EXAMPLE
    if not path.is_file():
        return None
    programs = load_programs(path)
    ptx = emit_programs(programs, target=EXAMPLE_TARGET, format="ptx", db=db)
    # the program's arithmetic through the model: r = sqrt.rn(div.rn(A, 4))
    a = np.array(EXAMPLE_INPUT, dtype=np.float32).view(np.uint32)
    four = np.float32(4).view(np.uint32)
    q = api.evaluate("div.rn.f32", a, np.full_like(a, four))
    r = np.asarray(api.evaluate("sqrt.rn.f32", q), dtype=np.uint32).view(np.float32)
    return {"source": path.read_text(encoding="utf-8"), "ptx": ptx, "target": EXAMPLE_TARGET,
            "path": str(EXAMPLE), "input": [f"{x:g}" for x in EXAMPLE_INPUT], "output": [f"{x:g}" for x in r],
            "counts": {op: ptx.count(op) for op in ("div.rn.f32", "sqrt.rn.f32")}}
