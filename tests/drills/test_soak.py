"""Drill: 200 concurrent clients for 60 s of mixed checks and badges against local MCP servers.

mcp-sonde runs as ``mcp-sonde serve`` in its own process so its resident memory is measured
alone (``VmRSS``, after a warm-up and at the end). ``MCP_SONDE_SOAK_S`` shortens or lengthens
the run (default 60 s). Marked ``soak``: the default run leaves it out, ``scripts/test -m soak``
runs it (``.ci/run`` does, after the default run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx2
import pytest

from tests.servers.ports import free_port, wait_ready
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.sdk_apps import build_app
from tests.servers.uvicorn_thread import serve

pytestmark = [pytest.mark.soak, pytest.mark.timeout(900)]  # (a drill on a loaded machine takes minutes)

CLIENTS = 200


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (``VmRSS`` of ``/proc/<pid>/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_200_clients_for_60_s_without_errors_and_flat_memory(
    raw: RawServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seconds = float(os.environ.get("MCP_SONDE_SOAK_S", "60"))
    raw.routes["/mcp"] = MiniMcp()
    port = free_port()
    env = os.environ | {
        "MCP_SONDE_RATE_LIMIT": "1000000/minute",
        "MCP_SONDE_BADGE_RATE_LIMIT": "1000000/minute",
        "MCP_SONDE_BADGE_GLOBAL_LIMIT": "1000000/minute",
        "MCP_SONDE_FREE_POOL_SIZE": "10000000",
        "MCP_SONDE_FREE_POOL_PER_IP": "10000000",
        "MCP_SONDE_HOST_CONCURRENCY": "100",
        "MCP_SONDE_HOST_START_INTERVAL_S": "0",
    }
    env.pop("REDIS_URL", None)
    command = [sys.executable, "-m", "app", "serve", "--allow-private", "--port", str(port)]
    errors = (tmp_path / "stderr").open("wb")
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)
    statuses: Counter[str] = Counter()
    try:
        wait_ready(port, process)
        base = f"http://127.0.0.1:{port}"
        with serve(build_app()) as sdk:
            targets = [f"http://127.0.0.1:{sdk}/{mount}/mcp" for mount in ("stateless-json", "stateful-sse")]
            targets += [raw.url(f"/mcp?t={n}") for n in range(8)]

            async def client(n: int, http: httpx2.AsyncClient, until: float) -> None:
                i = n
                while time.monotonic() < until:
                    i += 1
                    url = targets[i % len(targets)]
                    try:
                        if i % 2:
                            answer = await http.post(
                                f"{base}/v1/mcp/check", json={"url": url}, headers={"X-Free-Pool": "1"}
                            )
                            ok = answer.status_code == 200 and answer.json()["status"] == "ok"
                        else:
                            answer = await http.get(f"{base}/badge/mcp?url={quote(url, safe='')}")
                            ok = answer.status_code == 200 and answer.headers["x-badge-state"] == "ok"
                        statuses["ok" if ok else f"{answer.status_code}"] += 1
                    except httpx2.HTTPError as exc:
                        statuses[type(exc).__name__] += 1

            async def phase(duration: float) -> None:
                limits = httpx2.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
                async with httpx2.AsyncClient(timeout=30, limits=limits) as http:
                    until = time.monotonic() + duration
                    async with anyio.create_task_group() as group:
                        for n in range(CLIENTS):
                            group.start_soon(client, n, http, until)

            anyio.run(phase, min(10.0, seconds / 6))  # warm-up: caches, pools, allocator
            start_rss = rss_mb(process.pid)
            started = time.monotonic()
            anyio.run(phase, seconds)
            elapsed = time.monotonic() - started
            end_rss = rss_mb(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=20)
        errors.close()
    err = (tmp_path / "stderr").read_bytes()
    total = sum(statuses.values())
    with capsys.disabled():  # the figures show in every run
        print(
            f"\nsoak: {CLIENTS} clients, {elapsed:.0f} s, {total} answers ({total / elapsed:.0f}/s), "
            f"outcomes {dict(statuses)}; RSS start {start_rss:.1f} MB, end {end_rss:.1f} MB"
        )
    assert set(statuses) == {"ok"}, statuses
    assert total > CLIENTS * 10
    assert end_rss <= start_rss * 1.2 + 10, (start_rss, end_rss)
    assert b"Traceback" not in err
