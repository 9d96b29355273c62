"""``GET /v1/servers/{server_id}/changes`` through the running app: the changes of a real server's
tool list as it is checked, pages that follow their ``next`` cursor to the end, unknown ids,
bad queries and a database that does not answer."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.checking.services import open_history
from app.db import migrate
from app.history.records import server_id_of
from app.http.routes.changes import format_time, parse_time
from tests.checking.test_recorder import stored, wait_for
from tests.conftest import Service, reason_of
from tests.history.test_store import T0
from tests.history.test_store import run as sample_run
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

FREE = {"X-Free-Pool": "1"}
URL = "https://mcp.example.com/mcp"
LISTS = (({"name": "add", "inputSchema": {"type": "object"}},), ({"name": "add"}, {"name": "sub"}))


def changes(base: str, server_id: str, **query: Any) -> httpx2.Response:
    return httpx2.get(f"{base}/v1/servers/{server_id}/changes", params=query, timeout=10)


def seed(data_dir: Path, lists: list[tuple[dict[str, Any], ...] | None]) -> None:
    """One run an hour of ``URL`` with these tool lists (``None``: a run that read no list)."""

    async def write() -> None:
        database = f"sqlite+aiosqlite:///{data_dir / 'history.sqlite3'}"
        await migrate.upgrade(database)
        store = open_history(database)
        try:
            for n, tools in enumerate(lists):
                printed = hashlib.sha256(json.dumps(tools).encode()).hexdigest() if tools else None
                await store.record(replace(sample_run(n), url=URL, tools=tools, schema_fingerprint=printed))
        finally:
            await store.aclose()

    asyncio.run(write())


def test_a_real_servers_changes_as_it_is_checked(service: Service, raw: RawServer, tmp_path: Path) -> None:
    server = MiniMcp(tools=["alpha", "beta"])
    raw.routes["/mcp"] = server
    url = raw.url("/mcp")
    database = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    with service(data_dir=tmp_path) as base:
        answers = []
        for n, tools in enumerate((["alpha", "beta"], ["alpha", "beta", "gamma"], ["alpha"])):
            server.tools = tools
            answers.append(httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE, timeout=30))
            assert answers[-1].status_code == 200, answers[-1].text
            wait_for(lambda n=n: len(stored(database)) == n + 1)
        page = changes(base, server_id_of(url))
        first = changes(base, server_id_of(url), limit=1)
        second = changes(base, server_id_of(url), limit=1, before=first.json()["next"])
        third = changes(base, server_id_of(url), limit=1, before=second.json()["next"])
    assert page.status_code == 200, page.text
    assert page.headers["cache-control"] == "public, max-age=60"
    body = page.json()
    assert body["server_id"] == server_id_of(url) and body["next"] is None
    newest, older = body["changes"]
    assert newest["attestation_id"] == answers[2].json()["attestation_id"]
    assert older["attestation_id"] == answers[1].json()["attestation_id"]
    assert (newest["verdict"], older["verdict"]) == ("breaking", "compatible")
    assert {(t["name"], t["change"]) for t in newest["diff"]["tools"]} == {("beta", "removed"), ("gamma", "removed")}
    assert newest["diff"]["counts"] == {
        "before": 3, "after": 1, "added": 0, "removed": 2, "renamed": 0, "changed": 0, "unchanged": 1,
    }  # fmt: skip
    assert newest["before"] == older["after"]
    assert newest["after"]["schema_fingerprint"] == answers[2].json()["schema_fingerprint"]
    assert newest["after"]["toolset_fingerprint"] == answers[2].json()["toolset_fingerprint"]
    assert parse_time(newest["observed_at"]) > parse_time(older["observed_at"])
    assert [c["attestation_id"] for c in first.json()["changes"]] == [newest["attestation_id"]]
    assert first.json()["next"] == newest["observed_at"]
    assert [c["attestation_id"] for c in second.json()["changes"]] == [older["attestation_id"]]
    assert third.json() == {"server_id": server_id_of(url), "changes": [], "next": None}


def test_pages_follow_next_to_the_end(service: Service, tmp_path: Path) -> None:
    lists: list[Any] = [LISTS[n % 2] for n in range(12)]
    lists[5] = None  # a run without a list: no change, and no break in the sequence
    seed(tmp_path, lists)
    seen: list[str] = []
    pages = []
    with service(data_dir=tmp_path) as base:
        cursor: str | None = None
        while True:
            query: dict[str, Any] = {"limit": 4} | ({"before": cursor} if cursor else {})
            page = changes(base, server_id_of(URL), **query)
            assert page.status_code == 200, page.text
            pages.append(page.json())
            seen += [c["attestation_id"] for c in page.json()["changes"]]
            cursor = page.json()["next"]
            if cursor is None:
                break
    # runs 0..11 alternate two lists; run 5 read none, so run 6 (the list of run 4) changes nothing
    # (a served run's id is its attestation id; these seeded ones have ids of their own)
    assert seen == [sample_run(n).run_id for n in (11, 10, 9, 8, 7, 4, 3, 2, 1)]
    assert [len(p["changes"]) for p in pages] == [4, 4, 1]
    assert pages[0]["next"] == format_time(T0.replace(hour=12 + 8))  # the oldest of the first page
    assert pages[0]["changes"][0]["observed_at"] == "2026-11-01T23:00:00.000000Z"


def test_a_server_kept_without_changes_is_an_empty_list(service: Service, tmp_path: Path) -> None:
    seed(tmp_path, [LISTS[0], LISTS[0], None])
    with service(data_dir=tmp_path) as base:
        page = changes(base, server_id_of(URL))
    assert page.status_code == 200 and page.json() == {"server_id": server_id_of(URL), "changes": [], "next": None}


def test_unknown_and_malformed_ids_are_404(service: Service, tmp_path: Path) -> None:
    with service(data_dir=tmp_path) as base:
        answers = [changes(base, server_id) for server_id in ("0" * 24, "abc", "G" * 24, "0" * 25)]
    assert [(a.status_code, reason_of(a)) for a in answers] == [(404, "server_not_found")] * 4


BAD_QUERIES: list[dict[str, str]] = [
    {"limit": "0"},
    {"limit": "201"},
    {"limit": "-1"},
    {"limit": "ten"},
    {"limit": "١٢"},  # digits, but not ASCII ones
    {"before": "2026-11-01"},
    {"before": "2026-11-01T12:00:00"},  # no offset
    {"before": "2026-13-01T12:00:00Z"},
    {"before": "2026-11-01T12:00:60Z"},
    {"before": "9999-12-31T23:59:59-01:00"},
    {"before": "yesterday"},
    {"before": ""},
]


@pytest.mark.parametrize("query", BAD_QUERIES, ids=[str(q) for q in BAD_QUERIES])
def test_a_bad_limit_or_cursor_is_400(service: Service, tmp_path: Path, query: dict[str, str]) -> None:
    seed(tmp_path, [LISTS[0], LISTS[1]])
    with service(data_dir=tmp_path) as base:
        answer = changes(base, server_id_of(URL), **query)
    assert (answer.status_code, reason_of(answer)) == (400, "invalid_query"), answer.text


def test_cursors_in_any_offset_mean_the_same_instant(service: Service, tmp_path: Path) -> None:
    seed(tmp_path, [LISTS[n % 2] for n in range(4)])
    with service(data_dir=tmp_path) as base:
        utc = changes(base, server_id_of(URL), before="2026-11-01T14:00:00Z").json()
        offset = changes(base, server_id_of(URL), before="2026-11-01T16:00:00.000000001+02:00").json()
    assert [c["attestation_id"] for c in utc["changes"]] == [sample_run(1).run_id]
    assert utc["changes"] == offset["changes"]


def test_a_database_that_does_not_answer_is_503(service: Service) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with service(database_url=f"postgresql+asyncpg://postgres@127.0.0.1:{port}/none") as base:
        answer = changes(base, "0" * 24)
    assert (answer.status_code, reason_of(answer)) == (503, "history_unavailable")
