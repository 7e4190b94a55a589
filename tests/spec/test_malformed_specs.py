"""Broken spec trees must fail loudly, with every problem located as ``spec/...:line:col``.

Each test copies a small fixture spec tree (``tests/spec/fixtures/mini``: two families, three
formats, two targets; the schemas are the real ones) into a temporary folder named ``spec``,
breaks one thing (or several), points ``TILECHECK_SPEC_DIR`` at the copy and asserts the
:class:`SpecError` the loader raises. The real spec is never edited, so adding forms to it changes
nothing here.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tilecheck.errors import SpecError
from tilecheck.spec.database import clear_cache, load_database
from tilecheck.specio.files import spec_root

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mini"
REAL_SCHEMAS = spec_root() / "schema"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A private copy of the fixture tree (with the real schemas) that the loader will read."""
    root = tmp_path / "spec"
    shutil.copytree(FIXTURE, root)
    shutil.copytree(REAL_SCHEMAS, root / "schema")
    (root / "sequences").mkdir()
    # a custom tree is named as it was given: relative to the working folder, "spec/..." as below
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TILECHECK_SPEC_DIR", "spec")
    clear_cache()
    yield root
    clear_cache()


def edit(root: Path, rel: str, old: str, new: str, mark: str | None = None) -> tuple[int, int]:
    """Replace the unique ``old`` in ``root/rel`` by ``new``; return the 1-based (line, column)
    where ``mark`` (default: ``new``) starts in the edited file."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not unique in {rel}"
    text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    offset = text.index(mark or new)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def problems_of(root: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_database(os.path.relpath(root))
    return [str(p) for p in info.value.problems]


def test_the_pristine_copy_loads(tree):
    db = load_database(tree)
    # what the fixture's axes expand to: div 2 + 2*2 + 1, rcp 1 + 2
    assert sorted(f.name for f in db.ptx_forms()) == sorted([
        "div.full.f32", "div.full.ftz.f32", "div.rn.f32", "div.rn.ftz.f32", "div.rz.f32", "div.rz.ftz.f32",
        "div.rn.f64", "rcp.rn.f32", "rcp.rn.f64", "rcp.rz.f64"])
    assert sorted(db.formats) == ["f16", "f32", "f64"] and sorted(db.targets) == ["sm_80", "sm_90"]


def test_yaml_syntax_error(tree):
    line, col = edit(tree, "ptx/rcp.yaml", "summary: Reciprocal", "summary: [Reciprocal", "[Reciprocal")
    found = problems_of(tree)
    assert len(found) == 1
    assert found[0].startswith(f"spec/ptx/rcp.yaml:{line + 1}:")  # the parser notices on the next line
    assert "YAML syntax" in found[0]


def test_schema_violation(tree):
    line, col = edit(tree, "ptx/div.yaml", 'target: {sm: 13, ptx: "1.4"}', 'target: {sm: 13, ptx: "one"}', '"one"')
    found = problems_of(tree)
    assert found == [f"spec/ptx/div.yaml:{line}:{col}: error: forms/2/target/ptx: 'one' does not match '^[0-9]+\\\\.[0-9]+$'"]


def test_unknown_field(tree):
    line, col = edit(tree, "ptx/rcp.yaml", "  - id: rn-f32\n", "  - id: rn-f32\n    colour: red\n", "colour")
    found = problems_of(tree)
    assert len(found) == 1 and found[0].startswith(f"spec/ptx/rcp.yaml:{line}:{col}: error:")  # the field's own place
    assert "unknown field" in found[0] and "colour" in found[0]


def test_unknown_semantics_key(tree):
    line, col = edit(tree, "ptx/rcp.yaml", 'semantics: {key: fp.rcp, rounding: rn}',
                     'semantics: {key: fp.rcpp, rounding: rn}', "fp.rcpp")
    assert problems_of(tree) == [
        f"spec/ptx/rcp.yaml:{line}:{col}: error: unknown semantics key 'fp.rcpp' (did you mean fp.rcp?)"]


def test_unknown_semantics_parameter(tree):
    line, col = edit(tree, "ptx/div.yaml", 'semantics: {key: approx.div, ftz: "{ftz}", variant: full}',
                     'semantics: {key: approx.div, ftz: "{ftz}", variant: full, rounding: rn}',
                     '{key: approx.div, ftz: "{ftz}", variant: full, rounding')
    found = problems_of(tree)
    assert found == [f"spec/ptx/div.yaml:{line}:{col}: error: div.full.f32: approx.div has no "
                     f"parameter 'rounding' (parameters: ftz, variant)",
                     f"spec/ptx/div.yaml:{line}:{col}: error: div.full.ftz.f32: approx.div has no "
                     f"parameter 'rounding' (parameters: ftz, variant)"]


def test_unknown_axis_placeholder(tree):
    line, col = edit(tree, "ptx/div.yaml", 'spelling: "div.{rnd}.{ftz}.f32"', 'spelling: "div.{rmode}.{ftz}.f32"',
                     '"div.{rmode}')
    found = problems_of(tree)
    # one problem: the group does not expand, and the examples naming its forms are not
    # reported again as "unknown form"
    assert found == [f"spec/ptx/div.yaml:{line}:{col}: error: placeholder(s) rmode have no axis"]


def test_duplicate_form_within_a_file(tree):
    line, col = edit(tree, "ptx/div.yaml", "  - id: rn-f64\n", (
        "  - id: again\n"
        '    spelling: "div.{ftz}.rz.f32"\n'
        '    axes: {ftz: ["", ftz]}\n'
        "    type: f32\n"
        '    target: {sm: 20, ptx: "1.4"}\n'
        "    semantics: {key: fp.div, rounding: rz, ftz: \"{ftz}\"}\n"
        '    nan: {policy: unspecified, bits: "0x7fffffff"}\n'
        "  - id: rn-f64\n"), "id: again")
    found = problems_of(tree)
    first = _line_of(tree, "ptx/div.yaml", "id: rnd-f32")
    assert found == [
        f"spec/ptx/div.yaml:{line}:{col}: error: form div.rz.f32 is also defined at spec/ptx/div.yaml:{first}:5",
        f"spec/ptx/div.yaml:{line}:{col}: error: form div.ftz.rz.f32 has the same spelling (up to qualifier order) "
        f"as div.rz.ftz.f32 at spec/ptx/div.yaml:{first}:5",
    ]


def _line_of(root: Path, rel: str, needle: str) -> int:
    text = (root / rel).read_text(encoding="utf-8")
    return text.count("\n", 0, text.index(needle)) + 1


def test_duplicate_family_across_files(tree):
    # A PTX family's forms must start with the file stem, so two files can only define the same
    # forms by defining the same family twice -- which the loader reports at the second file.
    shutil.copy(tree / "ptx" / "rcp.yaml", tree / "sequences" / "rcp.yaml")
    found = problems_of(tree)
    assert found == ["spec/sequences/rcp.yaml:3:7: error: family rcp defined twice"]


def test_recorded_illegal_spelling_that_a_form_defines(tree):
    line, col = edit(tree, "ptx/div.yaml", "illegal:\n", "illegal:\n  - {spelling: div.ftz.rz.f32, reason: wrong}\n",
                     "{spelling: div.ftz.rz.f32")
    found = problems_of(tree)
    assert len(found) == 1
    assert found[0].startswith(f"spec/ptx/div.yaml:{line}:{col}: error: div.ftz.rz.f32 is recorded as illegal but "
                               f"form div.rz.ftz.f32 (spec/ptx/div.yaml:")


def test_example_for_unknown_form(tree):
    line, col = edit(tree, "ptx/rcp.yaml", "examples:\n",
                     'examples:\n  - {form: rcp.rn.f16, operands: ["0x3c00"], result: "0x3c00", source: test}\n',
                     "{form: rcp.rn.f16")
    assert problems_of(tree) == [f"spec/ptx/rcp.yaml:{line}:{col}: error: example names unknown form 'rcp.rn.f16'"]


def test_example_with_wrong_operand_count(tree):
    line, col = edit(tree, "ptx/rcp.yaml", "examples:\n",
                     'examples:\n  - {form: rcp.rn.f32, operands: ["0x3c00", "0x1"], result: "0x3c00", source: test}\n',
                     "{form: rcp.rn.f32")
    assert problems_of(tree) == [
        f"spec/ptx/rcp.yaml:{line}:{col}: error: rcp.rn.f32 takes 1 source operand(s); the example gives 2"]


def test_ptxas_accepts_with_a_message(tree):
    line, col = edit(tree, "ptx/rcp.yaml",
                     "  - {spelling: rcp.rz.ftz.f64, reason: the ISA defines no .ftz for f64, ptxas_accepts: true}",
                     "  - {spelling: rcp.rz.ftz.f64, reason: the ISA defines no .ftz for f64, ptxas_accepts: true, "
                     "ptxas: oops}", "oops")
    assert problems_of(tree) == [f"spec/ptx/rcp.yaml:{line}:{col}: error: rcp.rz.ftz.f64: ptxas_accepts is true, "
                                 f"so there is no ptxas error message to record"]


def test_ptxas_unstable_without_its_message(tree):
    line, col = edit(tree, "ptx/rcp.yaml",
                     "  - {spelling: rcp.rz.ftz.f64, reason: the ISA defines no .ftz for f64, ptxas_accepts: true}",
                     "  - {spelling: rcp.rz.ftz.f64, reason: the ISA defines no .ftz for f64, ptxas_unstable: true}",
                     "{spelling: rcp.rz.ftz.f64")
    assert problems_of(tree) == [f"spec/ptx/rcp.yaml:{line}:{col}: error: rcp.rz.ftz.f64: ptxas_unstable needs the "
                                 "'ptxas' message of the failing runs and no ptxas_accepts"]


def test_opcode_qualifier_not_after_the_opcode(tree):
    line, col = edit(tree, "ptx/div.yaml", 'spelling: "div.full.{ftz}.f32"', 'spelling: "div.{ftz}.full.f32"',
                     '"div.{ftz}.full')
    assert problems_of(tree) == [f"spec/ptx/div.yaml:{line}:{col}: error: opcode qualifier .full must directly follow the opcode"]


def test_every_problem_is_collected(tree):
    a = edit(tree, "ptx/rcp.yaml", 'semantics: {key: fp.rcp, rounding: rn}', 'semantics: {key: fp.rcpp, rounding: rn}',
             "fp.rcpp")
    b = edit(tree, "ptx/div.yaml", "examples:\n",
             'examples:\n  - {form: div.rn.bf16, operands: ["0x3f80", "0x3f80"], result: "0x3f80", source: test}\n',
             "{form: div.rn.bf16")
    c = edit(tree, "targets/ptx.yaml", "{name: sm_80, sm: 80,", "{name: sm_80, sm: 81,", "sm_80, sm: 81")
    d = edit(tree, "formats/f16.yaml", "name: f16\n", "name: half\n", "half")
    found = problems_of(tree)
    assert f"spec/ptx/rcp.yaml:{a[0]}:{a[1]}: error: unknown semantics key 'fp.rcpp' (did you mean fp.rcp?)" in found
    assert f"spec/ptx/div.yaml:{b[0]}:{b[1]}: error: example names unknown form 'div.rn.bf16'" in found
    assert f"spec/targets/ptx.yaml:{c[0]}:{c[1]}: error: name sm_80 does not match sm 81" in found
    assert f"spec/formats/f16.yaml:{d[0]}:{d[1]}: error: name 'half' must equal the file stem 'f16'" in found
    assert len(found) == 4, found
    # the error's text lists them all, compiler style, and counts them
    with pytest.raises(SpecError) as info:
        load_database(tree)
    assert str(info.value).splitlines()[-1] == "4 problems in the spec database"


def test_broken_format_file_is_reported_through_the_database(tree):
    line, col = edit(tree, "formats/f16.yaml", "mantissa_bits: 10", "mantissa_bits: ten", "ten")
    found = problems_of(tree)
    assert any(p.startswith(f"spec/formats/f16.yaml:{line}:{col}: error:") for p in found), found


def test_a_ptx_type_whose_format_is_missing(tree):
    # the f64 forms name the PTX type .f64, whose element format the PTX type table says is f64
    (tree / "formats" / "f64.yaml").unlink()
    found = problems_of(tree)
    assert "spec/formats: error: PTX type .f64 needs the format 'f64', which spec/formats lacks" in found, found
