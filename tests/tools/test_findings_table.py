"""tools/findings.py: the README's Triton table against its manifest, and rows written as they finish.

Every (kernel, reference) of examples/triton/manifest.yaml has its row in the README's Triton
table (rerunning one row with ``--only`` needs the others there), and a rerun of one row changes
that row alone, keeps the rest of the file, and lands in the file before the tool moves on (a
long run stopped later keeps the rows it finished).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from tilecheck.spec.database import load_database

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def findings():
    spec = importlib.util.spec_from_file_location("findings", ROOT / "tools" / "findings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table(findings, text: str) -> list[str]:
    body = text.split(findings.TRITON_BEGIN, 1)[1].split(findings.TRITON_END, 1)[0]
    return [line for line in body.splitlines()[2:] if line.startswith("| ")]


def test_every_manifest_reference_has_its_readme_row(findings):
    rows = {findings._key(line) for line in _table(findings, (ROOT / "README.md").read_text())}
    missing = [(e["function"], e["against"]) for e in findings.triton_entries(load_database())
               if (e["function"], e["against"]) not in rows]
    assert not missing, f"{len(missing)} manifest references have no README row, e.g. {missing[0]}"


def test_one_row_rerun_lands_and_keeps_the_rest(findings, tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    before = readme.read_text()
    old_rows = _table(findings, before)
    target = next(i for i, line in enumerate(old_rows) if "tl.fma(a, b, c)` (fp32" in line)
    stale = old_rows[target].replace("no counterexample", "stale verdict")
    readme.write_text(before.replace(old_rows[target], stale))
    written = []
    real = findings._write_table

    def spy(path, begin, end, lines):  # each finished row is in the file before the next one runs
        real(path, begin, end, lines)
        written.append(Path(path).read_text())
    monkeypatch.setattr(findings, "_write_table", spy)
    assert findings.main(["--readme", str(readme), "--table", "triton", "--only", "fma_f32.ptx"]) == 0
    after = readme.read_text()
    new_rows = _table(findings, after)
    assert len(new_rows) == len(old_rows)
    assert "stale verdict" not in new_rows[target]
    assert [r for i, r in enumerate(new_rows) if i != target] == [r for i, r in enumerate(old_rows) if i != target]
    assert written and "stale verdict" not in _table(findings, written[0])[target]
    # outside the Triton and vendors tables the file is unchanged
    head = before.split(findings.TRITON_BEGIN, 1)[0]
    assert after.startswith(head)


def test_inputs_apply_to_every_reference_or_per_reference(findings, tmp_path, monkeypatch):
    common = ("file: examples/triton/exp2_f32.ptx, entry: exp2_kernel, dtype: fp32, source: \"tl.exp2(x)\", "
              "block: 128, num_warps: 4, vector: no, target: sm_90a, fp_fusion: default, "
              "against: [ex2.approx.ftz.f32, ex2.approx.f32], documented: \"d\"")
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("entries:\n"
                        f"  - {{{common}}}\n"
                        f"  - {{{common}, inputs: 4096}}\n"
                        f"  - {{{common}, inputs: {{ex2.approx.f32: 65536}}}}\n")
    monkeypatch.setattr(findings, "TRITON", manifest)
    got = [(e["against"], e["inputs"]) for e in findings.triton_entries(load_database())]
    assert got == [("ex2.approx.ftz.f32", "exhaustive"), ("ex2.approx.f32", "exhaustive"),  # a 32-bit domain
                   ("ex2.approx.ftz.f32", 4096), ("ex2.approx.f32", 4096),
                   ("ex2.approx.ftz.f32", "exhaustive"), ("ex2.approx.f32", 65536)]


def test_an_unknown_row_says_what_its_inputs_reach(findings):
    """Inputs with more allowed results than are enumerated (lg2.approx near 1) are not called
    unbounded; a contract that bounds nothing (a domain rule, no documented bound) still is."""
    from types import SimpleNamespace

    wide = SimpleNamespace(unknown_inputs=[{"inputs": ["0x3f71c19f"], "reasons": [
        "lg2.approx.ftz.f32 %r2, %r1 on 0x3f71c19f: the contract allows more than 17 results for these operands "
        "(not enumerated)"], "reference": None}])
    assert findings._unknown_cause(wide) == "a contract whose allowed results are too many to enumerate"
    free = SimpleNamespace(unknown_inputs=[{"inputs": ["0x0001"], "reasons": [
        "v_rcp_f16: no document states a bound for V_RCP_F16"], "reference": None}])
    assert findings._unknown_cause(free) == "an unbounded contract"
    mixed = SimpleNamespace(unknown_inputs=wide.unknown_inputs + [{"inputs": ["0x3f800000"], "reasons": [
        "lg2.approx.ftz.f32's absolute bound (2^-22) reaches zero here"], "reference": None}])
    assert findings._unknown_cause(mixed) == "an unbounded contract"
    unmodelled = SimpleNamespace(unknown_inputs=[{"inputs": ["0x3f000000"], "reasons": [
        "tanh.approx.f32 %r2, %r1 on 0x3f000000: ... tilecheck does not model tanh yet: not judged"], "reference": None}])
    assert findings._unknown_cause(unmodelled) == "a bound tilecheck does not model yet"
    no_run = SimpleNamespace(unknown_inputs=[{"inputs": ["0x3f7fffff"], "reasons": [
        "lg2.approx.ftz.f32's absolute bound (2^-22) reaches zero here: its allowed values have both signs and, "
        "under .ftz, not the subnormals between them, which is no single run of values: not judged"],
        "reference": None}])
    assert findings._unknown_cause(no_run).startswith("a contract whose allowed values are no single run")
    far = SimpleNamespace(unknown_inputs=[{"inputs": ["0x47030665"], "reasons": [], "reference":
                                           "sin.approx.f32 is bounded on |a| <= 100pi only: beyond, the ISA provides "
                                           "\"no defined error guarantees\": not judged"}])
    assert findings._unknown_cause(far) == "a bound the ISA states on [-100pi, 100pi] only"


def test_a_vector_kernels_repeated_elements_are_written_once(findings):
    fold = findings._fold_repeats
    body = ["mul.f32", "fma.rn.f32 x3", "@p bra", "ld.local.b32"]
    assert fold(["mad.wide.s32"] + body * 8 + ["cvt.u32.u64"]) == \
        ["mad.wide.s32", "8 x [mul.f32; fma.rn.f32 x3; @p bra; ld.local.b32]", "cvt.u32.u64"]
    assert fold(body + ["x"] + body) == body + ["x"] + body  # not back to back: as it is
    assert fold(["a", "b", "a", "b"]) == ["a", "b", "a", "b"]  # shorter than four: as it is
    line = findings.ptx_line(ROOT / "examples" / "triton" / "sin_f32_v.ptx", "sin_kernel")
    assert line.startswith("mad.wide.s32; 8 x [mul.f32; ") and line.count("mad.lo.cc.u32") == 1
