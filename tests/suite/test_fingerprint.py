"""Tool fingerprints: what enters them, what does not, and golden values computed by hand."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from app.canonical import CanonicalFormError
from app.suite.fingerprint import FINGERPRINT_FIELDS, REASONS, Fingerprints, fingerprints

#: The worked example of docs/fingerprints.md.
EXAMPLE: list[dict[str, Any]] = [
    {
        "name": "search_flights",
        "description": "Find flights.",
        "annotations": {"readOnlyHint": True},
        "inputSchema": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "from": {"type": "string"}},
            "required": ["from", "to"],
        },
    },
    {
        "name": "cafe\u0301_menu",  # "e" + combining acute: NFC makes it U+00E9
        "inputSchema": {"type": "object", "properties": {"max_price": {"type": "number", "maximum": 1e3}}},
    },
    {"name": "Book", "title": "Book a trip", "_meta": {"x": 1}},  # no inputSchema: null
]
EXAMPLE_TOOLSET_JSON = '["Book","caf\u00e9_menu","search_flights"]'
EXAMPLE_SCHEMA_JSON = (
    '[{"inputSchema":null,"name":"Book"},'
    '{"inputSchema":{"properties":{"max_price":{"maximum":1000,"type":"number"}},"type":"object"},'
    '"name":"caf\u00e9_menu"},'
    '{"inputSchema":{"properties":{"from":{"type":"string"},"to":{"type":"string"}},'
    '"required":["from","to"],"type":"object"},"name":"search_flights"}]'
)
#: The digests printed in docs/fingerprints.md.
EXAMPLE_TOOLSET = "2ad5aeb3000a22b38b270df10d5347df675450552e573f53e8d4b9dda702a3d6"
EXAMPLE_SCHEMA = "10aceeb32687b0cbc8be247ccfd15fdbabab4aa2d75e22d668c6975ee649a95f"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_golden_values_by_an_independent_route() -> None:
    assert _sha(EXAMPLE_TOOLSET_JSON) == EXAMPLE_TOOLSET
    assert _sha(EXAMPLE_SCHEMA_JSON) == EXAMPLE_SCHEMA
    assert fingerprints(EXAMPLE) == Fingerprints(toolset=EXAMPLE_TOOLSET, schema=EXAMPLE_SCHEMA)


def test_empty_list() -> None:
    assert fingerprints([]) == Fingerprints(toolset=_sha("[]"), schema=_sha("[]"))


def test_digest_form_is_plain_lower_case_hex() -> None:
    prints = fingerprints(EXAMPLE)
    for digest in (prints.toolset, prints.schema):
        assert len(digest) == 64
        assert set(digest) <= set("0123456789abcdef")


def test_allow_list() -> None:
    assert FINGERPRINT_FIELDS == ("name", "inputSchema")


def test_order_of_tools_does_not_matter() -> None:
    expected = fingerprints(EXAMPLE)
    for order in itertools.permutations(EXAMPLE):
        assert fingerprints(list(order)) == expected


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("_meta", {"io.example/x": 1}),
        ("annotations", {"destructiveHint": True}),
        ("description", "Now with a different description."),
        ("title", "A title"),
        ("outputSchema", {"type": "object"}),
        ("icons", [{"src": "https://example.com/i.png"}]),
        ("execution", {"taskSupport": "optional"}),
    ],
)
def test_fields_outside_the_allow_list_change_nothing(field: str, value: object) -> None:
    expected = fingerprints(EXAMPLE)
    for index in range(len(EXAMPLE)):
        changed = copy.deepcopy(EXAMPLE)
        changed[index][field] = value
        assert fingerprints(changed) == expected


def test_non_json_outside_the_allow_list_is_ignored() -> None:
    changed = copy.deepcopy(EXAMPLE)
    changed[0]["_meta"] = {"weird": math.nan, "bytes": b"x"}
    assert fingerprints(changed) == fingerprints(EXAMPLE)


def test_changing_a_schema_changes_schema_not_toolset() -> None:
    changed = copy.deepcopy(EXAMPLE)
    changed[0]["inputSchema"]["required"] = ["from"]
    before, after = fingerprints(EXAMPLE), fingerprints(changed)
    assert after.toolset == before.toolset
    assert after.schema != before.schema


def test_adding_a_schema_where_there_was_none_changes_schema() -> None:
    changed = copy.deepcopy(EXAMPLE)
    changed[2]["inputSchema"] = {"type": "object"}
    assert fingerprints(changed).schema != fingerprints(EXAMPLE).schema


def test_missing_input_schema_is_null() -> None:
    explicit = copy.deepcopy(EXAMPLE)
    explicit[2]["inputSchema"] = None
    assert fingerprints(explicit) == fingerprints(EXAMPLE)


def test_renaming_changes_both() -> None:
    changed = copy.deepcopy(EXAMPLE)
    changed[0]["name"] = "search_flight"
    before, after = fingerprints(EXAMPLE), fingerprints(changed)
    assert after.toolset != before.toolset
    assert after.schema != before.schema


def test_adding_or_removing_a_tool_changes_both() -> None:
    before = fingerprints(EXAMPLE)
    fewer = fingerprints(EXAMPLE[:2])
    more = fingerprints([*EXAMPLE, {"name": "zzz"}])
    assert len({before.toolset, fewer.toolset, more.toolset}) == 3
    assert len({before.schema, fewer.schema, more.schema}) == 3


def test_nfc_equivalent_names_give_the_same_fingerprints() -> None:
    composed = copy.deepcopy(EXAMPLE)
    composed[1]["name"] = "caf\u00e9_menu"
    assert fingerprints(composed) == fingerprints(EXAMPLE)


def test_nfc_equivalent_schema_strings_give_the_same_fingerprints() -> None:
    decomposed = copy.deepcopy(EXAMPLE)
    decomposed[0]["inputSchema"]["properties"]["to"]["description"] = "Zu\u0308rich"
    composed = copy.deepcopy(EXAMPLE)
    composed[0]["inputSchema"]["properties"]["to"]["description"] = "Z\u00fcrich"
    assert fingerprints(decomposed) == fingerprints(composed)


def test_names_equal_after_nfc_are_refused() -> None:
    with pytest.raises(CanonicalFormError) as caught:
        fingerprints([{"name": "caf\u00e9"}, {"name": "cafe\u0301"}])
    assert caught.value.reason == "duplicate_name"


def test_sorting_is_by_code_point_not_utf16() -> None:
    # U+FF21 (full-width A) comes before U+1F600 by code point, after it by UTF-16 code unit.
    tools = [{"name": "\U0001f600"}, {"name": "\uff21"}]
    prints = fingerprints(tools)
    assert prints.toolset == _sha('["\uff21","\U0001f600"]')
    assert prints.schema == _sha('[{"inputSchema":null,"name":"\uff21"},{"inputSchema":null,"name":"\U0001f600"}]')


def test_sorting_is_case_sensitive_and_locale_free() -> None:
    tools = [{"name": "b"}, {"name": "B"}, {"name": "\u00e9"}, {"name": "f"}, {"name": "_a"}]
    assert fingerprints(tools).toolset == _sha('["B","_a","b","f","\u00e9"]')


@pytest.mark.parametrize(
    ("tools", "reason"),
    [
        ([{"name": "a", "inputSchema": {"maximum": math.inf}}], "non_finite_number"),
        ([{"name": "a", "inputSchema": {"maximum": 2**64}}], "number_out_of_range"),
        ([{"name": "a", "inputSchema": {"e\u0301": 1, "\u00e9": 2}}], "duplicate_key"),
        ([{"name": "a\ud800"}], "lone_surrogate"),
        ([{"name": "a", "inputSchema": {"default": b"x"}}], "unsupported_type"),
        ([{"name": 7}], "unsupported_type"),
        ([{"title": "no name"}], "unsupported_type"),
        (["not an object"], "unsupported_type"),
    ],
)
def test_refusals_carry_a_stable_reason(tools: list[Any], reason: str) -> None:
    with pytest.raises(CanonicalFormError) as caught:
        fingerprints(tools)
    assert caught.value.reason == reason
    assert reason in REASONS


def test_deep_schema_is_too_deep() -> None:
    schema: dict[str, Any] = {}
    for _ in range(80):
        schema = {"items": schema}
    with pytest.raises(CanonicalFormError) as caught:
        fingerprints([{"name": "deep", "inputSchema": schema}])
    assert caught.value.reason == "too_deep"


def test_input_is_not_modified() -> None:
    tools = copy.deepcopy(EXAMPLE)
    fingerprints(tools)
    assert tools == EXAMPLE


# --- docs/fingerprints.md --------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "fingerprints.md"


def _block(section: str, language: str) -> str:
    text = DOC.read_text(encoding="utf-8").split(f"\n## {section}\n", 1)[1]
    return text.split(f"```{language}\n", 1)[1].split("```\n", 1)[0]


def test_doc_example_is_the_golden_example() -> None:
    assert json.loads(_block("Worked example", "json")) == EXAMPLE
    doc = DOC.read_text(encoding="utf-8")
    for value in (EXAMPLE_TOOLSET, EXAMPLE_SCHEMA, EXAMPLE_TOOLSET_JSON):
        assert value in doc
    for line in EXAMPLE_SCHEMA_JSON.replace("},{", "},\n{").splitlines():
        assert line in doc


def test_doc_recomputation_gives_the_same_digests() -> None:
    code = _block("Recomputing in Python", "python")
    assert len([line for line in code.splitlines() if line.strip()]) <= 12
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    recompute = namespace["fingerprints"]
    example = json.loads(_block("Worked example", "json"))
    assert recompute(example) == (EXAMPLE_TOOLSET, EXAMPLE_SCHEMA)
    shuffled = [*reversed(example), {"name": "\U0001f600"}, {"name": "\uff21", "inputSchema": {"b": 1.0, "a": [2]}}]
    ours = fingerprints(shuffled)
    assert recompute(shuffled) == (ours.toolset, ours.schema)
