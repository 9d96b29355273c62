"""Served checks reach the history: stored once with their tool set and envelope, never a
credentialed one, and a database that is away never fails a check (the run waits and is stored
when it comes back)."""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from pathlib import Path
from typing import Any

import httpx2
from sqlalchemy import select

from app.checking.services import open_history
from app.db.tables.history import runs, servers, toolsets
from app.history.records import server_id_of
from tests.conftest import Service
from tests.history.conftest import relayed_postgres
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

FREE = {"X-Free-Pool": "1"}


def check(base: str, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json=body, headers=FREE, timeout=30)


def stored(url: str) -> list[Any]:
    async def read() -> list[Any]:
        store = open_history(url)
        try:
            async with store.engine.connect() as db:
                query = select(runs.c.run_id, runs.c.status, servers.c.url, toolsets.c.tool_count, runs.c.envelope)
                joined = runs.join(servers, servers.c.id == runs.c.server).outerjoin(
                    toolsets, toolsets.c.id == runs.c.toolset
                )
                return list((await db.execute(query.select_from(joined).order_by(runs.c.id))).all())
        finally:
            await store.aclose()

    return asyncio.run(read())


def wait_for(predicate: Any, within_s: float = 10.0) -> Any:
    deadline = time.monotonic() + within_s
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def test_a_served_check_is_stored_once_with_its_tool_set(service: Service, raw: RawServer, tmp_path: Path) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta", "gamma"])
    url = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    with service(data_dir=tmp_path) as base:
        answer = check(base, {"url": raw.url("/mcp")})
        assert answer.status_code == 200
        rows = wait_for(lambda: stored(url))
        ready = httpx2.get(f"{base}/readyz", timeout=10).json()
    (row,) = rows
    assert row.run_id == answer.json()["attestation_id"] and row.status == "ok" and row.tool_count == 3
    assert json.loads(zlib.decompress(row.envelope)) == answer.json()["attestation"]
    assert ready["history"] == {"ok": True, "queued": 0}
    assert server_id_of(raw.url("/mcp")) == server_id_of(answer.json()["url"])


def test_a_credentialed_check_is_never_stored(service: Service, raw: RawServer, tmp_path: Path) -> None:
    raw.routes["/mcp"] = MiniMcp()
    url = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    with service(data_dir=tmp_path) as base:
        credentialed = check(base, {"url": raw.url("/mcp"), "headers": {"Authorization": "Bearer s3cr3t-value"}})
        anonymous = check(base, {"url": raw.url("/mcp")})
        rows = wait_for(lambda: stored(url))
    assert credentialed.status_code == anonymous.status_code == 200
    assert [row.run_id for row in rows] == [anonymous.json()["attestation_id"]]
    assert all(b"s3cr3t-value" not in zlib.decompress(row.envelope) for row in rows)


def test_a_check_of_a_url_with_a_query_string_is_never_stored(service: Service, raw: RawServer, tmp_path: Path) -> None:
    """Regression: a run of ``...?api_key=...`` was kept under the URL without its query: its
    result held the key, anyone knowing the URL could read the tenant's tools as a baseline, and
    any caller could write the public URL's uptime through a query of their own."""
    raw.routes["/mcp"] = MiniMcp(tools=["tenant_payroll_export"])
    url = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    with service(data_dir=tmp_path) as base:
        private = check(base, {"url": raw.url("/mcp") + "?api_key=SECRET1"})
        public = check(base, {"url": raw.url("/mcp")})
        rows = wait_for(lambda: stored(url))
        by_run = check(base, {"url": raw.url("/mcp"), "baseline": {"run_id": private.json()["attestation_id"]}})
    assert private.status_code == public.status_code == 200
    assert [row.run_id for row in rows] == [public.json()["attestation_id"]]
    # (the file's blobs are compressed: a search of its bytes could not find the key)
    assert all(b"SECRET1" not in zlib.decompress(row.envelope) and "SECRET1" not in row.url for row in rows)
    assert by_run.status_code == 404  # the private run is no baseline for anyone


def test_a_database_that_is_away_never_fails_a_check(service: Service, raw: RawServer) -> None:
    """The database goes away: checks are served, /readyz says degraded with the queue; it comes
    back: the waiting runs are stored, once each."""
    raw.routes["/mcp"] = MiniMcp()
    with relayed_postgres() as (database, url):  # the local PostgreSQL server, behind the relay
        database.cut()  # away before the service starts: it starts all the same
        with service(database_url=url) as base:
            answers = [check(base, {"url": raw.url("/mcp")}) for _ in range(3)]
            assert [a.status_code for a in answers] == [200, 200, 200]
            degraded = wait_for(lambda: not httpx2.get(f"{base}/readyz", timeout=10).json()["history"]["ok"])
            ready = httpx2.get(f"{base}/readyz", timeout=10).json()
            database.open = True
            rows = wait_for(lambda: len(stored(url)) == 3 and stored(url), within_s=40)
            metrics = httpx2.get(f"{base}/metrics", timeout=10).text
    assert degraded and ready["status"] == "degraded" and ready["history"]["queued"] >= 1
    assert sorted(row.run_id for row in rows) == sorted(a.json()["attestation_id"] for a in answers)
    assert 'mcp_sonde_history_runs_total{outcome="stored"} 3.0' in metrics


def test_readyz_asks_the_database_itself(service: Service) -> None:
    """Regression: /readyz said the history was ok until a run failed to be written; it pings."""
    with relayed_postgres() as (database, url), service(database_url=url) as base:
        before = httpx2.get(f"{base}/readyz", timeout=10).json()
        database.cut()
        during = httpx2.get(f"{base}/readyz", timeout=10).json()
        database.open = True
        after = wait_for(lambda: httpx2.get(f"{base}/readyz", timeout=10).json()["history"]["ok"])
    assert before["history"] == {"ok": True, "queued": 0}
    assert during["history"] == {"ok": False, "queued": 0} and during["status"] == "degraded"
    assert after


def test_a_full_outbox_refuses_the_check_rather_than_serve_one_it_cannot_keep(
    service: Service, raw: RawServer, monkeypatch: Any
) -> None:
    """Regression: with the outbox full, a check was served (and charged) and its run dropped."""
    from app.checking import outbox

    raw.routes["/mcp"] = raw.routes["/other"] = MiniMcp()
    with service() as base:
        kept = check(base, {"url": raw.url("/mcp")})
        monkeypatch.setattr(outbox, "MAX_RUNS", 0)  # (full from now on)
        refused = check(base, {"url": raw.url("/other")})
        private = check(base, {"url": raw.url("/mcp") + "?key=1"})  # never kept: no room needed
        pool = httpx2.get(f"{base}/metrics", timeout=10).text
    assert kept.status_code == 200 and private.status_code == 200
    assert (refused.status_code, refused.json()["reason"]) == (503, "history_unavailable")
    assert 'mcp_sonde_free_pool_draws_total{outcome="returned"} 1.0' in pool


def test_a_database_shutting_down_is_transient_and_its_runs_are_retried_not_dropped() -> None:
    """Regression: a run written while PostgreSQL stopped (57P01 admin_shutdown) was dropped as the run's fault."""
    from sqlalchemy.exc import DBAPIError

    from app.checking.recorder import transient

    def failure(state: str) -> DBAPIError:
        orig = type("Orig", (Exception,), {"sqlstate": state})()
        return DBAPIError("INSERT", {}, orig, connection_invalidated=False)

    assert [transient(failure(state)) for state in ("57P01", "57P02", "57P03", "08006", "40001")] == [True] * 5
    assert [transient(failure(state)) for state in ("23505", "22P02")] == [False, False]  # the data's fault
