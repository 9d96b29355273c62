"""Sweep drill and throughput bench: a registry of N endpoints over H loopback host names, synced
and swept by 3 ``mcp-sonde worker`` processes and 1 ``mcp-sonde scheduler`` on real Redis and
PostgreSQL, every figure measured at the fixture server, not in our code.

The drill (:func:`drill`):

- a local registry (:mod:`tests.servers.registry`) lists ``N`` endpoints
  ``http://h<k>.sweep.test:<port>/mcp/<i>`` over ``H`` host names, which the workers resolve to
  ``127.0.0.1`` with a resolver of the drill's own (:mod:`bench.sweep_names`);
- one fixture (a raw HTTP server in this process, :class:`Spans`) answers MCP on every name
  and path, issues a session id (so each probe ends its session with a DELETE, as against a
  server with sessions), holds each ``initialize`` ``hold_s`` (so both per-host limits bind),
  and logs each request's host, path, method, arrival and end;
- the scheduler hands out the registry sync, the sync imports every entry; then the drill's
  clock makes every swept endpoint not yet claimed due at once (a day in a few minutes) and
  the sweep hands them out; it waits until every endpoint's outcome is heard;
- from the log: probes per endpoint (its ``initialize`` requests; each path is one endpoint),
  and per host the most probes at once (a probe's span is its endpoint's first request's
  arrival to the end of its last request before the session end: the closing DELETE comes
  after the verdict, when the host's turn is over, so a DELETE that races the next probe's
  start is not two probes at once; the DELETEs seen are counted beside it) and the shortest
  gap between two probes' starts (a
  start: when the fixture's kernel received a probe's first request, ``SO_TIMESTAMPNS``; the
  gap as its handler threads got them, late by however long a loaded machine keeps them
  waiting, is printed beside it); from the
  database, runs stored per server; the throughput is endpoints per minute from the first
  probe's start to the last probe's end at the fixture.

The database is one of the drill's own (``sonde_sweep_<hex>``, dropped after; never the
``sonde_bench`` one); the queue and key namespace too, on ``MCP_SONDE_TEST_REDIS_URL``
(default ``redis://127.0.0.1:6379/15``).

Usage: ``python -m bench.sweep [N] [H]`` (default 10,000 endpoints over 50 hosts: at most 2
probes at once and 1 new probe per second per host, each probe held 2.5 s, so at best 0.8 probes
a second per host and a cycle of at least 250 s). ``tests/drills/test_sweep.py`` runs a small
one (300 over 10) as a soak test.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select, update

from app.attest.keyring import keyring_of
from app.db import migrate
from app.db.engine import open_engine
from app.db.tables.history import runs, servers
from app.db.tables.registry import registry_endpoints
from app.settings import Settings
from bench._database import admin
from tests.jobs.fleet import Fleet
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp
from tests.servers.registry import RegistryState, registry_server, response

POSTGRES = os.environ.get("MCP_SONDE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("MCP_SONDE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
HOST_CONCURRENCY = 2
HOST_START_INTERVAL_S = 1.0
SESSION = "sweep-drill-session"  # the fixture's session id (one for every probe: nothing checks it)
SESSION_END = "DELETE"  # a probe's closing request, after its verdict: not part of its span


@dataclass
class Spans:
    """A raw route handler answering MCP (:class:`MiniMcp`), holding each ``initialize``
    ``hold_s``, logging ``(host, path, method, arrival, end, received)`` of every request:
    ``arrival`` when the handler got it, ``received`` when the kernel did (``kernel_times``)."""

    hold_s: float
    mcp: MiniMcp = field(default_factory=lambda: MiniMcp(issue_session=SESSION))
    log: list[tuple[str, str, str, float, float, float]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        arrived = time.monotonic()
        method = str(request.message.get("method") or request.method)
        if method == "initialize":
            time.sleep(self.hold_s)
        try:
            return self.mcp(request, conn)
        finally:
            host = request.headers.get("host", "").rsplit(":", 1)[0]
            received = request.received_at if request.received_at is not None else arrived
            with self._lock:
                self.log.append((host, request.path, method, arrived, time.monotonic(), received))


@dataclass
class Figures:
    """What the fixture saw, and what the history holds."""

    endpoints: int
    hosts: int
    probes: Counter[str]
    most_at_once: dict[str, int]
    least_gap_s: dict[str, float]
    least_handler_gap_s: dict[str, float]
    runs_per_server: Counter[str]
    sync_s: float
    cycle_s: float
    span_s: float
    session_ends: int = 0

    @property
    def per_minute(self) -> float:
        """Endpoints probed per minute, first start to last end at the fixture."""
        return self.endpoints / self.span_s * 60 if self.span_s > 0 else 0.0


@dataclass(frozen=True)
class Analysis:
    """What the fixture's log says (see the module docs)."""

    probes: Counter[str]  # per path: its initialize requests
    most_at_once: dict[str, int]
    least_gap_s: dict[str, float]
    least_handler_gap_s: dict[str, float]
    span_s: float
    session_ends: int


def analyse(spans: Spans) -> Analysis:
    """Probes per path; per host the most probes at once (a probe's span without its session end),
    and the least gap between two probes' starts as the kernel received them and as the handler
    got them; the whole span, first probe start to last probe end; the session ends seen."""
    with spans._lock:
        log = list(spans.log)
    probes: Counter[str] = Counter(path for _h, path, method, *_times in log if method == "initialize")
    span: dict[tuple[str, str], list[float]] = {}
    for host, path, method, arrived, ended, received in log:
        if method == SESSION_END:
            continue
        seen = span.setdefault((host, path), [arrived, ended, received])
        seen[0], seen[1], seen[2] = min(seen[0], arrived), max(seen[1], ended), min(seen[2], received)
    by_host: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for (host, _path), (start, end, received) in span.items():
        by_host[host].append((start, end, received))
    most, gap, handler_gap = {}, {}, {}
    for host, probes_at in by_host.items():
        events = sorted([(s, 1) for s, _, _ in probes_at] + [(e, -1) for _, e, _ in probes_at], key=lambda x: x)
        running = peak = 0
        for _, step in events:
            running += step
            peak = max(peak, running)
        most[host] = peak
        gap[host] = _least_gap(r for _, _, r in probes_at)
        handler_gap[host] = _least_gap(s for s, _, _ in probes_at)
    whole = max((e for _s, e, _r in span.values()), default=0.0) - min((s for s, _e, _r in span.values()), default=0.0)
    ends = sum(1 for _h, _p, method, *_times in log if method == SESSION_END)
    return Analysis(probes, most, gap, handler_gap, whole, ends)


def _least_gap(starts: Iterable[float]) -> float:
    return min((b - a for a, b in itertools.pairwise(sorted(starts))), default=float("inf"))


async def _count(url: str, query: object) -> list[tuple[object, ...]]:
    engine = open_engine(url)
    try:
        async with engine.begin() as db:
            result = await db.execute(query)  # type: ignore[call-overload]
            return [tuple(row) for row in result.all()] if result.returns_rows else []
    finally:
        await engine.dispose()


def _sql(url: str, query: object) -> list[tuple[object, ...]]:
    return asyncio.run(_count(url, query))


def _wait(condition: object, timeout_s: float, what: str, fleet: Fleet) -> float:
    assert callable(condition)
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout_s:
            raise AssertionError(f"{what}: not within {timeout_s:g} s\n{fleet.logs()[-4000:]}")
        time.sleep(0.5)
    return time.monotonic() - started


def drill(endpoints: int = 10_000, hosts: int = 50, hold_s: float = 2.5, worker_concurrency: int = 60) -> Figures:
    """Run the drill (see the module docs); its figures."""
    directory = Path(tempfile.mkdtemp(prefix="sonde-sweep-"))
    os.environ.setdefault("MCP_SONDE_DATA_DIR", str(directory / "data"))
    spans = Spans(hold_s)
    raw = RawServer(kernel_times=True)
    raw.start()
    name = f"sonde_sweep_{uuid.uuid4().hex[:12]}"
    database = POSTGRES.replace("postgresql://", "postgresql+asyncpg://").rsplit("/", 1)[0] + f"/{name}"
    try:
        entries = []
        for i in range(endpoints):
            raw.routes[f"/mcp/{i}"] = spans
            url = f"http://h{i % hosts}.sweep.test:{raw.port}/mcp/{i}"
            entries.append(response(f"io.example.sweep/server-{i:05d}", "1.0.0",
                                    [{"type": "streamable-http", "url": url}]))  # fmt: skip
        asyncio.run(admin(f'CREATE DATABASE "{name}"', POSTGRES))
        asyncio.run(migrate.upgrade(database))
        with registry_server(RegistryState(entries=entries)) as registry:
            extra = {
                "MCP_SONDE_REGISTRY_URL": registry, "MCP_SONDE_REGISTRY_PAGE_LIMIT": "100",
                "MCP_SONDE_JOB_PARTS": json.dumps(["bench.sweep_names:register"]),
                "MCP_SONDE_HOST_CONCURRENCY": str(HOST_CONCURRENCY),
                "MCP_SONDE_HOST_START_INTERVAL_S": str(HOST_START_INTERVAL_S),
                "MCP_SONDE_SCHEDULER_TICK_S": "1",
                "MCP_SONDE_JOB_TURN_WAIT_S": "30", "MCP_SONDE_PROBE_TIMEOUT_S": "15",
                "MCP_SONDE_JOB_REDELIVERY_IDLE_S": "120", "MCP_SONDE_LOG_FORMAT": "plain",
            }  # fmt: skip
            fleet = Fleet(directory, REDIS, database, extra)
            keyring_of(Settings())  # (one key for every process, made before they start)
            try:
                for _ in range(3):
                    fleet.start("worker", "--concurrency", str(worker_concurrency))
                fleet.start("scheduler")
                table = registry_endpoints
                swept = select(func.count()).select_from(table).where(table.c.swept)
                sync_s = _wait(lambda: _sql(database, swept)[0][0] == endpoints, 600, "the registry synced", fleet)
                _sql(database, update(table).where(table.c.swept, table.c.claimed_job.is_(None))
                     .values(next_due=datetime.now(UTC)))  # fmt: skip
                heard = select(func.count()).select_from(table).where(table.c.swept, table.c.finished_job.is_not(None))
                cycle_s = _wait(lambda: _sql(database, heard)[0][0] == endpoints, 3600, "the sweep cycle", fleet)
                time.sleep(3)  # (a few ticks more: nothing is handed out again)
            finally:
                codes = fleet.stop()
            if any(codes):
                raise AssertionError(f"a process failed: {codes}\n{fleet.logs()[-4000:]}")
        query = select(servers.c.server_id, func.count()).join(runs, runs.c.server == servers.c.id)
        stored = Counter({str(k): int(str(v)) for k, v in _sql(database, query.group_by(servers.c.server_id))})
        seen = analyse(spans)
        return Figures(endpoints, hosts, seen.probes, seen.most_at_once, seen.least_gap_s, seen.least_handler_gap_s,
                       stored, sync_s, cycle_s, seen.span_s, seen.session_ends)  # fmt: skip
    finally:
        raw.stop()
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', POSTGRES))


def report(figures: Figures) -> str:
    """The figures as the bench prints them."""
    probes = figures.probes
    copies = Counter(probes.values())
    stored = Counter(figures.runs_per_server.values())
    lines = [
        f"sweep drill: {figures.endpoints} endpoints over {figures.hosts} loopback host names, 3 workers, 1 scheduler",
        f"  registry synced in {figures.sync_s:.1f} s; cycle heard in {figures.cycle_s:.1f} s",
        f"  throughput: {figures.per_minute:.0f} endpoints/minute (first probe start to last probe end at the fixture, "
        f"{figures.span_s:.1f} s)",
        f"  probes per endpoint at the fixture: {dict(sorted(copies.items()))} (endpoints probed: {len(probes)})",
        f"  runs stored per server: {dict(sorted(stored.items()))} (servers: {len(figures.runs_per_server)})",
        f"  per host, most probes at once: max {max(figures.most_at_once.values(), default=0)} "
        f"(limit {HOST_CONCURRENCY}; a probe from its first request to its last before the session end, "
        f"{figures.session_ends} session ends seen)",
        f"  per host, least gap between two probe starts: min {min(figures.least_gap_s.values(), default=0):.3f} s "
        f"as the fixture's kernel received them, {min(figures.least_handler_gap_s.values(), default=0):.3f} s as its "
        f"handler threads got them (limit {HOST_START_INTERVAL_S:g} s)",
    ]
    return "\n".join(lines)


def main() -> None:
    """``python -m bench.sweep [N] [H]``."""
    endpoints = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    hosts = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    try:
        figures = drill(endpoints, hosts)
    except Exception as exc:  # one line of why (a failed wait's message goes on with the processes' logs)
        why = (str(exc).strip().splitlines() or [""])[0]
        print(f"sweep drill failed: {type(exc).__name__}: {why}"[:300], file=sys.stderr)
        sys.exit(1)
    print(report(figures), flush=True)


if __name__ == "__main__":
    main()
