"""A server's history read whole (app.history.reading) answers what its three reads answer apart
(server, days, window), on both paths of the window (day by day, summed over the runs), on one
pooled connection, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import event

from app.history import digests
from app.history.records import server_id_of
from app.history.store import SqlHistory
from tests.history.test_digests import MIDNIGHT, SERVER, fill, kept

pytestmark = pytest.mark.anyio


def checkouts(history: SqlHistory) -> list[int]:
    """A list that grows by one each time the engine's pool hands a connection out."""
    seen: list[int] = []
    event.listen(history.engine.sync_engine, "checkout", lambda *_: seen.append(1))
    return seen


@pytest.mark.parametrize("from_runs", [1, 10_000], ids=["day_by_day", "summed"])
async def test_the_whole_read_is_its_parts_in_one_connection(
    history: SqlHistory, monkeypatch: pytest.MonkeyPatch, from_runs: int
) -> None:
    monkeypatch.setattr(digests, "FROM_RUNS", from_runs)
    await fill(history, range(0, 24 * 4, 3))
    since = MIDNIGHT + timedelta(days=1)
    handed_out = checkouts(history)
    whole = await history.history(SERVER, since)
    assert len(handed_out) == (1 if from_runs == 10_000 else 2)  # (+1: the digests made, written after)
    assert whole is not None
    apart = (
        await history.server(SERVER),
        await history.days(SERVER, since.date()),
        await history.window(SERVER, since),
    )
    assert (whole.server, whole.days, whole.window) == apart
    assert whole.window.runs == 28 and len(whole.days) == 4  # (from 12:00 on day one, a run every 3 hours)
    if from_runs == 1:
        assert await kept(history) == 4  # (every day is past)
        handed_out.clear()
        assert await history.history(SERVER, since) == whole  # warm: from the digests, nothing to write
        assert len(handed_out) == 1


async def test_a_server_not_kept_reads_as_none(history: SqlHistory) -> None:
    await fill(history, range(0, 6, 3))
    assert await history.history(server_id_of("https://other.example/mcp"), MIDNIGHT) is None
