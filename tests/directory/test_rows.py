"""Directory rows kept current on both backends: from the latest run and tool list, from the
registry entry that lists the server, categories left out for tool sets many servers share, and
the rows of servers stored before the directory made again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import delete, select

from app.db.tables.directory import directory
from app.directory import rows
from app.history.records import server_id_of
from app.history.store import SqlHistory
from tests.directory.seed import FOOD, NOW, TRAVEL, entry, server_run, tools

pytestmark = pytest.mark.anyio


async def row_of(history: SqlHistory, host: str) -> dict[str, object]:
    async with history.engine.connect() as db:
        found = (
            await db.execute(select(directory).where(directory.c.server_id == server_id_of(f"https://{host}/mcp")))
        ).one()
    return dict(found._mapping)


async def test_a_row_follows_the_latest_run_and_tool_list(history: SqlHistory) -> None:
    await history.record(server_run(2, "a.example.com", tools=TRAVEL))
    first = await row_of(history, "a.example.com")
    assert (first["status"], first["auth"], first["tool_count"], first["category"]) == ("ok", "open", 4, "travel")
    assert first["tool_names"] == "search_flights\nbook_hotel\nlist_airports\ncancel_trip"
    assert "book_hotel" in str(first["search_text"]) and first["last_changed"] is None
    await history.record(server_run(1, "a.example.com", tools=FOOD, status="auth", reason="auth_required"))
    second = await row_of(history, "a.example.com")
    assert (second["status"], second["auth"], second["category"]) == ("auth", "gated", "food_and_delivery")
    assert second["last_changed"] is not None and "book_hotel" not in str(second["search_text"])
    # a run stored late (observed before the latest) does not replace it
    await history.record(server_run(9, "a.example.com", tools=TRAVEL, status="timeout", reason="probe_timeout"))
    late = await row_of(history, "a.example.com")
    assert (late["status"], late["category"]) == ("auth", "food_and_delivery")


async def test_the_registry_entry_names_and_describes_the_server(history: SqlHistory) -> None:
    await history.record(server_run(1, "b.example.com", tools=TRAVEL))
    await entry(history, "io.example/b-travel", "b.example.com", title="B Travel", description="Flights and HOTELS")
    row = await row_of(history, "b.example.com")
    assert (row["name"], row["title"], row["sort_name"]) == ("io.example/b-travel", "B Travel", "io.example/b-travel")
    assert "flights and hotels" in str(row["search_text"])
    # a newer run keeps the registry's words; an entry listed before the first run is found then
    await history.record(server_run(0, "b.example.com", tools=TRAVEL))
    assert (await row_of(history, "b.example.com"))["title"] == "B Travel"
    await entry(history, "io.example/c", "c.example.com", description="Cooking")
    await history.record(server_run(0, "c.example.com"))
    assert (await row_of(history, "c.example.com"))["description"] == "Cooking"
    # a deprecated version does not win over the active one
    await entry(history, "io.example/b-old", "b.example.com", status="deprecated", title="Old B", latest=False)
    assert (await row_of(history, "b.example.com"))["title"] == "B Travel"


async def test_a_tool_set_twenty_servers_share_gives_no_category(history: SqlHistory) -> None:
    shared = tools("search_flights", "book_hotel", "list_airports")
    for n in range(rows.TEMPLATE_SERVERS - 1):
        await history.record(server_run(n, f"t{n}.example.com", tools=shared))
    assert (await row_of(history, "t0.example.com"))["category"] == "travel"  # 19 alike: still a category
    await history.record(server_run(30, "t19.example.com", tools=shared))
    for host in ("t0.example.com", "t19.example.com"):
        row = await row_of(history, host)
        assert (row["category"], row["tool_category"]) == (None, "travel")
    # one of them moves to a list of its own: the other 19 get their category back
    await history.record(server_run(0, "t19.example.com", at=NOW + timedelta(minutes=5), tools=TRAVEL))
    assert (await row_of(history, "t0.example.com"))["category"] == "travel"
    assert (await row_of(history, "t19.example.com"))["category"] == "travel"


async def test_rows_of_servers_stored_before_are_made_again(history: SqlHistory) -> None:
    await history.record(server_run(1, "d.example.com", tools=FOOD))
    await entry(history, "io.example/d", "d.example.com", title="D")
    before = await row_of(history, "d.example.com")
    async with history.engine.begin() as db:
        await db.execute(delete(directory))
        made = await db.run_sync(rows.rebuild_sync)
    assert made == 1 and await row_of(history, "d.example.com") == before
