"""``tilecheck doc``: a static reference site generated from ``spec/`` alone.

:func:`build_site` writes ``index.html`` (every family, format, target and AMD instruction),
``ptx/<family>.html`` (one per PTX family: syntax, legality matrix, illegal spellings, semantics,
special values and examples computed by the model, the corpus kernels using each form),
``amd/<form>.html`` (one per AMD instruction form) and ``corpus.html`` (the manifest rows the
family pages link to). Pages are rendered by the ``site_*.html.j2`` templates over
``base.html.j2``; this module only gathers data. Links are relative, so the folder can be opened
from disk or served anywhere.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tilecheck.ptxas import SPEC_PTXAS
from tilecheck.report import site_amd, site_corpus, site_plots, site_tables, site_tile
from tilecheck.report.provenance import built_from
from tilecheck.report.render import environment, require, write_page
from tilecheck.spec.amdgpu import amdgpu_forms


def _groups(db, family) -> tuple[list[dict], list[dict]]:
    """The family's syntax from its spec file: form groups (spelling template, axes, type, gate)
    and operands (name, role, meaning) -- the expanded forms no longer carry the templates."""
    data = yaml.safe_load((db.root / "ptx" / f"{family.name}.yaml").read_text(encoding="utf-8"))
    groups = [{"id": g["id"], "spelling": g["spelling"], "type": g["type"],
               "axes": {k: [("." + x) if x else "(none)" for x in v] for k, v in g.get("axes", {}).items()},
               "gate": f"sm_{g['target']['sm']}+, PTX ISA {g['target']['ptx']}+",
               "forms": sum(1 for f in family.forms if f.group == g["id"])} for g in data["forms"]]
    return groups, data["operands"]


def _semantics(form) -> dict:
    """A form's semantics in words, from its spec fields."""
    params = ", ".join(f"{k}={v}" for k, v in form.semantics.items)
    nan = form.nan
    row = {"form": form.name, "kind": form.kind, "key": f"{form.semantics.key}({params})",
           "qualifiers": ", ".join(f"{k}: .{v}" if v else f"{k}: (none)" for k, v in form.qualifiers),
           "nan": nan.policy + (f" (bits 0x{nan.bits:x})" if nan.bits is not None else ""),
           "nan_source": nan.source, "gate": str(form.target), "reference": str(form.reference),
           "contract": None}
    c = form.contract
    if c is not None:
        row["contract"] = {"bound": c.describe(), "provisional": c.provisional, "source": c.source,
                           "notes": c.notes, "flush": c.flush_inputs,
                           "rules": [{"when": ", ".join(f"{form.sources[i].name}: {_condition(cond)}"
                                                        for i, cond in r.when), "result": r.result}
                                     for r in c.rules],
                           "specials": [(", ".join(s.operands), s.result) for s in c.specials]}
    return row


def _condition(cond) -> str:
    parts = [" or ".join(cond.classes)] if cond.classes else []
    if cond.above_log2 is not None:
        parts.append(f"|x| > 2^{cond.above_log2}")
    if cond.below_log2 is not None:
        parts.append(f"|x| < 2^{cond.below_log2}")
    return ", ".join(parts)


def _family_context(db, family, corpus_users, tile) -> dict:
    groups, operands = _groups(db, family)
    shown, tabulable = site_tables.table_subset(family)
    return {"family": family, "groups": groups, "operands": operands,
            "targets": [t.name for t in site_tables.base_targets(db)],
            "matrix": site_tables.legality_matrix(db, family),
            "semantics": [_semantics(f) for f in family.forms],
            "has_contract": any(f.contract is not None for f in family.forms),
            "sign_rule": db.sign_rule,
            "bands": [(f.name, band) for f in family.forms if (band := site_plots.error_band(f))],
            "tables": [site_tables.value_table(f) for f in shown], "tabulable": tabulable,
            "packed": sum(1 for f in family.forms if f.lanes > 1),
            "table_limit": site_tables.TABLE_LIMIT,
            "examples": site_tables.evaluated_examples(db, family),
            "users": [(f.name, corpus_users.get(f.name, [])) for f in family.forms if f.name in corpus_users],
            "tile": tile if family.name in site_tile.TILE_FAMILIES else None}


def build_site(db, out_dir) -> list[Path]:
    """Write the reference site for ``db`` into ``out_dir``; returns the pages written, the index
    first. Raises :class:`~tilecheck.report.render.ReportExtraMissing` without Jinja2."""
    environment()  # fails first, with the install hint, when Jinja2 is missing
    require("matplotlib")
    out = Path(out_dir)
    repo = db.root.parent  # the corpus and examples live beside spec/ in a checkout
    built = built_from(db)
    amd = amdgpu_forms(db)
    amd_families = db.extras.get("amdgpu", {}).get("families", {})
    corpus = site_corpus.load_corpus(db, repo)
    users = site_corpus.users(corpus)
    tile = site_tile.tile_section(db, repo)
    common = {"built": built, "spec_ptxas": SPEC_PTXAS}
    pages = [write_page(out / "index.html", "site_index.html.j2", root="", families=list(db.families.values()),
                        formats=list(db.formats.values()), targets=list(db.targets.values()),
                        amd=list(amd.values()), amd_families=amd_families, corpus=corpus,
                        default_target=db.default_target, **common)]
    for family in db.families.values():
        pages.append(write_page(out / "ptx" / f"{family.name}.html", "site_family.html.j2", root="../",
                                **_family_context(db, family, users, tile), **common))
    for form in amd.values():
        family = amd_families[form.family]
        pages.append(write_page(out / "amd" / f"{form.name}.html", "site_amd.html.j2", root="../", form=form,
                                amd_family=family, encs=site_amd.encodings(form, family),
                                bodies=site_amd.bodies(db, family), related=site_amd.related(db, form), vectors=site_amd.vectors(form, family),
                                table=site_amd.value_table(form), **common))
    pages.append(write_page(out / "corpus.html", "site_corpus.html.j2", root="", corpus=corpus, **common))
    return pages
