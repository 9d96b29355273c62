"""Tool list diffs: added, removed, renamed, descriptions, annotations, schemas both ways, the verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from app.drift import ToolChange, ToolListDiff, diff_tools
from app.drift.tools import dynamic
from app.suite.definitions import definitions

SEARCH = {
    "name": "search",
    "description": "Search the index.",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}
FETCH = {
    "name": "fetch",
    "description": "Fetch a page.",
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
}


def _with(tool: dict[str, Any], **changes: Any) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(tool))
    return copy | changes


def _changes(diff: ToolListDiff) -> list[tuple[str, str, str]]:
    return [(change.name, change.change, change.verdict) for change in diff.tools]


def test_equal_lists_are_unchanged() -> None:
    diff = diff_tools([SEARCH, FETCH], [_with(FETCH), _with(SEARCH)])
    assert diff.verdict == "unchanged"
    assert diff.tools == []
    assert diff.counts.model_dump() == {
        "before": 2,
        "after": 2,
        "added": 0,
        "removed": 0,
        "renamed": 0,
        "changed": 0,
        "unchanged": 2,
    }


def test_an_added_tool_is_compatible() -> None:
    diff = diff_tools([SEARCH], [SEARCH, FETCH])
    assert diff.verdict == "compatible"
    assert _changes(diff) == [("fetch", "added", "compatible")]
    assert diff.counts.added == 1 and diff.counts.unchanged == 1


def test_a_removed_tool_breaks_the_list() -> None:
    diff = diff_tools([SEARCH, FETCH], [SEARCH])
    assert diff.verdict == "breaking"
    assert _changes(diff) == [("fetch", "removed", "breaking")]
    assert diff.tools[0].hint is None


def test_a_rename_is_a_removal_and_an_addition_with_hints() -> None:
    renamed = _with(FETCH, name="get_page")
    diff = diff_tools([SEARCH, FETCH], [SEARCH, renamed])
    assert diff.verdict == "breaking"  # a call by the old name fails all the same
    assert _changes(diff) == [("fetch", "removed", "breaking"), ("get_page", "added", "compatible")]
    removed, added = diff.tools
    assert removed.hint is not None and removed.hint.renamed_to == "get_page"
    assert added.hint is not None and added.hint.renamed_from == "fetch"
    assert diff.counts.renamed == 1


def test_no_rename_is_guessed_when_the_input_schema_is_shared() -> None:
    twin = _with(FETCH, name="fetch_twin")
    diff = diff_tools([FETCH, twin], [_with(FETCH, name="a"), _with(FETCH, name="b")])
    assert all(change.hint is None for change in diff.tools)
    assert diff.counts.renamed == 0


def test_a_description_change_is_compatible_and_dynamic_when_only_digits_or_spacing_move() -> None:
    counter = _with(SEARCH, description="Search 1,204 documents.")
    diff = diff_tools([counter], [_with(SEARCH, description="Search 1,377 documents.")])
    assert _changes(diff) == [("search", "description_changed", "compatible")]
    change = diff.tools[0]
    assert change.hint is not None and change.hint.dynamic
    assert change.findings[0].old == "Search 1,204 documents."
    assert change.findings[0].new == "Search 1,377 documents."
    reworded = diff_tools([counter], [_with(SEARCH, description="Search 1,204 pages.")])
    assert reworded.tools[0].hint is None
    assert diff.verdict == reworded.verdict == "compatible"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Today is 2026-11-30.", "Today is 2026-12-01.", True),
        ("two  spaces", "two spaces\n", True),
        ("v1", "v2", True),
        ("v1", "w1", False),
        ("text", None, False),
        (None, None, False),
    ],
)
def test_dynamic(old: str | None, new: str | None, expected: bool) -> None:
    assert dynamic(old, new) is expected


def test_title_and_annotations_changes_are_compatible_with_one_finding_per_annotation() -> None:
    old = _with(SEARCH, title="Search", annotations={"readOnlyHint": True, "openWorldHint": True})
    new = _with(
        SEARCH, title="Find", annotations={"readOnlyHint": False, "openWorldHint": True, "idempotentHint": True}
    )
    diff = diff_tools([old], [new])
    assert _changes(diff) == [
        ("search", "title_changed", "compatible"),
        ("search", "annotations_changed", "compatible"),
    ]
    findings = diff.tools[1].findings
    assert [(f.pointer, f.old, f.new) for f in findings] == [
        ("/annotations/idempotentHint", None, True),
        ("/annotations/readOnlyHint", True, False),
    ]
    assert diff.verdict == "compatible"


def test_an_input_change_is_judged_for_old_calls() -> None:
    narrowed = _with(SEARCH)
    narrowed["inputSchema"]["properties"]["q"]["maxLength"] = 3
    diff = diff_tools([SEARCH], [narrowed])
    assert diff.verdict == "breaking"
    (change,) = diff.tools
    assert (change.change, change.verdict) == ("input_schema_changed", "breaking")
    finding = next(f for f in change.findings if f.verdict == "breaking")
    assert finding.rule == "max_length_lowered" and finding.pointer == "/properties/q/maxLength"
    assert finding.example is not None and len(finding.example.instance["q"]) > 3
    widened = _with(SEARCH)
    widened["inputSchema"]["properties"]["limit"] = {"type": "integer"}
    assert diff_tools([SEARCH], [widened]).verdict == "compatible"


def test_an_output_change_is_judged_the_other_way() -> None:
    with_output = _with(SEARCH, outputSchema={"type": "object", "properties": {"n": {"type": "integer"}}})
    wider = _with(SEARCH, outputSchema={"type": "object", "properties": {"n": {"type": "number"}}})
    narrower = _with(SEARCH, outputSchema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}})
    out = diff_tools([with_output], [wider])
    assert _changes(out) == [("search", "output_schema_changed", "breaking")]
    assert out.tools[0].findings[0].rule == "type_widened"  # a new result 0.5 fails the old schema
    assert diff_tools([with_output], [narrower]).verdict == "compatible"
    assert diff_tools([SEARCH], [with_output]).verdict == "compatible"  # nothing was promised before
    assert diff_tools([with_output], [SEARCH]).verdict == "breaking"  # structured results no longer promised


def test_an_unknown_input_change_makes_the_list_unknown_unless_something_breaks() -> None:
    formatted = _with(SEARCH)
    formatted["inputSchema"]["properties"]["q"]["format"] = "email"
    diff = diff_tools([SEARCH, FETCH], [formatted, FETCH])
    assert diff.verdict == "unknown"
    assert diff.tools[0].findings[0].reason == "format_changed"
    assert diff_tools([SEARCH, FETCH], [formatted]).verdict == "breaking"


def test_the_list_verdict_is_the_worst_change() -> None:
    old = [SEARCH, FETCH]
    new = [_with(SEARCH, description="Search everything."), _with(FETCH, name="fetch2")]
    diff = diff_tools(old, new)
    assert {change.verdict for change in diff.tools} == {"compatible", "breaking"}
    assert diff.verdict == "breaking"
    assert diff.counts.model_dump() == {
        "before": 2,
        "after": 2,
        "added": 1,
        "removed": 1,
        "renamed": 1,
        "changed": 1,
        "unchanged": 0,
    }


def test_cleaned_tool_definitions_are_accepted() -> None:
    old = definitions([SEARCH, FETCH])
    new = definitions([SEARCH, _with(FETCH, description="Fetch one page.")])
    diff = diff_tools(old, new)
    assert _changes(diff) == [("fetch", "description_changed", "compatible")]


def test_names_match_after_nfc_and_the_first_of_two_equal_names_counts() -> None:
    composed = _with(SEARCH, name="caf\u00e9")
    decomposed = _with(SEARCH, name="cafe\u0301", description="other")
    assert diff_tools([composed], [_with(composed)]).verdict == "unchanged"
    assert diff_tools([composed], [decomposed]).tools[0].change == "description_changed"
    assert diff_tools([composed, decomposed], [composed]).verdict == "unchanged"
    assert diff_tools([{"name": 5}, SEARCH], [SEARCH]).counts.before == 1


def test_the_models_refuse_unknown_fields_and_round_trip() -> None:
    diff = diff_tools([SEARCH, FETCH], [_with(SEARCH, title="S")])
    assert ToolListDiff.model_validate_json(diff.model_dump_json()) == diff
    with pytest.raises(ValidationError):
        ToolChange.model_validate({"name": "x", "change": "added", "verdict": "compatible", "extra": 1})
    with pytest.raises(ValidationError):
        ToolChange.model_validate({"name": "x", "change": "renamed", "verdict": "compatible"})


def test_a_whole_list_past_its_time_bound_leaves_changed_schemas_unknown() -> None:
    """Regression: 1,500 tools of anyOf diamonds took 43 s to compare, at the full per-schema
    budget each; the list now has a bound of its own, after which changed schemas are unjudged."""
    number = {"type": "object", "properties": {"n": {"type": "number"}}}
    integer = {"type": "object", "properties": {"n": {"type": "integer"}}}
    old = [{"name": "same", "inputSchema": number}, {"name": "narrowed", "inputSchema": number}]
    new = [{"name": "same", "inputSchema": number}, {"name": "narrowed", "inputSchema": integer}]
    assert diff_tools(old, new).verdict == "breaking"
    late = diff_tools(old, new, seconds=0.0)
    assert late.verdict == "unknown" and late.counts.changed == 1 and late.counts.unchanged == 1
    (change,) = late.tools
    assert (change.name, change.change, change.verdict) == ("narrowed", "input_schema_changed", "unknown")
    assert change.findings[0].reason == "list_too_large" and change.findings[0].pointer == "/inputSchema"
