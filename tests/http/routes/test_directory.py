"""The directory API on both store backends: ``GET /v1/servers`` searches, filters and pages with
validated parameters; ``GET /v1/servers/{id}`` links the latest signed statement and gives the
last changes and the registry entry; a served check shows up in the directory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2

from app.checking.services import open_history
from app.db import migrate
from app.history.records import server_id_of
from tests.checking.test_recorder import stored, wait_for
from tests.conftest import Service, reason_of
from tests.directory.seed import FOOD, TRAVEL, entry, server_run, tools
from tests.history.conftest import database_url, pytest_generate_tests
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

__all__ = ["database_url", "pytest_generate_tests"]


def seed(url: str) -> None:
    async def write() -> None:
        await migrate.upgrade(url)
        store = open_history(url)
        try:
            await store.record(server_run(3, "fly.example.com", tools=TRAVEL))
            await store.record(server_run(2, "fly.example.com", tools=TRAVEL + tools("rent_car")))
            await entry(store, "io.example/fly", "fly.example.com", title="Fly", description="Flights <b>cheap</b>")
            await store.record(server_run(2, "eat.example.com", tools=FOOD, status="auth", reason="auth_required"))
            for n in range(5):
                await store.record(server_run(n, f"s{n}.example.com", tools=None, status="unreachable",
                                              reason="connection_refused"))  # fmt: skip
        finally:
            await store.aclose()

    asyncio.run(write())


def test_search_filters_pages_and_summary(service: Service, database_url: str, tmp_path: Path) -> None:
    seed(database_url)
    fly = server_id_of("https://fly.example.com/mcp")
    with service(data_dir=tmp_path, database_url=database_url) as base:
        found = httpx2.get(f"{base}/v1/servers", params={"q": "rent_car flights"}, timeout=10)
        gated = httpx2.get(f"{base}/v1/servers", params={"auth": "gated", "category": "food_and_delivery"}, timeout=10)
        pages: list[str] = []
        params: dict[str, str] = {"status": "unreachable", "limit": "2", "sort": "last_checked"}
        while True:
            answer = httpx2.get(f"{base}/v1/servers", params=params, timeout=10)
            assert answer.status_code == 200, answer.text
            pages += [server["url"] for server in answer.json()["servers"]]
            if answer.json()["next_cursor"] is None:
                break
            params["cursor"] = answer.json()["next_cursor"]
        refused = {
            name: httpx2.get(f"{base}/v1/servers", params=given, timeout=10)
            for name, given in {
                "invalid_cursor": {"cursor": "x.y"},
                "invalid_filter": {"transport": "stdio"},
                "invalid_sort": {"sort": "popularity"},
                "invalid_query": {"limit": "101"},
                "invalid_search": {"q": "a b c d e f g h i"},
            }.items()
        }
        summary = httpx2.get(f"{base}/v1/servers/{fly}", timeout=10)
    assert found.status_code == 200 and found.headers["x-ratelimit-limit"] == "120"
    body: dict[str, Any] = found.json()
    assert [s["server_id"] for s in body["servers"]] == [fly] and body["next_cursor"] is None
    listed = body["servers"][0]
    assert (listed["name"], listed["description"], listed["category"], listed["category_source"]) == (
        "io.example/fly",
        "Flights <b>cheap</b>",
        "travel",
        "tool_names",
    )
    assert listed["tool_count"] == 5 and listed["last_changed"] is not None and listed["links"]["page"].endswith(fly)
    assert [s["url"] for s in gated.json()["servers"]] == ["https://eat.example.com/mcp"]
    assert pages == [f"https://s{n}.example.com/mcp" for n in range(5)]  # newest first, each once
    assert {name: (r.status_code, reason_of(r)) for name, r in refused.items()} == {
        name: (400, name) for name in refused
    }
    assert summary.status_code == 200, summary.text
    document = summary.json()
    assert document["latest"]["attestation_url"].endswith(f"/v1/attestations/{document['latest']['attestation_id']}")
    registry = {
        key: document["registry"][key] for key in ("name", "version", "status", "title", "description", "latest")
    }
    assert registry == {"name": "io.example/fly", "version": "1.0.0", "status": "active", "title": "Fly",
                        "description": "Flights <b>cheap</b>", "latest": True}  # fmt: skip
    assert (document["registry"]["publisher"], document["registry"]["named"]) == ("io.example", True)
    assert document["registry"]["namespace_verification"]["kind"] == "domain_other"  # (example.io is not its host)
    assert document["registry_entries"] == [document["registry"]]
    assert document["identity"] == {"name": "io.example/fly", "title": "Fly", "description": "Flights <b>cheap</b>",
                                    "server_title": None,
                                    "named_by": "registry", "publishers": 1, "claimed": None}  # fmt: skip
    assert [change["counts"]["added"] for change in document["changes"]] == [1]
    assert (document["category"], document["category_source"], document["tool_count"]) == ("travel", "tool_names", 5)


def test_a_served_check_is_listed(service: Service, raw: RawServer, tmp_path: Path) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["get_weather", "weather_forecast", "weather_alerts"])
    url = raw.url("/mcp")
    with service(data_dir=tmp_path) as base:
        checked = httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers={"X-Free-Pool": "1"}, timeout=30)
        assert checked.status_code == 200, checked.text
        wait_for(lambda: stored(f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"))
        listed = httpx2.get(f"{base}/v1/servers", params={"q": "forecast"}, timeout=10).json()["servers"]
    assert [(s["url"], s["status"], s["tool_count"], s["auth"]) for s in listed] == [(url, "ok", 3, "open")]
