"""The package layering, measured from the code's own imports.

Every ``import`` / ``from ... import`` of every module under ``tilecheck/`` is parsed with
:mod:`ast` (imports inside functions included: they are edges too). A module belongs to the group
named by its first component below ``tilecheck`` (``tilecheck.emit.ptx`` -> ``emit``). Groups sit
on the layers of :data:`LAYERS`, lowest first; an import may only go to a lower layer. Groups that
share a layer are siblings and never import each other (the model and the Z3 encoding stay
independent, so do the oracles). The test fails on an upward or sibling edge, on an import cycle
between groups, on a group missing from the table, and on production code importing the test
support package or a private module of another group.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tilecheck"

# Lowest first. Why each group sits where it does:
#   root        ``tilecheck/__init__.py``: ``__version__``, and the public names the README shows,
#               loaded on first use (PEP 562) so that it imports nothing at import time.
#   errors      the exception tree; imports nothing of tilecheck.
#   sources | cpus
#               siblings: reading the files a user names (PTX, assembly) into text, or a located
#               usage error; and how many threads or workers parallel work uses.
#   specio      locating the spec root, YAML with line/column, JSON-Schema checks.
#   formats     Format: bit geometry and exact conversions, loaded from spec/formats.
#   semantics   the AMD semantics language (parse, type-check, backend-neutral interpreter); the spec
#               loader compiles instruction bodies with it, so it sits below spec.
#   spec        the database: registry vocabulary, PTX types, forms, targets, AMD forms and sequences.
#   model | smt | oracle | inputs
#               siblings: the numpy reference model, the Z3 encoding, the slow independent oracles
#               and the input generators (edge values, bit-pattern generators); none imports another.
#   amdgpu      numpy evaluation of AMD forms, contracts and the division-macro campaign (uses model).
#   tile        the tile-program frontend and its IR.
#   legality    the checker: IR -> diagnostics.
#   emit | ptxas
#               the PTX/CUDA emitter, and the ptxas driver (siblings).
#   sim         CPU execution of emitted PTX through the model.
#   program     the facade: Program.check/emit/run and the T namespace whose programs have them.
#   diff        differential engine (backends, cases, verdicts, campaigns).
#   verify      ``tilecheck verify``: checks per form, program and sequence.
#   report      pages people read: the generated reference site and HTML run reports (Jinja2, Matplotlib).
#   commands    one module per CLI subcommand.
#   cli         argument parsing, the only place that turns exceptions into exit codes.
#   __main__    ``python -m tilecheck``.
#   testing     Hypothesis strategies and helpers for test suites; production code never imports it.
LAYERS: list[tuple[str, ...]] = [
    ("root",),
    ("errors",),
    ("sources", "cpus"),
    ("specio",),
    ("formats",),
    ("semantics",),
    ("spec",),
    ("model", "smt", "oracle", "inputs"),
    ("amdgpu",),
    ("tile",),
    ("legality",),
    ("emit", "ptxas"),
    ("sim",),
    ("program",),
    ("diff",),
    ("verify",),
    ("report",),
    ("commands",),
    ("cli",),
    ("__main__",),
    ("testing",),
]
RANK = {group: rank for rank, groups in enumerate(LAYERS) for group in groups}
# Heavy optional dependencies: the only imports allowed inside functions.
LAZY_ALLOWED = {"z3", "cupy", "gmpy2", "dask", "distributed", "dask_cuda", "softfloatpy", "jinja2", "matplotlib"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def group_of(module: str) -> str:
    """``tilecheck.emit.ptx`` -> ``emit``; the package itself is ``root``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


def _targets(module: str, path: Path, node) -> list[str]:
    """The tilecheck modules an import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "tilecheck"]
    if node.level:
        base = module.split(".")
        if path.name != "__init__.py":
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    if prefix.split(".")[0] != "tilecheck":
        return []
    out = []
    for alias in node.names:
        full = f"{prefix}.{alias.name}"
        out.append(full if full in MODULES else prefix)
    return out


def _imports() -> tuple[list[tuple[str, str, int, bool]], list[tuple[str, str, int]], dict[str, set[str]]]:
    """Every tilecheck import as (importer, imported, line, inside a function); every import made
    inside a function as (importer, imported module, line); each module's top-level imports."""
    edges, nested_imports, top = [], [], {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        nested: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
        top[module] = set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            inside = id(node) in nested
            names = _targets(module, path, node)
            for target in names:
                edges.append((module, target, node.lineno, inside))
            plain = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names or plain:
                if inside:
                    nested_imports.append((module, name, node.lineno))
                elif node in tree.body:
                    top[module].add(name)
    return edges, nested_imports, top


EDGES, NESTED, TOP = _imports()


def _pulls_heavy(module: str, seen: frozenset = frozenset()) -> bool:
    """True when importing ``module`` imports a heavy optional dependency (at some module's top)."""
    for name in TOP.get(module, ()):
        if name.split(".")[0] in LAZY_ALLOWED:
            return True
        if name in MODULES and name not in seen and _pulls_heavy(name, seen | {module}):
            return True
    return False



def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(PACKAGE.parent)}:{line}"


def test_every_group_has_a_layer():
    missing = sorted({group_of(m) for m in MODULES} - set(RANK))
    assert not missing, f"groups without a layer in tests/test_layers.py LAYERS: {missing}"


def test_imports_only_go_down():
    bad = []
    for src, dst, line, _ in EDGES:
        a, b = group_of(src), group_of(dst)
        if a == b:
            continue
        if RANK.get(a, -1) <= RANK.get(b, -1):
            kind = "sibling" if RANK.get(a) == RANK.get(b) else "upward"
            bad.append(f"{_where(src, line)}: {kind} edge {src} -> {dst} ({a} on layer {RANK.get(a)}, "
                       f"{b} on layer {RANK.get(b)})")
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every back edge a depth-first walk of ``graph`` meets, as ``a -> b -> a`` (none: acyclic)."""
    cycles: list[str] = []
    state: dict[str, int] = {}  # 1: on the walk's stack, 2: finished
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_no_cycle_between_groups():
    graph: dict[str, set[str]] = {}
    for src, dst, _, _ in EDGES:
        a, b = group_of(src), group_of(dst)
        if a != b:
            graph.setdefault(a, set()).add(b)
    cycles = _cycles(graph)
    assert not cycles, "import cycles between groups:\n" + "\n".join(cycles)


def test_no_cycle_between_modules():
    """Inside a group too: no module reaches itself through imports (at any depth)."""
    graph: dict[str, set[str]] = {}
    for src, dst, _, _ in EDGES:
        if src != dst and dst != "tilecheck":
            graph.setdefault(src, set()).add(dst)
    cycles = _cycles(graph)
    assert not cycles, "import cycles between modules:\n" + "\n".join(cycles)


def test_production_code_never_imports_test_support_or_private_modules():
    bad = []
    for src, dst, line, _ in EDGES:
        a, b = group_of(src), group_of(dst)
        if a == b:
            continue
        if b == "testing":
            bad.append(f"{_where(src, line)}: {src} imports the test support package ({dst})")
        elif any(part.startswith("_") and not part.startswith("__") for part in dst.split(".")):
            bad.append(f"{_where(src, line)}: {src} imports the private module {dst} of another group")
    assert not bad, "\n".join(bad)


def test_imports_inside_functions_are_heavy_optional_ones_only():
    bad = []
    for src, dst, line in NESTED:
        if dst.split(".")[0] in LAZY_ALLOWED or _pulls_heavy(dst):
            continue
        bad.append(f"{_where(src, line)}: {src} imports {dst} inside a function")
    assert not bad, ("imports belong at module top (only "
                     f"{', '.join(sorted(LAZY_ALLOWED))} and modules that import them are imported lazily):\n"
                     + "\n".join(bad))


def test_the_tables_are_not_empty():
    """Guard the guard: the scan sees the package and its imports."""
    assert len(MODULES) > 50 and len(EDGES) > 200 and NESTED
    assert _pulls_heavy("tilecheck.smt.forms") and not _pulls_heavy("tilecheck.model.api")
    assert {"spec", "model", "smt", "emit", "sim", "cli"} <= {group_of(m) for m in MODULES}


def test_package_inits_have_one_style():
    """A package ``__init__`` is a docstring, optionally followed by re-exports of its public API
    with ``__all__``; it defines nothing (the root's lazy ``__getattr__`` is the one exception)."""
    bad = []
    for module, path in MODULES.items():
        if path.name != "__init__.py" or module == "tilecheck":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if ast.get_docstring(tree) is None:
            bad.append(f"{module}: no docstring")
        for node in tree.body[1:]:
            if isinstance(node, ast.ImportFrom) or (isinstance(node, ast.Assign)
                                                    and [getattr(t, "id", "") for t in node.targets] == ["__all__"]):
                continue
            bad.append(f"{module}:{node.lineno}: {type(node).__name__} (only imports and __all__ belong here)")
        imports = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module != "__future__"]
        if imports and not any(isinstance(n, ast.Assign) for n in tree.body):
            bad.append(f"{module}: re-exports without __all__")
    assert not bad, "\n".join(bad)
