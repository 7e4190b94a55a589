"""The query language's syntax, declared once: what ``tilecheck prove`` reads and what
``tilecheck verify FILE.ptx --against EXPR`` reads as an expression reference.

A query is one Python expression parsed with :mod:`ast` (never evaluated) whose nodes are among
:data:`ALLOWED`; calls name PTX forms by their spelling (``div.rn.f32(a, b)``, an
:class:`ast.Attribute` chain read by :func:`dotted`). The meaning of a query is given by its
readers: :mod:`tilecheck.smt.prove` (Z3 terms) and :mod:`tilecheck.verify.expression` (bits
through the reference model). This module imports neither Z3 nor the model.
"""

from __future__ import annotations

import ast
import re

from tilecheck.errors import UsageError

__all__ = ["ALLOWED", "REDUCED", "SPECIAL_NAMES", "parse", "dotted", "is_format_name"]

ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.Compare,
           ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Call, ast.Name, ast.Load, ast.Constant,
           ast.Attribute, ast.IfExp)
"""The :mod:`ast` node types a query may contain (any other is a located usage error)."""

REDUCED = re.compile(r"^e(\d+)m(\d+)$")
"""Reduced IEEE-style format names ``eXmY`` (X exponent bits, Y fraction bits)."""

SPECIAL_NAMES = ("inf", "infinity", "nan")
"""Names that are values, spelled as ``tilecheck eval`` accepts them (any case): +inf and the
format's default NaN (``-inf`` / ``-nan`` are these negated)."""


def is_format_name(name: str) -> bool:
    """True for ``f16 bf16 f32 f64`` and ``eXmY``."""
    return name in ("f16", "bf16", "f32", "f64") or bool(REDUCED.match(name))


_KEYWORD_OPCODES = {"and": "And", "or": "Or", "not": "Not"}
"""PTX opcodes that are Python keywords (``and.b32``), spelled for the parser as names of the same
length, and back in :func:`dotted`."""
_KEYWORD_HEAD = re.compile(r"(?<![\w.])(and|or|not)(?=\s*\.)")


def dotted(node) -> str | None:
    """The dotted name a call's function node spells (``div.rn.f32``), or None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = {v: k for k, v in _KEYWORD_OPCODES.items()}.get(node.id, node.id) if parts else node.id
    parts.append(head)
    return ".".join(reversed(parts))


def parse(text: str, what: str = "query") -> ast.Expression:
    """Parse a query (a single expression); UsageError with the column on a syntax error or a
    construct outside the language. ``what`` names the text in messages (``query``, ``--against``)."""
    text = _KEYWORD_HEAD.sub(lambda m: _KEYWORD_OPCODES[m.group(1)], text)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"{what} (column {exc.offset or 0}): syntax error: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED):
            col = getattr(node, "col_offset", 0)
            raise UsageError(f"{what} (column {col + 1}): {type(node).__name__} is not part of the query language")
    return tree
