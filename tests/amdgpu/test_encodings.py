"""Every assembly example of spec/amdgpu encodes to the recorded bytes (needs llvm-mc-19).

``llvm-mc-14`` silently encodes gfx1100 input for SI (reference/amd-division.md §4), so only
llvm-mc 19 or newer is accepted: ``TILECHECK_LLVM_MC`` may name another binary.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tilecheck.spec.database import load_database

FAMILIES = load_database().extras["amdgpu"]["families"]
ENCODINGS = [(fam.name, e) for fam in FAMILIES.values() for e in fam.encodings]


def _llvm_mc() -> str | None:
    return os.environ.get("TILECHECK_LLVM_MC") or shutil.which("llvm-mc-19")


def test_examples_exist():
    assert len(ENCODINGS) >= 15
    assert {fam for fam, _ in ENCODINGS} == set(FAMILIES)


@pytest.mark.parametrize("family,enc", ENCODINGS, ids=lambda x: x if isinstance(x, str) else x.asm)
def test_assembly_example_encodes_to_the_spec_bytes(family, enc):
    mc = _llvm_mc()
    if mc is None:
        pytest.skip("llvm-mc-19 not installed (Debian: apt-get install --no-install-recommends llvm-19)")
    cmd = [mc, "-arch=amdgcn", f"-mcpu={enc.mcpu}", "-show-encoding"]
    if enc.mattr:
        cmd.append(f"-mattr={enc.mattr}")
    done = subprocess.run(cmd, input=enc.asm + "\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "not a recognized processor" not in done.stderr, done.stderr
    m = re.search(r"encoding: \[([^\]]*)\]", done.stdout)
    assert m, done.stdout
    got = tuple(int(b, 16) for b in m.group(1).split(","))
    assert got == enc.bytes, (enc.asm, [hex(b) for b in got], [hex(b) for b in enc.bytes], str(enc.location))
