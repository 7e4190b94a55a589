"""Contracts as data: the schema and the loader reject malformed ``contract:`` blocks, located.

Each test writes a one-family spec tree (the real schema, formats and targets, symlinked; one
fixture ``div.yaml``) and breaks one thing in its contract; the well-formed fixture loads into
the structured :class:`~tilecheck.spec.contract.Contract`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecheck.errors import SpecError
from tilecheck.spec.contract import Bound, OperandCondition
from tilecheck.spec.database import clear_cache, load_database

SPEC = Path(__file__).resolve().parents[2] / "spec"

FAMILY = """\
schema: ptx-instruction
isa: ptx
name: div
summary: fixture family for contract data
reference: {document: "PTX ISA 9.0", section: "9.7.3.8"}
operands:
  - {name: d, role: dst, doc: quotient}
  - {name: a, role: src, doc: numerator}
  - {name: b, role: src, doc: denominator}
forms:
  - id: approx-f32
    spelling: "div.approx.{ftz}.f32"
    axes: {ftz: ["", ftz]}
    type: f32
    target: {sm: 10, ptx: "1.4"}
    semantics: {key: approx.div, ftz: "{ftz}", variant: approx}
    nan: {policy: unspecified, bits: "0x7fffffff"}
    contract:
      BOUND
      rules:
        - when: {a: {class: [finite]}, b: {class: [finite], above: "2^126"}}
          result: signed-zero
          source: fixture
      specials:
        - {operands: [nan, any], result: nan}
        - {operands: [any, nan], result: nan}
      source: fixture
"""

GOOD_BOUND = "bound: {kind: ulp, ulps: 2, readings: [exact, correctly-rounded]}"


def _tree(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "spec"
    root.mkdir()
    for part in ("schema", "formats", "targets"):
        (root / part).symlink_to(SPEC / part, target_is_directory=True)
    (root / "ptx").mkdir()
    (root / "ptx" / "div.yaml").write_text(text, encoding="utf-8")
    return root


def _problems(tmp_path: Path, text: str) -> list[str]:
    clear_cache()
    with pytest.raises(SpecError) as info:
        load_database(_tree(tmp_path, text))
    clear_cache()
    return [str(p) for p in info.value.problems]


def test_the_fixture_loads_into_the_structured_contract(tmp_path):
    clear_cache()
    db = load_database(_tree(tmp_path, FAMILY.replace("BOUND", GOOD_BOUND)))
    clear_cache()
    c = db.form("div.approx.ftz.f32").contract
    assert c.bound == Bound("ulp", 2, ("exact", "correctly-rounded"))
    assert c.ulp == 2 and c.relative_log2 is None and c.operation == "div"
    assert c.flush_inputs and not db.form("div.approx.f32").contract.flush_inputs
    (rule,) = c.rules
    assert rule.result == "signed-zero"
    assert rule.when == ((0, OperandCondition(("finite",))), (1, OperandCondition(("finite",), 126, None)))


@pytest.mark.parametrize("bad, words", [
    ("bound: {kind: ulp, ulps: 2}", "readings"),                                   # ulp bound without readings
    ("bound: {kind: ulp, ulps: 0, readings: [exact]}", "bound"),                    # size must be positive
    ("bound: {kind: ulp, ulps: 2, readings: [nearest]}", "bound"),                  # unknown reading
    ("bound: {kind: relative, log2: 3}", "bound"),                                  # a relative bound above 1
    ("bound: {kind: relative, log2: -23, readings: [exact]}", "bound"),             # readings on a relative bound
    ("bound: {kind: absolute, size: 1}", "bound"),                                  # unknown kind
    ("ulp: 2", "ulp"),                                                              # the old prose-era field
])
def test_malformed_bounds_are_rejected_located(tmp_path, bad, words):
    problems = _problems(tmp_path, FAMILY.replace("BOUND", bad))
    assert problems and all("div.yaml:" in p for p in problems), problems
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("old, new, words", [
    ('result: signed-zero', 'result: zero', "zero"),                                  # unknown rule result
    ('above: "2^126"', 'above: "1e38"', "1e38"),                                       # thresholds are 2^N
    ('b: {class: [finite], above: "2^126"}', 'c: {class: [finite]}', "'c'"),           # unknown operand
    ('{class: [finite]}, b', '{class: [huge]}, b', "huge"),                            # unknown class word
    ('          source: fixture\n', '', "source"),                                     # a rule cites its source
    ('{operands: [nan, any], result: nan}', '{operands: [nan], result: nan}', "operand"),  # arity
    ('{operands: [nan, any], result: nan}', '{operands: [nan, huge], result: nan}', "huge"),  # table word
    ('{operands: [nan, any], result: nan}', '{operands: [nan, any], result: normal}', "normal"),  # result word
])
def test_malformed_rules_and_tables_are_rejected_located(tmp_path, old, new, words):
    text = FAMILY.replace("BOUND", GOOD_BOUND)
    assert text.count(old) == 1
    problems = _problems(tmp_path, text.replace(old, new))
    assert problems and all("div.yaml:" in p for p in problems), problems
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("old, new, words", [
    ("f32: {kind: ulp, ulps: 1, readings: [exact],", "f32: {kind: ulp, ulps: 1,", "readings"),
    ("f32: {kind: ulp, ulps: 1, readings: [exact],", "f32: {kind: ulp, ulps: 1, readings: [correctly-rounded],",
     "correctly-rounded"),
    ("f64: {kind: relative, log2: -23,", "f64: {kind: relative, ulps: 2,", "log2"),
    ("f64: {kind: relative, log2: -23,", "f64: {relative_log2: -23,", "kind"),
])
def test_amd_contract_bounds_use_the_same_vocabulary(tmp_path, old, new, words):
    """AMD contracts load into the same Contract type; a malformed bound is a located problem."""
    root = tmp_path / "spec"
    root.mkdir()
    for part in ("schema", "formats", "targets"):
        (root / part).symlink_to(SPEC / part, target_is_directory=True)
    (root / "ptx").mkdir()
    (root / "ptx" / "div.yaml").write_text(FAMILY.replace("BOUND", GOOD_BOUND), encoding="utf-8")
    (root / "amdgpu").mkdir()
    text = (SPEC / "amdgpu" / "v_rcp.yaml").read_text(encoding="utf-8")
    clear_cache()
    from tilecheck.spec.amdgpu import amdgpu_forms

    (root / "amdgpu" / "v_rcp.yaml").write_text(text, encoding="utf-8")
    c = amdgpu_forms(load_database(root))["v_rcp_f32"].variant("observed").contract
    assert c.bound == Bound("ulp", 1, ("exact",)) and c.flush_inputs and c.operation == "rcp"
    assert text.count(old) == 2  # the documented and the observed variant
    (root / "amdgpu" / "v_rcp.yaml").write_text(text.replace(old, new), encoding="utf-8")
    clear_cache()
    with pytest.raises(SpecError) as info:
        load_database(root)
    clear_cache()
    problems = [str(p) for p in info.value.problems]
    assert problems and all("v_rcp.yaml:" in p for p in problems), problems
    assert any(words in p for p in problems), problems
