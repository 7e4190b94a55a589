"""The AMDGPU corpus (examples/amdgpu): the manifest names real files, kernels and reference forms,
its wave sizes and denormal modes are the ones in the .s, and (with llc-19 / llvm-mc-19 here) the
committed assembly is what llc-19 writes today and assembles."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tilecheck.spec.database import load_database
from tilecheck.verify.compiled import parse_reference

ROOT = Path(__file__).resolve().parents[2]
AMDGPU = ROOT / "examples" / "amdgpu"
MANIFEST = yaml.safe_load((AMDGPU / "manifest.yaml").read_text())
TARGETS = {t["cpu"]: t for t in MANIFEST["targets"]}
ARITY = {"fdiv": 2, "rcp": 1, "sqrt": 1, "fma": 3}


def _regen():
    """tools/regen_corpus.py as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("regen_corpus", ROOT / "tools" / "regen_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["regen_corpus"] = module   # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _descriptor(asm: str, kernel: str) -> str:
    """The .amdhsa_kernel block of ``kernel`` (its descriptor: the MODE the wave starts in)."""
    m = re.search(rf"^\s*\.amdhsa_kernel {kernel}\n(.*?)\.end_amdhsa_kernel", asm, re.M | re.S)
    assert m, f"no .amdhsa_kernel {kernel}"
    return m.group(1)


def test_every_kernel_of_the_source_on_every_target():
    kernels = re.findall(r"^define amdgpu_kernel void @(\w+)", (AMDGPU / "arith.ll").read_text(), re.M)
    got = {(e["entry"], e["file"]) for e in MANIFEST["entries"]}
    assert got == {(k, t["file"]) for k in kernels for t in TARGETS.values()}
    assert len(MANIFEST["entries"]) == len(got)
    assert set(TARGETS) == {"gfx90a", "gfx942", "gfx1100"}


@pytest.mark.parametrize("entry", MANIFEST["entries"], ids=lambda e: f"{e['entry']}-{Path(e['file']).stem}")
def test_entry_names_a_kernel_its_reference_and_its_modes(entry):
    asm = (ROOT / entry["file"]).read_text()
    name = entry["entry"]
    assert re.search(rf"^\s*\.globl\s+{name}\b", asm, re.M) and re.search(rf"^{name}:", asm, re.M)
    block = _descriptor(asm, name)
    for key in ("32", "16_64"):
        assert int(re.search(rf"\.amdhsa_float_denorm_mode_{key} (\d+)", block).group(1)) == entry[f"denorm_mode_{key}"]
    # the flushing variants start with f32 denormals off, the others with them on (f16/f64 always on)
    assert entry["denorm_mode_32"] == (0 if name.endswith("_ftz") else 3) and entry["denorm_mode_16_64"] == 3
    ref = parse_reference(entry["against"], load_database())
    assert ref.arity == ARITY[name.split("_")[0]]
    assert (".ftz." in entry["against"]) == name.endswith("_ftz")
    assert ("afn" in entry["claim"]) == ("_afn" in name) and ("fpmath" in entry["claim"]) == ("_fpmath" in name)


@pytest.mark.parametrize("cpu", ["gfx90a", "gfx942", "gfx1100"])
def test_wave_size_is_the_files(cpu):
    asm = (ROOT / TARGETS[cpu]["file"]).read_text()
    assert set(re.findall(r"^\s*\.wavefront_size:\s*(\d+)", asm, re.M)) == {str(TARGETS[cpu]["wave"])}
    # the descriptor says wave32 only where the metadata does
    assert ("amdhsa_wavefront_size32 1" in asm) == (TARGETS[cpu]["wave"] == 32)


@pytest.mark.skipif(shutil.which("llc-19") is None, reason="llc-19 (Debian llvm-19) is not installed")
def test_regenerating_reproduces_the_committed_files(tmp_path):
    _regen().regen_amdgpu(shutil.which("llc-19"), tmp_path)
    for name in ["manifest.yaml", *(Path(t["file"]).name for t in TARGETS.values())]:
        assert (tmp_path / name).read_bytes() == (AMDGPU / name).read_bytes(), name


@pytest.mark.skipif(shutil.which("llvm-mc-19") is None, reason="llvm-mc-19 (Debian llvm-19) is not installed")
@pytest.mark.parametrize("cpu", ["gfx90a", "gfx942", "gfx1100"])
def test_assembles(cpu, tmp_path):
    done = subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-filetype=obj",
                           str(ROOT / TARGETS[cpu]["file"]), "-o", str(tmp_path / f"{cpu}.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr, done.stderr


def test_readme_inventory_is_the_tools_output():
    spec = importlib.util.spec_from_file_location("amdgpu_inventory", ROOT / "tools" / "amdgpu_inventory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (AMDGPU / "README.md").read_text()
    start = "<!-- inventory: tools/amdgpu_inventory.py -->\n"
    table = readme[readme.index(start) + len(start):readme.index("<!-- /inventory -->")]
    assert table == module.inventory(), "run python tools/amdgpu_inventory.py and paste it into the README"
