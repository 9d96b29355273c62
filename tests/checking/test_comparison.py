"""A check compared with a baseline: given as tools, a stored run, a schema fingerprint, or the
server's approved one; the two ``*_vs_baseline`` verdicts, the diff in the answer and in its
signed statement's digest; bad or missing baselines refused before anything is drawn; and a
history database that is away never fails a check that named none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.baselines.store import Baselines
from app.checking.services import open_history
from app.history.records import server_id_of
from tests.checking.test_recorder import FREE, check, wait_for
from tests.conftest import Service, reason_of
from tests.history.conftest import relayed_postgres
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

NUMBER = {"type": "object", "properties": {"n": {"type": "number"}}}
INTEGER = {"type": "object", "properties": {"n": {"type": "integer"}}}


def verdicts(answer: httpx2.Response) -> dict[str, tuple[str, str | None]]:
    return {c["id"]: (c["state"], c["reason"]) for c in answer.json()["checks"]}


def tools(*names: str, schemas: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [{"name": n, "inputSchema": (schemas or {}).get(n, {"type": "object"})} for n in names]


def history_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"


def test_the_same_tools_verify_both_checks(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta"], schemas={"alpha": NUMBER})
    with service() as base:
        plain = check(base, {"url": raw.url("/mcp")})
        answer = check(
            base, {"url": raw.url("/mcp"), "baseline": {"tools": tools("beta", "alpha", schemas={"alpha": NUMBER})}}
        )
    assert verdicts(plain)["toolset_unchanged_vs_baseline"] == ("unverified", "no_baseline")
    assert "baseline" not in plain.json() or plain.json()["baseline"] is None
    assert answer.status_code == 200, answer.text
    got = verdicts(answer)
    assert got["toolset_unchanged_vs_baseline"] == got["schema_unchanged_vs_baseline"] == ("verified", None)
    baseline = answer.json()["baseline"]
    assert baseline["source"] == "tools" and baseline["tools"] == 2 and baseline["diff"]["verdict"] == "unchanged"
    assert baseline["schema_fingerprint"] == answer.json()["schema_fingerprint"]  # the same list, the same print


def test_a_narrowed_type_and_a_new_tool_fail_with_the_diff(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta", "gamma"], schemas={"alpha": INTEGER})
    with service() as base:
        answer = check(
            base, {"url": raw.url("/mcp"), "baseline": {"tools": tools("alpha", "beta", schemas={"alpha": NUMBER})}}
        )
    got = verdicts(answer)
    assert got["toolset_unchanged_vs_baseline"] == ("failed", "toolset_changed")
    assert got["schema_unchanged_vs_baseline"] == ("failed", "schema_breaking")
    checks = {c["id"]: c for c in answer.json()["checks"]}
    assert checks["toolset_unchanged_vs_baseline"]["evidence"]["added"] == ["gamma"]
    assert checks["toolset_unchanged_vs_baseline"]["evidence"]["removed"] == []
    assert checks["schema_unchanged_vs_baseline"]["evidence"]["changed"] == [
        {"tool": "alpha", "change": "input_schema_changed", "verdict": "breaking"}
    ]
    diff = answer.json()["baseline"]["diff"]
    assert diff["verdict"] == "breaking" and diff["counts"]["added"] == 1
    (finding,) = next(t for t in diff["tools"] if t["name"] == "alpha")["findings"]
    assert finding["pointer"] == "/properties/n/type" and (finding["old"], finding["new"]) == ("number", "integer")


def test_a_widened_type_is_a_compatible_schema_change(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha"], schemas={"alpha": NUMBER})
    with service() as base:
        answer = check(
            base, {"url": raw.url("/mcp"), "baseline": {"tools": tools("alpha", schemas={"alpha": INTEGER})}}
        )
    got = verdicts(answer)
    assert got["toolset_unchanged_vs_baseline"] == ("verified", None)
    assert got["schema_unchanged_vs_baseline"] == ("failed", "schema_compatible")


def test_a_stored_run_and_a_fingerprint_are_baselines(service: Service, raw: RawServer, tmp_path: Path) -> None:
    server = MiniMcp(tools=["alpha", "beta"])
    raw.routes["/mcp"] = server
    url = history_url(tmp_path)
    with service(data_dir=tmp_path) as base:
        first = check(base, {"url": raw.url("/mcp")})
        run_id, fingerprint = first.json()["attestation_id"], first.json()["schema_fingerprint"]

        async def kept() -> bool:
            store = open_history(url)
            try:
                return await store.toolset(run_id=run_id) is not None
            finally:
                await store.aclose()

        assert wait_for(lambda: asyncio.run(kept()))
        server.tools = ["alpha"]
        by_run = check(base, {"url": raw.url("/mcp"), "baseline": {"run_id": run_id}})
        by_print = check(base, {"url": raw.url("/mcp"), "baseline": {"schema_fingerprint": fingerprint}})
    for answer, source in ((by_run, "run"), (by_print, "fingerprint")):
        assert answer.status_code == 200, answer.text
        assert verdicts(answer)["toolset_unchanged_vs_baseline"] == ("failed", "toolset_changed")
        assert verdicts(answer)["schema_unchanged_vs_baseline"] == ("verified", None)  # alpha's schema as it was
        baseline = answer.json()["baseline"]
        assert baseline["source"] == source and baseline["schema_fingerprint"] == fingerprint
        assert [(t["name"], t["change"]) for t in baseline["diff"]["tools"]] == [("beta", "removed")]
    assert by_run.json()["baseline"]["run_id"] == run_id


def test_an_approved_baseline_is_used_when_none_is_named(service: Service, raw: RawServer, tmp_path: Path) -> None:
    server = MiniMcp(tools=["alpha", "beta"])
    raw.routes["/mcp"] = server
    url = history_url(tmp_path)
    with service(data_dir=tmp_path) as base:
        first = check(base, {"url": raw.url("/mcp")})
        run_id = first.json()["attestation_id"]

        async def approve() -> Any:
            store = open_history(url)
            try:
                return await Baselines(store.engine).approve(server_id_of(raw.url("/mcp")), run_id, "host_proof")
            finally:
                await store.aclose()

        assert wait_for(lambda: asyncio.run(approve()))
        server.tools = ["alpha", "beta", "delta"]
        answer = check(base, {"url": raw.url("/mcp")})
        named = check(base, {"url": raw.url("/mcp"), "baseline": {"tools": tools("alpha", "beta", "delta")}})
    baseline = answer.json()["baseline"]
    assert baseline["source"] == "approved" and baseline["run_id"] is None and baseline["approved_at"]
    assert baseline["approved_by"] == "host_proof"
    assert verdicts(answer)["toolset_unchanged_vs_baseline"] == ("failed", "toolset_changed")
    assert named.json()["baseline"]["source"] == "tools"  # one named in the request wins
    assert verdicts(named)["toolset_unchanged_vs_baseline"] == ("verified", None)


@pytest.mark.parametrize(
    "baseline",
    [
        {},
        {"run_id": "a" * 64, "schema_fingerprint": "b" * 64},
        {"run_id": "A" * 64},
        {"run_id": "a" * 63},
        {"schema_fingerprint": 12},
        {"tools": [{"inputSchema": {}}]},
        {"tools": [{"name": ""}]},
        {"tools": ["alpha"]},
        {"tools": [{"name": 5}]},
        {"tools": tools(*(f"t{i}" for i in range(2001)))},
        {"latest": True},
        "a" * 64,
    ],
)
def test_a_malformed_baseline_is_refused_before_anything_is_drawn(
    service: Service, raw: RawServer, baseline: Any
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(free_pool_per_ip=1) as base:
        refused = check(base, {"url": raw.url("/mcp"), "baseline": baseline})
        served = check(base, {"url": raw.url("/mcp")})
    assert refused.status_code == 422 and reason_of(refused) == "invalid_baseline", refused.text
    assert served.status_code == 200  # the one free check of this client was not drawn by the refusal


def test_a_stored_baseline_that_does_not_exist_is_404_and_draws_nothing(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(free_pool_per_ip=1) as base:
        by_run = check(base, {"url": raw.url("/mcp"), "baseline": {"run_id": "0" * 64}})
        by_print = check(base, {"url": raw.url("/mcp"), "baseline": {"schema_fingerprint": "0" * 64}})
        served = check(base, {"url": raw.url("/mcp")})
    assert (by_run.status_code, reason_of(by_run)) == (404, "baseline_not_found")
    assert (by_print.status_code, reason_of(by_print)) == (404, "baseline_not_found")
    assert served.status_code == 200


def test_a_large_body_is_taken_only_for_baseline_tools(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha"])
    many = tools(*(f"tool_{i:04d}" for i in range(1500)))
    with service() as base:
        padded = check(base, {"url": raw.url("/mcp"), "headers": {f"X-Pad{i}": "p" * 4000 for i in range(3)}})
        large = check(base, {"url": raw.url("/mcp"), "baseline": {"tools": many}})
        huge = httpx2.post(
            f"{base}/v1/mcp/check",
            json={"url": raw.url("/mcp"), "baseline": {"tools": tools("x" * 1000) * 1100}},
            headers=FREE,
            timeout=30,
        )
    assert (padded.status_code, reason_of(padded)) == (413, "body_too_large")
    assert large.status_code == 200, large.text
    assert large.json()["baseline"]["diff"]["counts"] == {
        "before": 1500, "after": 1, "added": 1, "removed": 1500, "renamed": 0, "changed": 0, "unchanged": 0,
    }  # fmt: skip
    assert (huge.status_code, reason_of(huge)) == (413, "body_too_large")  # past 1 MiB


def test_a_database_that_is_away_fails_no_check_that_named_no_baseline(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with relayed_postgres() as (database, url):
        database.cut()
        with service(database_url=url) as base:
            plain = check(base, {"url": raw.url("/mcp")})
            named = check(base, {"url": raw.url("/mcp"), "baseline": {"run_id": "0" * 64}})
            given = check(base, {"url": raw.url("/mcp"), "baseline": {"tools": tools("alpha", "beta")}})
    assert plain.status_code == 200
    assert verdicts(plain)["toolset_unchanged_vs_baseline"] == ("unverified", "baseline_unavailable")
    assert (named.status_code, reason_of(named)) == (503, "history_unavailable")
    assert given.status_code == 200 and verdicts(given)["toolset_unchanged_vs_baseline"] == ("verified", None)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"url": "%s", "baseline": {"tools": [{"name": "a", "name": "b"}]}}', "invalid_baseline"),
        ('{"url": "%s", "baseline": {"run_id": "%s", "run_id": "%s"}}', "invalid_baseline"),
        (
            '{"url": "%s", "baseline": {"tools": [{"name": "a", "inputSchema": {"type": "a", "type": "b"}}]}}',
            "invalid_baseline",
        ),
        ('{"url": "%s", "headers": {"X-A": "1", "X-A": "2"}}', "header_duplicate"),
        ('{"url": "%s", "include": [], "include": []}', "invalid_body"),
    ],
)
def test_a_key_given_twice_is_named_where_it_was_given(
    service: Service, raw: RawServer, body: str, reason: str
) -> None:
    """Regression: a key given twice anywhere in a baseline was answered header_duplicate."""
    raw.routes["/mcp"] = MiniMcp()
    fill = (raw.url("/mcp"), "a" * 64, "b" * 64)[: body.count("%s")]
    with service() as base:
        answer = httpx2.post(
            f"{base}/v1/mcp/check",
            content=(body % fill).encode(),
            headers=FREE | {"Content-Type": "application/json"},
            timeout=30,
        )
    assert (answer.status_code, reason_of(answer)) == (422, reason), answer.text


def test_a_body_nested_too_deep_says_so(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    nested: Any = {"type": "object"}
    for _ in range(70):
        nested = {"type": "object", "properties": {"a": nested}}
    with service() as base:
        answer = check(base, {"url": raw.url("/mcp"), "baseline": {"tools": [{"name": "a", "inputSchema": nested}]}})
    assert (answer.status_code, reason_of(answer)) == (400, "invalid_json")
    assert "deeper than 64 levels" in answer.json()["detail"]
