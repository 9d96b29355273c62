"""The statistics from runs stored through the real store, on SQLite and PostgreSQL: each figure
checked against what the runs say, counted by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from app.db.tables.history import runs
from app.history.store import SqlHistory
from app.probe.reasons import REASONS
from app.stats.compute import compute
from app.stats.figures import UP, figures
from tests.stats.runs import run

pytestmark = pytest.mark.anyio
NOW = datetime.now(UTC).replace(microsecond=0)
HOSTILE = '<script>alert("v")</script>'


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


async def directory(history: SqlHistory) -> None:
    """Eleven servers; each counts by its newest run."""
    stored = [
        # s1: modern, its list lost a tool yesterday (a breaking change in both windows)
        run("s1.test", ago(3), era="modern", version="2026-07-28", tools=("add", "echo")),
        run("s1.test", ago(1), era="modern", version="2026-07-28", tools=("add",)),
        # s2: legacy, gained a tool 10 days ago (a change in the 30-day window only)
        run("s2.test", ago(40), era="legacy", version="2025-06-18", tools=("add",)),
        run("s2.test", ago(10), era="legacy", version="2025-06-18", tools=("add", "find")),
        run("s3.test", ago(2), era="legacy", version="2025-03-26", tools=()),
        run("s11.test", ago(2), era="legacy", version=HOSTILE, tools=("sort",)),
        run("s4.test", ago(1), "auth", "auth_required", metadata=True),
        run("s5.test", ago(1), "auth", "auth_challenge_missing", metadata=False),
        run("s6.test", ago(1), "timeout", "connect_timeout"),
        run("s7.test", ago(1), "client_error", "rate_limited"),
        run("s8.test", ago(1), "client_error", "protocol_version_rejected"),
        run("s9.test", ago(1), "not_found", "http_not_found"),
        # s10: up a month ago, refused now: counted as unreachable
        run("s10.test", ago(30), era="legacy", version="2025-11-25", tools=("add",)),
        run("s10.test", ago(1), "unreachable", "connection_refused"),
    ]
    for item in stored:
        assert await history.record(item)


async def figures_of(history: SqlHistory) -> dict[str, Any]:
    async with history.engine.connect() as db:
        return await compute(db, NOW)


def by(rows: list[dict[str, Any]], key: str) -> dict[Any, dict[str, Any]]:
    return {row[key]: row for row in rows}


async def test_statuses_and_failure_buckets(history: SqlHistory) -> None:
    await directory(history)
    found = await figures_of(history)
    assert found["servers"] == 11
    statuses = {status: row["servers"] for status, row in by(found["by_status"], "status").items()}
    assert statuses == {"ok": 4, "auth": 2, "timeout": 1, "client_error": 2, "not_found": 1, "unreachable": 1,
                        "server_error": 0, "redirect": 0, "not_mcp": 0, "tls": 0, "dns": 0}  # fmt: skip
    assert by(found["by_status"], "status")["ok"]["share"] == round(4 / 11, 4)
    failures = found["failures"]
    assert failures["servers"] == 5
    buckets = by(failures["buckets"], "key")
    assert {key: row["servers"] for key, row in buckets.items()} == {
        "client_error": 1, "unreachable": 1, "server_error": 0, "timeout": 1, "not_mcp": 0,
        "rate_limited": 1, "handshake_refused": 1,
    }  # fmt: skip
    assert [row["label"] for row in failures["buckets"]] == [
        "4xx", "unreachable", "5xx", "timeout", "not MCP", "429", "handshake refused"
    ]  # fmt: skip
    assert buckets["timeout"]["share"] == 0.2 and buckets["rate_limited"]["reasons"] == ["rate_limited"]
    assert "http_not_found" in buckets["client_error"]["reasons"] and buckets["client_error"]["definition"]


async def test_protocol_versions_by_path_offered_against_answered(history: SqlHistory) -> None:
    await directory(history)
    modern, legacy = (await figures_of(history))["protocol_versions"]
    assert (modern["path"], modern["offered"], modern["servers"]) == ("server/discover", "2026-07-28", 1)
    assert modern["answered"] == [{"version": "2026-07-28", "servers": 1}]
    assert (legacy["path"], legacy["offered"], legacy["servers"]) == ("initialize", "2025-11-25", 3)
    assert legacy["answered"] == [  # (s10's 2025-11-25 is not its newest run)
        {"version": "2025-03-26", "servers": 1}, {"version": "2025-06-18", "servers": 1},
        {"version": HOSTILE, "servers": 1},
    ]  # fmt: skip


async def test_sign_in_protected_resource_metadata_and_tool_counts(history: SqlHistory) -> None:
    await directory(history)
    found = await figures_of(history)
    assert found["auth"] == {"servers_up": 6, "servers": 2, "share": round(2 / 6, 4)}
    assert found["metadata_published"] == {"servers": 1, "share": 0.5}
    tools = found["tool_counts"]  # s1: 1, s2: 2, s3: 0, s11: 1
    assert (tools["servers"], tools["median"]) == (4, 1.0)
    counted = {row["label"]: row["servers"] for row in tools["buckets"]}
    assert counted == {"0": 1, "1": 2, "2–5": 1, "6–10": 0, "11–20": 0, "21–50": 0, "51–100": 0, "101+": 0}
    assert tools["buckets"][-1] == {"label": "101+", "min": 101, "max": None, "servers": 0}


async def test_drift_in_the_last_7_and_30_days(history: SqlHistory) -> None:
    await directory(history)
    week, month = (await figures_of(history))["drift"]
    assert week == {"days": 7, "changes": 1, "servers": 1, "breaking": 1, "breaking_servers": 1,
                    "breaking_share": 1.0}  # fmt: skip
    assert month == {"days": 30, "changes": 2, "servers": 2, "breaking": 1, "breaking_servers": 1,
                     "breaking_share": 0.5}  # fmt: skip


async def test_every_figure_is_defined_and_an_empty_directory_has_no_shares(history: SqlHistory) -> None:
    found = await figures_of(history)
    assert found["servers"] == 0 and found["tool_counts"]["median"] is None
    assert found["auth"]["share"] is None and found["drift"][0]["breaking_share"] is None
    figures_named = set(found) - {"definitions"}
    assert figures_named <= set(found["definitions"]) and all(found["definitions"].values())


async def test_the_facts_are_columns_of_the_run(history: SqlHistory) -> None:
    await directory(history)
    async with history.engine.connect() as db:
        rows = {r.run_id.split("-")[0]: r for r in (await db.execute(select(runs).order_by(runs.c.id))).all()}
    assert (rows["s1.test"].handshake, rows["s1.test"].tool_count) == ("server/discover", 1)  # (its newest)
    assert (rows["s3.test"].handshake, rows["s3.test"].tool_count) == ("initialize", 0)
    assert (rows["s4.test"].metadata_published, rows["s5.test"].metadata_published) == (True, False)
    assert (rows["s6.test"].handshake, rows["s6.test"].tool_count, rows["s6.test"].metadata_published) == (
        None, None, None,
    )  # fmt: skip


def test_every_failing_reason_is_in_exactly_one_bucket() -> None:
    spec = figures()
    for reason, (status, _) in REASONS.items():
        bucket = spec.bucket_of(status, reason)
        assert (bucket is None) == (status in UP), reason
    assert spec.bucket_of("client_error", "rate_limited") == "rate_limited"
    assert spec.bucket_of("client_error", "forbidden") == "client_error"
    assert spec.bucket_of("server_error", "jsonrpc_error") == "handshake_refused"
