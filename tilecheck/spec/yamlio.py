"""Read YAML spec files keeping the line and column of every node.

PyYAML's safe loader is used (never ``yaml.load`` with a full loader). Alongside the plain Python
data we return a map from a path (tuple of keys and indices, as jsonschema reports them) to the
1-based line and column where that node starts, so every later check can point into the file.
Duplicate mapping keys, which PyYAML would silently collapse, are reported as problems.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tilecheck.errors import Location, Problem, SpecError

Path_ = tuple  # a path into the document: keys and list indices
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LocatedDocument:
    """A parsed YAML document with the location of each node."""

    def __init__(self, path: str, data: Any, locations: dict[tuple, tuple[int, int]],
                 key_locations: dict[tuple, tuple[int, int]] | None = None):
        self.path = path
        self.data = data
        self.locations = locations
        self.key_locations = key_locations or {}

    def locate(self, node_path: tuple | list = ()) -> Location:
        """The location of the node at ``node_path``, or of its nearest located ancestor."""
        node_path = tuple(node_path)
        while node_path and node_path not in self.locations:
            node_path = node_path[:-1]
        line, column = self.locations.get(node_path, (1, 1))
        return Location(self.path, line, column)

    def locate_key(self, node_path: tuple | list) -> Location:
        """The location of the mapping key that names the node at ``node_path`` (where an unknown
        field is written); the node's own location when it has no key."""
        node_path = tuple(node_path)
        if node_path in self.key_locations:
            line, column = self.key_locations[node_path]
            return Location(self.path, line, column)
        return self.locate(node_path)


def _build(node: yaml.Node, here: tuple, locations: dict, constructor: yaml.SafeLoader,
           problems: list[Problem], path: str, key_locations: dict | None = None) -> Any:
    locations[here] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict = {}
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) or key is None:
                problems.append(Problem(Location(path, key_node.start_mark.line + 1,
                                                 key_node.start_mark.column + 1),
                                        f"mapping key must be a scalar, got {type(key).__name__}"))
                continue
            if key in result:
                problems.append(Problem(Location(path, key_node.start_mark.line + 1,
                                                 key_node.start_mark.column + 1),
                                        f"duplicate key {key!r}"))
            if key_locations is not None:
                key_locations[here + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _build(value_node, here + (key,), locations, constructor, problems, path, key_locations)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, here + (i,), locations, constructor, problems, path, key_locations)
                for i, item in enumerate(node.value)]
    return constructor.construct_object(node, deep=True)


def parse_yaml(text: str, path: str) -> LocatedDocument:
    """Parse one YAML document from ``text``; ``path`` is used in locations.

    Raises :class:`SpecError` with the YAML parser's line and column on a syntax error, and for
    duplicate keys or non-scalar keys.
    """
    # libyaml's C parser (when PyYAML was built with it) is several times faster; same nodes/marks
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path)
        detail = exc.problem or str(exc)
        raise SpecError([Problem(where, f"YAML syntax: {detail}")]) from None
    except yaml.YAMLError as exc:  # non-marked reader errors (bad bytes)
        raise SpecError([Problem(Location(path), f"YAML: {exc}")]) from None
    finally:
        loader.dispose()
    if node is None:
        raise SpecError([Problem(Location(path, 1, 1), "empty document")])
    locations: dict[tuple, tuple[int, int]] = {}
    key_locations: dict[tuple, tuple[int, int]] = {}
    problems: list[Problem] = []
    try:
        data = _build(node, (), locations, loader, problems, path, key_locations)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        where = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path)
        raise SpecError([Problem(where, f"YAML: {exc.problem}")]) from None
    if problems:
        raise SpecError(problems)
    return LocatedDocument(path, data, locations, key_locations)


def load_yaml(path: Path, display: str | None = None) -> LocatedDocument:
    """Read and parse the YAML file at ``path``; ``display`` is the name used in locations."""
    shown = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([Problem(Location(shown), f"cannot read: {exc}")]) from None
    return parse_yaml(text, shown)
