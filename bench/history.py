"""Benchmark: the history store at production size (goals at p95: PostgreSQL under 20 ms, SQLite under 50 ms).

Three operations of :class:`app.history.store.SqlHistory`, each timed call by call (wall clock, in
this process, the database on loopback or in a file), for a *typical* server (from the middle of
the distribution: about 40 runs in 90 days) and a *hot* one (checked every 5 minutes: 25,920 runs
in 90 days, the worst case of a history read):

- **record**: ``record(Run)`` of a served full check with its tool set (3 to 40 real tools), the
  day's counter upserted, the server's latest state and the tool-list change check; the server's
  list is the one it had (a first record per server, untimed, stores it), as for most runs.
- **history**: ``GET /v1/servers/{id}/history?days=90`` as the service answers it
  (:func:`app.http.routes.servers.server_history` called with a request: ``history()``, which reads
  the server, its days and its 90-day window on one connection (:mod:`app.history.reading`),
  the :mod:`app.history.report` functions for the days, the JSON response).
- **changes**: ``changes(server_id, limit=50)``, the newest 50 tool-list changes.

On two databases made by :mod:`bench.history_data` and :mod:`bench.history_load` (migrated with
the store's own migrations, then filled in bulk): **PostgreSQL** on 127.0.0.1:5432, 100,000
servers (200 hot) and 10,000,000 runs; **SQLite**, a file, 10,000 servers (20 hot) and 1,000,000
runs (the same 100 runs per server). ``--servers``, ``--hot`` and ``--runs`` make another size
for both (down to 2 servers, 1 of them hot; by default 0.2 % hot, at least 1, and the runs of the
production plan's shape: 25,920 per hot server and about 48 per other one; the goals stay those
of production). Each run makes its PostgreSQL database (``sonde_bench_history_<pid>_<random>``)
and its SQLite file (in a temporary directory) of its own and removes both at the end, failed or
not; ``--keep`` instead makes once and reuses ``sonde_bench`` and
``$TMPDIR/sonde-bench-history/history.sqlite3`` (the production sizes; another size has its own,
named for it), never dropped.

The baseline is the goal itself: an absolute figure per operation, p50/p95/p99 of each round of
``N`` calls per operation and server kind (servers drawn in turn from up to 200 typical and 100
hot ones, different servers for writes and reads; at a size with fewer typical servers in the
middle of the distribution, or fewer than 2 hot ones, the samples are as many as there are, and
writes and reads share a server when there is only one), the medians over the rounds printed
with the spread of p95. A breakdown shows where a hot server's history read spends its time.
Prints how long making the data took and the size on disk. Runs stored here stay in a kept
database (run ids no generated run has); reads see them as the service would. A run that fails
says why in one line and exits 1.

Usage: ``python -m bench.history [--keep] [--backend postgresql|sqlite|both] [--rounds R] [--n N]
[--servers S] [--hot H] [--runs R]`` (defaults: make both databases at production size, 5 rounds
of 200 calls; ``--keep`` reuses a database made before, or resumes one whose load stopped).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import logging
import math
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from starlette.requests import Request

from app.canonical import canonical_bytes
from app.checking.services import open_history
from app.history.records import Run, server_id_of
from app.history.store import SqlHistory
from app.http.routes import servers as endpoints
from bench._database import dropped, run_name
from bench.history_data import (
    HOT_RUNS,
    Plan,
    Pools,
    counts,
    fresh_run_id,
    minimum_runs,
    pools,
    typical_servers,
    url_of,
)
from bench.history_load import Prepared, postgres_sizes, prepare_postgres, prepare_sqlite

PLANS = {
    "postgresql": Plan(servers=100_000, runs=10_000_000, hot=200),
    "sqlite": Plan(servers=10_000, runs=1_000_000, hot=20),
}
GOALS_MS = {"postgresql": 20.0, "sqlite": 50.0}
HOT_SHARE = PLANS["postgresql"].hot / PLANS["postgresql"].servers  # 0.2 %
#: Runs of a server that is not hot, on average, in the production plans (about 48).
OTHER_RUNS = (PLANS["postgresql"].runs - PLANS["postgresql"].hot * HOT_RUNS) / (
    PLANS["postgresql"].servers - PLANS["postgresql"].hot
)
KEPT = "sonde_bench"  # the database --keep makes once and reuses (another size: its name with the size)
KEPT_SQLITE = Path(tempfile.gettempdir()) / "sonde-bench-history"
Op = Callable[[int], Coroutine[Any, Any, object]]


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0 to 100) of ``samples``."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def plan_of(backend: str, servers: int | None, hot: int | None, runs: int | None) -> Plan:
    """The backend's production plan, or the size asked for (see the module docs)."""
    default = PLANS[backend]
    if servers is None and hot is None and runs is None:
        return default
    total = default.servers if servers is None else servers
    hot_n = hot if hot is not None else default.hot if servers is None else max(1, round(total * HOT_SHARE))
    if total < 2 or not 1 <= hot_n < total:
        raise SystemExit(f"--servers {total} --hot {hot_n}: needs at least 1 hot server and 1 other")
    runs_n = runs if runs is not None else round(hot_n * HOT_RUNS + (total - hot_n) * OTHER_RUNS)
    if runs_n < minimum_runs(total, hot_n):
        raise SystemExit(
            f"--runs {runs_n:,} is too few: {hot_n} hot servers take {HOT_RUNS:,} runs each and each of the"
            f" other {total - hot_n:,} at least 1 (at least {minimum_runs(total, hot_n):,})"
        )
    return Plan(servers=total, runs=runs_n, hot=hot_n)


def kept_names(plan: Plan) -> tuple[str, Path]:
    """The database and SQLite file ``--keep`` uses for ``plan``: the production ones, or named for its size."""
    if plan in PLANS.values():
        return KEPT, KEPT_SQLITE / "history.sqlite3"
    size = f"{plan.servers}_{plan.hot}_{plan.runs}"
    return f"{KEPT}_{size}", KEPT_SQLITE / f"history-{size}.sqlite3"


def history_request(history: SqlHistory, server_id: str) -> Request:
    """The request ``GET /v1/servers/{server_id}/history?days=90`` as the route hands it over."""
    services = SimpleNamespace(recorder=SimpleNamespace(history=history))
    scope: dict[str, Any] = {
        "type": "http", "method": "GET", "path": f"/v1/servers/{server_id}/history", "query_string": b"days=90",
        "headers": [], "path_params": {"server_id": server_id},
        "app": SimpleNamespace(state=SimpleNamespace(services=services)),
    }  # fmt: skip
    return Request(scope)


def served_run(server: int, blobs: Pools, observed_at: datetime) -> Run:
    """A served full check of generated server ``server`` as :func:`app.checking.recorder.run_of` makes it."""
    tools = blobs.tool_lists[server % len(blobs.tool_lists)]
    fingerprint = hashlib.sha256(canonical_bytes(list(tools))).hexdigest()
    url, attestation = url_of(server), fresh_run_id()
    return Run(
        run_id=attestation, url=url, host=url.split("/")[2], observed_at=observed_at, status="ok", reason="ok",
        protocol_version="2026-07-28", transport="streamable_http", latency_ms=48.5, total_ms=131.0,
        addresses=(f"203.0.{server % 256}.{server // 256 % 256}",), tools=tools, schema_fingerprint=fingerprint,
        toolset_fingerprint=fingerprint, result=zlib.decompress(blobs.results[server % len(blobs.results)]),
        attestation_id=attestation, envelope=zlib.decompress(blobs.envelopes[server % len(blobs.envelopes)]),
    )  # fmt: skip


async def timed(op: Op, servers: list[int], n: int, offset: int) -> list[float]:
    """Wall ms of ``n`` calls of ``op``, on ``servers`` in turn from ``offset``."""
    out = []
    for i in range(n):
        started = time.perf_counter()
        await op(servers[(offset + i) % len(servers)])
        out.append((time.perf_counter() - started) * 1000)
    return out


def sampled(plan: Plan) -> tuple[dict[str, list[int]], dict[str, list[int]], list[int], list[str]]:
    """The servers written, read (by kind) and warmed on: 200 typical ones for writes, 200 for reads
    and 10 for warming, 100 hot ones for each, or as many as the plan has; and what was shared."""
    typical, hot = typical_servers(plan, 410), sorted(counts(plan)[1])[:200]
    each = min(200, max(1, len(typical) * 200 // 410))
    shared = []
    if len(typical) < 2:
        shared.append("writes and reads use the same typical server")
    elif not typical[2 * each :]:
        shared.append("warming uses the typical servers read")
    if len(hot) < 2:
        shared.append("writes and reads use the same hot server")
    writes = {"typical": typical[:each], "hot": hot[: len(hot) // 2] or hot}
    reads = {"typical": typical[each : 2 * each] or writes["typical"], "hot": hot[len(hot) // 2 :]}
    return writes, reads, typical[2 * each : 2 * each + 10] or reads["typical"], shared


async def bench(backend: str, plan: Plan, prepared: Prepared, rounds: int, n: int) -> None:
    """Print the figures of one backend."""
    goal = GOALS_MS[backend]
    blobs = pools(plan.seed)
    per, hot_set = counts(plan)
    writes, reads, warming, shared = sampled(plan)
    typical = writes["typical"] + reads["typical"]
    notes = "".join(f"; {note}" for note in shared)
    print(f"  servers sampled: typical {len(writes['typical'])} written, {len(reads['typical'])} read;"
          f" hot {len(writes['hot'])} written, {len(reads['hot'])} read{notes}")  # fmt: skip
    history = open_history(prepared.url)
    ids = {s: server_id_of(url_of(s)) for s in {*typical, *warming, *hot_set}}
    try:

        async def record(s: int) -> object:
            assert await history.record(served_run(s, blobs, datetime.now(UTC)))
            return None

        async def read(s: int) -> object:
            answer = await endpoints.server_history(history_request(history, ids[s]))
            assert answer.status_code == 200
            return answer

        async def changes(s: int) -> object:
            return await history.changes(ids[s], limit=50)

        for servers in writes.values():  # each server's own list stored once (a change), untimed
            for s in servers:
                await record(s)
        for warm in (read, changes):  # the pool's connections and the code paths, on other servers
            await timed(warm, warming, 10, 0)
        ops: list[tuple[str, str, Op, list[int]]] = [
            (name, kind, op, (writes if name == "record" else reads)[kind])
            for name, op in (("record", record), ("history", read), ("changes", changes))
            for kind in ("typical", "hot")
        ]  # fmt: skip
        samples: dict[tuple[str, str], list[list[float]]] = {(name, kind): [] for name, kind, _, _ in ops}
        for r in range(rounds):
            started = time.monotonic()
            for name, kind, op, servers in ops:
                samples[name, kind].append(await timed(op, servers, n, r * n))
            print(f"  (round {r + 1} of {rounds}: {time.monotonic() - started:.0f} s)", flush=True)
        await describe(backend, history, per, typical, [ids[s] for s in (reads["typical"][0], reads["hot"][0])])
        head = f"{'p50':>8}{'p95':>8}{'p99':>8}   {'p95 of rounds':<18}"
        print(f"  {'operation':<10}{'server':<9}{head}goal: p95 < {goal:g} ms")
        for name, kind, _, _ in ops:
            print(row(name, kind, samples[name, kind], goal))
        await breakdown(history, [ids[s] for s in reads["hot"]], n)
    finally:
        await history.aclose()


def row(name: str, kind: str, rounds: list[list[float]], goal: float) -> str:
    """One line of the table: medians over the rounds of p50, p95, p99; the spread of p95; the verdict."""
    p = {q: statistics.median(percentile(samples, q) for samples in rounds) for q in (50, 95, 99)}
    spread = [percentile(samples, 95) for samples in rounds]
    verdict = "met" if p[95] < goal else "MISSED"
    return (f"  {name:<10}{kind:<9}{p[50]:8.2f}{p[95]:8.2f}{p[99]:8.2f}   {min(spread):6.2f} to {max(spread):6.2f}"
            f"    {verdict}")  # fmt: skip


async def describe(backend: str, history: SqlHistory, per: list[int], typical: list[int], examples: list[str]) -> None:
    """What was read: runs per server, the size of a hot server's history answer, changes found."""
    answer = await endpoints.server_history(history_request(history, examples[1]))
    found = [len(await history.changes(server_id, limit=50)) for server_id in examples]
    print(f"  {backend}: a typical server has {statistics.median(per[s] for s in typical):.0f} runs in 90 days,"
          f" a hot one {max(per):,}; a hot history answer is {len(bytes(answer.body)):,} bytes; changes()"
          f" gives {found[0]} (typical) and {found[1]} (hot)")  # fmt: skip


async def breakdown(history: SqlHistory, server_ids: list[str], n: int) -> None:
    """Median ms of a hot server's history read, and of the store calls it once was, each called alone."""
    now = datetime.now(UTC)
    since = now - timedelta(days=89)
    midnight = since.replace(hour=0, minute=0, second=0, microsecond=0)
    parts: list[tuple[str, Callable[[str], Awaitable[object]]]] = [
        ("history() (the whole read)", lambda sid: history.history(sid, midnight)),
        ("server()", history.server),
        ("days()", lambda sid: history.days(sid, since.date())),
        ("window()", lambda sid: history.window(sid, midnight)),
        ("points() (every run, which the read took before window())", lambda sid: history.points(sid, midnight)),
    ]
    shown = []
    for label, call in parts:
        times = []
        for i in range(n):
            started = time.perf_counter()
            await call(server_ids[i % len(server_ids)])
            times.append((time.perf_counter() - started) * 1000)
        shown.append(f"{label} {statistics.median(times):.2f}")
    print(f"  hot history, median ms of each store call alone: {', '.join(shown)}")


def _size(path: Path) -> int:
    return path.stat().st_size


async def prepare(backend: str, plan: Plan, keep: bool, database: str, sqlite: Path) -> Prepared:
    """The backend's database, made or reused; prints what that took and its size."""
    started = time.monotonic()
    where = database if backend == "postgresql" else str(sqlite)
    print(f"{backend}: {'reusing or resuming' if keep else 'making'} {where} ({plan.servers:,} servers,"
          f" {plan.hot:,} hot, {plan.runs:,} runs)", flush=True)  # fmt: skip
    if backend == "postgresql":
        prepared = await prepare_postgres(plan, keep, database)
        sizes = await postgres_sizes(prepared.url)
    else:
        sqlite.parent.mkdir(parents=True, exist_ok=True)
        prepared = await prepare_sqlite(plan, sqlite, keep)
        sizes = [("file", _size(sqlite))]
    how = "reused, made earlier in" if prepared.reused else "made in"
    print(f"  {how} {prepared.seconds:.0f} s (this step {time.monotonic() - started:.0f} s);"
          f" the 90 days end {prepared.now:%Y-%m-%d %H:%M} UTC")  # fmt: skip
    for what, size in sizes:
        print(f"  size: {what}: {size / 2**30:.2f} GiB")
    return prepared


async def run(args: argparse.Namespace) -> None:
    """Each backend in turn: its database (the run's own, removed after, or the kept one), then its figures."""
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)  # the finally blocks still run
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="sonde-bench-history-"))
    try:
        for backend in ("postgresql", "sqlite") if args.backend == "both" else (args.backend,):
            plan = plan_of(backend, args.servers, args.hot, args.runs)
            if args.keep:
                database, sqlite = kept_names(plan)
            else:
                database, sqlite = run_name("sonde_bench_history"), scratch / "history.sqlite3"
            try:
                prepared = await prepare(backend, plan, args.keep, database, sqlite)
                before = os.getloadavg()[0]
                await bench(backend, plan, prepared, args.rounds, args.n)
                after = os.getloadavg()[0]
                print(f"  (load average {before:.1f} when the {backend} figures began, {after:.1f} at their end,"
                      f" on {os.cpu_count()} cores: other work on the machine shows in the figures)")  # fmt: skip
            finally:
                if backend == "postgresql" and not args.keep:
                    await dropped(database)  # this run's own name
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"({time.monotonic() - started:.0f} s)")


def main() -> None:
    """Print the figures, or why there are none in one line."""
    logging.disable(logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m bench.history", description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="reuse (or resume) the databases made before")
    parser.add_argument("--backend", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=200, help="calls per operation, server kind and round")
    parser.add_argument("--servers", type=int, help="servers (default: 100,000 on PostgreSQL, 10,000 on SQLite)")
    parser.add_argument("--hot", type=int, help="servers checked every 5 minutes (default: 0.2 %%, at least 1)")
    parser.add_argument("--runs", type=int, help="runs in all (default: 25,920 per hot server, about 48 per other)")
    args = parser.parse_args()
    if args.rounds < 1 or args.n < 1:
        raise SystemExit("--rounds and --n must be at least 1")
    try:
        asyncio.run(run(args))
    except asyncio.CancelledError:
        print("history benchmark stopped (SIGTERM); its database and file removed", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # one line of why, not a traceback
        why = (str(exc).strip().splitlines() or [""])[0]
        print(f"history benchmark failed: {type(exc).__name__}: {why}"[:300], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
