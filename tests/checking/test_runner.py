"""Concurrent checks of one URL share one live probe: in one instance, and across instances via Redis."""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path

import anyio
import httpx2
import pytest
import redis

from tests.conftest import Service
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import OwnRedis, shared_redis_url

FREE = {"X-Free-Pool": "1"}


def slow_server(raw: RawServer, delay_s: float = 0.5) -> list[float]:
    """A MiniMcp at /mcp whose handshake takes ``delay_s``; returns the list of handshake times."""
    handshakes: list[float] = []
    inner = MiniMcp()

    @raw.route("/mcp")
    def slow(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "server/discover":
            handshakes.append(time.monotonic())
            time.sleep(delay_s)
        inner(request, conn)

    return handshakes


async def burst(bases: list[str], url: str, n: int) -> list[httpx2.Response]:
    responses: list[httpx2.Response] = []
    async with httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=n)) as client:

        async def one(i: int) -> None:
            base = bases[i % len(bases)]
            responses.append(await client.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE))

        async with anyio.create_task_group() as group:
            for i in range(n):
                group.start_soon(one, i)
    return responses


@pytest.fixture
def clean_redis() -> dict[str, str]:
    """The shared test Redis, with a key namespace of this test's own (runs may share the server)."""
    return {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}


def test_one_probe_for_concurrent_checks_in_one_instance(service: Service, raw: RawServer) -> None:
    handshakes = slow_server(raw)
    with service(free_pool_per_ip=100) as base:
        responses = anyio.run(burst, [base], raw.url("/mcp"), 20)
        metrics = httpx2.get(f"{base}/metrics").text
    assert [r.status_code for r in responses] == [200] * 20
    assert len(handshakes) == 1
    assert len({r.json()["checked_at"] for r in responses}) == 1
    assert "mcp_sonde_single_flight_joins_total 19.0" in metrics


def test_one_probe_across_instances_through_redis(
    service: Service, raw: RawServer, clean_redis: dict[str, str]
) -> None:
    handshakes = slow_server(raw, delay_s=2.0)  # all 60 arrive while it runs, even on a loaded machine
    # Three instances share one test process here, so Redis answers can lag behind a busy
    # event loop: a longer Redis timeout keeps the instances on Redis (as separate processes
    # would be) instead of falling back to their own in-process stores.
    settings = {
        **clean_redis,
        "redis_timeout_s": 3.0,
        "free_pool_per_ip": 500,
        "free_pool_size": 500,
        "rate_limit": "1000/minute",
    }
    with service(**settings) as first, service(**settings) as second, service(**settings) as third:
        responses = anyio.run(burst, [first, second, third], raw.url("/mcp"), 60)
    assert [r.status_code for r in responses] == [200] * 60
    seen = [(r.method, r.path, r.message.get("method"), r.headers.get("user-agent")) for r in raw.seen]
    assert len(handshakes) == 1, seen
    assert len({r.json()["checked_at"] for r in responses}) == 1


def test_a_later_check_probes_again(service: Service, raw: RawServer) -> None:
    handshakes = slow_server(raw, delay_s=0.0)
    with service() as base:
        for _ in range(2):
            assert httpx2.post(f"{base}/v1/mcp/check", json={"url": raw.url("/mcp")}, headers=FREE).status_code == 200
    assert len(handshakes) == 2


def test_free_pool_shared_across_instances(service: Service, sdk_base: str, clean_redis: dict[str, str]) -> None:
    settings = {**clean_redis, "redis_timeout_s": 3.0, "free_pool_per_ip": 3, "rate_limit": "1000/minute"}
    with service(**settings) as first, service(**settings) as second:
        codes = [
            httpx2.post(
                f"{base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
            ).status_code
            for base in (first, second, first, second)
        ]
    assert codes == [200, 200, 200, 402]


def test_checks_go_on_while_redis_is_down(service: Service, sdk_base: str, tmp_path: Path) -> None:
    own = OwnRedis(tmp_path)
    own.start()
    try:
        with service(redis_url=own.url, free_pool_per_ip=100) as base:
            url = f"{sdk_base}/stateless-json/mcp"
            assert httpx2.get(f"{base}/readyz").json()["status"] == "ready"
            own.stop()
            codes = [httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE).status_code for _ in range(5)]
            assert codes == [200] * 5
            ready = httpx2.get(f"{base}/readyz").json()
            assert (ready["status"], ready["store"]["ok"]) == ("degraded", False)
            own.start()
            deadline = time.monotonic() + 10
            while httpx2.get(f"{base}/readyz").json()["status"] != "ready":
                assert time.monotonic() < deadline, "did not recover"
                time.sleep(0.2)
            assert httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE).status_code == 200
            keys = redis.Redis.from_url(own.url).keys("mcp-sonde:v1:pool*")
            assert keys  # the draw after recovery went to Redis again
    finally:
        own.stop()
