"""Comparing a full check with a baseline (app.baselines.compare), on results of real checks: only
the two ``*_vs_baseline`` verdicts change, and only when the list was read in full; renames,
the worst schema change as the reason, capped evidence, and a baseline that could not be read."""

from __future__ import annotations

from typing import Any

import pytest

from app.baselines.compare import EVIDENCE_NAMES, SCHEMA, TOOLSET, compared, from_request
from app.settings import Settings
from app.suite.full import full_check
from app.suite.model import CheckResult, CheckVerdict
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio
OBJECT = {"type": "object"}


def states(result: CheckResult) -> dict[str, tuple[str, str | None]]:
    return {c.id: (c.state, c.reason) for c in result.checks}


def entry(name: str, schema: Any = None) -> dict[str, Any]:
    return {"name": name, "inputSchema": OBJECT if schema is None else schema}


async def checked(raw: RawServer, settings: Settings, **server: Any) -> CheckResult:
    raw.routes["/mcp"] = MiniMcp(**server)
    return await full_check(raw.url("/mcp"), settings=settings, include_tools=True)


async def test_only_the_two_baseline_checks_change(raw: RawServer, dev_settings: Settings) -> None:
    result = await checked(raw, dev_settings, tools=["alpha", "beta"])
    after = compared(result, from_request([entry("alpha"), entry("beta")]))
    before, now = states(result), states(after)
    assert {k for k in before if before[k] != now[k]} == {TOOLSET, SCHEMA}
    assert now[TOOLSET] == now[SCHEMA] == ("verified", None)
    assert after.baseline is not None and after.baseline.diff is not None and after.baseline.diff.verdict == "unchanged"
    assert result.baseline is None  # the shared result is never changed in place


async def test_a_rename_is_named_in_the_evidence(raw: RawServer, dev_settings: Settings) -> None:
    unique = {"type": "object", "properties": {"q": {"type": "string"}}}
    result = await checked(raw, dev_settings, tools=["find", "other"], schemas={"find": unique})
    after = compared(result, from_request([entry("search", unique), entry("other")]))
    toolset = next(c for c in after.checks if c.id == TOOLSET)
    assert (toolset.state, toolset.reason) == ("failed", "toolset_changed")
    assert toolset.evidence["renamed"] == [{"from": "search", "to": "find"}]
    assert toolset.evidence["counts"] == {"added": 1, "removed": 1, "renamed": 1}


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (
            {"type": "object", "properties": {"n": {"type": "number"}}},
            {"type": "object", "properties": {"n": {"type": "integer"}}},
            "schema_breaking",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer"}}},
            {"type": "object", "properties": {"n": {"type": "number"}}},
            "schema_compatible",
        ),
        (
            {"type": "object", "properties": {"s": {"type": "string", "format": "email"}}},
            {"type": "object", "properties": {"s": {"type": "string", "format": "uri"}}},
            "schema_unknown",
        ),
    ],
)
async def test_the_reason_is_the_worst_schema_change(
    raw: RawServer, dev_settings: Settings, old: Any, new: Any, reason: str
) -> None:
    result = await checked(raw, dev_settings, tools=["t"], schemas={"t": new})
    after = compared(result, from_request([entry("t", old)]))
    schema = next(c for c in after.checks if c.id == SCHEMA)
    assert schema.state == "failed"
    assert schema.reason == reason
    assert schema.evidence["changed"][0]["tool"] == "t"


async def test_evidence_is_capped_and_counts_are_whole(raw: RawServer, dev_settings: Settings) -> None:
    result = await checked(raw, dev_settings, tools=[f"n{i:03d}" for i in range(120)])
    after = compared(result, from_request([entry(f"o{i:03d}") for i in range(3)]))
    toolset = next(c for c in after.checks if c.id == TOOLSET)
    assert len(toolset.evidence["added"]) == EVIDENCE_NAMES and toolset.evidence["counts"]["added"] == 120
    assert toolset.evidence["removed"] == ["o000", "o001", "o002"]


async def test_a_list_not_read_in_full_is_not_compared(raw: RawServer, dev_settings: Settings) -> None:
    result = await checked(raw, dev_settings, tools=["alpha"])
    partial = result.model_copy(
        update={
            "checks": [
                CheckVerdict(id=c.id, state="unverified", reason="list_incomplete") if c.id in (TOOLSET, SCHEMA) else c
                for c in result.checks
            ]
        }
    )
    after = compared(partial, from_request([entry("alpha")]))
    assert states(after)[TOOLSET] == ("unverified", "list_incomplete")
    assert after.baseline is not None and after.baseline.diff is None and after.baseline.source == "tools"


async def test_a_baseline_that_could_not_be_read_says_so(raw: RawServer, dev_settings: Settings) -> None:
    result = await checked(raw, dev_settings, tools=["alpha"])
    assert compared(result, None) is result
    after = compared(result, None, unavailable=True)
    assert states(after)[TOOLSET] == states(after)[SCHEMA] == ("unverified", "baseline_unavailable")
    assert after.baseline is None


def test_request_tools_are_cleaned_and_fingerprinted_as_given() -> None:
    reference = from_request([{"name": "a\u0007b", "inputSchema": OBJECT, "x-extra": 1}])
    assert reference.definitions[0]["name"] == "ab" and "x-extra" not in reference.definitions[0]
    assert reference.schema_fingerprint is not None and len(reference.schema_fingerprint) == 64
    twice = from_request([{"name": "a"}, {"name": "a"}])
    assert (twice.schema_fingerprint, twice.toolset_fingerprint) == (None, None)  # no canonical form


def deep(leaf: dict[str, Any], levels: int = 8) -> dict[str, Any]:
    schema: dict[str, Any] = leaf
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


async def test_a_change_past_what_definitions_keep_is_never_verified(raw: RawServer, dev_settings: Settings) -> None:
    """Regression: a type changed 16 levels down, and a name changed past its 128th character,
    were cut from both cleaned lists alike, and the two checks said verified."""
    result = await checked(raw, dev_settings, tools=["t"], schemas={"t": deep({"type": "string"})})
    after = compared(result, from_request([entry("t", deep({"type": "integer", "maximum": 10}))]))
    assert states(after)[TOOLSET] == ("verified", None)
    schema = next(c for c in after.checks if c.id == SCHEMA)
    assert (schema.state, schema.reason) == ("failed", "schema_unknown")
    assert schema.evidence["beyond_kept_definitions"] is True
    long = "x" * 130
    result = await checked(raw, dev_settings, tools=[long + "_v2"])
    after = compared(result, from_request([entry(long + "_v1")]))
    toolset = next(c for c in after.checks if c.id == TOOLSET)
    assert (toolset.state, toolset.reason) == ("failed", "toolset_changed")
    assert toolset.evidence["beyond_kept_definitions"] is True
