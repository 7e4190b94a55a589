"""Fixtures for tests that judge PTX only: a spec root made of the PTX part of the real database.

The legality checker and the tile frontend read only PTX instruction files (``spec/ptx``), the
targets and the formats, so their tests load a root made of exactly those folders of the real
``spec/`` (symlinked, not copied): AMD and sequence files that other work adds cannot change what
these tests judge. A conftest uses the fixtures by importing them (pytest registers the fixtures a
conftest module holds): ``from support.spec_root import ptx_db, ptx_env, ptx_spec_root``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecheck.spec.database import load_database

SPEC = Path(__file__).resolve().parents[2] / "spec"
PTX_PARTS = ("schema", "formats", "ptx", "targets", "rules")


@pytest.fixture(scope="session")
def ptx_spec_root(tmp_path_factory) -> Path:
    """A spec root holding the real schema, formats, ptx, targets and rules folders."""
    root = tmp_path_factory.mktemp("ptx-spec")
    for part in PTX_PARTS:
        (root / part).symlink_to(SPEC / part, target_is_directory=True)
    return root


@pytest.fixture(scope="session")
def ptx_db(ptx_spec_root):
    """The PTX spec database (forms, targets)."""
    return load_database(ptx_spec_root)


@pytest.fixture
def ptx_env(ptx_spec_root, monkeypatch) -> Path:
    """Point ``TILECHECK_SPEC_DIR`` at the PTX root (for the CLI, which loads the default database)."""
    monkeypatch.setenv("TILECHECK_SPEC_DIR", str(ptx_spec_root))
    return ptx_spec_root
