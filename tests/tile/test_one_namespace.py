"""One ``T``, whichever import a user finds first.

The seed's import line (``from tilecheck.tile import T``) and the facade's (``from
tilecheck.program import T``) name the same namespace, and its programs check, emit and run. The
tile frontend reaches the facade by name at call time only: importing it loads no layer above it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilecheck.program
import tilecheck.tile
from tilecheck.errors import UsageError
from tilecheck.tile import T, ir  # the seed's import line: the programs below are traced through it
from tilecheck.tile.loader import load_programs

ROOT = Path(__file__).resolve().parents[2]
ROOT_RATIO = ROOT / "examples" / "root_ratio.py"
FACADE_IMPORT = "from tilecheck.program import T"
SEED_IMPORT = "from tilecheck.tile import T"


def _root_ratio_through(tmp_path: Path, import_line: str):
    """The example program, loaded from a copy whose import line is ``import_line``."""
    source = ROOT_RATIO.read_text(encoding="utf-8")
    assert source.startswith(FACADE_IMPORT + "\n")  # guard: the example still has the line this test swaps
    # one folder per import, the same file name: the emitted header names the file
    folder = tmp_path / ("seed" if import_line == SEED_IMPORT else "facade")
    folder.mkdir(exist_ok=True)
    path = folder / "root_ratio.py"
    path.write_text(source.replace(FACADE_IMPORT, import_line, 1), encoding="utf-8")
    (program,) = load_programs(path)
    return program


def test_both_imports_name_one_namespace_and_one_program_class():
    assert tilecheck.tile.T is tilecheck.program.T
    assert tilecheck.program.Program is ir.Program is tilecheck.tile.Program


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_seed_import_runs_root_ratio_like_the_facade_import(tmp_path, ptx_db, target):
    seed = _root_ratio_through(tmp_path, SEED_IMPORT)
    facade = _root_ratio_through(tmp_path, FACADE_IMPORT)
    assert seed.check(target=target, db=ptx_db) == [] == facade.check(target=target, db=ptx_db)
    assert seed.emit(target=target, db=ptx_db) == facade.emit(target=target, db=ptx_db)
    # the seed's documented value, then values with edge cases (rounding, zero, inf, nan, subnormal)
    inputs = [np.array([[4], [16], [36], [64]], dtype=np.float32),
              np.array([[2], [-0.0], [np.inf], [1e-40]], dtype=np.float32),
              np.array([[np.nan], [3], [-4], [1e38]], dtype=np.float32)]
    for a in inputs:
        out_seed, out_facade = np.zeros((4, 1), np.float32), np.zeros((4, 1), np.float32)
        returned = seed.run(a, out_seed, target=target, db=ptx_db)
        assert returned[0] is a and returned[1] is out_seed
        facade.run(a, out_facade, target=target, db=ptx_db)
        assert out_seed.view(np.uint32).tolist() == out_facade.view(np.uint32).tolist()
    seed_value = np.zeros((4, 1), np.float32)
    seed.run(inputs[0], seed_value, target=target, db=ptx_db)
    assert seed_value.tolist() == [[1.0], [2.0], [3.0], [4.0]]


def test_seed_import_programs_have_every_operation(ptx_db):
    @T.function
    def store_twice(A: T.Tensor((2, 1), "float32"), Out: T.Tensor((2, 1), "float32")):
        r = T.alloc_local((2, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r)
        T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)

    assert len(store_twice.expand(db=ptx_db)) == 3
    store_twice.validate(db=ptx_db)
    assert ".entry store_twice" in store_twice.emit(None, db=ptx_db)
    assert "__global__" in store_twice.emit("sm_90", format="cuda", db=ptx_db)
    out = np.zeros((2, 1), np.float32)
    store_twice.run(np.array([[9], [0.25]], np.float32), out, db=ptx_db)
    assert out.tolist() == [[3.0], [0.5]]


def test_seed_import_run_refuses_unknown_keywords_with_the_parameters_named(ptx_db):
    @T.function
    def copy(A: T.Tensor((1, 1), "float32"), Out: T.Tensor((1, 1), "float32")):
        r = T.alloc_local((1, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)

    with pytest.raises(UsageError, match=r"copy\.run\(\): unknown keyword argument\(s\) Out; .*\(A, Out\)"):
        copy.run(np.zeros((1, 1), np.float32), Out=np.zeros((1, 1), np.float32), db=ptx_db)


def test_the_default_database_is_loaded_when_db_is_left_out(ptx_env):
    @T.function
    def half(A: T.Tensor((1, 1), "float32"), Out: T.Tensor((1, 1), "float32")):
        r = T.alloc_local((1, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, T.float32(2))
        T.cuda.tile.apply(T.ptx["st.global.f32"], Out, r)

    assert half.check() == []
    out = np.zeros((1, 1), np.float32)
    half.run(np.array([[3]], np.float32), out)
    assert out.tolist() == [[1.5]]


def test_importing_the_tile_frontend_loads_no_layer_above_it():
    """The lookup is by name at call time: ``import tilecheck.tile`` leaves the facade, the checker,
    the emitter and the simulator unloaded until a program's method is called."""
    above = ("tilecheck.program", "tilecheck.legality", "tilecheck.emit", "tilecheck.sim")
    script = (
        "import sys\n"
        "from tilecheck.tile import T\n"
        f"above = {above!r}\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith(above))\n"
        "print(loaded())\n"
        "@T.function\n"
        "def f(A: T.Tensor((1, 1), 'float32')):\n"
        "    r = T.alloc_local((1, 1), 'float32')\n"
        "    T.cuda.tile.apply(T.ptx['ld.global.f32'], r, A)\n"
        "print(loaded())\n"
        "assert f.check() == []\n"
        "print('tilecheck.program' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after_tracing, after_check = done.stdout.splitlines()
    assert before == "[]" and after_tracing == "[]"
    assert after_check == "True"


def test_the_facade_is_found_by_the_one_name_the_ir_declares():
    assert ir.FACADE == tilecheck.program.__name__
    assert ir.operations() is tilecheck.program
    for name in ("check", "validate", "expand", "emit", "run"):
        assert callable(getattr(tilecheck.program, name)), name
        assert callable(getattr(ir.Program, name)), name
