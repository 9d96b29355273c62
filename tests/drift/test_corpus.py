"""The real tool lists of tests/data/hygiene/benign (249 tools from 25 servers): every input
schema admits itself when the whole comparison runs, and typical edits get the verdict they
deserve, with examples the jsonschema package confirms. Prints the time per comparison."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

from app.drift import classify, diff_tools
from app.drift.notes import answer
from app.drift.schema import _notes

CORPUS = Path(__file__).resolve().parent.parent / "data" / "hygiene" / "benign"
TOOLS: list[tuple[str, dict[str, Any]]] = [
    (f"{path.stem}:{tool['name']}", tool)
    for path in sorted(CORPUS.glob("*.json"))
    for tool in json.loads(path.read_text())["tools"]
]


def _valid(schema: Any, instance: Any) -> bool:
    return bool(validator_for(schema)(schema).is_valid(instance))


def test_the_corpus_is_there() -> None:
    assert len(TOOLS) >= 240


def test_every_real_input_schema_admits_itself_without_shortcuts() -> None:
    start = time.perf_counter()
    failed = []
    for name, tool in TOOLS:
        schema = tool.get("inputSchema")
        notes = _notes(schema, copy.deepcopy(schema), sup_is_new=True, reading="declared", shortcuts=False)
        if answer(notes) != "yes":
            failed.append((name, [(n.pointer, n.rule, n.reason) for n in notes if n.verdict != "compatible"][:3]))
    elapsed = time.perf_counter() - start
    print(f"{len(TOOLS)} real schemas compared with themselves in full: {elapsed * 1000:.0f} ms")
    assert failed == []


def _first_property(schema: dict[str, Any], optional: bool) -> str | None:
    props = schema.get("properties")
    required = schema.get("required", [])
    names = [name for name in props if not (optional and name in required)] if isinstance(props, dict) else []
    return names[0] if names else None


@pytest.mark.parametrize("edit", ["require", "narrow", "describe", "add_optional", "drop_optional"])
def test_typical_edits_of_real_schemas(edit: str) -> None:
    counted, start = 0, time.perf_counter()
    for name, tool in TOOLS:
        old = tool.get("inputSchema")
        optional = edit in ("require", "drop_optional")
        key = _first_property(old, optional) if isinstance(old, dict) else None
        if key is None or not isinstance(old, dict):
            continue
        new = copy.deepcopy(old)
        required = old.get("required", [])
        if edit == "require":
            new["required"] = [*required, key]
            expected = {"breaking"}
        elif edit == "narrow":
            new["properties"][key] = {"const": "\u2603 surely not a value anyone sends"}
            expected = {"breaking"}
        elif edit == "describe":
            new["properties"][key] = {**new["properties"][key], "description": "changed"}
            expected = {"compatible"}
        elif edit == "add_optional":
            new["properties"]["zz_new_option"] = {"type": "boolean"}
            expected = {"compatible"} if old.get("additionalProperties") in (None, False) else {"breaking"}
        else:
            del new["properties"][key]
            expected = {"breaking"} if old.get("additionalProperties") is False else {"compatible"}
        diff = classify(old, new)
        counted += 1
        assert diff.verdict in expected, (name, edit, [f.model_dump() for f in diff.findings][:3])
        for finding in diff.findings:
            if finding.example is not None:
                assert _valid(old, finding.example.instance), (name, finding)
                assert not _valid(new, finding.example.instance), (name, finding)
        if edit in ("require", "narrow"):
            assert any(f.example is not None for f in diff.findings), (name, diff.findings)
    elapsed = time.perf_counter() - start
    print(f"{edit}: {counted} real schemas in {elapsed * 1000:.0f} ms")
    assert counted >= 90


def test_a_whole_real_list_against_an_edited_copy() -> None:
    old = [tool for name, tool in TOOLS if name.startswith("server-everything:")]
    new = copy.deepcopy(old)
    new[0]["description"] = (new[0].get("description") or "") + " More."
    removed = new.pop()
    diff = diff_tools(old, new)
    assert diff.verdict == "breaking"
    assert {(c.name, c.change) for c in diff.tools} == {
        (new[0]["name"], "description_changed"),
        (removed["name"], "removed"),
    }
    assert diff.counts.unchanged == len(old) - 2
