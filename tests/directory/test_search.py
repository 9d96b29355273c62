"""Directory searches on both backends: text over names, descriptions and tool names, each filter,
each sort, and keyset pages that list every match exactly once; cursors of another search refused."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.directory.query import InvalidSearch, parse
from app.directory.store import Directory
from app.history.store import SqlHistory
from tests.directory.seed import FOOD, NOW, TRAVEL, entry, server_run, tools

pytestmark = pytest.mark.anyio


async def seeded(history: SqlHistory) -> None:
    await history.record(server_run(1, "fly.example.com", tools=TRAVEL, protocol_version="2025-11-25"))
    await entry(history, "io.example/fly", "fly.example.com", title="Fly", description="Cheap flights 100%")
    await history.record(server_run(2, "eat.example.com", tools=FOOD, transport="sse"))
    await entry(history, "io.example/eat", "eat.example.com", description="Pizza near you")
    await history.record(server_run(3, "locked.example.com", tools=None, status="auth", reason="auth_required"))
    await history.record(
        server_run(4, "down.example.com", tools=None, status="unreachable", reason="connection_refused")
    )


async def ids(history: SqlHistory, **params: str) -> list[str]:
    page = await Directory(history.engine).search(parse(params))
    return [listing.host for listing in page.listings]


async def test_text_and_filters(history: SqlHistory) -> None:
    await seeded(history)
    assert await ids(history, q="PIZZA") == ["eat.example.com"]  # description and tool name, any case
    assert await ids(history, q="book_hotel") == ["fly.example.com"]  # a tool name
    assert await ids(history, q="fly cheap") == ["fly.example.com"]  # every word
    assert await ids(history, q="fly pizza") == []
    assert await ids(history, q="100%") == ["fly.example.com"] and await ids(history, q="1_0") == []  # no wildcards
    assert await ids(history, q="locked") == ["locked.example.com"]  # the URL
    assert await ids(history, category="travel") == ["fly.example.com"]
    assert await ids(history, status="unreachable") == ["down.example.com"]
    assert await ids(history, protocol_version="2025-11-25") == ["fly.example.com"]
    assert await ids(history, transport="sse") == ["eat.example.com"]
    assert await ids(history, auth="gated") == ["locked.example.com"]
    assert sorted(await ids(history, auth="open")) == ["eat.example.com", "fly.example.com"]
    assert await ids(history, changed_within="7d") == []  # no tool list changed yet
    await history.record(server_run(0, "eat.example.com", at=NOW, tools=tools("order_pizza")))
    assert await ids(history, changed_within="7d") == ["eat.example.com"]


async def test_sorts(history: SqlHistory) -> None:
    await seeded(history)
    # by name: the registry's name, else the host
    page = await Directory(history.engine).search(parse({}))
    assert [listing.name or listing.host for listing in page.listings] == [
        "down.example.com",
        "io.example/eat",
        "io.example/fly",
        "locked.example.com",
    ]
    assert await ids(history, sort="last_checked") == [
        "fly.example.com",
        "eat.example.com",
        "locked.example.com",
        "down.example.com",
    ]
    # uptime (30 days): every server has one day; the down one is last
    assert (await ids(history, sort="uptime"))[-1] == "down.example.com"


async def test_pages_list_every_match_once(history: SqlHistory) -> None:
    for n in range(23):
        await history.record(server_run(n, f"s{n:02d}.example.com", at=NOW - timedelta(seconds=n % 5)))
    for sort in ("name", "last_checked", "uptime"):
        seen: list[str] = []
        params = {"sort": sort, "limit": "5"}
        pages = 0
        while True:
            page = await Directory(history.engine).search(parse(params))
            seen += [listing.server_id for listing in page.listings]
            pages += 1
            if page.next_cursor is None:
                break
            params["cursor"] = page.next_cursor
            # a server stored between pages does not repeat one already listed
            await history.record(server_run(100 + pages, f"late{sort}{pages}.example.com", at=NOW - timedelta(days=1)))
        assert len(seen) == len(set(seen)) >= 23 and pages >= 5, sort


async def test_a_cursor_continues_only_its_own_search(history: SqlHistory) -> None:
    for n in range(3):
        await history.record(server_run(n, f"p{n}.example.com"))
    page = await Directory(history.engine).search(parse({"limit": "1", "status": "ok"}))
    assert page.next_cursor is not None
    for params in ({"limit": "1", "status": "ok", "sort": "uptime"}, {"limit": "1", "q": "p1"},
                   {"limit": "1", "status": "ok", "cursor": page.next_cursor[:-2] + "AA"}):  # fmt: skip
        given = {"cursor": page.next_cursor} | params
        with pytest.raises(InvalidSearch) as refused:
            parse(given)
        assert refused.value.reason == "invalid_cursor"
    following = await Directory(history.engine).search(
        parse({"limit": "1", "status": "ok", "cursor": page.next_cursor})
    )
    assert following.listings[0].server_id != page.listings[0].server_id
