"""The table of schema pairs (tests/data/drift/schema_pairs.yaml): each verdict, rule and reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema.validators import validator_for

from app.drift import classify
from app.drift.rules import REASONS, rule_keys

PAIRS = Path(__file__).resolve().parent.parent / "data" / "drift" / "schema_pairs.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(PAIRS.read_text())


def _valid(schema: Any, instance: Any) -> bool:
    schema = {} if schema is None else schema
    cls = validator_for(schema) if isinstance(schema, dict) else validator_for({})
    return bool(cls(schema).is_valid(instance))


def test_the_table_is_well_formed() -> None:
    assert len(CASES) >= 60
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids))
    allowed = {"id", "old", "new", "verdict", "rules", "reasons", "why", "direction", "reading", "example"}
    allowed |= {"pointer", "jsonschema"}
    for case in CASES:
        assert set(case) <= allowed, case["id"]
        assert {"old", "new", "verdict", "why"} <= set(case), case["id"]
        assert set(case.get("rules", [])) <= rule_keys(), case["id"]
        assert set(case.get("reasons", [])) <= set(REASONS), case["id"]
        assert case["verdict"] != "unknown" or case.get("reasons"), case["id"]


def test_the_table_covers_every_verdict_and_many_rules() -> None:
    verdicts = {case["verdict"] for case in CASES}
    assert verdicts == {"unchanged", "compatible", "breaking", "unknown"}
    named = {rule for case in CASES for rule in case.get("rules", [])}
    assert len(named) >= 40
    reasons = {reason for case in CASES for reason in case.get("reasons", [])}
    assert len(reasons) >= 12


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_pair(case: dict[str, Any]) -> None:
    direction = case.get("direction", "input")
    diff = classify(case["old"], case["new"], direction=direction, reading=case.get("reading", "declared"))
    assert diff.verdict == case["verdict"], [f.model_dump() for f in diff.findings]
    found = {(f.rule, f.verdict) for f in diff.findings}
    for rule in case.get("rules", []):
        wanted = case["verdict"] if case["verdict"] in ("breaking", "compatible") else None
        assert any(name == rule and wanted in (None, verdict) for name, verdict in found), (rule, found)
    assert set(case.get("reasons", [])) <= set(diff.reasons), diff.reasons
    if "pointer" in case:
        assert any(f.pointer == case["pointer"] and f.rule == case["rules"][0] for f in diff.findings), [
            (f.pointer, f.rule) for f in diff.findings
        ]
    examples = [f.example.instance for f in diff.findings if f.example is not None]
    if case.get("example"):
        assert any(f.verdict == "breaking" and f.example is not None for f in diff.findings)
    if case.get("jsonschema", True):
        relied, other = (case["old"], case["new"]) if direction == "input" else (case["new"], case["old"])
        for instance in examples:
            assert _valid(relied, instance), instance
            assert not _valid(other, instance), instance
    for finding in diff.findings:
        assert finding.verdict != "unknown" or finding.reason in REASONS
        assert finding.example is None or finding.verdict == "breaking"
