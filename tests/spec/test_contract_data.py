"""Contracts as data: the schema and the loader reject malformed ``contract:`` blocks, located.

Each test writes a one-family spec tree (the real schema, formats and targets, symlinked; one
fixture ``div.yaml``, and for AMD contracts one fixture ``amdgpu/v_rcp.yaml``) and breaks one
thing in its contract; the well-formed fixtures load into the structured
:class:`~tilecheck.spec.contract.Contract`. The real instruction files are never read.
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
    for part in ("schema", "formats", "targets", "rules"):
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


AMD_FAMILY = """\
schema: amdgpu-instruction
isa: amdgpu
name: v_rcp
summary: fixture family for AMD contract data
reference: {document: "AMD RDNA3 ISA guide", section: "V_RCP_F32 (VOP1 42)"}
operands:
  - {name: D, role: dst, kind: float, doc: approximate reciprocal}
  - {name: S0, role: src, kind: float, doc: operand}
mode: {round: rn, denorm: 3}
forms:
  - name: v_rcp_f64
    type: f64
    opcodes: {rdna3: 47}
  - name: v_rcp_f32
    type: f32
    opcodes: {rdna3: 42}
semantics:
""" + "".join(f"""\
  {variant}:
    source: fixture
    contract:
      operation: rcp
      bounds:
        f64: F64
        f32: F32
      specials:
        - {{operand: "+0", result: "+inf"}}
        - {{operand: nan, result: nan}}
""" for variant in ("documented", "observed"))

AMD_F64 = "{kind: relative, log2: -23, subnormal_ulps: 536870912, flush_inputs: false, flush_outputs: false}"
AMD_F32 = "{kind: ulp, ulps: 1, readings: [exact], flush_inputs: true, flush_outputs: true}"


def _amd_tree(tmp_path: Path, f32: str = AMD_F32, f64: str = AMD_F64) -> Path:
    """The one-family PTX tree plus ``amdgpu/v_rcp.yaml`` with these bounds in both variants."""
    root = _tree(tmp_path, FAMILY.replace("BOUND", GOOD_BOUND))
    (root / "amdgpu").mkdir()
    (root / "amdgpu" / "v_rcp.yaml").write_text(AMD_FAMILY.replace("F32", f32).replace("F64", f64), encoding="utf-8")
    return root


def test_amd_contracts_load_into_the_same_contract_type(tmp_path):
    from tilecheck.spec.amdgpu import amdgpu_forms

    clear_cache()
    forms = amdgpu_forms(load_database(_amd_tree(tmp_path)))
    clear_cache()
    c = forms["v_rcp_f32"].variant("observed").contract
    assert c.bound == Bound("ulp", 1, ("exact",)) and c.flush_inputs and c.operation == "rcp"
    wide = forms["v_rcp_f64"].variant("documented").contract
    assert wide.bound.kind == "relative" and wide.relative_log2 == -23 and not wide.flush_inputs


@pytest.mark.parametrize("f32, f64, words", [
    ("{kind: ulp, ulps: 1, flush_inputs: true, flush_outputs: true}", AMD_F64, "readings"),
    ("{kind: ulp, ulps: 1, readings: [faithful], flush_inputs: true, flush_outputs: true}", AMD_F64,
     "faithful"),  # AMD bounds take the PTX side's two readings, no other
    (AMD_F32, "{kind: relative, ulps: 2, subnormal_ulps: 536870912, flush_inputs: false, flush_outputs: false}",
     "log2"),
    (AMD_F32, "{relative_log2: -23, subnormal_ulps: 536870912, flush_inputs: false, flush_outputs: false}", "kind"),
])
def test_amd_contract_bounds_use_the_same_vocabulary(tmp_path, f32, f64, words):
    """A malformed bound in an AMD contract is a located problem, in the PTX contracts' words."""
    root = _amd_tree(tmp_path, f32, f64)
    clear_cache()
    with pytest.raises(SpecError) as info:
        load_database(root)
    clear_cache()
    problems = [str(p) for p in info.value.problems]
    assert problems and all("v_rcp.yaml:" in p for p in problems), problems
    assert any(words in p for p in problems), problems
