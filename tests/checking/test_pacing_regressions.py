"""Regressions of the per-host limits (:mod:`app.checking.turns`, :mod:`app.checking.runner`), measured at
real servers or counted where the probe would contact the host.

1. A host slot's lifetime (``probe budget + 5``) counts from when the slot was taken, but the probe
   may start up to ``queue_budget_s`` later (a job: ``job_turn_wait_s``) when the host's start
   turn is held meanwhile: the slot then lapses while its probe still runs, and one more probe of
   the host than ``host_concurrency`` runs at once.
2. Until the host has seen a probe its turn is held for ``interval + START_SLACK_S +
   connect_timeout_s + REACH_SLACK_S``, but the first connection may try each of the host's
   addresses for ``connect_timeout_s`` (and TLS has the same budget again): when the host's first
   addresses do not answer, the turn lapses before the first request leaves, other probes take the
   next turns, and the late request reaches the host within the interval of another's.
"""

from __future__ import annotations

import ipaddress
import itertools
import socket
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest

from app.checking.metrics import Metrics
from app.checking.runner import CheckMode, CheckRunner
from app.guard import ResolvedTarget, check_url
from app.probe import ProbeResult
from app.probe.runner import observe
from app.settings import Settings
from app.store import MemoryStore, key
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


async def test_a_host_slot_taken_long_before_its_turn_does_not_lapse_while_its_probe_runs() -> None:
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


def _silent(ip: str, port: int) -> tuple[socket.socket, socket.socket]:
    """A listener on ``ip:port`` whose accept queue is full: a connect there hangs (SYN dropped)."""
    hole = socket.socket()
    hole.bind((ip, port))
    hole.listen(0)
    return hole, socket.create_connection((ip, port))


async def test_a_first_request_after_the_hosts_dead_addresses_keeps_the_interval(raw: RawServer) -> None:
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
