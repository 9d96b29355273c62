"""A history window read day by day (app.history.digests) answers what the window summed up over
the runs answers (app.history.window), on SQLite and PostgreSQL: cold, warm (from the digests
kept), after a run stored late for a past day, and past the read's limit."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from app.db.tables.history import day_digests
from app.history import digests
from app.history.records import server_id_of
from app.history.store import SqlHistory
from app.history.window import Window, window
from tests.history.test_store import T0, run
from tests.history.test_window import OUTCOMES

pytestmark = pytest.mark.anyio
SERVER = server_id_of("https://mcp.example.com/mcp")
MIDNIGHT = datetime(T0.year, T0.month, T0.day, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _few_runs_suffice(monkeypatch: pytest.MonkeyPatch) -> None:
    """These windows are small: read them day by day all the same (production: from 2,000 runs)."""
    monkeypatch.setattr(digests, "FROM_RUNS", 1)


async def summed(history: SqlHistory, since: datetime, limit: int = 30_000) -> Window:
    async with history.engine.connect() as db:
        return await window(db, SERVER, since, limit)


async def kept(history: SqlHistory) -> int:
    async with history.engine.connect() as db:
        return int(await db.scalar(select(func.count()).select_from(day_digests)) or 0)


async def fill(history: SqlHistory, hours: range, seed: int = 3) -> None:
    rng = random.Random(seed)
    for n in hours:
        status, reason = OUTCOMES[rng.randrange(len(OUTCOMES))]
        latency = None if status in ("timeout", "unreachable", "dns") else rng.choice((9.5, 40.0, 41.5, 350.25))
        await history.record(run(n, status=status, reason=reason, latency_ms=latency, tools=None))


async def test_day_by_day_is_the_window_cold_and_warm(history: SqlHistory) -> None:
    await fill(history, range(0, 24 * 5, 3))  # five days, a run every 3 hours
    expected = await summed(history, MIDNIGHT)
    cold = await digests.window(history.engine, SERVER, MIDNIGHT, 30_000)
    assert cold == expected and expected.status_changes and expected.runs == 40
    assert (
        await kept(history) == 6
    )  # every past day the runs fall on (from 12:00 on day one): written by the first read
    warm = await digests.window(history.engine, SERVER, MIDNIGHT, 30_000)
    assert warm == expected
    assert await history.window(SERVER, MIDNIGHT) == expected  # the store reads it day by day
    later = MIDNIGHT + timedelta(days=2)
    assert await digests.window(history.engine, SERVER, later, 30_000) == await summed(history, later)


async def test_a_run_stored_late_for_a_past_day_is_counted(history: SqlHistory) -> None:
    await fill(history, range(0, 72, 4))
    await digests.window(history.engine, SERVER, MIDNIGHT, 30_000)  # digests kept
    await history.record(run(25, status="unreachable", reason="connection_refused", latency_ms=None, tools=None))
    assert await digests.window(history.engine, SERVER, MIDNIGHT, 30_000) == await summed(history, MIDNIGHT)


async def test_past_the_limit_or_not_at_midnight_the_runs_are_read(history: SqlHistory) -> None:
    await fill(history, range(0, 48, 2))
    assert await digests.window(history.engine, SERVER, MIDNIGHT, 10) is None
    assert await history.window(SERVER, MIDNIGHT, 10) == await summed(history, MIDNIGHT, 10)
    assert await digests.window(history.engine, SERVER, MIDNIGHT + timedelta(hours=5), 30_000) is None
    assert await digests.window(history.engine, server_id_of("https://other.example/mcp"), MIDNIGHT, 10) is None


async def test_a_small_window_is_summed_up_over_its_runs(history: SqlHistory, monkeypatch: pytest.MonkeyPatch) -> None:
    await fill(history, range(0, 48, 2))
    monkeypatch.setattr(digests, "FROM_RUNS", 25)
    assert await digests.window(history.engine, SERVER, MIDNIGHT, 30_000) is None  # 24 runs: one statement
    monkeypatch.setattr(digests, "FROM_RUNS", 24)
    assert await digests.window(history.engine, SERVER, MIDNIGHT, 30_000) == await summed(history, MIDNIGHT)
