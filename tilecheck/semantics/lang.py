"""The semantics language: a small, documented subset of Python syntax, parsed with :mod:`ast`.

A spec's ``body:`` (a YAML literal block scalar) is parsed with ``ast.parse`` and checked against a
whitelist of node types; it is never passed to ``eval`` or ``exec``. What the language contains
(the reference is ``spec/amdgpu/README.md``):

* statements: assignment to a plain name (``x = expr``), ``if``/``elif``/``else``, ``pass``;
* expressions: names, integer/float/bool literals, ``+ - * /`` (and ``**`` between literals),
  unary ``-``/``+``/``not``, comparisons (chains allowed), ``and``/``or``, ``a if c else b``, and
  calls of the primitives in :data:`tilecheck.semantics.interp.PRIMITIVES` with positional
  arguments.

Everything else (loops, attribute access, subscripts, keyword arguments, lambdas, strings, ...) is a
located error. Locations map a body's line/column to the spec file's line/column through an
:class:`Origin`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tilecheck.errors import Location, SemanticsError

# Node types a body may contain. Operator/context nodes (ast.Add, ast.Load, ...) are listed too so
# that anything not named here -- including node types added by future Python versions -- is refused.
ALLOWED_NODES: tuple[type, ...] = (
    ast.Module, ast.Assign, ast.If, ast.Pass, ast.Expr,
    ast.Name, ast.Load, ast.Store, ast.Constant,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow,
    ast.UnaryOp, ast.USub, ast.UAdd, ast.Not,
    ast.BoolOp, ast.And, ast.Or,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
    ast.IfExp, ast.Call,
)

_DESCRIBE = {
    ast.For: "for loops", ast.While: "while loops", ast.FunctionDef: "function definitions",
    ast.Lambda: "lambdas", ast.Attribute: "attribute access", ast.Subscript: "subscripts",
    ast.Import: "imports", ast.ImportFrom: "imports", ast.AugAssign: "augmented assignment (x += ...)",
    ast.Tuple: "tuples", ast.List: "lists", ast.Dict: "dicts", ast.Return: "return",
    ast.keyword: "keyword arguments", ast.Starred: "star arguments", ast.JoinedStr: "f-strings",
    ast.Mod: "the % operator", ast.FloorDiv: "the // operator", ast.BitAnd: "bitwise operators",
    ast.BitOr: "bitwise operators", ast.BitXor: "bitwise operators", ast.LShift: "shifts",
    ast.RShift: "shifts", ast.Invert: "bitwise operators", ast.Is: "`is`", ast.IsNot: "`is not`",
    ast.In: "`in`", ast.NotIn: "`not in`", ast.Assert: "assert", ast.With: "with", ast.Try: "try",
    ast.Raise: "raise", ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del",
    ast.AnnAssign: "annotated assignment", ast.NamedExpr: "the walrus operator",
}


@dataclass(frozen=True)
class Origin:
    """Where body text sits in its file: body line 1 column 1 is file ``line``:``column``.

    ``column`` is the file column of the body's first column (the block scalar's indentation + 1).
    """

    path: str
    line: int = 1
    column: int = 1

    def locate(self, lineno: int | None, col_offset: int | None) -> Location:
        """File location of a body position (``lineno`` 1-based, ``col_offset`` 0-based)."""
        if not lineno:
            return Location(self.path, self.line, self.column)
        return Location(self.path, self.line + lineno - 1, self.column + (col_offset or 0))


def error_at(origin: Origin, node: ast.AST | None, message: str) -> SemanticsError:
    """A :class:`SemanticsError` located at ``node`` (or at the body's start)."""
    if node is None:
        return SemanticsError(message, origin.locate(None, None))
    return SemanticsError(message, origin.locate(getattr(node, "lineno", None), getattr(node, "col_offset", None)))


def parse(source: str, origin: Origin) -> ast.Module:
    """Parse body text and check every node against the whitelist; raise a located
    :class:`SemanticsError` on a syntax error or a construct outside the language."""
    try:
        tree = ast.parse(source, filename=origin.path, mode="exec")
    except SyntaxError as exc:
        # SyntaxError.offset is 1-based
        where = origin.locate(exc.lineno or 1, (exc.offset or 1) - 1)
        raise SemanticsError(f"syntax error in semantics body: {exc.msg}", where) from None
    # constructs outside the language first (a lambda should be reported as such, not as a call)
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED_NODES):
            what = _DESCRIBE.get(type(node), f"{type(node).__name__} nodes")
            raise error_at(origin, node, f"not part of the semantics language: {what}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and not _is_comment_string(node):
            raise error_at(origin, node, "an expression statement has no effect; assign its value to a name")
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise error_at(origin, node, "assign to exactly one plain name (no tuples, no chained =)")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise error_at(origin, node, "only primitives can be called, by their plain name")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (bool, int, float)):
            if not _inside_comment_string(tree, node):
                raise error_at(origin, node, f"{type(node.value).__name__} literals are not part of the language")
    return tree


def _is_comment_string(node: ast.Expr) -> bool:
    # A bare string statement is accepted as a comment (like a docstring).
    return isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _inside_comment_string(tree: ast.Module, const: ast.Constant) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and node.value is const and _is_comment_string(node):
            return True
    return False


def block_scalar_origin(display_path: str, text: str, scalar_line: int, scalar_column: int) -> Origin:
    """The :class:`Origin` of a YAML scalar that starts at ``scalar_line``:``scalar_column``.

    For a literal block scalar (``|``) the content starts on the next line at the block's
    indentation, which is read from the file text. For a plain or quoted one-line scalar it starts
    at the scalar itself (after the opening quote). Raises SemanticsError for folded (``>``)
    scalars, whose line breaks YAML rewrites, so positions could not be mapped back.
    """
    lines = text.splitlines()
    head = lines[scalar_line - 1][scalar_column - 1:] if 0 < scalar_line <= len(lines) else ""
    if head.startswith(">"):
        raise SemanticsError("write a semantics body as a literal block scalar (`body: |`), not folded (`>`)",
                             Location(display_path, scalar_line, scalar_column))
    if head.startswith("|"):
        # Body line 1 is the line after the indicator (leading blank lines are content too); the
        # block's indentation is that of its first non-blank line.
        for n in range(scalar_line, len(lines)):
            content = lines[n]
            if content.strip():
                indent = len(content) - len(content.lstrip(" "))
                return Origin(display_path, scalar_line + 1, indent + 1)
        return Origin(display_path, scalar_line + 1, 1)
    if head[:1] in ("'", '"'):
        return Origin(display_path, scalar_line, scalar_column + 1)
    return Origin(display_path, scalar_line, scalar_column)
