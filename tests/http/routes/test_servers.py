"""A server's stored history through the API: its summary, daily history, the uptime badge, and
envelopes found in the history after the store has let them go."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2

from app.checking.services import open_history
from app.db import migrate
from app.history.records import server_id_of
from tests.checking.test_recorder import stored, wait_for
from tests.conftest import Service, reason_of
from tests.history.test_store import run as sample_run
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

FREE = {"X-Free-Pool": "1"}


def check(base: str, url: str) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE, timeout=30)


def seed(data_dir: Path, url: str, states: list[str]) -> None:
    """One run a day, ending today, with these statuses (oldest first)."""

    async def write() -> None:
        database = f"sqlite+aiosqlite:///{data_dir / 'history.sqlite3'}"
        await migrate.upgrade(database)
        store = open_history(database)
        today = datetime.now(UTC).replace(hour=0, minute=30, second=0, microsecond=0)
        try:
            for back, status in enumerate(reversed(states)):
                reason = {"ok": "ok", "unreachable": "connection_refused", "auth": "auth_required"}[status]
                await store.record(
                    replace(
                        sample_run(back),
                        url=url,
                        observed_at=today - timedelta(days=back),
                        status=status,
                        reason=reason,
                    )
                )
        finally:
            await store.aclose()

    asyncio.run(write())


def test_summary_and_history_of_a_checked_server(service: Service, raw: RawServer, tmp_path: Path) -> None:
    raw.routes["/mcp"] = MiniMcp()
    url = raw.url("/mcp")
    with service(data_dir=tmp_path) as base:
        first = check(base, url)
        wait_for(lambda: stored(f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"))
        server_id = server_id_of(url)
        summary = httpx2.get(f"{base}/v1/servers/{server_id}", timeout=10)
        history = httpx2.get(f"{base}/v1/servers/{server_id}/history?days=7", timeout=10)
        badge = httpx2.get(f"{base}/badge/mcp/uptime", params={"url": url}, timeout=10)
    assert summary.status_code == 200, summary.text
    body: dict[str, Any] = summary.json()
    assert (body["server_id"], body["url"], body["latest"]["status"]) == (server_id, url, "ok")
    assert body["latest"]["attestation_id"] == first.json()["attestation_id"]
    assert body["uptime"]["7d"] == {"rate": 1.0, "counted_days": 1, "up_days": 1, "down_days": 0}
    assert body["badge"]["markdown"].startswith("[![MCP uptime](")
    assert body["badge"]["markdown"].endswith(f"/servers/{server_id})")  # (the server page, as the page's snippet)
    assert "/v1/" not in body["badge"]["markdown"].rsplit("](", 1)[1]
    days = history.json()["days"]
    assert [(d["state"], d["up"]) for d in days] == [("up", 1)] and history.json()["latency"]["runs"] == 1
    assert badge.status_code == 200 and badge.headers["content-type"].startswith("image/svg+xml")
    assert b"collecting (1d)" in badge.content  # grey while fewer than 7 days are counted


def test_uptime_over_enough_days_is_a_rate(service: Service, tmp_path: Path) -> None:
    url = "https://mcp.example.com/mcp"
    seed(tmp_path, url, ["ok"] * 8 + ["unreachable"] + ["auth"])
    with service(data_dir=tmp_path) as base:
        history = httpx2.get(f"{base}/v1/servers/{server_id_of(url)}/history", timeout=10).json()
        badge = httpx2.get(f"{base}/badge/mcp/uptime", params={"url": url, "window": "30"}, timeout=10)
    assert history["uptime"]["30d"] == {"rate": 0.9, "counted_days": 10, "up_days": 9, "down_days": 1}
    assert [c["to"] for c in history["status_changes"]] == ["unreachable", "auth"]
    assert b"90.0% (30d)" in badge.content


def test_ids_are_checked_and_unknown_servers_are_404(service: Service, tmp_path: Path) -> None:
    with service(data_dir=tmp_path) as base:
        answers = [
            httpx2.get(f"{base}/v1/servers/{server_id}", timeout=10) for server_id in ("0" * 24, "abc", "G" * 24)
        ]
        # regression: int() took "+5" and full-width digits as a window
        windows = [
            httpx2.get(f"{base}/v1/servers/{'0' * 24}/history", params={"days": days}, timeout=10)
            for days in ("0", "+5", "\uff19", " 7", "1e1", "91", "5" * 400)
        ]
    assert [(a.status_code, reason_of(a)) for a in answers] == [(404, "server_not_found")] * 3
    assert [(w.status_code, reason_of(w)) for w in windows] == [(400, "invalid_query")] * len(windows)


def test_a_database_that_does_not_answer_is_503_and_a_grey_badge(service: Service) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with service(database_url=f"postgresql+asyncpg://postgres@127.0.0.1:{port}/none") as base:
        summary = httpx2.get(f"{base}/v1/servers/{'0' * 24}", timeout=10)
        badge = httpx2.get(f"{base}/badge/mcp/uptime", params={"url": "https://mcp.example.com/mcp"}, timeout=10)
    assert (summary.status_code, reason_of(summary)) == (503, "history_unavailable")
    assert badge.status_code == 200 and b"unknown" in badge.content


def test_an_envelope_the_store_let_go_is_found_in_the_history(service: Service, raw: RawServer, tmp_path: Path) -> None:
    """Another instance on the same database has none of the first one's store, yet serves its envelope."""
    raw.routes["/mcp"] = MiniMcp()
    with service(data_dir=tmp_path) as first:
        answer = check(first, raw.url("/mcp"))
        wait_for(lambda: stored(f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"))
    with service(data_dir=tmp_path) as second:
        found = httpx2.get(f"{second}/v1/attestations/{answer.json()['attestation_id']}", timeout=10)
    assert found.status_code == 200 and found.json()["envelope"] == answer.json()["attestation"]


def test_a_scheduled_runs_server_names_its_attestation_not_its_job_id(service: Service, tmp_path: Path) -> None:
    """A job's run is stored under its job id, not its attestation's: the server's latest
    ``attestation_id`` is the attestation's, and ``GET /v1/attestations/{id}`` finds it."""
    url = "https://jobs.example.com/mcp"
    job_run = replace(sample_run(0), run_id="f" * 32, url=url, host="jobs.example.com",
                      observed_at=datetime.now(UTC))  # fmt: skip

    async def write() -> None:
        database = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
        await migrate.upgrade(database)
        store = open_history(database)
        try:
            assert await store.record(job_run)
        finally:
            await store.aclose()

    asyncio.run(write())
    with service(data_dir=tmp_path) as base:
        summary = httpx2.get(f"{base}/v1/servers/{server_id_of(url)}", timeout=10).json()
        envelope = httpx2.get(f"{base}/v1/attestations/{summary['latest']['attestation_id']}", timeout=10)
    assert summary["latest"]["attestation_id"] == job_run.attestation_id != job_run.run_id
    assert envelope.status_code == 200 and envelope.json()["envelope"] == {"payloadType": "x"}
