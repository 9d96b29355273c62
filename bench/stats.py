"""Bench of the statistics page: ``/stats`` over 100,000 servers in PostgreSQL.

A database of its own, ``sonde_bench_stats_<pid>_<random>`` (made each run and dropped after, at the
newest schema by the
store's migrations), is filled in bulk by binary ``COPY`` (never through ``record``): 100,000
servers with 3 runs each (the newest is the server's latest; statuses, reasons, handshake
paths, protocol versions, protected resource metadata and tool counts drawn with fixed weights
from a seeded generator), 400 tool sets, and 20,000 tool-list changes over the last 40 days (a
fifth of them breaking). Then:

- **compute**: one recomputation of the figures (what the background refresh costs), timed;
- **page**: ``GET /stats`` as the service answers it (the route called with a request: the
  snapshot read and the template rendered), ``--rounds`` calls, p50/p95/p99 printed against
  the goal (p95 < 200 ms);
- **api**: ``GET /v1/stats`` the same way.

Usage: ``python -m bench.stats [--rounds 300] [--servers 100000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import asyncpg
from pydantic import SecretStr
from starlette.requests import Request

from app.checking.services import build_services
from app.db import migrate
from app.http.pages.stats import stats_page
from app.http.routes.stats import stats as stats_route
from app.settings import Settings
from bench._database import dropped, made, run_name

DATABASE = run_name("sonde_bench_stats")
GOAL_P95_MS = 200.0
#: (status, reason, weight) of a server's newest run.
OUTCOMES = (
    ("ok", "ok", 55), ("auth", "auth_required", 12), ("auth", "auth_challenge_missing", 3),
    ("timeout", "connect_timeout", 4), ("timeout", "read_timeout", 2), ("unreachable", "connection_refused", 4),
    ("dns", "dns_nxdomain", 2), ("tls", "cert_expired", 1), ("client_error", "rate_limited", 2),
    ("client_error", "protocol_version_rejected", 2), ("client_error", "forbidden", 2),
    ("not_found", "http_not_found", 4),
    ("server_error", "http_server_error", 3), ("server_error", "jsonrpc_error", 1), ("not_mcp", "html_page", 3),
)  # fmt: skip
VERSIONS = (("2025-06-18", 40), ("2025-03-26", 25), ("2025-11-25", 20), ("2024-11-05", 15))


def _draw(rng: random.Random, weighted: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...]:
    return rng.choices(weighted, weights=[w[-1] for w in weighted])[0]


def _result(status: str, reason: str, era: str | None, version: str | None, tools: int | None,
            metadata: bool | None) -> bytes:  # fmt: skip
    document: dict[str, Any] = {"status": status, "reason": reason, "era": era, "protocol_version": version,
                                "checks": [{"id": f"check_{i}", "state": "verified"} for i in range(14)]}  # fmt: skip
    if tools is not None:
        document["tools"] = {"count": tools, "names": [f"tool_{i}" for i in range(min(tools, 100))]}
    if metadata is not None:
        document["auth"] = {"metadata_published": metadata}
    return zlib.compress(json.dumps(document).encode(), 6)


async def load(url: str, servers: int, now: datetime) -> None:
    """Fill the tables (see the module docs)."""
    rng = random.Random(16)
    db = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        toolset_rows = [(i + 1, f"{i:064x}", f"{i:064x}", f"{i:064x}", rng.randint(1, 60), zlib.compress(b"[]"),
                         now - timedelta(days=90)) for i in range(400)]  # fmt: skip
        await db.copy_records_to_table("toolsets", records=toolset_rows, columns=[
            "id", "definitions_sha256", "schema_fingerprint", "toolset_fingerprint", "tool_count", "definitions",
            "first_seen"])  # fmt: skip
        server_rows, run_rows = [], []
        run_key = 0
        for s in range(1, servers + 1):
            status, reason, _ = _draw(rng, OUTCOMES)
            latest = 0
            for age in (2.0, 1.0, rng.random() * 0.9):
                run_key += 1
                observed = now - timedelta(days=age)
                up = status in ("ok", "auth") or age > 0.95
                st, rs = (status, reason) if age < 0.95 or up else ("ok", "ok")
                era = version = None
                tools = metadata = None
                if st == "ok" or reason in ("jsonrpc_error",):
                    era = "modern" if rng.random() < 0.25 else "legacy"
                    version = "2026-07-28" if era == "modern" else _draw(rng, VERSIONS)[0]
                if st == "ok":
                    tools = min(int(rng.lognormvariate(1.8, 1.0)), 400)
                if st == "auth":
                    metadata = rng.random() < 0.6
                toolset = rng.randint(1, 400) if st == "ok" else None
                run_rows.append((
                    run_key, f"r{run_key:031x}", s, observed, st, rs, 1, version,
                    "streamable_http" if era else None, rng.uniform(20, 900), rng.uniform(50, 3000), toolset,
                    f"{run_key:064x}", _result(st, rs, era, version, tools, metadata), b"x\x9c\x03\x00\x00\x00\x00\x01",
                    {"modern": "server/discover", "legacy": "initialize"}.get(era or ""), metadata, tools,
                ))  # fmt: skip
                latest = run_key
            server_rows.append((s, f"{s:024x}", f"https://mcp{s}.example.com/mcp", f"mcp{s}.example.com",
                                '["93.184.215.14"]', now - timedelta(days=2), now, latest, status, None))  # fmt: skip
        await db.copy_records_to_table("servers", records=server_rows, columns=[
            "id", "server_id", "url", "host", "addresses", "first_seen", "last_seen", "latest_run", "latest_status",
            "latest_toolset"])  # fmt: skip
        await db.copy_records_to_table("runs", records=run_rows, columns=[
            "id", "run_id", "server", "observed_at", "status", "reason", "uptime", "protocol_version", "transport",
            "latency_ms", "total_ms", "toolset", "attestation_id", "result", "envelope", "handshake",
            "metadata_published", "tool_count"])  # fmt: skip
        change_rows = []
        for c in range(1, 20_001):
            s = rng.randint(1, servers)
            change_rows.append((c, s, (s - 1) * 3 + 1, now - timedelta(days=rng.uniform(0, 40)), 1, 2,
                                "breaking" if rng.random() < 0.2 else "compatible", zlib.compress(b"{}")))  # fmt: skip
        await db.copy_records_to_table("changes", records=change_rows, columns=[
            "id", "server", "run", "observed_at", "from_toolset", "to_toolset", "verdict", "diff"])  # fmt: skip
        for table in ("servers", "toolsets", "runs", "changes"):
            await db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        await db.execute("VACUUM ANALYZE")
    finally:
        await db.close()


def request_for(services: Any, path: str) -> Request:
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [], "scheme": "http", "server": ("127.0.0.1", 8000),
             "app": SimpleNamespace(state=SimpleNamespace(services=services))}  # fmt: skip
    return Request(scope)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--servers", type=int, default=100_000)
    args = parser.parse_args()
    await made(DATABASE)
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{DATABASE}"
    await migrate.upgrade(url)
    now = datetime.now(UTC)
    started = time.perf_counter()
    await load(url, args.servers, now)
    print(f"loaded {args.servers:,} servers, {3 * args.servers:,} runs, 20,000 changes "
          f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
    scratch = tempfile.TemporaryDirectory(prefix="sonde-bench-stats-")  # (the service's data dir: its keys)
    services = build_services(Settings(database_url=SecretStr(url), redis_url=None, data_dir=Path(scratch.name)))
    try:
        started = time.perf_counter()
        body = await services.stats.refresh()
        print(f"compute (the background recomputation): {(time.perf_counter() - started) * 1000:.0f} ms; "
              f"servers {body['servers']:,}, median tools {body['tool_counts']['median']}")  # fmt: skip
        for name, route, path in (("page GET /stats", stats_page, "/stats"), ("api GET /v1/stats", stats_route,
                                                                               "/v1/stats")):  # fmt: skip
            samples = []
            for _ in range(args.rounds):
                began = time.perf_counter()
                answer = await route(request_for(services, path))
                samples.append((time.perf_counter() - began) * 1000)
                assert answer.status_code == 200
            p95 = percentile(samples, 0.95)
            print(f"{name}: {args.rounds} rounds, p50 {statistics.median(samples):.1f} ms, p95 {p95:.1f} ms, "
                  f"p99 {percentile(samples, 0.99):.1f} ms (goal p95 < {GOAL_P95_MS:.0f} ms: "
                  f"{'met' if p95 < GOAL_P95_MS else 'MISSED'})")  # fmt: skip
    finally:
        await services.aclose()
        scratch.cleanup()
        await dropped(DATABASE)


if __name__ == "__main__":
    asyncio.run(main())
