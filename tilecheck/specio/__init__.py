"""Reading spec files: where the spec root is, YAML with line/column locations, JSON-Schema checks.

* :mod:`tilecheck.specio.files` -- ``spec_root()``, ``display_path``, ``schema_problems``;
* :mod:`tilecheck.specio.yamlio` -- ``load_yaml`` into a :class:`LocatedDocument`.

The lowest layer above the errors: the formats and the spec database both read their files
through it. Import the submodule you need; this package imports nothing on its own.
"""
