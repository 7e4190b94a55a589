"""Fixtures of the differential-engine tests: the spec database, a fake CuPy, ptxas presence."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture
def fake_cupy(monkeypatch):
    """Install tests/diff/fakecupy.py as ``cupy`` for one test (see its docstring)."""
    spec = importlib.util.spec_from_file_location("cupy", HERE / "fakecupy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "cupy", module)
    return module


@pytest.fixture
def no_cupy(monkeypatch):
    """Make ``import cupy`` fail even on a machine that has it."""
    monkeypatch.setitem(sys.modules, "cupy", None)
