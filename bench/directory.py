"""Benchmark: the directory at 100,000 servers in PostgreSQL (goal: p95 under 50 ms for a search and for a server page).

A database of the run's own on 127.0.0.1:5432 (``sonde_bench_dir_<pid>_<random>``, dropped at
the end; with ``--keep``, ``sonde_bench_dir``, made once and reused; no other database is
touched) is migrated with the store's own migrations, then filled in bulk by binary ``COPY``,
never through ``SqlHistory.record``:

- 100,000 servers, each with its latest run and 14 days of uptime counters; 3,000 distinct tool
  lists of 3 to 12 tools named from the category keywords (so the category rule assigns some),
  and one gateway list that 5,000 servers share (no category: 20 or more servers list it);
- a registry entry (name, title, description) for half of the servers;
- each server's directory row, made by :func:`app.directory.rows.compose` as the store makes it;
  the gateway's rows with no category, as :func:`app.directory.rows.recount` leaves them.

Then ``VACUUM ANALYZE``, and the service (``create_app`` under uvicorn on loopback, the lookup
limit raised out of the way) is asked, each request timed by wall clock in this process:

- **search**: ``GET /v1/servers`` with text and filters, in turn: a common word, two words with a
  status, a category sorted by uptime, the gated ones, a revision with a transport, tools changed
  within 7 days sorted by last check, a word nothing matches, a page deep in a listing (its
  cursor), and the first page of everything;
- **server page**: ``GET /servers/{id}`` rendered (servers drawn in turn from the 100,000).

Each round is ``N`` requests of each; p50/p95/p99 per round, the median over the rounds
printed, with the worst search kind's p95.

Usage: ``python -m bench.directory [--rounds R] [--n N] [--keep]`` (defaults: 5 rounds of 90
requests; ``--keep`` reuses the database of an earlier run).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import statistics
import tempfile
import time
import zlib
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import asyncpg
import httpx2
from pydantic import SecretStr

from app.db import migrate
from app.directory.identity import Identity
from app.directory.rows import compose
from app.history.records import Day
from app.http import create_app
from app.settings import Settings
from app.suite.category import rules
from bench._database import dropped, made, run_name
from tests.servers.uvicorn_thread import serve

NOBODY = Identity(None, None, None, None, None, 0)  # (a server no registry entry lists)

#: The database ``--keep`` makes once and reuses (without it, each run makes and drops its own).
KEPT = "sonde_bench_dir"
SERVERS = 100_000
TOOLSETS = 3_000
GATEWAY_SERVERS = 5_000
DAYS = 14
GOAL_MS = 50.0
EMPTY = zlib.compress(b"{}")  # (a run's result and envelope: the page then says the statement is not kept)
VERBS = ("get", "list", "search", "create", "update", "book", "find", "track", "send", "cancel")
STATUSES = (
    [("ok", "ok")] * 70
    + [("auth", "auth_required")] * 15
    + [("unreachable", "connection_refused")] * 8
    + [("timeout", "probe_timeout")] * 4
    + [("not_mcp", "not_json_rpc")] * 3
)
REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2026-07-28")
SEARCHES: list[tuple[str, dict[str, str]]] = [
    ("word", {"q": "weather"}),
    ("words+status", {"q": "flight hotel", "status": "ok"}),
    ("category+uptime", {"category": "travel", "sort": "uptime"}),
    ("gated", {"auth": "gated"}),
    ("revision+transport", {"protocol_version": "2025-06-18", "transport": "sse"}),
    ("changed 7d", {"changed_within": "7d", "sort": "last_checked"}),
    ("no match", {"q": "zqxjkv"}),
    ("everything", {}),
]


def _names(rng: random.Random, keywords: list[str], count: int) -> list[str]:
    return [f"{rng.choice(VERBS)}_{rng.choice(keywords)}_{n}" for n in range(count)]


async def build(url: str, name: str, now: datetime) -> float:
    """Make and fill the database ``name`` (see the module docs); seconds it took."""
    started = time.monotonic()
    await made(name)
    await migrate.upgrade(url)
    rng = random.Random(16)
    table = rules()
    topics = list(table.topics)
    keywords = sorted({keyword for pairs in table.forms.values() for _topic, keyword in pairs})
    toolsets: list[tuple[Any, ...]] = []
    toolset_names: list[list[str]] = []
    for key in range(1, TOOLSETS + 2):
        if key == TOOLSETS + 1:  # the gateway's list
            names = ["call_tool", "list_connections", "proxy_request", "get_schema"]
        elif key % 3 == 0:  # a list about one topic
            topic = topics[key % len(topics)]
            own = sorted({k for pairs in table.forms.values() for t, k in pairs if t == topic})
            names = _names(rng, own, rng.randint(4, 12))
        else:
            names = _names(rng, keywords, rng.randint(3, 12))
        canonical = json.dumps([{"name": name, "inputSchema": {"type": "object"}} for name in names]).encode()
        digest = hashlib.sha256(canonical + str(key).encode()).hexdigest()
        toolsets.append((key, digest, "8" * 64, "1" * 64, len(names), zlib.compress(canonical, 6), now))
        toolset_names.append(names)
    servers, runs, days, entries, endpoints, rows = [], [], [], [], [], []
    for key in range(1, SERVERS + 1):
        host = f"mcp{key}.{rng.choice(keywords)}.example.com"
        url_of = f"https://{host}/mcp"
        server_id = hashlib.sha256(url_of.encode()).hexdigest()[:24]
        seen = now - timedelta(minutes=rng.randint(0, 60 * 24 * 7))
        status, reason = rng.choice(STATUSES)
        toolset = TOOLSETS + 1 if key <= GATEWAY_SERVERS else rng.randint(1, TOOLSETS)
        has_tools = status == "ok"
        attestation = hashlib.sha256(f"run {key}".encode()).hexdigest()
        revision, transport = rng.choice(REVISIONS), "sse" if key % 10 == 0 else "streamable_http"
        servers.append((key, server_id, url_of, host, '["93.184.215.14"]', seen - timedelta(days=DAYS), seen, key,
                        status, toolset if has_tools else None))  # fmt: skip
        runs.append((key, attestation, key, seen, status, reason, 0, revision, transport, 40.0, 120.0,
                     toolset if has_tools else None, attestation, EMPTY, EMPTY))  # fmt: skip
        counted = []
        for back in range(DAYS):
            day = (now - timedelta(days=back)).date()
            up = 0 if status in ("unreachable", "timeout") and back < 2 else rng.randint(1, 24)
            down = 0 if up else rng.randint(1, 24)
            days.append((key, day, up, down, 0, 0))
            counted.append(Day(day, up, 0, down, 0))
        entry = None
        if key % 2 == 0:
            topic = rng.choice(topics)
            entry = SimpleNamespace(id=key // 2, name=f"io.example{key % 97}/{topic}-{key}",
                                    title=f"{topic.replace('_', ' ').title()} {key}",
                                    description=f"An MCP server for {topic.replace('_', ' ')}: "
                                                f"{' '.join(rng.sample(keywords, 5))}.")  # fmt: skip
            entries.append((entry.id, entry.name, "1.0.0", "active", now, now, True, now, entry.title,
                            entry.description))  # fmt: skip
            endpoints.append((entry.id, entry.id, url_of, host, "streamable-http", server_id, None, True, now, None,
                              None, None, None, None, None, 0))  # fmt: skip
        definitions = toolsets[toolset - 1][5] if has_tools else None
        facts = SimpleNamespace(server_id=server_id, url=url_of, host=host, last_seen=seen, status=status,
                                reason=reason, protocol_version=revision, transport=transport,
                                attestation_id=attestation, definitions_sha256=toolsets[toolset - 1][1] if has_tools
                                else None, tool_count=len(toolset_names[toolset - 1]) if has_tools else None,
                                definitions=definitions)  # fmt: skip
        changed = seen - timedelta(days=rng.randint(0, 60)) if has_tools and key % 5 == 0 else None
        who = Identity(entry.id, entry.name, entry.title, entry.description, "registry", 1) if entry else NOBODY
        values = compose(facts, counted, changed, who, None, now.date())
        if key <= GATEWAY_SERVERS:
            values["category"] = None  # (shared by 5,000 servers: recount leaves it out)
        rows.append((key, *values.values()))
    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await connection.copy_records_to_table("toolsets", records=toolsets, columns=[
            "id", "definitions_sha256", "schema_fingerprint", "toolset_fingerprint", "tool_count", "definitions",
            "first_seen"])  # fmt: skip
        await connection.copy_records_to_table("servers", records=servers, columns=[
            "id", "server_id", "url", "host", "addresses", "first_seen", "last_seen", "latest_run", "latest_status",
            "latest_toolset"])  # fmt: skip
        await connection.copy_records_to_table("runs", records=runs, columns=[
            "id", "run_id", "server", "observed_at", "status", "reason", "uptime", "protocol_version", "transport",
            "latency_ms", "total_ms", "toolset", "attestation_id", "result", "envelope"])  # fmt: skip
        await connection.copy_records_to_table("server_days", records=days, columns=[
            "server", "day", "up", "down", "gated", "left_out"])  # fmt: skip
        await connection.copy_records_to_table("registry_entries", records=entries, columns=[
            "id", "name", "version", "status", "published_at", "updated_at", "latest", "seen_at", "title",
            "description"])  # fmt: skip
        await connection.copy_records_to_table("registry_endpoints", records=endpoints, columns=[
            "id", "entry", "url", "host", "transport", "server_id", "skip_reason", "swept", "next_due", "claimed_job",
            "claimed_at", "finished_job", "last_status", "last_reason", "last_probed_at", "failures"])  # fmt: skip
        await connection.copy_records_to_table("directory", records=rows, columns=["server", *compose_columns()])
        for name in ("servers", "toolsets", "runs", "registry_entries", "registry_endpoints"):
            await connection.execute(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), (SELECT max(id) FROM {name}))"
            )
        await connection.execute("VACUUM ANALYZE")
    finally:
        await connection.close()
    return time.monotonic() - started


def compose_columns() -> list[str]:
    """The directory columns in the order :func:`compose` gives its values."""
    facts = SimpleNamespace(server_id="0" * 24, url="u", host="h", last_seen=datetime.now(UTC), status=None,
                            reason=None, protocol_version=None, transport=None, attestation_id=None,
                            definitions_sha256=None, tool_count=None, definitions=None)  # fmt: skip
    return list(compose(facts, [], None, NOBODY, None, date.today()))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def figures(rounds: list[list[float]]) -> tuple[float, float, float, float]:
    """Medians over the rounds of p50, p95, p99, and the worst round's p95."""
    p = {q: statistics.median(percentile(r, q) for r in rounds) for q in (50, 95, 99)}
    return p[50], p[95], p[99], max(percentile(r, 95) for r in rounds)


def timed(client: httpx2.Client, path: str, params: dict[str, str] | None = None) -> tuple[float, httpx2.Response]:
    started = time.perf_counter()
    answer = client.get(path, params=params)
    elapsed = (time.perf_counter() - started) * 1000
    assert answer.status_code == 200, (path, params, answer.status_code, answer.text[:200])
    return elapsed, answer


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.directory", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=90)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    name = KEPT if args.keep else run_name("sonde_bench_dir")
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    now = datetime.now(UTC).replace(microsecond=0)
    if not args.keep or not asyncio.run(_exists(name)):
        print(f"making {name}: {SERVERS:,} servers ...", flush=True)
        print(f"  made in {asyncio.run(build(url, name, now)):.1f} s", flush=True)
    try:
        _measure(args, url)
    finally:
        if not args.keep:
            asyncio.run(dropped(name))


async def _exists(name: str) -> bool:
    connection = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres", timeout=5)
    try:
        return bool(await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name))
    finally:
        await connection.close()


def _measure(args: argparse.Namespace, url: str) -> None:
    limit = "10000000/minute"
    settings = Settings(
        database_url=SecretStr(url),
        redis_url=None,
        lookup_rate_limit=limit,
        embedded_jobs=False,
        data_dir=Path(tempfile.mkdtemp(prefix="sonde-bench-dir-")),
    )
    rng = random.Random(7)
    with serve(create_app(settings)) as port, httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        listing = client.get("/v1/servers", params={"limit": "100", "sort": "name"}).json()
        ids = [server["server_id"] for server in listing["servers"]]
        deep = {"sort": "name", "limit": "20"}
        for _ in range(50):  # a cursor 50 pages deep
            deep["cursor"] = client.get("/v1/servers", params=deep).json()["next_cursor"]
        kinds = [*SEARCHES, ("deep page", dict(deep))]
        sample = [client.get("/v1/servers", params={"q": w, "limit": "100"}).json()["servers"] for w in ("a", "e")]
        ids += [server["server_id"] for page in sample for server in page]
        for _ in range(3):  # warm up
            for _name, params in kinds:
                timed(client, "/v1/servers", params)
        by_kind: dict[str, list[float]] = {name: [] for name, _params in kinds}
        search_rounds: list[list[float]] = []
        page_rounds: list[list[float]] = []
        for _ in range(args.rounds):
            searches: list[float] = []
            for i in range(args.n):
                name, params = kinds[i % len(kinds)]
                elapsed, _answer = timed(client, "/v1/servers", params)
                searches.append(elapsed)
                by_kind[name].append(elapsed)
            search_rounds.append(searches)
            pages = [timed(client, f"/servers/{rng.choice(ids)}")[0] for _ in range(args.n)]
            page_rounds.append(pages)
    print(f"\n{'operation':<32}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'worst p95':>11}  goal p95 < {GOAL_MS:.0f} ms")
    for label, rounds in (("directory search (all kinds)", search_rounds), ("server page /servers/{id}", page_rounds)):
        p50, p95, p99, worst = figures(rounds)
        verdict = "ok" if p95 < GOAL_MS else "OVER"
        print(f"{label:<32}{p50:>9.1f}{p95:>9.1f}{p99:>9.1f}{worst:>11.1f}  {verdict}")
    print("\nsearch by kind (all rounds together):")
    for name, values in by_kind.items():
        print(f"  {name:<30}{percentile(values, 50):>9.1f}{percentile(values, 95):>9.1f}{percentile(values, 99):>9.1f}")


if __name__ == "__main__":
    main()
