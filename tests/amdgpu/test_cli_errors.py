"""A semantics body with a syntax error or an unknown primitive is a located spec error: the CLI
prints ``spec/amdgpu/<file>.yaml:line:col: error: ...`` and exits 2.

Each test copies small fixture trees (the PTX one of ``tests/spec/fixtures/mini`` and the AMD forms
and sequence of ``tests/amdgpu/fixtures/mini``; the schemas are the real ones) into a temporary
folder named ``spec`` and breaks one thing: the real spec is never edited."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tilecheck.errors import SpecError
from tilecheck.spec.database import clear_cache, load_database
from tilecheck.specio.files import spec_root

HERE = Path(__file__).resolve().parent
PTX_FIXTURE = HERE.parent / "spec" / "fixtures" / "mini"
AMD_FIXTURE = HERE / "fixtures" / "mini"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = tmp_path / "spec"
    shutil.copytree(PTX_FIXTURE, root)
    shutil.copytree(AMD_FIXTURE, root, dirs_exist_ok=True)
    shutil.copytree(spec_root() / "schema", root / "schema")
    # a custom tree is named as it was given: relative to the working folder, "spec/..." as below
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TILECHECK_SPEC_DIR", "spec")
    clear_cache()
    yield root
    clear_cache()


def edit(root: Path, rel: str, old: str, new: str, mark: str) -> tuple[int, int]:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    offset = text.index(mark)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def cli(root: Path, *args):
    env = dict(os.environ, TILECHECK_SPEC_DIR=str(root))
    return subprocess.run([sys.executable, "-m", "tilecheck", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_pristine_fixture_loads(tree):
    db = load_database()
    assert "v_mul_f64" in db.extras["amdgpu"]["forms"] and "mini.fdiv64" in db.extras["sequences"]
    assert cli(tree, "spec", "list").returncode == 0


def test_syntax_error_in_a_body(tree):
    line, col = edit(tree, "amdgpu/v_mul.yaml", "      D = mul(rm, S0, S1)\n      if not denorm_out:\n",
                     "      D = mul(rm, S0, S1\n      if not denorm_out:\n", "      if not denorm_out:")
    with pytest.raises(SpecError) as info:
        load_database()
    where = {(p.location.path, p.location.line) for p in info.value.problems}
    # Python reports the unclosed call at the next line
    assert ("spec/amdgpu/v_mul.yaml", line) in where or ("spec/amdgpu/v_mul.yaml", line - 1) in where
    done = cli(tree, "prove", "f16.div-by-4")
    assert done.returncode == 2
    assert "spec/amdgpu/v_mul.yaml:" in done.stderr and "syntax error" in done.stderr


def test_unknown_primitive_in_a_body(tree):
    line, col = edit(tree, "amdgpu/v_mul.yaml", "      D = mul(rm, S1, S0)\n", "      D = mull(rm, S1, S0)\n", "mull")
    with pytest.raises(SpecError) as info:
        load_database()
    texts = [str(p) for p in info.value.problems]
    assert any(f"spec/amdgpu/v_mul.yaml:{line}:{col}: error:" in t and "unknown primitive 'mull'" in t
               for t in texts), texts
    done = cli(tree, "prove", "f16.div-by-4")
    assert done.returncode == 2
    assert f"spec/amdgpu/v_mul.yaml:{line}:{col}: error:" in done.stderr


def test_unknown_sequence_instruction_is_located(tree):
    line, _ = edit(tree, "sequences/mini.fdiv64.yaml", "{op: v_mul_f64, dst: [q0]", "{op: v_mul_f65, dst: [q0]",
                   "{op: v_mul_f65")
    with pytest.raises(SpecError) as info:
        load_database()
    assert any(p.location.line == line and "unknown instruction 'v_mul_f65'" in p.message
               for p in info.value.problems)


def test_schema_violations_are_located(tree):
    line, col = edit(tree, "amdgpu/v_mul.yaml", "mode: {round: rn, denorm: 3}", "mode: {round: rn, denorm: 4}", "4}")
    with pytest.raises(SpecError) as info:
        load_database()
    assert any(p.location.path == "spec/amdgpu/v_mul.yaml" and p.location.line == line for p in info.value.problems)
