"""A semantics body with a syntax error or an unknown primitive is a located spec error: the CLI
prints ``spec/amdgpu/<file>.yaml:line:col: error: ...`` and exits 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tilecheck.errors import SpecError
from tilecheck.spec.database import clear_cache, load_database
from tilecheck.spec.files import spec_root

REAL_SPEC = spec_root()


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = tmp_path / "spec"
    shutil.copytree(REAL_SPEC, root)
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


def test_syntax_error_in_a_body(tree):
    line, col = edit(tree, "amdgpu/v_div_fmas.yaml", "      D = fma(rm, S0, S1, S2)\n      if VCC:\n",
                     "      D = fma(rm, S0, S1, S2\n      if VCC:\n", "      if VCC:")
    with pytest.raises(SpecError) as info:
        load_database()
    where = {(p.location.path, p.location.line) for p in info.value.problems}
    # Python reports the unclosed call at the next line
    assert ("spec/amdgpu/v_div_fmas.yaml", line) in where or ("spec/amdgpu/v_div_fmas.yaml", line - 1) in where
    done = cli(tree, "prove", "f16.div-by-4")
    assert done.returncode == 2
    assert "spec/amdgpu/v_div_fmas.yaml:" in done.stderr and "syntax error" in done.stderr


def test_unknown_primitive_in_a_body(tree):
    line, col = edit(tree, "amdgpu/v_div_scale.yaml", "          D = ldexp(S0, adj, rm)\n",
                     "          D = ldexpp(S0, adj, rm)\n", "ldexpp")
    with pytest.raises(SpecError) as info:
        load_database()
    texts = [str(p) for p in info.value.problems]
    assert any(f"spec/amdgpu/v_div_scale.yaml:{line}:{col}: error:" in t and "unknown primitive 'ldexpp'" in t
               for t in texts), texts
    done = cli(tree, "prove", "f16.div-by-4")
    assert done.returncode == 2
    assert f"spec/amdgpu/v_div_scale.yaml:{line}:{col}: error:" in done.stderr


def test_unknown_sequence_instruction_is_located(tree):
    line, _ = edit(tree, "sequences/amdgpu.fdiv64.yaml", "{op: v_mul_f64, dst: [q0]", "{op: v_mul_f65, dst: [q0]",
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
