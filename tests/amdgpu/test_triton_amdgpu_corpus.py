"""The Triton AMD corpus (examples/amdgpu/triton): Triton 3.9's gfx942 assembly of the kernels of
examples/triton/kernels.py. The manifest names real files, kernels and reference forms and the
descriptors' modes and wave sizes; every file is a case of tools/regen_corpus.py and (but one) a
case of the NVIDIA corpus with the same launch shape; every file parses; the README's inventory is
tools/amdgpu_inventory.py's. With llvm-mc-19 here each file assembles to the .text Triton linked.
(Regenerating byte for byte needs Triton, which the tests do not install: run
/tmp/triton-venv/bin/python tools/regen_corpus.py --triton-amdgpu and git diff.)"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tilecheck.amdgpu.asm import parse_asm_file
from tilecheck.spec.database import load_database
from tilecheck.verify.compiled import parse_reference

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "examples" / "amdgpu" / "triton"
MANIFEST = yaml.safe_load((FOLDER / "manifest.yaml").read_text())
ENTRIES = MANIFEST["entries"]
NVIDIA = {Path(e["file"]).stem: e
          for e in yaml.safe_load((ROOT / "examples" / "triton" / "manifest.yaml").read_text())["entries"]}
ARITY = {"div_kernel": 2, "div_rn_kernel": 2, "fma_kernel": 3, "mul_add_kernel": 3}   # the others: 1
LLVM_19_TARGET = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n'


def _module(name: str):
    """A file of tools/ as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # regen_corpus's dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _descriptor(asm: str, kernel: str) -> str:
    m = re.search(rf"^\s*\.amdhsa_kernel {kernel}\n(.*?)\.end_amdhsa_kernel", asm, re.M | re.S)
    assert m, f"no .amdhsa_kernel {kernel}"
    return m.group(1)


def _ids(entry) -> str:
    return Path(entry["file"]).stem


def test_manifest_and_folder_are_the_regenerators_cases():
    regen = _module("regen_corpus")
    stems = [Path(e["file"]).stem for e in ENTRIES]
    assert stems == [c.stem for c in regen.TRITON_AMDGPU_CASES]
    assert sorted(p.stem for p in FOLDER.glob("*.s")) == sorted(stems)
    assert all(Path(e["file"]).parent == Path("examples/amdgpu/triton") for e in ENTRIES)
    assert MANIFEST["cpu"] == "gfx942" and MANIFEST["triton"] == "3.9.0"


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_entry_names_its_kernel_reference_and_modes(entry):
    asm = (ROOT / entry["file"]).read_text()
    name = entry["entry"]
    assert re.search(rf"^\s*\.globl\s+{name}\b", asm, re.M) and re.search(rf"^{name}:", asm, re.M)
    block = _descriptor(asm, name)
    for key in ("32", "16_64"):
        assert int(re.search(rf"\.amdhsa_float_denorm_mode_{key} (\d+)", block).group(1)) == entry[f"denorm_mode_{key}"]
    # Triton's default (allow_flush_denorm=False): denormals kept everywhere
    assert entry["denorm_mode_32"] == 3 and entry["denorm_mode_16_64"] == 3
    assert set(re.findall(r"^\s*\.wavefront_size:\s*(\d+)", asm, re.M)) == {str(entry["wave"])} == {"64"}
    ref = parse_reference(entry["against"], load_database())
    assert ref.arity == ARITY.get(name, 1)
    t = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64"}[entry["dtype"]]
    assert entry["against"].endswith(f".{t}") or entry["fp_fusion"] is False   # YAML 1.1 reads off as False
    assert entry["inputs"] == ("exhaustive" if ARITY.get(name, 1) == 1 and t in ("f16", "bf16") else 65536)
    assert re.fullmatch(r"[0-9a-f]{64}", entry["text_sha256"])
    # the DWARF line table names the kernels' source relative to the checkout
    assert '.file\t1 "examples/triton" "kernels.py"' in asm and str(ROOT) not in asm


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_same_source_as_the_nvidia_corpus(entry):
    stem = Path(entry["file"]).stem
    if stem not in NVIDIA:
        assert stem == "div_f16_b1024_w4"   # the one AMD-only launch shape
        return
    nv = NVIDIA[stem]
    for key in ("entry", "dtype", "source", "block", "num_warps", "vector", "fp_fusion"):
        assert entry[key] == nv[key], key
    assert entry["claim"] == nv["documented"]
    assert entry["against"] in nv["against"]


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_parses(entry):
    module = parse_asm_file(ROOT / entry["file"])
    assert module.processor == "gfx942" and module.code_object_version == 5
    fn = module.function(entry["entry"])
    assert fn.is_kernel and fn.globl and fn.instructions
    assert fn.metadata[".wavefront_size"] == entry["wave"]
    # the body runs to .Lfunc_end0 (blocks after the first s_endpgm included), as the inventory reads it
    body = _module("amdgpu_inventory").kernels((ROOT / entry["file"]).read_text(), whole=True)[entry["entry"]]
    assert len(fn.instructions) == len(body)
    assert sum(i.mnemonic.startswith("global_store") for i in fn.instructions) == sum(
        ins.startswith("global_store") for ins in body) >= 1


@pytest.mark.skipif(shutil.which("llvm-mc-19") is None, reason="llvm-mc-19 (Debian llvm-19) is not installed")
@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_assembles_to_tritons_text(entry, tmp_path):
    # Triton's LLVM spells the target id amdgpu9.42-amd-amdhsa-unknown-gfx942, which LLVM 19 refuses
    # (it checks the directive against -triple/-mcpu): respell that one line, keep the rest
    first, rest = (ROOT / entry["file"]).read_text().split("\n", 1)
    assert first == '\t.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"'
    src, obj = tmp_path / "k.s", tmp_path / "k.o"
    src.write_text(LLVM_19_TARGET + rest)
    done = subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj", str(src),
                           "-o", str(obj)], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr, done.stderr
    text = _module("regen_corpus").elf_section(obj.read_bytes(), ".text")
    assert hashlib.sha256(text).hexdigest() == entry["text_sha256"]


def test_readme_inventory_is_the_tools_output():
    readme = (FOLDER / "README.md").read_text()
    start = "<!-- inventory: tools/amdgpu_inventory.py --triton -->\n"
    table = readme[readme.index(start) + len(start):readme.index("<!-- /inventory -->")]
    assert table == _module("amdgpu_inventory").triton_inventory(), \
        "run python tools/amdgpu_inventory.py --triton and paste it into the README"
