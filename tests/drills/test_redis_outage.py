"""Drill: Redis stops for a while under a load of checks and badges, then comes back: cached
badges go on, checks are refused with ``shared_state_unavailable`` (nothing drawn), and both
are served from Redis again once it answers."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest

from tests.conftest import Service
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import OwnRedis


def test_no_5xx_while_redis_is_down_and_recovery(
    service: Service, raw: RawServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    redis = OwnRedis(tmp_path)
    redis.start()
    statuses: Counter[tuple[str, int]] = Counter()
    during_outage: Counter[tuple[str, int]] = Counter()
    outage = threading.Event()
    stop = threading.Event()
    lock = threading.Lock()

    def load(base: str, n: int) -> None:
        with httpx2.Client(timeout=10) as client:
            i = 0
            while not stop.is_set():
                i += 1
                if i % 2:
                    url = raw.url(f"/mcp?c={n}-{i % 7}")
                    answer = client.post(f"{base}/v1/mcp/check", json={"url": url}, headers={"X-Free-Pool": "1"})
                    kind = "check" if answer.status_code < 500 else answer.json()["reason"]
                else:
                    answer = client.get(f"{base}/badge/mcp?url={quote(raw.url(f'/mcp?b={i % 11}'), safe='')}")
                    kind = "badge"
                with lock:
                    statuses[kind, answer.status_code] += 1
                    if outage.is_set():
                        during_outage[kind, answer.status_code] += 1

    try:
        with service(
            redis_url=redis.url,
            rate_limit="100000/minute",
            badge_rate_limit="100000/minute",
            badge_global_limit="100000/minute",
            free_pool_size=100_000,
            free_pool_per_ip=100_000,
            host_concurrency=50,
            host_client_concurrency=50,
        ) as base:
            workers = [threading.Thread(target=load, args=(base, n)) for n in range(8)]
            for worker in workers:
                worker.start()
            time.sleep(2)
            redis.stop()
            outage.set()
            time.sleep(4)
            outage.clear()
            redis.start()
            deadline = time.monotonic() + 30  # (back about a second after Redis answers)
            while httpx2.get(f"{base}/readyz").json()["status"] != "ready" and time.monotonic() < deadline:
                time.sleep(0.2)
            stop.set()
            for worker in workers:
                worker.join(timeout=20)
            ready = httpx2.get(f"{base}/readyz").json()
            after = httpx2.post(f"{base}/v1/mcp/check", json={"url": raw.url("/mcp")}, headers={"X-Free-Pool": "1"})
    finally:
        stop.set()
        redis.stop()
    with capsys.disabled():  # the figures show in every run
        print(f"answers: {dict(statuses)}; during the outage: {dict(during_outage)}")
    assert {kind for kind, status in statuses if status >= 500} <= {"shared_state_unavailable"}, statuses
    assert {status for _kind, status in statuses} <= {200, 503}, statuses
    assert during_outage["badge", 200] >= 10  # badges kept coming while Redis was down
    assert during_outage["shared_state_unavailable", 503] >= 1  # checks were refused, not counted afresh
    assert ready["status"] == "ready" and ready["store"] == {
        "backend": "redis",
        "ok": True,
        "down_for_s": None,
        "instances": 1,
    }
    assert after.status_code == 200 and after.json()["status"] == "ok"
