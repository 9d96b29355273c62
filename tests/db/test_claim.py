"""The claim of due rows (:func:`app.db.claim.claim_due`) on both backends, on a table of its own:
each row handed out once however claims overlap, a row that changed after it was read is not
handed out, and a claim takes the oldest due rows first, at most ``limit`` of them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Column, MetaData, String, Table, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.claim import Move, Read, claim_due
from app.db.engine import open_engine
from app.db.tables.history import Key, Moment
from app.history.records import utc

pytestmark = pytest.mark.anyio

T0 = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)
HOLD = timedelta(minutes=10)

metadata = MetaData()
items = Table(
    "claim_items",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("label", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("due", Moment, nullable=False),
    Column("taken_by", String(16), nullable=True),
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database of the backend, with the test table."""
    made = open_engine(database_url)
    async with made.begin() as db:
        await db.run_sync(metadata.create_all)
    try:
        yield made
    finally:
        await made.dispose()


async def add(engine: AsyncEngine, *rows: tuple[str, str, timedelta]) -> None:
    """Rows ``(label, state, due relative to T0)``, inserted in the order given."""
    async with engine.begin() as db:
        for label, state, due in rows:
            await db.execute(insert(items).values(label=label, state=state, due=T0 + due))


async def table(engine: AsyncEngine) -> dict[str, tuple[str, datetime, str | None]]:
    """``{label: (state, due, taken_by)}`` of every row."""
    async with engine.connect() as db:
        rows = (await db.execute(select(items))).all()
    return {row.label: (row.state, utc(row.due), row.taken_by) for row in rows}


def taking(who: str, now: datetime) -> Move:
    """The move of a claimer ``who``: held for ``HOLD``, marked as its own."""

    async def move(row: Read) -> Mapping[str, Any]:
        return {"due": now + HOLD, "taken_by": who}

    return move


async def claimed(db: AsyncConnection, now: datetime, limit: int, move: Move) -> list[tuple[str, Mapping[str, Any]]]:
    """The rows (labels) claimed of those ``ready``, with the values each moved to."""
    return [
        (row.label, values)
        async for row, values in claim_due(
            db, items, (items.c.label,), due=items.c.due, now=now, limit=limit, move=move,
            where=(items.c.state == "ready",), still=(items.c.state == "ready",),
        )
    ]  # fmt: skip


async def claim(engine: AsyncEngine, now: datetime, limit: int, who: str, move: Move | None = None) -> list[str]:
    """A claim in a transaction of its own, as the stores make one: the labels handed out."""
    async with engine.begin() as db:
        return [label for label, _ in await claimed(db, now, limit, move or taking(who, now))]


async def test_two_claims_of_the_same_rows_hand_each_row_out_once(engine: AsyncEngine) -> None:
    """Claim ``a`` reads the due rows, then waits while claim ``b`` runs from start to commit.
    On SQLite both read every row (no row locks), and ``a``'s compare-and-sets find each due time
    moved by ``b``: ``a`` gets nothing. On PostgreSQL ``a`` holds the rows locked and ``b`` skips
    them: ``b`` gets nothing and does not wait. Either way every row is handed out once."""
    labels = [f"r{i}" for i in range(5)]
    await add(engine, *((label, "ready", -timedelta(minutes=i)) for i, label in enumerate(labels)))
    read, done = asyncio.Event(), asyncio.Event()

    async def after_b(row: Read) -> Mapping[str, Any] | None:
        read.set()
        await done.wait()
        return await taking("a", T0)(row)

    first = asyncio.create_task(claim(engine, T0, 10, "a", after_b))
    await read.wait()
    b = await asyncio.wait_for(claim(engine, T0, 10, "b"), 5)
    done.set()
    a = await first
    assert sorted(a + b) == labels and not set(a) & set(b)
    assert (a, b) == (([], labels[::-1]) if engine.dialect.name == "sqlite" else (labels[::-1], []))
    rows = await table(engine)
    assert {label: rows[label][2] for label in labels} == {label: "b" if label in b else "a" for label in labels}
    assert {rows[label][1] for label in labels} == {T0 + HOLD}


async def test_many_claims_at_once_hand_each_row_out_once(engine: AsyncEngine) -> None:
    await add(engine, *((f"r{i:02}", "ready", -timedelta(seconds=i)) for i in range(40)))
    batches = await asyncio.gather(*(claim(engine, T0, 15, f"c{n}") for n in range(4)))
    handed = [label for batch in batches for label in batch]
    assert handed and len(handed) == len(set(handed))
    rest = await claim(engine, T0, 100, "last")
    assert not set(rest) & set(handed) and len(handed) + len(rest) == 40
    rows = await table(engine)
    for n, batch in enumerate(batches):
        assert {rows[label][2] for label in batch} <= {f"c{n}"}
    assert await claim(engine, T0, 100, "again") == []


async def test_a_row_changed_between_the_select_and_the_update_is_not_handed_out(engine: AsyncEngine) -> None:
    """Between the claim's select and its update of a row (in its ``move``), ``r1``'s due time and
    ``r2``'s state are changed; ``r3`` is passed over by the move itself. Only ``r0`` and ``r4``
    are handed out, with the values their move gave, and the others keep what they were changed to."""
    await add(engine, *((f"r{i}", "ready", timedelta(minutes=i - 5)) for i in range(5)))
    async with engine.begin() as db:
        take = taking("a", T0)

        async def meddle(row: Read) -> Mapping[str, Any] | None:
            if row.label == "r1":
                await db.execute(update(items).where(items.c.id == row.id).values(due=T0 - timedelta(hours=1)))
            if row.label == "r2":
                await db.execute(update(items).where(items.c.id == row.id).values(state="paused"))
            if row.label == "r3":
                return None
            return await take(row)

        got = await claimed(db, T0, 10, meddle)
    assert got == [("r0", {"due": T0 + HOLD, "taken_by": "a"}), ("r4", {"due": T0 + HOLD, "taken_by": "a"})]
    assert await table(engine) == {
        "r0": ("ready", T0 + HOLD, "a"),
        "r1": ("ready", T0 - timedelta(hours=1), None),
        "r2": ("paused", T0 - timedelta(minutes=3), None),
        "r3": ("ready", T0 - timedelta(minutes=2), None),
        "r4": ("ready", T0 + HOLD, "a"),
    }
    assert await claim(engine, T0, 10, "b") == ["r1", "r3"]  # (still due: the next claim takes them)


async def test_a_claim_takes_the_oldest_due_rows_first_up_to_its_limit(engine: AsyncEngine) -> None:
    """Inserted out of due order; ``paused`` is the oldest but not ``ready``, ``later`` is not due
    yet, ``now`` is due at the very moment of the claim."""
    await add(
        engine,
        ("third", "ready", -timedelta(minutes=3)),
        ("later", "ready", timedelta(seconds=1)),
        ("first", "ready", -timedelta(minutes=30)),
        ("now", "ready", timedelta(0)),
        ("paused", "paused", -timedelta(hours=1)),
        ("fourth", "ready", -timedelta(minutes=1)),
        ("second", "ready", -timedelta(minutes=10)),
    )
    assert await claim(engine, T0, 3, "a") == ["first", "second", "third"]
    assert await claim(engine, T0, 1, "b") == ["fourth"]
    assert await claim(engine, T0, 10, "c") == ["now"]
    assert await claim(engine, T0, 10, "d") == []
    assert await claim(engine, T0, 0, "e") == []
    rows = await table(engine)
    assert rows["later"] == ("ready", T0 + timedelta(seconds=1), None)
    assert rows["paused"] == ("paused", T0 - timedelta(hours=1), None)
    due_again = await claim(engine, T0 + HOLD, 10, "f")  # ("later" is due first; the others held until T0 + HOLD)
    assert due_again[0] == "later" and sorted(due_again[1:]) == ["first", "fourth", "now", "second", "third"]


async def test_a_row_locked_by_another_transaction_is_passed_over_not_waited_for(engine: AsyncEngine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no row locks (the compare-and-set alone keeps claims apart there)")
    await add(engine, *((f"r{i}", "ready", -timedelta(minutes=3 - i)) for i in range(3)))
    async with engine.connect() as other:
        async with other.begin():
            await other.execute(select(items.c.id).where(items.c.label == "r1").with_for_update())
            assert await asyncio.wait_for(claim(engine, T0, 10, "a"), 5) == ["r0", "r2"]
        assert await claim(engine, T0, 10, "b") == ["r1"]
