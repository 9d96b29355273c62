"""The published snapshot on both backends: computed on first read, answered while fresh,
recomputed in the background once stale (by one claimant), and the 0008 backfill."""

from __future__ import annotations

import asyncio
import json
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Connection, select, update

from app.checking.services import open_history
from app.db import migrate
from app.db.engine import open_engine
from app.db.tables.history import runs, servers
from app.db.tables.stats import stats_snapshots
from app.history.store import SqlHistory
from app.stats.snapshot import StatsSnapshots
from tests.stats.runs import run

pytestmark = pytest.mark.anyio
T0 = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)


class Counting(StatsSnapshots):
    refreshed = 0

    async def refresh(self) -> dict[str, Any]:
        self.refreshed += 1
        return await super().refresh()


async def kept(history: SqlHistory) -> int:
    """The servers the stored snapshot counts."""
    async with history.engine.connect() as db:
        body = await db.scalar(select(stats_snapshots.c.body))
    assert body is not None
    return int(json.loads(zlib.decompress(body))["servers"])


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


async def test_fresh_snapshot_is_answered_and_a_stale_one_recomputed_once(history: SqlHistory) -> None:
    clock = Clock()
    snapshots = StatsSnapshots(history.engine, 300, clock)
    await history.record(run("a.test", T0 - timedelta(hours=1), era="legacy", version="2025-06-18", tools=("add",)))
    first = await snapshots.current()  # (none yet: computed now)
    assert first["servers"] == 1 and first["max_age_s"] == 300 and first["computed_at"] == "2027-01-10T12:00:00Z"
    await history.record(run("b.test", T0, "timeout", "read_timeout"))
    clock.now = T0 + timedelta(seconds=299)
    assert (await snapshots.current())["servers"] == 1 and not snapshots._tasks  # fresh: not recomputed
    clock.now = T0 + timedelta(seconds=301)
    other = Counting(history.engine, 300, clock)  # (another process)
    snapshots = Counting(history.engine, 300, clock)
    assert (await snapshots.current())["servers"] == 1  # the stale one is answered at once
    await other.current()
    await asyncio.gather(*snapshots._tasks, *other._tasks)
    assert snapshots.refreshed + other.refreshed == 1  # one claimant recomputed
    again = await snapshots.current()
    assert again["servers"] == 2 and again["computed_at"] == "2027-01-10T12:05:01Z"
    async with history.engine.connect() as db:
        row = (await db.execute(select(stats_snapshots))).one()
    assert row.claimed_at is None and row.name == "directory"


async def test_a_snapshot_another_process_recomputed_after_this_one_read_it_is_not_recomputed_again(
    history: SqlHistory,
) -> None:
    clock = Clock()
    await StatsSnapshots(history.engine, 300, clock).current()
    clock.now = T0 + timedelta(seconds=301)
    late, quick = Counting(history.engine, 300, clock), Counting(history.engine, 300, clock)
    seen = await late._read()  # this process found it stale ...
    assert seen is not None and seen[0] == T0
    await quick.current()  # ... another found it stale too, claimed it and recomputed it ...
    await asyncio.gather(*quick._tasks)
    assert quick.refreshed == 1
    await late._refresh_claimed(clock.now, seen[0])  # ... so this one's claim comes too late
    assert late.refreshed == 0
    async with history.engine.connect() as db:
        row = (await db.execute(select(stats_snapshots))).one()
    assert row.claimed_at is None and row.computed_at is not None


async def test_a_claim_held_by_another_process_is_respected(history: SqlHistory) -> None:
    clock = Clock()
    snapshots = StatsSnapshots(history.engine, 60, clock)
    await snapshots.current()
    await history.record(run("a.test", T0, "timeout", "read_timeout"))
    async with history.engine.begin() as db:  # another process claimed it a minute ago
        await db.execute(update(stats_snapshots).values(claimed_at=T0 + timedelta(seconds=60)))
    clock.now = T0 + timedelta(seconds=120)
    assert (await snapshots.current())["servers"] == 0
    await asyncio.gather(*snapshots._tasks)
    assert await kept(history) == 0  # not recomputed: the claim stands
    clock.now = T0 + timedelta(seconds=300)  # the claim is older than CLAIM_S: taken over
    await snapshots.current()
    await asyncio.gather(*snapshots._tasks)
    assert await kept(history) == 1


async def test_the_migration_fills_the_newest_runs_facts(database_url: str) -> None:
    await migrate.upgrade(database_url)
    store = open_history(database_url)
    try:
        await store.record(run("a.test", T0 - timedelta(days=1), era="modern", version="2026-07-28", tools=("add",)))
        await store.record(run("a.test", T0, era="legacy", version="2025-06-18", tools=("add", "echo")))
        await store.record(run("b.test", T0, "auth", "auth_required", metadata=True))
    finally:
        await store.aclose()

    def down(connection: Connection) -> None:
        command.downgrade(migrate._config(connection), "0006")

    engine = open_engine(database_url)
    try:
        async with engine.begin() as db:
            await db.run_sync(down)
        await migrate.upgrade(database_url)
        async with engine.connect() as db:
            rows = (await db.execute(
                select(runs.c.run_id, runs.c.handshake, runs.c.tool_count, runs.c.metadata_published,
                       runs.c.id.in_(select(servers.c.latest_run)).label("latest")).order_by(runs.c.id)
            )).all()  # fmt: skip
    finally:
        await engine.dispose()
    assert [(r.handshake, r.tool_count, r.metadata_published, r.latest) for r in rows] == [
        (None, None, None, False),  # (not a newest run: left as it was)
        ("initialize", 2, None, True),
        (None, None, True, True),
    ]
