"""Triton's sine and cosine kernels judged against the ISA's sin.approx/cos.approx bounds.

``tl.sin``/``tl.cos`` (libdevice's sinf/cosf: no approximate instruction, within CUDA's 2 ulp)
lie within the ISA's absolute bound wherever it bounds anything (|x| <= 100pi), and are unknown
beyond, where the ISA gives "no defined error guarantees"; against the cosine ``tl.sin`` is refuted
(sin(0.5) = 0.479 is not within 2^-20.5 of cos(0.5) = 0.878). libdevice's fast_sinf is one
``sin.approx.ftz.f32``: against its own form it verifies where the bound does not reach a flushed
zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.model import sincos

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
BEYOND = int(__import__("numpy").float32(sincos.magnitude_limit(100)).view("uint32")) + 1


def _run(capsys, stem: str, entry: str, ref: str, bits: int) -> tuple[int, dict]:
    code = main(["verify", str(TRITON / f"{stem}.ptx"), "--entry", entry, "--against", ref, "--input", hex(bits),
                 "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("stem,entry,ref", [("sin_f32", "sin_kernel", "sin.approx.f32"),
                                            ("cos_f32_v", "cos_kernel", "cos.approx.f32")])
def test_libdevice_sine_and_cosine_lie_within_the_isa_bound(capsys, stem, entry, ref):
    # 0.5; pi (sin crosses zero there); 2pi's binary32 neighbours (the bound changes); 100 and 314.159 (the last)
    for bits in (0x3F000000, 0x40490FDB, 0x40C90FDA, 0x40C90FDB, 0x42C80000, BEYOND - 1, 0xC2C80000):
        code, out = _run(capsys, stem, entry, ref, bits)
        assert code == 0, (hex(bits), out["verdict"])
    code, out = _run(capsys, stem, entry, ref, BEYOND)
    assert code == 4 and "no defined error guarantees" in json.dumps(out["unknown_inputs"])


def test_the_sine_is_not_the_cosine(capsys):
    code, out = _run(capsys, "sin_f32", "sin_kernel", "cos.approx.f32", 0x3F000000)
    assert code == 1 and out["counterexamples"][0]["got"]["hex"] == "0x3ef57744"  # RN(sin 0.5)


def test_fast_sinf_against_its_form(capsys):
    code, out = _run(capsys, "fast_sin_f32", "fast_sin_kernel", "sin.approx.ftz.f32", 0x3F000000)
    assert code == 0, out["verdict"]
    code, out = _run(capsys, "fast_sin_f32", "fast_sin_kernel", "sin.approx.ftz.f32", 0x33800000)  # 6e-8
    assert code == 4 and "no single run" in json.dumps(out["unknown_inputs"])


def test_blocks_where_the_reference_bounds_nothing_are_counted_not_run(db, monkeypatch):
    """An exhaustive block wholly beyond 100pi is unknown input by input whatever the kernel stores:
    it is counted so without running the kernel (no lanes), and running it gives the same counts."""
    from tilecheck.verify import compiled

    p = compiled.prepare(str(TRITON / "sin_f32.ptx"), "sin_kernel", "sin.approx.f32", db=db)
    start = 0x50000000  # 8.6e9: Payne-Hanek's reduction, the kernel's slowest path
    skipped = compiled.run_range(p, start, start + 4096, block=4096)
    assert (skipped.checked, skipped.unknown, skipped.misrounded, skipped.lanes) == (4096, 4096, 0, 0)
    monkeypatch.setattr(compiled, "_reference_bounds_nothing", lambda ref, lane_ops: False)
    ran = compiled.run_range(p, start, start + 4096, block=4096)
    assert (ran.checked, ran.unknown, ran.misrounded, ran.lanes) == (4096, 4096, 0, 4096)
    # a block that straddles 100pi runs whole: its inputs within are judged
    edge = BEYOND & ~4095
    monkeypatch.undo()
    mixed = compiled.run_range(p, edge, edge + 4096, block=4096)
    assert (mixed.unknown, mixed.misrounded, mixed.lanes) == (edge + 4096 - BEYOND, 0, 4096)
