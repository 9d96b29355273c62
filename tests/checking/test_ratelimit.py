"""Per-client request limits, client IPs behind proxies, and the polite pace per target host."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from app.checking.ratelimit import RateLimiter
from app.store import RedisStore
from app.store.health import Health
from tests.conftest import Service
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import OwnRedis
from tests.store.waiting import until

FREE = {"X-Free-Pool": "1"}
BODY = {"url": "https://mcp.example.com/{refused}"}  # refused by the guard: cheap, and limits come first


def test_client_rate_limit(service: Service) -> None:
    with service(rate_limit="3/minute") as base:
        responses = [httpx2.post(f"{base}/v1/mcp/check", json=BODY) for _ in range(4)]
    assert [r.status_code for r in responses] == [422, 422, 422, 429]
    limited = responses[-1]
    assert limited.json()["reason"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert limited.headers["x-ratelimit-limit"] == "3"
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert [r.headers["x-ratelimit-remaining"] for r in responses[:3]] == ["2", "1", "0"]


def test_ietf_ratelimit_fields_beside_the_x_headers(service: Service) -> None:
    """draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy (q per w seconds) and RateLimit (r left, t to reset)."""
    import re

    with service(rate_limit="3/minute") as base:
        responses = [httpx2.post(f"{base}/v1/mcp/check", json=BODY) for _ in range(4)]
    assert {r.headers["ratelimit-policy"] for r in responses} == {'"check";q=3;w=60'}
    fields = [re.fullmatch(r'"check";r=(\d+);t=(\d+)', r.headers["ratelimit"]) for r in responses]
    assert all(fields), [r.headers["ratelimit"] for r in responses]
    assert [int(f[1]) for f in fields if f] == [2, 1, 0, 0]
    for field, response in zip(fields, responses, strict=True):
        assert field and 0 <= int(field[2]) <= 60 and field[2] == response.headers["x-ratelimit-reset"]


def test_forwarded_for_is_ignored_from_untrusted_peers(service: Service) -> None:
    with service(rate_limit="2/minute") as base:
        codes = [
            httpx2.post(f"{base}/v1/mcp/check", json=BODY, headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
            for i in range(3)
        ]
    assert codes == [422, 422, 429]  # every request counts against the socket peer


def test_forwarded_for_from_a_trusted_proxy(service: Service) -> None:
    with service(rate_limit="2/minute", trusted_proxies=["127.0.0.0/8"]) as base:

        def post(chain: str) -> int:
            return httpx2.post(f"{base}/v1/mcp/check", json=BODY, headers={"X-Forwarded-For": chain}).status_code

        # The right-most untrusted entry is the client; entries left of it are client-supplied.
        assert [post("6.6.6.6, 203.0.113.7") for _ in range(3)] == [422, 422, 429]
        assert post("203.0.113.8") == 422
        assert post("7.7.7.7, 203.0.113.8, 127.0.0.1") == 422  # a trusted hop is skipped
        assert post("203.0.113.8") == 429


def test_forwarded_for_entries_with_a_port_or_no_address_at_all(service: Service) -> None:
    """``1.2.3.4:5678`` is the address 1.2.3.4 (as some proxies write it), not a key of its own;
    garbage falls back to the proxy's peer instead of becoming a fresh rate-limit key per value."""
    with service(rate_limit="2/minute", trusted_proxies=["127.0.0.0/8"]) as base:

        def post(chain: str) -> int:
            return httpx2.post(f"{base}/v1/mcp/check", json=BODY, headers={"X-Forwarded-For": chain}).status_code

        assert [post(f"203.0.113.9:{port}") for port in (5678, 5679, 5680)] == [422, 422, 429]
        assert [post(f"[2001:db8::{n}]:443") for n in (1, 2, 3)] == [422, 422, 429]  # one /64
        assert [post(f"not-an-ip-{n}") for n in range(3)] == [422, 422, 429]  # all the peer's


def test_at_most_two_probes_per_host_at_once(service: Service, raw: RawServer) -> None:
    running = 0
    peak = 0
    lock = threading.Lock()
    inner = MiniMcp()

    @raw.route("/mcp")
    def slow(request: Request, conn: socket.socket) -> None:
        nonlocal running, peak
        if request.message.get("method") == "server/discover":
            with lock:
                running += 1
                peak = max(peak, running)
            time.sleep(0.4)
            with lock:
                running -= 1
        inner(request, conn)

    async def burst(base: str) -> list[int]:
        async with httpx2.AsyncClient(timeout=30) as client:
            responses: list[int] = []

            async def one(i: int) -> None:
                response = await client.post(f"{base}/v1/mcp/check", json={"url": raw.url(f"/mcp?n={i}")}, headers=FREE)
                responses.append(response.status_code)

            async with anyio.create_task_group() as group:
                for i in range(6):
                    group.start_soon(one, i)
            return responses

    with service(host_concurrency=2, host_client_concurrency=2, queue_budget_s=10) as base:
        codes = anyio.run(burst, base)
    assert codes == [200] * 6
    assert peak == 2


def test_new_probes_per_host_start_at_most_once_a_second(service: Service, raw: RawServer) -> None:
    starts: list[float] = []
    inner = MiniMcp()

    @raw.route("/mcp")
    def record(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "server/discover":
            starts.append(time.monotonic())
        inner(request, conn)

    async def burst(base: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as client:

            async def one(i: int) -> None:
                await client.post(f"{base}/v1/mcp/check", json={"url": raw.url(f"/mcp?n={i}")}, headers=FREE)

            async with anyio.create_task_group() as group:
                for i in range(3):
                    group.start_soon(one, i)

    with service(host_start_interval_s=1.0, host_concurrency=5, host_client_concurrency=5, queue_budget_s=10) as base:
        anyio.run(burst, base)
    starts.sort()
    assert len(starts) == 3
    assert all(later - earlier >= 0.95 for earlier, later in itertools.pairwise(starts))


@pytest.mark.parametrize("header", ["X-Forwarded-For"])
def test_access_log_has_no_query_strings(service: Service, caplog: pytest.LogCaptureFixture, header: str) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="mcp_sonde.access")
    with service() as base:
        httpx2.post(f"{base}/v1/mcp/check?api_key=SECRET", json={"url": "https://x.example.com/?token=SECRET2"})
        httpx2.get(f"{base}/healthz?token=SECRET3")
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_sonde.access"]
    assert len(lines) == 2
    assert all("SECRET" not in line and "?" not in line for line in lines)
    assert '"path":"/v1/mcp/check"' in lines[0] and '"status":' in lines[0]


@pytest.mark.anyio
async def test_while_redis_is_down_an_instance_counts_only_its_share(tmp_path: Path) -> None:
    """Regression: an instance that lost Redis counted every limit from zero on its own."""
    redis = OwnRedis(tmp_path)
    redis.start()

    async def three_instances(instance: str, keep_s: float) -> int:
        return 3

    pinged = RedisStore(redis.url)
    health = Health(pinged.ping, three_instances)
    await health.beat()
    limiter = RateLimiter("30/minute", "t-share", redis.url, 0.5, health=health)
    try:
        assert (await limiter.hit("client")).limit == 30  # shared: the whole limit, counted in Redis
        redis.stop()
        health.failed()
        await until(lambda: not health.up)
        allowed = [(await limiter.hit("client")).allowed for _ in range(30)]
        assert allowed.count(True) == 10  # 30 / 3 instances, counted in process
        assert (await limiter.hit("client")).limit == 10
    finally:
        await health.aclose()
        await limiter.aclose()
        await pinged.aclose()
        redis.stop()
