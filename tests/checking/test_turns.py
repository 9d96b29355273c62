"""A host's start turns (:mod:`app.checking.turns`): held under the probe's token up to the host's
first sight of it, on the in-process store and a real Redis; measured at a real server."""

from __future__ import annotations

import ipaddress
import itertools
import socket
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest

from app.checking.metrics import Metrics
from app.checking.runner import CheckMode, CheckRunner, TargetBusy
from app.checking.turns import REACH_SLACK_S, START_SLACK_S, TURN_WAIT_S, StartTurns, slots_key
from app.guard import ResolvedTarget, check_url, resolve_target
from app.guard.resolver import SystemResolver
from app.probe import ProbeResult
from app.probe.runner import observe
from app.settings import Settings
from app.store import MemoryStore, RedisStore, Store, key
from tests.servers.raw import RawServer, Request, challenging
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio
INTERVAL_S = 1.0
NAMESPACE = f"test-slots-{uuid.uuid4().hex[:8]}:"


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    backend: Store = MemoryStore() if request.param == "memory" else RedisStore(shared_redis_url(), timeout_s=5.0)
    try:
        yield backend
    finally:
        await backend.aclose()


async def test_a_turn_is_held_under_its_token(store: Store) -> None:
    turns, host = StartTurns(store, INTERVAL_S, reach_s=0.0), f"h-{uuid.uuid4().hex}.example"
    assert await turns.take(host, "free", b"a", time.monotonic())
    assert not await turns.take(host, "free", b"b", time.monotonic() + 0.2)  # another probe's turn: waited out
    assert await turns.take(host, "free", b"a", time.monotonic())  # its own (a redelivery): taken at once
    assert await turns.take(host, "paid", b"b", time.monotonic())  # the other class has its own turns
    assert not await turns.hold(host, "free", b"b", contacted=True)
    assert await turns.hold(host, "free", b"a", contacted=True)
    await anyio.sleep(INTERVAL_S + START_SLACK_S + 0.1)
    assert not await turns.hold(host, "free", b"a", contacted=True)  # lapsed: a hold never takes a turn anew


async def test_a_turn_is_held_for_the_connect_budget_until_contact_then_for_the_interval(store: Store) -> None:
    turns, host = StartTurns(store, 0.5, reach_s=1.0), f"h-{uuid.uuid4().hex}.example"
    gate = key("host-start", host, "free")
    assert await turns.take(host, "free", b"a", time.monotonic())
    await anyio.sleep(0.5 + START_SLACK_S + 0.3)
    assert await store.get(gate) == b"a"  # not seen by the host yet: still held past the interval
    assert await turns.hold(host, "free", b"a", contacted=True)
    await anyio.sleep(0.5 + START_SLACK_S + 0.2)
    assert await store.get(gate) is None  # seen: held for the interval from then, no longer


async def test_an_unused_turn_is_given_back_and_only_by_its_holder(store: Store) -> None:
    turns, host = StartTurns(store, INTERVAL_S, reach_s=5.0), f"h-{uuid.uuid4().hex}.example"
    assert await turns.take(host, "free", b"a", time.monotonic())
    await turns.give_back(host, "free", b"b")
    assert not await turns.take(host, "free", b"b", time.monotonic())
    await turns.give_back(host, "free", b"a")
    assert await turns.take(host, "free", b"b", time.monotonic())


async def test_no_interval_means_no_gate(store: Store) -> None:
    turns, host = StartTurns(store, 0.0, reach_s=5.0), f"h-{uuid.uuid4().hex}.example"
    assert await turns.take(host, "free", b"a", time.monotonic())
    assert await turns.take(host, "free", b"b", time.monotonic())
    assert await turns.hold(host, "free", b"b", contacted=False)


def _settings() -> Settings:
    return Settings(
        allow_private=True,
        host_start_interval_s=INTERVAL_S,
        host_concurrency=5,
        host_client_concurrency=5,
        queue_budget_s=10.0,
        connect_timeout_s=0.4,
        redis_url=None,
    )


#: Past this, a probe that took its host's turn and has not dialled yet has lost it.
LAPSED_S = INTERVAL_S + START_SLACK_S + 0.4 + REACH_SLACK_S + 0.4


def _runner(settings: Settings, store: Store, late: set[str], lag_s: float) -> CheckRunner:
    """A runner whose probe of a path in ``late`` is held ``lag_s`` between its turn and its first
    contact (an event loop busy elsewhere), then probes for real with the runner's pace."""

    async def probe(target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
        if target.url.target in late:
            await anyio.sleep(lag_s)
        observation = await observe(target.url.url, light=True, settings=settings, resolved=target, pace=mode.pace)
        return observation.result

    return CheckRunner(store, settings, probe, Metrics())


async def _target(url: str) -> ResolvedTarget:
    return await resolve_target(check_url(url, allow_private=True), resolver=SystemResolver(2.0), allow_private=True)


def _first_requests(raw: RawServer) -> dict[str, float]:
    """Answers MCP on ``/late`` and ``/prompt`` and notes when each path's first request arrived."""
    arrived: dict[str, float] = {}
    inner = MiniMcp()

    def record(request: Request, conn: socket.socket) -> bool | None:
        arrived.setdefault(request.path, time.monotonic())
        return inner(request, conn)

    raw.routes["/late"] = raw.routes["/prompt"] = record
    return arrived


async def test_a_probe_whose_turn_lapsed_before_its_first_contact_waits_for_a_new_one(raw: RawServer) -> None:
    """The sweep drill's case (two probes of a host 0.08 s apart at the server): a probe took its
    turn, its first request left later than the turn lasted, and another probe started meanwhile."""
    settings, store = _settings(), MemoryStore()
    arrived = _first_requests(raw)
    runner = _runner(settings, store, {"/late"}, lag_s=LAPSED_S)
    late, prompt = await _target(raw.url("/late")), await _target(raw.url("/prompt"))
    statuses: dict[str, str] = {}

    async def check(name: str, target: ResolvedTarget, after_s: float) -> None:
        await anyio.sleep(after_s)
        result = await runner.check(target, CheckMode(light=True), client=name)
        statuses[name] = result.status

    async with anyio.create_task_group() as group:
        group.start_soon(check, "late", late, 0.0)
        group.start_soon(check, "prompt", prompt, 0.05)
    assert statuses == {"late": "ok", "prompt": "ok"}
    assert arrived["/prompt"] < arrived["/late"]  # the prompt one took the lapsed turn
    assert arrived["/late"] - arrived["/prompt"] >= INTERVAL_S  # and the late one waited for the next


async def test_a_probe_whose_turn_does_not_come_back_is_target_busy_and_contacts_nothing(raw: RawServer) -> None:
    settings, store = _settings(), MemoryStore()
    arrived = _first_requests(raw)
    runner = _runner(settings, store, {"/late"}, lag_s=LAPSED_S)
    late = await _target(raw.url("/late"))

    async def squat() -> None:  # another instance's probes take the host's turn the moment it lapses
        await anyio.sleep(0.2)  # (after the late probe took it)
        while True:
            await store.set_nx(key("host-start", "127.0.0.1", "free"), b"other", 60)
            await anyio.sleep(0.01)

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        group.start_soon(squat)
        with pytest.raises(TargetBusy) as caught:
            await runner.check(late, CheckMode(light=True), client="late")
        group.cancel_scope.cancel()
    assert caught.value.reason == "target_busy"
    assert arrived == {} and raw.connections == 0  # the host never saw it
    assert time.monotonic() - started >= LAPSED_S + TURN_WAIT_S  # (it waited, bounded)


async def test_a_further_host_of_a_served_check_waits_for_its_turn_at_its_first_connection(raw: RawServer) -> None:
    """A 401 naming protected resource metadata on another host: that host is paced as a probed one."""
    settings, store = _settings(), MemoryStore()
    hint = raw.url("/meta", host="localhost")

    raw.routes["/mcp"] = challenging(hint)
    runner = _runner(settings, store, set(), 0.0)
    await store.set(key("host-start", "localhost", "free"), b"other", 60)  # (another probe just started there)
    result = await runner.check(await _target(raw.url("/mcp")), CheckMode(light=True), client="c")
    assert result.status == "auth" and result.auth is not None
    assert result.auth.lookups[0].refused == "target_busy"
    assert raw.requests_to("/meta") == [], "the further host was contacted outside its turn"


async def test_a_further_host_is_held_to_its_probe_slots_too(raw: RawServer) -> None:
    """Its start turn is free, but every one of its slots is another probe's: not contacted."""
    settings, store = _settings(), MemoryStore()
    hint = raw.url("/meta", host="localhost")

    raw.routes["/mcp"] = challenging(hint)
    for other in range(settings.host_concurrency):
        assert await store.acquire_slot(slots_key("localhost", "free"), f"other-{other}", settings.host_concurrency, 60)
    runner = _runner(settings, store, set(), 0.0)
    result = await runner.check(await _target(raw.url("/mcp")), CheckMode(light=True), client="c")
    assert result.status == "auth" and result.auth is not None
    assert result.auth.lookups[0].refused == "target_busy"
    assert raw.requests_to("/meta") == []
    await store.release_slot(slots_key("localhost", "free"), "other-0")
    again = await runner.check(await _target(raw.url("/mcp?again")), CheckMode(light=True), client="c")
    assert again.auth is not None and again.auth.lookups[0].refused is None
    assert len(raw.requests_to("/meta")) == 1  # a slot free: fetched, and its slot given back after
    assert await store.acquire_slot(slots_key("localhost", "free"), "mine", settings.host_concurrency, 60)


def _silent(ip: str, port: int) -> tuple[socket.socket, socket.socket]:
    """A listener on ``ip:port`` whose accept queue is full: a connect there hangs (SYN dropped)."""
    hole = socket.socket()
    hole.bind((ip, port))
    hole.listen(0)
    return hole, socket.create_connection((ip, port))


async def test_a_first_request_after_the_hosts_dead_addresses_keeps_the_interval(raw: RawServer) -> None:
    """Until the host has seen a probe its turn is held for ``interval + START_SLACK_S +
    connect_timeout_s + REACH_SLACK_S``, but the first connection may try each of the host's
    addresses for ``connect_timeout_s`` (and TLS has the same budget again): when the host's first
    addresses do not answer, the turn lapses before the first request leaves, other probes take the
    next turns, and the late request reaches the host within the interval of another's."""
    settings = Settings(
        allow_private=True, host_concurrency=5, host_client_concurrency=5, host_start_interval_s=1.0,
        connect_timeout_s=1.0, queue_budget_s=10.0, redis_url=None,
    )  # fmt: skip
    arrived: dict[str, float] = {}
    inner = MiniMcp()

    def record(request: Request, conn: socket.socket) -> bool | None:
        arrived.setdefault(request.path, time.monotonic())
        return inner(request, conn)

    for path in ("/late", "/b", "/c", "/d"):
        raw.routes[path] = record
    holes = [_silent(f"127.0.0.{n}", raw.port) for n in (2, 3, 4, 5)]  # the host's dead addresses
    try:

        async def probe(target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
            return (
                await observe(target.url.url, settings=settings, resolved=target, pace=mode.pace, light=False)
            ).result

        runner = CheckRunner(MemoryStore(), settings, probe, Metrics())

        def target(path: str, addresses: list[str]) -> ResolvedTarget:
            url = check_url(f"http://localhost:{raw.port}{path}", allow_private=True)
            return ResolvedTarget(url, tuple(ipaddress.ip_address(a) for a in addresses))

        async def check(t: ResolvedTarget, client: str, after_s: float) -> Any:
            await anyio.sleep(after_s)
            return await runner.check(t, CheckMode(), client=client)

        # the late probe's lookup listed the dead addresses first (4 x 1 s before its first request);
        # the turn held before contact lasts 1 + 0.1 + 1 + 1 = 3.1 s
        async with anyio.create_task_group() as group:
            group.start_soon(
                check, target("/late", ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.1"]), "l", 0.0
            )
            for n, (path, at) in enumerate([("/b", 3.15), ("/c", 4.2)]):
                group.start_soon(check, target(path, ["127.0.0.1"]), f"c{n}", at)
    finally:
        for hole, filler in holes:
            filler.close()
            hole.close()
    starts = sorted(arrived.values())
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(starts) == 3
    assert min(gaps) >= settings.host_start_interval_s, f"first requests {arrived} closer than the interval"


async def test_a_further_hosts_slot_does_not_drop_the_slot_of_a_probe_running_there() -> None:
    """The Redis slot script PEXPIREs a host's whole slot set to the TTL of the *latest* caller, so a
    slot taken with a shorter lifetime (a further host's slot: probe budget + 7 s; a light probe's)
    cuts short every longer slot in the set: the long probe's slot vanishes while it runs and one
    probe too many is let in (host_concurrency exceeded)."""
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
