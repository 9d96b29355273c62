"""Drill: nothing served is lost. 1,000 free checks of distinct URLs are answered by a real
``serve``; it is stopped (SIGTERM) or killed (SIGKILL) at once, started again on the same data
directory, and the history then holds exactly those 1,000 runs, each once (the outbox,
:mod:`app.checking.outbox`, drained at the start). Marked ``soak`` (``scripts/test -m soak``)."""

from __future__ import annotations

import signal
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from tests.jobs.conftest import runs_by_id
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.sonde import sonde

pytestmark = [pytest.mark.soak, pytest.mark.timeout(900)]

CHECKS = 1000
CLIENTS = 16
#: Seconds the restarted service has to store what the outbox held (it takes a few).
STORE_BOUND_S = 180


def env_of(data: Path) -> dict[str, str]:
    return {
        "MCP_SONDE_DATA_DIR": str(data),
        "MCP_SONDE_FREE_POOL_SIZE": str(CHECKS * 10),
        "MCP_SONDE_FREE_POOL_PER_IP": str(CHECKS * 10),
        "MCP_SONDE_RATE_LIMIT": "100000/minute",
        "MCP_SONDE_HOST_CONCURRENCY": "100",
        "MCP_SONDE_HOST_CLIENT_CONCURRENCY": "100",
        "MCP_SONDE_HOST_START_INTERVAL_S": "0",
        "MCP_SONDE_LOG_LEVEL": "WARNING",
    }


def stored(data: Path) -> Counter[str]:
    """The run ids in the history database of ``data``, with how often each is there."""
    return runs_by_id(f"sqlite+aiosqlite:///{data / 'history.sqlite3'}")


def check_all(base: str, urls: list[str]) -> list[str]:
    """Check every URL (``CLIENTS`` at a time); the attestation ids the answers name."""
    with httpx2.Client(base_url=base, timeout=120) as client:

        def one(url: str) -> str:
            response = client.post("/v1/mcp/check", json={"url": url}, headers={"X-Free-Pool": "1"})
            assert response.status_code == 200, (response.status_code, response.text[:300])
            return str(response.json()["attestation_id"])  # (a run is stored under its attestation id)

        with ThreadPoolExecutor(CLIENTS) as pool:
            return list(pool.map(one, urls))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_every_check_answered_is_in_the_history_after_a_stop_and_a_restart(
    raw: RawServer, tmp_path: Path, stop: signal.Signals
) -> None:
    mcp = MiniMcp()
    urls = []
    for i in range(CHECKS):
        raw.routes[f"/mcp{i}"] = mcp
        urls.append(raw.url(f"/mcp{i}"))
    data = tmp_path / "data"
    started = time.monotonic()
    with sonde("--allow-private", env=env_of(data)) as served:
        answered = check_all(served.base, urls)
        served.process.send_signal(stop)  # (at once: the last answers' runs may still be queued)
    took = time.monotonic() - started
    assert len(set(answered)) == CHECKS
    before = stored(data)
    with sonde("--allow-private", env=env_of(data)) as again:
        deadline = time.monotonic() + STORE_BOUND_S
        while len(after := stored(data)) < CHECKS and time.monotonic() < deadline:
            time.sleep(0.5)
        assert httpx2.get(f"{again.base}/healthz", timeout=10).status_code == 200
    print(
        f"\noutbox drill ({stop.name}): {CHECKS} checks answered in {took:.1f} s; "
        f"stored at the stop {len(before)}, after the restart {len(after)}"
    )
    assert set(after) == set(answered), f"lost {len(set(answered) - set(after))}"
    assert max(after.values()) == 1
