"""Synthetic history for ``bench/history.py``: servers, runs, tool sets, days and changes as rows.

Deterministic from a seed, so a load that stopped half way can be resumed (the runs get their ids
in the order they are made, and a loader skips the ids it holds already).

Shape (:class:`Plan`): ``hot`` servers checked every 5 minutes for 90 days (25,920 runs each,
jittered); every other server gets a log-uniform number of runs (12 to 150 before scaling), at
uniform random times of the window, scaled so that all runs add up to ``runs``. Runs are made in
``observed_at`` order across all servers, as a live service stores them, so one server's runs
are scattered over the table as in production. Statuses follow a two-state chain per server (up,
now and then down for a while), with a few servers always gated or always dead, and some runs
left out (429). Each server has a few tool sets (hot ones 5 to 200, each step a row of
``changes``); a run has its server's current tool set when it read the list (status ``ok``).

Sizes are those of the service: ``result`` is a served check result (the ``CheckResultOk`` example
of ``openapi.yaml`` with the server's facts and 3 to 40 tool names, about 3 kB, 1.1 kB after zlib),
``envelope`` a DSSE envelope of an in-toto statement (``tests/data/attest/statement.json`` with
fresh digests, base64, about 3 kB, 1.6 kB after zlib), both compressed as the store does; tool sets
are 3 to 40 real tool definitions from the hygiene corpus, ``changes.diff`` real
:func:`app.drift.diff_tools` output between two of them. Blobs come from pools of distinct zlib
streams (which PostgreSQL cannot compress again), each row its own copy.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import secrets
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from app.canonical import canonical_bytes
from app.drift import diff_tools
from app.history.changes import pack
from app.history.records import server_id_of
from app.history.uptime import CODES, uptime_of
from bench.tools_server import corpus_tools

ROOT = Path(__file__).resolve().parent.parent
DAYS = 90
EVERY_S = 300
HOT_RUNS = DAYS * 86_400 // EVERY_S  # 25,920
POOL = 2048
SHIFT = 20  # servers per plan: at most 2**20
RUN_COLUMNS = (
    "id", "run_id", "server", "observed_at", "status", "reason", "uptime", "protocol_version", "transport",
    "latency_ms", "total_ms", "toolset", "attestation_id", "result", "envelope",
)  # fmt: skip
SERVER_COLUMNS = (
    "id", "server_id", "url", "host", "addresses", "first_seen", "last_seen", "latest_run", "latest_status",
    "latest_toolset",
)  # fmt: skip
TOOLSET_COLUMNS = (
    "id", "definitions_sha256", "schema_fingerprint", "toolset_fingerprint", "tool_count", "definitions", "first_seen",
)  # fmt: skip
DAY_COLUMNS = ("server", "day", "up", "down", "gated", "left_out")
CHANGE_COLUMNS = ("id", "server", "run", "observed_at", "from_toolset", "to_toolset", "verdict", "diff")
_DOWN = (("timeout", "connect_timeout"), ("timeout", "read_timeout"), ("unreachable", "connection_refused"),
         ("unreachable", "connection_reset"), ("server_error", "http_server_error"), ("dns", "dns_nxdomain"),
         ("tls", "cert_expired"))  # fmt: skip
_REACHED = frozenset({"ok", "auth", "server_error", "client_error", "not_found", "not_mcp", "redirect", "tls"})
_VERSIONS = (("2026-07-28", "streamable_http"), ("2025-11-25", "streamable_http"), ("2025-06-18", "streamable_http"),
             ("2025-03-26", "streamable_http"), ("2024-11-05", "sse"))  # fmt: skip
_DOMAINS = ("example.com", "mcp.example.net", "tools.example.org", "api.example.dev", "example.io", "example.ai")


@dataclass(frozen=True)
class Plan:
    """How much to make: ``servers`` servers of which ``hot`` are checked every 5 minutes, ``runs`` runs."""

    servers: int
    runs: int
    hot: int
    seed: int = 45_913_866

    def describe(self) -> dict[str, int]:
        """The plan as stored beside generated data (a reused database must match it)."""
        return {"servers": self.servers, "runs": self.runs, "hot": self.hot, "seed": self.seed}


def minimum_runs(servers: int, hot: int) -> int:
    """The fewest runs a plan of ``servers`` servers, ``hot`` of them hot, can have: 25,920 per hot
    server and one for each of the others."""
    return hot * HOT_RUNS + servers - hot


def url_of(server: int) -> str:
    """The URL of generated server number ``server`` (1-based)."""
    return f"https://mcp-{server:07d}.{_DOMAINS[server % len(_DOMAINS)]}/mcp"


def counts(plan: Plan) -> tuple[list[int], frozenset[int]]:
    """Runs per server (index 0 unused) and the hot servers (see the module docs)."""
    rng = random.Random(plan.seed)
    hot = frozenset(rng.sample(range(1, plan.servers + 1), plan.hot))
    drawn = [0] + [
        0 if s in hot else math.exp(rng.uniform(math.log(12), math.log(150))) for s in range(1, plan.servers + 1)
    ]
    left = plan.runs - plan.hot * HOT_RUNS
    if not 0 <= plan.hot < plan.servers or left < plan.servers - plan.hot:
        raise ValueError(f"no such plan: {plan.describe()} (see minimum_runs())")
    scale = left / sum(drawn)
    out = [0] + [HOT_RUNS if s in hot else max(1, round(drawn[s] * scale)) for s in range(1, plan.servers + 1)]
    typical = [s for s in range(1, plan.servers + 1) if s not in hot]
    while (excess := sum(out) - plan.runs) != 0:
        for s in rng.sample(typical, min(abs(excess), len(typical))):
            if excess > 0 and out[s] > 1:
                out[s], excess = out[s] - 1, excess - 1
            elif excess < 0:
                out[s], excess = out[s] + 1, excess + 1
    return out, hot


def typical_servers(plan: Plan, n: int) -> list[int]:
    """Up to ``n`` servers that are not hot, from the middle of the distribution (40th to 60th percentile
    of runs; fewer when the middle holds fewer, the median one when it holds none)."""
    per, hot = counts(plan)
    ranked = sorted((per[s], s) for s in range(1, plan.servers + 1) if s not in hot)
    middle = [s for _, s in ranked[len(ranked) * 2 // 5 : len(ranked) * 3 // 5]] or [ranked[len(ranked) // 2][1]]
    return random.Random(plan.seed + 1).sample(middle, min(n, len(middle)))


@dataclass(frozen=True)
class Pools:
    """Real-sized compressed blobs, reused round robin (each row stores its own copy)."""

    results: list[bytes]
    envelopes: list[bytes]
    definitions: list[tuple[bytes, int]]  # (zlib canonical JSON, tool count)
    diffs: list[tuple[bytes, str]]  # (changes.diff, verdict)
    tool_lists: list[tuple[dict[str, Any], ...]]


def _hex(rng: random.Random) -> str:
    return f"{rng.getrandbits(256):064x}"


def tool_lists(rng: random.Random, n: int) -> list[tuple[dict[str, Any], ...]]:
    """``n`` lists of 3 to 40 real tool definitions (the hygiene corpus), most of them short (mode 6, mean 16)."""
    corpus = corpus_tools(241)
    return [tuple(rng.sample(corpus, round(rng.triangular(3, 40, 6)))) for _ in range(n)]


def served_result(rng: random.Random, template: dict[str, Any], names: list[str]) -> bytes:
    """A served result's JSON text (without tool definitions and attestation), with fresh facts."""
    value = json.loads(json.dumps(template))
    value["checked_at"] = datetime(2026, 11, 1, tzinfo=UTC).isoformat().replace("+00:00", "Z")
    value["url"] = f"https://mcp-{rng.randrange(10**7):07d}.example.com/mcp"
    value["latency_ms"] = round(rng.uniform(10, 900), 1)
    value["timings"] = {
        key: (round(rng.uniform(1, 400), 1) if v is not None else None) for key, v in value["timings"].items()
    }
    value["tools"] = dict(value["tools"], count=len(names), names=names)
    value["addresses"] = [f"203.0.{rng.randrange(256)}.{rng.randrange(256)}"]
    for check in value["checks"]:
        evidence = check.get("evidence") or {}
        if "sha256" in evidence:
            evidence["sha256"] = _hex(rng)
    value["toolset_fingerprint"], value["schema_fingerprint"] = _hex(rng), _hex(rng)
    return json.dumps(value, separators=(",", ":")).encode()


def envelope(rng: random.Random, statement: dict[str, Any]) -> bytes:
    """A DSSE envelope's JSON text: the statement with fresh digests, base64, one Ed25519 signature."""
    value = json.loads(json.dumps(statement))
    for subject in value.get("subject", []):
        subject["digest"] = {"sha256": _hex(rng)}
    value["predicate"]["result_sha256"] = _hex(rng)
    value["predicate"]["observed_at"] = f"2026-11-{rng.randint(1, 30):02d}T{rng.randint(0, 23):02d}:00:00Z"
    payload = base64.b64encode(canonical_bytes(value)).decode()
    signature = {"keyid": _hex(rng)[:16], "sig": base64.b64encode(rng.randbytes(64)).decode()}
    document = {"payloadType": "application/vnd.in-toto+json", "payload": payload, "signatures": [signature]}
    return json.dumps(document, separators=(",", ":")).encode()


def pools(seed: int) -> Pools:
    """The blob pools (about a second to make)."""
    rng = random.Random(seed + 2)
    template = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))["components"]["examples"]["CheckResultOk"]
    template = {
        k: v for k, v in template["value"].items() if k not in ("attestation", "attestation_id", "tool_definitions")
    }
    statement = json.loads((ROOT / "tests" / "data" / "attest" / "statement.json").read_text("utf-8"))
    lists = tool_lists(rng, 256)
    results = [
        zlib.compress(served_result(rng, template, [t["name"] for t in rng.choice(lists)]), 6) for _ in range(POOL)
    ]
    envelopes = [zlib.compress(envelope(rng, statement), 6) for _ in range(POOL)]
    definitions = [(zlib.compress(canonical_bytes(list(tools)), 6), len(tools)) for tools in lists]
    diffs: list[tuple[bytes, str]] = []
    for i, (old, new) in enumerate(zip(lists[:128], lists[128:], strict=True)):
        # Tools added (compatible), or part of the list replaced (breaking).
        merged = list(old) + list(new[:2]) if i % 2 else list(old[: len(old) // 2]) + list(new[len(new) // 2 :])
        diff = diff_tools(old, merged)
        if diff.verdict != "unchanged":
            diffs.append((pack(diff.model_dump(mode="json", exclude_none=True)), diff.verdict))
    return Pools(results, envelopes, definitions, diffs, lists)


@dataclass
class Made:
    """What the runs left behind, for the other tables (filled while the runs are made)."""

    servers: list[tuple[Any, ...]] = field(default_factory=list)
    toolsets: list[tuple[Any, ...]] = field(default_factory=list)
    days: list[tuple[Any, ...]] = field(default_factory=list)
    changes: list[tuple[Any, ...]] = field(default_factory=list)


def run_key(run: int) -> str:
    """``run_id`` (and ``attestation_id``) of generated run ``run``: 64 hex characters."""
    return hashlib.sha256(b"bench-run-%d" % run).hexdigest()


def generate(
    plan: Plan, blobs: Pools, now: datetime, made: Made, batch: int = 10_000
) -> Iterator[list[tuple[Any, ...]]]:
    """Batches of ``runs`` rows (:data:`RUN_COLUMNS`), oldest first; then ``made`` holds the rest.

    ``now`` is the end of the 90-day window (the runs are in ``[now - 90 days, now)``).
    """
    rng = random.Random(plan.seed + 3)
    per, hot = counts(plan)
    start = now.replace(microsecond=0) - timedelta(days=DAYS)
    span = DAYS * 86_400
    keys: list[int] = []
    for s in range(1, plan.servers + 1):
        if s in hot:
            offset = rng.randrange(EVERY_S)
            keys.extend(((min(span - 1, i * EVERY_S + offset)) << SHIFT) | s for i in range(per[s]))
        else:
            keys.extend((rng.randrange(span) << SHIFT) | s for _ in range(per[s]))
    keys.sort()
    # Per server: profile, tool sets and where they change, the chain's state, what it saw last.
    n = plan.servers + 1
    toolset_first, boundaries = [0] * n, [[] for _ in range(n)]  # type: list[int], list[list[int]]
    next_toolset = 1
    for s in range(1, n):
        k = rng.randint(5, 201) if s in hot else rng.choices((1, 2, 3, 4, 5, 6), (60, 25, 10, 2, 2, 1))[0]
        k = max(1, min(k, per[s] // 2))
        toolset_first[s] = next_toolset
        next_toolset += k
        boundaries[s] = sorted(rng.sample(range(1, per[s]), k - 1), reverse=True) if k > 1 else []
    profile = [rng.choices("nga", (95, 3, 2))[0] for _ in range(n)]  # normal, gated, always down
    version = [rng.randrange(len(_VERSIONS)) for _ in range(n)]
    base_ms = [rng.lognormvariate(math.log(80), 0.7) for _ in range(n)]
    seen, down, pending = [0] * n, [False] * n, [False] * n
    current = list(toolset_first)
    first_seen: list[datetime | None] = [None] * n
    last: list[tuple[datetime, int, str] | None] = [None] * n
    latest_toolset: list[int | None] = [None] * n
    toolset_seen: dict[int, datetime] = {}
    day_counts: dict[tuple[int, int], list[int]] = {}
    codes = {pair: CODES[uptime_of(*pair)] for pair in (*_DOWN, ("ok", "ok"), ("auth", "auth_required"),
                                                        ("client_error", "rate_limited"))}  # fmt: skip
    column = {CODES["up"]: 0, CODES["down"]: 1, CODES["gated"]: 2, CODES["left_out"]: 3}
    rows: list[tuple[Any, ...]] = []
    for run, key in enumerate(keys, start=1):
        s, t = key & ((1 << SHIFT) - 1), key >> SHIFT
        at = start + timedelta(seconds=t, microseconds=rng.randrange(1_000_000))
        index = seen[s]
        seen[s] = index + 1
        if boundaries[s] and boundaries[s][-1] <= index:
            boundaries[s].pop()
            pending[s] = True
        kind, roll = profile[s], rng.random()
        if kind == "g":
            pair = ("auth", "auth_required")
        elif kind == "a":
            pair = _DOWN[s % len(_DOWN)]
        else:
            down[s] = roll < 0.7 if down[s] else roll < 0.01
            pair = (
                _DOWN[(s + index // 50) % len(_DOWN)]
                if down[s]
                else (("client_error", "rate_limited") if roll > 0.997 else ("ok", "ok"))
            )
        status, reason = pair
        toolset = None
        if status == "ok":
            if pending[s]:
                pending[s] = False
                previous, current[s] = current[s], current[s] + 1
                diff, verdict = blobs.diffs[(run * 31) % len(blobs.diffs)]
                made.changes.append((len(made.changes) + 1, s, run, at, previous, current[s], verdict, diff))
            toolset = current[s]
            toolset_seen.setdefault(toolset, at)
            latest_toolset[s] = toolset
        latency = round(base_ms[s] * (0.6 + rng.random()), 1) if status in _REACHED else None
        total = round((latency or 5000.0) * 2.7 + rng.random() * 40, 1)
        protocol, transport = _VERSIONS[version[s]] if status == "ok" else (None, None)
        code = codes[pair]
        counted = day_counts.setdefault((s, (at.date() - start.date()).days), [0, 0, 0, 0])
        counted[column[code]] += 1
        ident = run_key(run)
        rows.append((
            run, ident, s, at, status, reason, code, protocol, transport, latency, total, toolset, ident,
            blobs.results[(run * 2_654_435_761) % POOL], blobs.envelopes[(run * 40_503) % POOL],
        ))  # fmt: skip
        if first_seen[s] is None:
            first_seen[s] = at
        last[s] = (at, run, status)
        if len(rows) == batch:
            yield rows
            rows = []
    if rows:
        yield rows
    for s in range(1, n):
        url = url_of(s)
        ended = last[s]
        assert ended is not None and first_seen[s] is not None
        addresses = [f"203.0.{s % 256}.{s // 256 % 256}"]
        made.servers.append((s, server_id_of(url), url, url.split("/")[2], addresses, first_seen[s], ended[0], ended[1],
                             ended[2], latest_toolset[s]))  # fmt: skip
    for toolset in range(1, next_toolset):
        definitions, count = blobs.definitions[toolset % len(blobs.definitions)]
        digest = hashlib.sha256(b"bench-toolset-%d" % toolset).hexdigest()
        made.toolsets.append(
            (toolset, digest, _hex(rng), _hex(rng), count, definitions, toolset_seen.get(toolset, start))
        )
    for (s, offset), (up, down_n, gated, left_out) in sorted(day_counts.items()):
        made.days.append((s, start.date() + timedelta(days=offset), up, down_n, gated, left_out))


def fresh_run_id() -> str:
    """A run id no generated run has."""
    return secrets.token_hex(32)
