"""Int operands and per-operand formats (``types:``) in the AMD loader: mistakes are located spec
errors, and the typed operands reach the bodies as declared. Works on a copy of the fixture tree
(``tests/amdgpu/test_cli_errors.py``'s ``tree`` fixture); the real spec is never edited."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.amdgpu.instructions import evaluate
from tilecheck.errors import SpecError
from tilecheck.spec.database import load_database

from test_cli_errors import edit, tree  # noqa: F401 - the fixture (tests/amdgpu is on sys.path)

# v_mul_f64 of the fixture turned into a scale-by-int form: S1 becomes an int operand
_INT_S1 = ("  - {name: S1, role: src, kind: float, doc: multiplier}",
           "  - {name: S1, role: src, kind: int, doc: exponent}")


def _make_ldexp(root):
    edit(root, "amdgpu/v_mul.yaml", *_INT_S1, "kind: int")
    (root / "sequences" / "mini.fdiv64.yaml").unlink()  # its v_mul_f64 steps pass floats as S1
    path = root / "amdgpu" / "v_mul.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("D = mul(rm, S0, S1)", "D = ldexp(S0, S1, rm)").replace("D = mul(rm, S1, S0)", "D = ldexp(S0, S1, rm)")
    text = text.replace("          S1 = flush(S1)\n", "")  # flush() takes floats
    path.write_text(text, encoding="utf-8")


def _problems(**_):
    with pytest.raises(SpecError) as info:
        load_database()
    return info.value.problems


def test_a_float_primitive_on_an_int_operand_is_a_located_type_error(tree):  # noqa: F811
    line, col = edit(tree, "amdgpu/v_mul.yaml", *_INT_S1, "kind: int")
    problems = _problems()
    assert any(p.location.path == "spec/amdgpu/v_mul.yaml" and "mul" in p.message and "int" in p.message
               for p in problems), [str(p) for p in problems]


def test_int_operands_reach_the_body_as_signed_ints(tree):  # noqa: F811
    _make_ldexp(tree)
    db = load_database()
    form = db.extras["amdgpu"]["forms"]["v_mul_f64"]
    s0 = np.array([0x3FF8000000000000] * 2, dtype=np.uint64)  # 1.5
    out = evaluate(form, "observed", S0=s0, S1=np.array([0xFFFFFFFE, 3], dtype=np.uint64))["D"]
    assert list(out.view(np.float64)) == [0.375, 12.0]


@pytest.mark.parametrize("types,why", [("{S1: f32}", "an int operand takes i16 or i32, not 'f32'"),
                                       ("{S2: f32}", "S2 (no such operand)"), ("{S0: e9m9}", "'e9m9' is not one of"),
                                       ("{D: i16}", "D (unknown format 'i16')")])
def test_wrong_types_entries_are_located_at_the_form(tree, types, why):  # noqa: F811
    _make_ldexp(tree)
    line, _ = edit(tree, "amdgpu/v_mul.yaml", "    type: f64\n    opcodes: {rdna3: 808}",
                   f"    type: f64\n    types: {types}\n    opcodes: {{rdna3: 808}}", "    types:")
    problems = _problems()
    hits = [p for p in problems if p.location.path == "spec/amdgpu/v_mul.yaml" and why in p.message]
    # the loader's own checks, or the schema's enum for an unknown format name, at the types: line
    assert hits and all(p.location.line == line for p in hits), [str(p) for p in problems]


def test_an_int_vector_value_wider_than_the_operand_is_located(tree):  # noqa: F811
    _make_ldexp(tree)
    path = tree / "amdgpu" / "v_mul.yaml"
    text = path.read_text(encoding="utf-8")
    marker = "vectors:\n"
    vector = ('  - form: v_mul_f64\n    variants: [documented]\n    operands: {S0: "0x3ff0000000000000", '
              'S1: "0x100000000"}\n    results: {D: "0x3ff0000000000000"}\n    source: "too wide"\n')
    text = text.replace(marker, marker + vector, 1) if marker in text else text + marker + vector
    path.write_text(text, encoding="utf-8")
    problems = _problems()
    assert any(p.location.path == "spec/amdgpu/v_mul.yaml" and "does not fit a 32-bit int" in p.message
               for p in problems), [str(p) for p in problems]
