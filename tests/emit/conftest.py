"""Fixtures for the emitter tests: the spec database and a per-session cache of loaded programs."""

from __future__ import annotations

import pytest

from tilecheck.tile.loader import load_programs


@pytest.fixture(scope="session")
def programs_of():
    """``programs_of(path)``: the programs a file defines (loaded once per session)."""
    cache = {}

    def load(path):
        key = str(path)
        if key not in cache:
            cache[key] = load_programs(path)
        return cache[key]
    return load
