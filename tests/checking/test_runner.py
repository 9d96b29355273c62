"""Concurrent checks of one URL share one live probe: in one instance, and across instances via Redis."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
import redis

from app.checking.metrics import Metrics
from app.checking.runner import CheckMode, CheckRunner
from app.guard import ResolvedTarget, check_url
from app.guard.shares import LookupShares
from app.probe import ProbeResult
from app.settings import Settings
from app.store import MemoryStore, key
from tests.conftest import Service
from tests.servers.raw import RawServer, Request, send
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


def test_free_checks_are_refused_while_redis_is_down_never_counted_from_zero(
    service: Service, sdk_base: str, tmp_path: Path
) -> None:
    """Regression: an instance that lost Redis counted the free pool from zero in process."""
    own = OwnRedis(tmp_path)
    own.start()
    try:
        with service(redis_url=own.url, free_pool_per_ip=100) as base:
            url = f"{sdk_base}/stateless-json/mcp"
            assert httpx2.get(f"{base}/readyz").json()["status"] == "ready"
            own.stop()
            answers = [httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE) for _ in range(5)]
            assert [(a.status_code, a.json()["reason"]) for a in answers] == [(503, "shared_state_unavailable")] * 5
            ready = httpx2.get(f"{base}/readyz").json()
            assert (ready["status"], ready["store"]["ok"]) == ("degraded", False)
            own.start()
            deadline = time.monotonic() + 30
            while httpx2.get(f"{base}/readyz").json()["status"] != "ready":
                assert time.monotonic() < deadline, "did not recover"
                time.sleep(0.2)
            assert httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE).status_code == 200
            keys = redis.Redis.from_url(own.url).keys("mcp-sonde:v1:pool*")
            assert keys  # the draw after recovery went to Redis again
    finally:
        own.stop()


def _protected(raw: RawServer) -> None:
    """``/mcp?n=N``: a server behind sign-in whose challenge names metadata on ``mN.slow.test``."""

    @raw.route("/mcp")
    def challenge(request: Request, conn: socket.socket) -> None:
        n = parse_qs(urlsplit(request.path).query).get("n", ["0"])[0]
        meta = f"http://m{n}.slow.test:{raw.port}/prm"
        send(conn, 401, {"www-authenticate": f'Bearer resource_metadata="{meta}"'})


def test_metadata_lookups_inside_a_probe_escape_the_client_share_and_the_paid_reserve(
    service: Service, raw: RawServer, slow_names: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Policy (app/guard/shares.py, README step 3): one client holds at most CLIENT_SHARE lookup
    threads, and free work never takes the PAID_RESERVE. But the probe's own lookups (the
    RFC 9728 ``resource_metadata`` host a 401 names, app/probe/reach.py) run outside
    ``lookups_for``: they have no owner and count against the total only. One client's free
    badge misses of its own servers, each naming a metadata host whose name server hangs, take
    every thread, the paid reserve included; another client's check is then 503 resolver_busy."""
    import app.guard.resolver as resolver_module

    shares = LookupShares(total=4, paid_reserve=1, client_share=2)
    monkeypatch.setattr(resolver_module, "_shares", shares)
    _protected(raw)
    with service(dns_timeout_s=0.5, trusted_proxies=["127.0.0.1"], badge_rate_limit="100/minute") as base:
        attacker = {"X-Forwarded-For": "203.0.113.7"}
        for n in range(4):  # sequential, so the attacker never holds more than one owned lookup
            url = f"http://a{n}.fast.test:{raw.port}/mcp?n={n}"
            badge = httpx2.get(f"{base}/badge/mcp", params={"url": url}, headers=attacker, timeout=30)
            assert badge.headers["x-badge-state"] in ("auth", "busy")
        time.sleep(0.5)
        held = shares.in_use
        other = httpx2.post(
            f"{base}/v1/mcp/check",
            json={"url": "http://localhost:9/mcp"},
            headers=FREE | {"X-Forwarded-For": "198.51.100.9"},
            timeout=30,
        )
        slow_names.set()
    assert (other.status_code, other.json().get("status")) == (200, "unreachable"), other.json()
    assert held <= shares.client_share, f"one client's badge misses hold {held} lookup threads"


@pytest.mark.anyio
async def test_a_host_slot_taken_long_before_its_turn_does_not_lapse_while_its_probe_runs() -> None:
    """A host slot's lifetime (``probe budget + 5``) counts from when the slot was taken, but the
    probe may start up to ``queue_budget_s`` later (a job: ``job_turn_wait_s``) when the host's
    start turn is held meanwhile: the slot then lapses while its probe still runs, and one more
    probe of the host than ``host_concurrency`` runs at once."""
    settings = Settings(
        allow_private=True, host_concurrency=1, host_client_concurrency=1, host_start_interval_s=1.0,
        probe_timeout_s=3.0, queue_budget_s=10.0, redis_url=None,
    )  # fmt: skip
    store, host = MemoryStore(), f"mcp-{uuid.uuid4().hex}.example.com"
    running, peak = [0], [0]

    async def probe(target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
        assert mode.pace is not None
        await mode.pace.dialling(host)
        await mode.pace.contacted(host)
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        try:
            await anyio.sleep(settings.probe_timeout_s)  # (a slow server: the whole budget)
        finally:
            running[0] -= 1
        return ProbeResult(url=target.url.url, checked_at=datetime(2026, 1, 1, tzinfo=UTC), status="ok", reason="ok")

    runner = CheckRunner(store, settings, probe, Metrics())
    target = ResolvedTarget(check_url(f"https://{host}/mcp"), (ipaddress.ip_address("192.0.2.1"),))
    other = ResolvedTarget(check_url(f"https://{host}/other"), (ipaddress.ip_address("192.0.2.1"),))
    # Another instance's probe took the host's turn and its first connection hangs (held until contact).
    await store.set(key("host-start", host, "free"), b"another-instance", 6.0)

    async def check(t: ResolvedTarget, client: str, after_s: float) -> None:
        await anyio.sleep(after_s)
        await runner.check(t, CheckMode(), client=client)

    async with anyio.create_task_group() as group:
        group.start_soon(check, target, "a", 0.0)  # takes the slot now, its turn at 6 s, runs to 9 s
        group.start_soon(check, other, "b", 6.5)  # must wait for the slot until 9 s
    assert peak[0] <= settings.host_concurrency, "a probe ran while the host's only slot was taken"
