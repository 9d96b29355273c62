"""The parts beneath the classifier: regular expressions, references, sameness, JSON values, and
the validator held to the jsonschema package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from app.drift import classify, regex
from app.drift.document import Document, Sameness, child, escape
from app.drift.jsonvalue import Index, atom_of, equal, kind_of, number
from app.drift.limits import Budget
from app.drift.validate import Validator
from tests.drift.strategies import instances, referenced, schemas

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize(
    ("pattern", "risky"),
    [
        ("^[a-z]+$", False),
        ("(ab)+", False),
        ("^(https?|ftp)://", False),
        ("(a+)+$", True),
        ("(a|aa)*", True),
        ("((ab)*c)+", True),
        ("(a)\\1", True),
        ("a*b*c*d*", True),
        ("a{2,}b{3}", False),
        ("[(]+", False),
    ],
)
def test_risky_patterns(pattern: str, risky: bool) -> None:
    assert regex.risky(pattern) is risky


def test_search_answers_only_where_it_is_safe() -> None:
    assert regex.search("^[0-9]+$", "123") is True
    assert regex.search("^[0-9]+$", "12a") is False
    assert regex.search("b", "abc") is True  # unanchored, as ECMA-262 search
    assert regex.search("^a.*b.*$", "a" * (regex.MAX_SUBJECT + 1)) is None  # two wide repeats: short subjects
    assert regex.search("^a.*$", "a" * 128) is True  # one: up to 128 characters
    assert regex.search("^[0-9a-f]{8}-", "0" * 8 + "-" + "a" * 247) is True  # none: up to 256
    assert regex.search("^[0-9a-f]{8}-", "0" * 8 + "-" + "a" * 248) is None
    assert regex.search("^a$", "a\n") is None  # Python's $ would match before the newline
    assert regex.search("^\\w+$", "caf\u00e9") is None  # \\w is ASCII in ECMA-262, Unicode in Python
    assert regex.search("^\\w+$", "cafe") is True
    assert regex.search("(", "a") is None
    assert regex.search("^\\p{L}+$", "a") is None
    assert regex.search("(a+)+$", "aaa") is None


@pytest.mark.parametrize(
    "pattern",
    ["^[0-9]{3}-[a-z]+$", "^(https?|ftp)://", "^[^a-z]+$", "^[A-Z][a-z0-9_]*$", "^\\d{4}-\\d{2}-\\d{2}$", "x|y"],
)
def test_example_writes_a_matching_string(pattern: str) -> None:
    text = regex.example(pattern)
    assert text is not None and regex.search(pattern, text) is True


def test_literal_prefixes_show_disjoint_patterns() -> None:
    assert regex.literal_prefix("^x-") == "x-"
    assert regex.literal_prefix("^ab*") == "a"
    assert regex.literal_prefix("x-") is None
    assert regex.literal_prefix("^a|b") is None
    assert regex.disjoint("^x-", "^y-")
    assert not regex.disjoint("^x", "^x-")
    assert not regex.disjoint("^x-", "-")


def test_references_resolve_inside_the_document_only() -> None:
    doc = Document(
        {
            "$id": "https://example.com/s.json",
            "$defs": {"a b": {"type": "string"}, "c/d": {"type": "integer"}, "e~f": {"type": "null"}},
            "definitions": {"old": {"type": "boolean"}},
            "items": [{"type": "number"}],
        }
    )
    assert doc.resolve("#") is not None and doc.resolve("#").node is doc.root  # type: ignore[union-attr]
    assert doc.resolve("#/$defs/a%20b").node == {"type": "string"}  # type: ignore[union-attr]
    assert doc.resolve("#/$defs/c~1d").node == {"type": "integer"}  # type: ignore[union-attr]
    assert doc.resolve("#/$defs/e~0f").node == {"type": "null"}  # type: ignore[union-attr]
    assert doc.resolve("#/definitions/old").pointer == "/definitions/old"  # type: ignore[union-attr]
    assert doc.resolve("#/items/0").node == {"type": "number"}  # type: ignore[union-attr]
    assert doc.resolve("https://example.com/s.json#/items/0") is not None
    for ref in ("#/items/01", "#/items/1", "#/$defs/missing", "#anchor", "other.json#/a", "https://x/#"):
        assert doc.resolve(ref) is None, ref
    assert child("/properties", "a/b", "c~d") == "/properties/a~1b/c~0d"
    assert escape("plain") == "plain"


def test_the_draft_decides_what_siblings_of_ref_do() -> None:
    assert Document({"$schema": "http://json-schema.org/draft-07/schema#"}).legacy
    assert Document({"$schema": "http://json-schema.org/draft-04/schema#"}).legacy
    assert not Document({"$schema": "https://json-schema.org/draft/2020-12/schema"}).legacy
    assert not Document({}).legacy


def test_sameness_follows_references_and_tells_true_from_one() -> None:
    first = Document({"$defs": {"x": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/x"}}})
    second = Document({"$defs": {"x": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/x"}}})
    third = Document({"$defs": {"x": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/x"}}})
    a = first.root["properties"]["a"]
    assert not Sameness(first, second, Budget())(a, second.root["properties"]["a"])
    assert Sameness(first, third, Budget())(a, third.root["properties"]["a"])
    one, true = Document({"const": 1}), Document({"const": True})
    assert not Sameness(one, true, Budget())(one.root, true.root)
    loop = {"$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    assert Sameness(Document(loop), Document(loop), Budget())(loop, loop)


def test_json_values() -> None:
    assert equal(1, 1.0) and not equal(True, 1) and not equal(None, False)
    assert equal({"a": [1, {"b": 2.0}]}, {"a": [1.0, {"b": 2}]})
    assert not equal([1, 2], [2, 1])
    assert str(number(0.1)) == "1/10" and number(3) == 3
    assert number(True) is None and number(float("nan")) is None
    assert kind_of(float("inf")) is None and kind_of(()) is None
    assert atom_of(2.0) == "int" and atom_of(2.5) == "frac" and atom_of(False) == "boolean"
    index = Index(["a", 1, None, [1], {"k": True}])
    assert "a" in index and 1.0 in index and None in index and [1.0] in index and {"k": True} in index
    assert True not in index and "b" not in index and [2] not in index and False not in index


def test_the_package_imports_neither_the_service_nor_the_network() -> None:
    code = "import sys, app.drift, app.drift.tools; print(sorted(m for m in sys.modules if m.startswith('app.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = ast.literal_eval(out.stdout)
    assert not [name for name in loaded if name.startswith("app.http")]
    for path in (ROOT / "app" / "drift").glob("*.py"):
        text = path.read_text()
        for banned in ("import socket", "import httpx", "import anyio", "app.http", "app.probe"):
            assert banned not in text, (path.name, banned)


def _agrees(schema: Any, instance: Any) -> None:
    ours = Validator(Document(schema), Budget()).valid(schema, instance)
    if ours is not None:
        assert ours is Draft202012Validator(schema).is_valid(instance), (schema, instance)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_validator_agrees_with_jsonschema(data: st.DataObject) -> None:
    schema = data.draw(schemas(depth=3).flatmap(lambda s: st.just(s) | referenced(s)))
    for instance in data.draw(st.lists(instances(schema, extra=True), min_size=10, max_size=10)):
        _agrees(schema, instance)


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"uniqueItems": True}, [1, 1.0]),
        ({"uniqueItems": True}, [1, True]),
        ({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}, ["a", 1, "b"]),
        ({"contains": {"type": "string"}, "minContains": 0}, []),
        ({"prefixItems": [{"type": "string"}], "items": False}, ["a", "b"]),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}),
        ({"dependentSchemas": {"a": {"required": ["c"]}}}, {"a": 1, "c": 2}),
        ({"propertyNames": {"maxLength": 2}}, {"abc": 1}),
        ({"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False}, {"xa": 1, "y": 2}),
        ({"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"maxProperties": 0}}, {"c": 1}),
        ({"not": {"const": 3}}, 3.0),
        ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 3),
        ({"exclusiveMinimum": 1, "multipleOf": 0.5}, 1.5),
        ({"minLength": 2}, "\U0001f600"),
        ({"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n", "minimum": 3}, 2),
    ],
)
def test_the_validator_agrees_on_the_keywords_the_strategies_leave_out(schema: dict[str, Any], instance: Any) -> None:
    assert Validator(Document(schema), Budget()).valid(schema, instance) is Draft202012Validator(schema).is_valid(
        instance
    )


@pytest.mark.parametrize(
    "pattern",
    [
        "a{0,16}" * 6 + "b",  # narrow repeats: 17**6 tries per start
        "a?" * 20 + "b",
        "(a|aa|aaa|aaaa)" * 10 + "b",  # alternations multiply as repeats do
        "(?:xa|yb)?" * 12,
        "a{,16}" * 6 + "b",  # the same repeat with its lower bound left out, as Python reads it
    ],
)
def test_a_run_of_narrow_repeats_or_alternations_is_never_run(pattern: str) -> None:
    """Regression: such a pattern passed as "no wide repeats" and ran on 96 characters, holding
    the GIL (and with it the whole service) for seconds per search."""
    assert regex.risky(pattern) and regex.longest(pattern) == 0
    assert regex.search(pattern, "a" * 96) is None
    old = {"type": "object", "properties": {"q": {"type": "string", "const": "a" * 96}}}
    new = {"type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}}
    found = classify(old, new, direction="input", reading="declared")
    assert found.verdict == "unknown" and "regex_unsupported" in found.reasons


def test_the_subject_shortens_as_the_backtracking_bound_grows() -> None:
    assert regex.longest("^[a-z]{3,10}$") == 256
    assert regex.longest("a{0,16}" * 3 + "b") == regex.MAX_SUBJECT  # 17**3 per start: short subjects
    assert regex.longest("^[^@]+@[^@]+\\.[^@]+$") == regex.MIN_SUBJECT
