"""The opt-out list as a worker last read it: fresh within seconds, standing in for a database
that does not answer for a while, unknown after that (regression: with the database down every
probe job was skipped, so a database outage stopped all scheduled checks)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import open_engine
from app.optout import OptOutList
from app.optout.known import FRESH_S, STALE_S, KnownOptOuts, ListUnknown

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def unreachable() -> AsyncIterator[OptOutList]:
    """A list in a database nobody answers for (a closed loopback port)."""
    engine = open_engine("postgresql+asyncpg://postgres@127.0.0.1:9/nowhere")
    try:
        yield OptOutList(engine)
    finally:
        await engine.dispose()


async def test_an_item_added_is_seen_once_the_copy_is_older_than_a_few_seconds(engine: AsyncEngine) -> None:
    listed, clock = OptOutList(engine), Clock()
    known = KnownOptOuts(listed, clock)
    assert not await known.covers("https://mcp.example.com/mcp")
    await listed.add("example.com")
    assert not await known.covers("https://mcp.example.com/mcp")  # (the copy of a moment ago)
    clock.now += FRESH_S + 1
    assert await known.covers("https://mcp.example.com/mcp")


async def test_the_last_copy_stands_in_for_a_database_that_does_not_answer_then_nothing_is_known(
    engine: AsyncEngine, unreachable: OptOutList
) -> None:
    listed, clock = OptOutList(engine), Clock()
    await listed.add("example.com")
    known = KnownOptOuts(listed, clock)
    assert await known.covers("https://a.example.com/mcp")
    known.listed = unreachable
    clock.now += STALE_S - 1
    assert await known.covers("https://a.example.com/mcp") and not await known.covers("https://other.example/mcp")
    clock.now += 2
    with pytest.raises(ListUnknown):
        await known.covers("https://other.example/mcp")


async def test_a_list_never_read_is_unknown(unreachable: OptOutList) -> None:
    with pytest.raises(ListUnknown):
        await KnownOptOuts(unreachable).covers("https://other.example/mcp")
