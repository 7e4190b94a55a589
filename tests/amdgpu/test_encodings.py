"""Every assembly example of spec/amdgpu encodes to the recorded bytes (needs llvm-mc 19+).

``llvm-mc-14`` silently encodes gfx1100 input for SI (reference/amd-division.md §4), so only
llvm-mc 19 or newer is accepted (:mod:`tilecheck.amdgpu.encoding`): ``TILECHECK_LLVM_MC`` may name
another binary.
"""

from __future__ import annotations

import pytest

from tilecheck.amdgpu.encoding import assemble, llvm_mc
from tilecheck.spec.database import load_database

FAMILIES = load_database().extras["amdgpu"]["families"]
ENCODINGS = [(fam.name, e) for fam in FAMILIES.values() for e in fam.encodings]


def test_examples_exist():
    assert len(ENCODINGS) >= 15
    assert {fam for fam, _ in ENCODINGS} == set(FAMILIES)


@pytest.mark.parametrize("family,enc", ENCODINGS, ids=lambda x: x if isinstance(x, str) else x.asm)
def test_assembly_example_encodes_to_the_spec_bytes(family, enc):
    mc, why = llvm_mc()
    if mc is None:
        pytest.skip(why)
    got, err = assemble(mc, enc)
    assert got is not None, err
    assert got == enc.bytes, (enc.asm, [hex(b) for b in got], [hex(b) for b in enc.bytes], str(enc.location))
