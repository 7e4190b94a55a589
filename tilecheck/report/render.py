"""The template environment and the page writer every page of :mod:`tilecheck.report` uses.

Templates live in ``tilecheck/report/templates`` and extend ``base.html.j2`` (the layout, the
stylesheet, the "built from" footer). Autoescaping is on: values never become markup unless a
template marks them ``|safe`` (the embedded SVG plots, which Matplotlib writes).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from tilecheck.errors import UsageError

TEMPLATES = Path(__file__).resolve().parent / "templates"
EXTRA_HINT = "pip install 'tilecheck[report]'"


class ReportExtraMissing(UsageError):
    """Jinja2 or Matplotlib is not installed (exit 2, naming the extra)."""


def require(module: str):
    """Import ``module`` (``jinja2``, ``matplotlib``) or raise :class:`ReportExtraMissing`."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ReportExtraMissing(f"pages and HTML reports need {module}: {EXTRA_HINT}") from None


_ENV = None


def environment():
    """The (cached) Jinja2 environment over :data:`TEMPLATES`, autoescaping HTML."""
    global _ENV
    if _ENV is None:
        jinja2 = require("jinja2")
        _ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                                  autoescape=jinja2.select_autoescape(["html", "j2"]),
                                  undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return _ENV


def render(template: str, **context) -> str:
    """The text of ``template`` rendered with ``context``."""
    return environment().get_template(template).render(**context)


def write_page(path: Path, template: str, **context) -> Path:
    """Render ``template`` into ``path`` (folders created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(template, **context), encoding="utf-8")
    return path
