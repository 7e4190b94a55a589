"""tools/check_floors.py and tools/bits_digest.py without building an environment: the pins are
pyproject.toml's floors, the fast test list exists, digests are compared form by form, and the
digest covers the function forms (cvt, setp, ...) whose bits once broke at the numpy floor."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


floors = _tool("check_floors")
digest = _tool("bits_digest")


def test_pins_are_the_declared_floors():
    assert floors.check_pins() == []


def test_fast_and_full_test_paths_exist():
    for path in floors.FAST_TESTS + floors.TESTS:
        assert (ROOT / path).exists(), path


def test_cache_key_names_pins_and_python():
    key = floors.cache_key()
    assert key["pins"] == floors.FLOOR_PINS and key["python"] == sys.version.split()[0]
    assert floors.cache_key() == key


def test_digests_compare_form_by_form(capsys):
    a = {"x": "0" * 64, "y": "1" * 64, "_versions": {"numpy": "1"}}
    assert floors.compare_digests(a, dict(a, _versions={"numpy": "2"}), ("floor", "newest"))
    assert not floors.compare_digests(a, dict(a, y="raises AttributeError"), ("floor", "newest"))
    assert "differs: y (floor 111111111111, newest raises AttributeError)" in capsys.readouterr().out
    assert not floors.compare_digests(dict(a, x="dtype-dependent"), dict(a, x="dtype-dependent"), ("a", "b"))


def test_function_forms_are_digested_and_a_failure_is_recorded(monkeypatch):
    from tilecheck.spec.database import load_database

    db = load_database()
    for name in ("setp.lt.f32", "setp.lt.f16x2", "cvt.rz.f32.u64", "selp.b32", "mov.pred"):
        value = digest._function_digest(db.form(name), 40)
        assert len(value) == 64 and int(value, 16) >= 0, (name, value)
    # numpy before 2.0 has no numpy.bool: the form raises there, and the digest says so
    import tilecheck.model.api as api

    monkeypatch.setitem(api._UINT, 1, "no_such_dtype")
    assert digest._function_digest(db.form("setp.lt.f32"), 40) == "raises AttributeError"
    assert digest._function_digest(db.form("cvt.rz.f32.u64"), 40) != "raises AttributeError"


def test_predicate_results_use_a_dtype_every_numpy_has():
    import tilecheck.model.api as api

    assert all(hasattr(np, name) for name in api._UINT.values())
    assert api._UINT[1] == "bool_"  # numpy.bool exists from numpy 2.0 only
