"""Regressions of slots shared by probes and further hosts, and of metadata our own limits kept us
from: a Redis slot set outlives its longest slot, and a lookup we refused is no verdict on the server.

1. The Redis slot script PEXPIREs a host's whole slot set to the TTL of the *latest* caller, so a
   slot taken with a shorter lifetime (a further host's slot: probe budget + 7 s; a light probe's)
   cuts short every longer slot in the set: the long probe's slot vanishes while it runs and one
   probe too many is let in (host_concurrency exceeded).
2. Two servers naming each other's host for their protected resource metadata, host_concurrency=1:
   each probe holds its own host's only slot while waiting for the other's, both lookups are
   refused by our own pacing (target_busy), and both results *fail* auth_metadata
   (metadata_missing): a verdict on the server that the prober caused.
"""

from __future__ import annotations

import ipaddress
import uuid
from datetime import UTC, datetime

import anyio
import pytest

from app.checking.metrics import Metrics
from app.checking.runner import CheckMode, CheckRunner
from app.guard import ResolvedTarget, check_url
from app.probe import ProbeResult
from app.settings import Settings
from app.store import MemoryStore, RedisStore, key
from app.suite.full import full_check
from tests.servers.raw import RawServer, challenging, send_json
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio
NAMESPACE = f"test-slots-{uuid.uuid4().hex[:8]}:"


async def test_a_shorter_slot_does_not_cut_short_a_longer_one_in_redis() -> None:
    store = RedisStore(shared_redis_url(), timeout_s=5.0, namespace=NAMESPACE)
    name = key("slots", uuid.uuid4().hex)
    try:
        assert await store.acquire_slot(name, "long", 2, 30.0)
        assert await store.acquire_slot(name, "short", 2, 0.3)
        await store.release_slot(name, "short")
        await anyio.sleep(0.6)
        assert await store.acquire_slot(name, "third", 2, 30.0)
        assert not await store.acquire_slot(name, "fourth", 2, 30.0), "the long holder's slot was dropped"
    finally:
        await store.client.delete(NAMESPACE + name)
        await store.aclose()


async def test_a_further_hosts_slot_does_not_drop_the_slot_of_a_probe_running_there() -> None:
    settings = Settings(
        allow_private=True, host_concurrency=2, host_client_concurrency=1, host_start_interval_s=0.0,
        probe_timeout_s=9.0, light_probe_timeout_s=0.2, queue_budget_s=5.0, redis_url=None,
    )  # fmt: skip
    store = RedisStore(shared_redis_url(), timeout_s=5.0, namespace=NAMESPACE)
    y = f"y-{uuid.uuid4().hex}.example.com"
    running, peak = [0], [0]

    async def probe(target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
        assert mode.pace is not None
        if target.url.host == y:  # a probe of Y: a slow server, the whole budget
            await mode.pace.dialling(y)
            await mode.pace.contacted(y)
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            try:
                await anyio.sleep(settings.probe_timeout_s - 0.5)
            finally:
                running[0] -= 1
        else:  # a light probe of X whose 401 names metadata on Y
            await mode.pace.dialling(y)
            await mode.pace.contacted(y)
        return ProbeResult(url=target.url.url, checked_at=datetime(2026, 1, 1, tzinfo=UTC), status="ok", reason="ok")

    runner = CheckRunner(store, settings, probe, Metrics())

    def target(host: str, path: str) -> ResolvedTarget:
        return ResolvedTarget(check_url(f"https://{host}{path}"), (ipaddress.ip_address("192.0.2.1"),))

    async def check(t: ResolvedTarget, client: str, after_s: float, light: bool = False) -> None:
        await anyio.sleep(after_s)
        await runner.check(t, CheckMode(light=light), client=client)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(check, target(y, "/one"), "a", 0.0)
            group.start_soon(check, target(f"x-{uuid.uuid4().hex}.example.com", "/"), "b", 0.2, True)
            # the further slot lasted 0.2 + 2 + 5 = 7.2 s; /one runs until 8.5 s
            group.start_soon(check, target(y, "/two"), "c", 7.7)
            group.start_soon(check, target(y, "/three"), "d", 7.7)
        assert peak[0] <= settings.host_concurrency, f"{peak[0]} probes of one host ran at once"
    finally:
        await store.aclose()


async def test_metadata_our_own_pace_refused_does_not_fail_the_servers_auth_check() -> None:
    settings = Settings(
        allow_private=True, host_concurrency=1, host_client_concurrency=1, host_start_interval_s=0.5,
        queue_budget_s=10.0, connect_timeout_s=1.0, redis_url=None,
    )  # fmt: skip
    a, b = RawServer(), RawServer()
    a.start()
    b.start()
    try:
        # a at 127.0.0.1, b at localhost (two hosts for the pacing, one loopback server each)
        a_url, b_url = a.url("/mcp"), b.url("/mcp", host="localhost")
        a.routes["/mcp"] = challenging(b.url("/meta", host="localhost"))
        b.routes["/mcp"] = challenging(a.url("/meta"))
        b.routes["/meta"] = lambda _r, c: send_json(
            c, 200, {"resource": a_url, "authorization_servers": ["https://as.example.com"]}
        )
        a.routes["/meta"] = lambda _r, c: send_json(
            c, 200, {"resource": b_url, "authorization_servers": ["https://as.example.com"]}
        )

        async def probe(target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
            return await full_check(target.url.url, settings=settings, resolved=target, pace=mode.pace)

        runner = CheckRunner(MemoryStore(), settings, probe, Metrics())
        verdicts: dict[str, tuple[str, str | None, list[str | None]]] = {}

        async def check(name: str, url: str) -> None:
            result = await runner.check(
                ResolvedTarget(check_url(url, allow_private=True), (ipaddress.ip_address("127.0.0.1"),)),
                CheckMode(), client=name,
            )  # fmt: skip
            verdict = next(v for v in result.checks if v.id == "auth_metadata")  # type: ignore[attr-defined]
            assert result.auth is not None
            verdicts[name] = (verdict.state, verdict.reason, [lookup.refused for lookup in result.auth.lookups])

        async with anyio.create_task_group() as group:
            group.start_soon(check, "a", a_url)
            group.start_soon(check, "b", b_url)
        for name, (state, reason, refused) in verdicts.items():
            if "target_busy" in refused:
                assert state != "failed", f"{name}: auth_metadata {state}/{reason} though we never fetched the metadata"
    finally:
        a.stop()
        b.stop()
