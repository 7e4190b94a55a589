"""The contract rules stated once in ``spec/rules/contracts.yaml`` (the sign rule): loaded into the
database, required where approximate forms exist, and located when malformed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tilecheck.errors import SpecError
from tilecheck.spec.database import load_database
from tilecheck.specio.files import spec_root

SPEC = spec_root()


def _tree(tmp_path: Path, rules: str | None) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(SPEC, root, ignore=shutil.ignore_patterns("rules"))
    if rules is not None:
        (root / "rules").mkdir()
        (root / "rules" / "contracts.yaml").write_text(rules, encoding="utf-8")
    return root


def test_the_sign_rule_is_loaded_with_its_sources():
    rule = load_database().sign_rule
    assert rule.rule == "ieee"
    assert "never grants the sign" in rule.statement
    assert any("§9.7.3.8" in s for s in rule.sources) and any("IEEE 754" in s for s in rule.sources)
    assert rule.describe().startswith("sign rule: ")


def test_approximate_forms_without_the_rule_are_a_located_error(tmp_path):
    with pytest.raises(SpecError) as err:
        load_database(_tree(tmp_path, None))
    assert "rules/contracts.yaml" in str(err.value) and "sign rule" in str(err.value)


def test_a_malformed_rule_is_located(tmp_path):
    text = (SPEC / "rules" / "contracts.yaml").read_text(encoding="utf-8").replace("rule: ieee", "rule: through-zero")
    with pytest.raises(SpecError) as err:
        load_database(_tree(tmp_path, text))
    message = str(err.value)
    assert "rules/contracts.yaml:" in message and "sign/rule" in message
