"""The history store, the same tests on SQLite and PostgreSQL: runs kept once, tool sets once per
distinct list, the day's uptime counters, the latest run, pruning, and no credentialed run."""

from __future__ import annotations

import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, func, select

from app.db import migrate
from app.db.tables.history import runs, server_days, servers, toolsets
from app.history import retention
from app.history.records import Run, server_id_of
from app.history.store import SqlHistory, Vanished, toolset_digest

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
TOOLS = ({"name": "add", "inputSchema": {"type": "object"}}, {"name": "echo", "description": "Echo it"})


def run(n: int = 0, **changes: object) -> Run:
    base = Run(
        run_id=f"run{n:023d}", url="https://mcp.example.com/mcp?key=secret-123", host="mcp.example.com",
        observed_at=T0 + timedelta(hours=n), status="ok", reason="ok", protocol_version="2026-07-28",
        transport="streamable_http", latency_ms=41.5, total_ms=118.0, addresses=("93.184.215.14",),
        tools=TOOLS, schema_fingerprint="8" * 64, toolset_fingerprint="1" * 64,
        result=b'{"status":"ok"}', attestation_id=f"{n:064x}", envelope=b'{"payloadType":"x"}',
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


async def count(store: SqlHistory, table: object) -> int:
    async with store.engine.connect() as db:
        return int(await db.scalar(select(func.count()).select_from(table)) or 0)  # type: ignore[arg-type]


async def test_a_run_is_kept_once_and_its_server_made_on_first_sight(history: SqlHistory) -> None:
    assert await history.record(run(0)) is True
    assert await history.record(run(0)) is False  # redelivered: the same run id
    assert await history.record(run(1)) is True
    assert (await count(history, runs), await count(history, servers)) == (2, 1)
    summary = await history.server(server_id_of("https://mcp.example.com/mcp"))
    assert summary is not None
    assert summary.url == "https://mcp.example.com/mcp"  # never the query string
    assert (summary.latest_run_id, summary.latest_status, summary.last_seen) == (
        run(1).run_id,
        "ok",
        run(1).observed_at,
    )
    assert summary.first_seen == T0


async def test_the_query_string_is_stored_nowhere(history: SqlHistory) -> None:
    await history.record(run(0))
    async with history.engine.connect() as db:
        for table in (servers, runs, toolsets, server_days):
            for row in (await db.execute(select(table))).all():
                assert "secret-123" not in repr(tuple(row))


async def test_tool_sets_are_stored_once_per_distinct_list(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1))
    changed = ({"name": "add", "inputSchema": {"type": "object"}}, {"name": "echo", "description": "Echo it!"})
    await history.record(run(2, tools=changed))
    await history.record(run(3, tools=None, status="timeout", reason="handshake_timeout"))
    assert await count(history, toolsets) == 2
    async with history.engine.connect() as db:
        stored = (await db.execute(select(runs.c.toolset).order_by(runs.c.id))).scalars().all()
        blob = await db.scalar(select(toolsets.c.definitions).where(toolsets.c.id == stored[0]))
    assert stored[0] == stored[1] != stored[2] and stored[3] is None
    assert blob is not None and b"Echo it" in zlib.decompress(blob)


async def test_days_count_runs_by_what_they_say_of_uptime(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, status="auth", reason="auth_required"))
    await history.record(run(2, status="unreachable", reason="connection_refused"))
    await history.record(run(3, status="dns", reason="dns_timeout"))  # our resolver: left out
    await history.record(run(30, status="client_error", reason="rate_limited"))  # next day: a 429
    days = await history.days(server_id_of(run().url), T0.date())
    assert [(d.day, d.up, d.gated, d.down, d.left_out) for d in days] == [
        (T0.date(), 1, 1, 1, 1),
        ((T0 + timedelta(days=1)).date(), 0, 0, 0, 1),
    ]


async def test_a_late_run_never_replaces_the_latest(history: SqlHistory) -> None:
    await history.record(run(5))
    await history.record(run(1, status="timeout", reason="handshake_timeout"))  # stored late, observed earlier
    summary = await history.server(server_id_of(run().url))
    assert summary is not None and (summary.latest_run_id, summary.latest_status) == (run(5).run_id, "ok")


async def test_envelopes_are_found_by_attestation_id(history: SqlHistory) -> None:
    await history.record(run(7))
    assert await history.envelope(run(7).attestation_id) == b'{"payloadType":"x"}'
    assert await history.envelope("f" * 64) is None


async def test_prune_drops_old_runs_and_tool_sets_no_run_points_to(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(24, tools=({"name": "second"},)))
    await history.record(run(48, tools=({"name": "other"},)))
    assert await history.prune(T0 + timedelta(hours=30)) == 2
    # the first list goes; the second stays, as the change of the run kept starts from it
    assert (await count(history, runs), await count(history, toolsets)) == (1, 2)
    assert await history.envelope(run(0).attestation_id) is None


async def test_a_credentialed_run_is_never_stored(history: SqlHistory) -> None:
    with pytest.raises(ValueError, match="credentialed"):
        await history.record(run(0, credentialed=True))
    assert await count(history, runs) == 0


async def test_the_schema_is_current_after_upgrade_and_outdated_before(database_url: str) -> None:
    with pytest.raises(migrate.SchemaOutdated) as outdated:
        await migrate.ensure_current(database_url, embedded=False)
    assert outdated.value.reason == "schema_outdated" and "mcp-sonde db upgrade" in outdated.value.message
    assert await migrate.current(database_url) is None
    assert await migrate.upgrade(database_url) == (None, migrate.head())
    await migrate.ensure_current(database_url, embedded=False)
    assert await migrate.upgrade(database_url) == (migrate.head(), migrate.head())  # idempotent


async def test_a_tool_set_pruned_while_a_run_reuses_it_is_made_again(
    history: SqlHistory, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a prune deleting an unused tool set between a run's upsert of it and the run's
    insert failed the run's foreign key, and the run was lost. (PostgreSQL: SQLite has one writer.)"""
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite serialises writers: the race cannot happen")
    canonical, digest = toolset_digest(run(0))
    async with history.engine.begin() as db:  # an unused tool set, as a prune finds one
        await db.execute(
            toolsets.insert().values(
                definitions_sha256=digest, schema_fingerprint="8" * 64, toolset_fingerprint="1" * 64,
                tool_count=len(TOOLS), definitions=zlib.compress(canonical), first_seen=T0,
            )
        )  # fmt: skip
    original = SqlHistory._toolset_key
    raced: list[int] = []

    async def pruned_meanwhile(self: SqlHistory, db: Any, stored: Run) -> int:
        key = await original(self, db, stored)
        if not raced:  # the prune's transaction deletes it and commits in between
            raced.append(key)
            async with self.engine.begin() as other:
                await other.execute(delete(toolsets).where(toolsets.c.id == key))
        return key

    monkeypatch.setattr(SqlHistory, "_toolset_key", pruned_meanwhile)
    assert await history.record(run(0)) is True
    assert raced and await count(history, runs) == 1
    kept = await history.toolset(run_id=run(0).run_id)
    assert kept is not None and kept.definitions == TOOLS


async def test_a_tool_set_pruned_between_its_upsert_and_its_read_is_made_again(
    history: SqlHistory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the read of the tool set's key after the upsert found nothing (a prune had
    deleted it), an assertion failed, and the run was lost as refused data."""
    original = SqlHistory._toolset_key
    calls: list[int] = []

    async def vanished_once(self: SqlHistory, db: Any, stored: Run) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise Vanished
        return await original(self, db, stored)

    monkeypatch.setattr(SqlHistory, "_toolset_key", vanished_once)
    assert await history.record(run(0)) is True
    assert len(calls) == 2 and await count(history, runs) == 1


async def test_unused_tool_sets_go_in_batches_by_anti_join(history: SqlHistory) -> None:
    """Regression: tool sets were deleted by NOT IN over every run's tool set, which PostgreSQL
    cannot hash past its work_mem: on a large history the prune never ended (and took the old
    days with it). Now by NOT EXISTS, a batch at a time."""
    for n, name in enumerate(("one", "two", "three", "four")):
        await history.record(
            run(n * 24, tools=({"name": name},), url=f"https://s{n}.example/mcp", host=f"s{n}.example")
        )
    async with history.engine.begin() as db:  # three servers' latest lists no longer held
        await db.execute(servers.update().where(servers.c.host != "s3.example").values(latest_toolset=None))
    assert await retention.prune(history.engine, T0 + timedelta(hours=60), batch=1) == 3
    assert (await count(history, runs), await count(history, toolsets)) == (1, 1)


async def test_an_embedded_file_of_an_older_revision_is_brought_up_to_date(database_url: str) -> None:
    """Regression: an embedded SQLite file made by an earlier release (revision 0001) stopped
    `serve` with schema_outdated, though the README says serve keeps that file current."""
    if not database_url.startswith("sqlite"):
        pytest.skip("the embedded database is SQLite")
    await migrate.upgrade(database_url, "0001")
    assert await migrate.current(database_url) == "0001"
    with pytest.raises(migrate.SchemaOutdated):
        await migrate.ensure_current(database_url, embedded=False)
    await migrate.ensure_current(database_url, embedded=True)
    assert await migrate.current(database_url) == migrate.head()
