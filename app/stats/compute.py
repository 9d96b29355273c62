"""The public statistics, computed from the stored runs (every figure is defined in ``stats.yaml``).

One read of the newest run of every server (``servers.latest_run``: the columns of
:mod:`app.db.tables.history`, never a result blob) is summed up here, in the process, so the
figures and their caps are the same on PostgreSQL and SQLite; one aggregate over ``changes``
per drift window. Protocol versions are what servers sent (cleaned, at most 64 characters, but
still their text): only the :attr:`~app.stats.figures.Figures.protocol_versions` most answered
per path are named, the rest summed up as ``other``, so a crowd of made-up versions cannot
grow the answer.
"""

from __future__ import annotations

import statistics
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import case, distinct, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.facts import PATHS
from app.db.tables.history import changes, runs, servers
from app.probe.jsonrpc import HANDSHAKE_VERSION, MODERN_VERSION
from app.probe.reasons import REASONS, STATUSES
from app.stats.figures import Figures, figures

#: The drift windows, days.
WINDOWS: Final = (7, 30)
#: What the probe offers on each handshake path (:mod:`app.probe.jsonrpc`).
OFFERED: Final = {"server/discover": MODERN_VERSION, "initialize": HANDSHAKE_VERSION}
#: Rows read per round trip.
PARTITION: Final = 5000


def share(part: int, whole: int) -> float | None:
    """``part / whole`` rounded to 4 places, ``None`` when ``whole`` is 0."""
    return None if whole == 0 else round(part / whole, 4)


async def compute(db: AsyncConnection, now: datetime) -> dict[str, Any]:
    """The statistics at ``now`` (see the module docs), as the JSON ``GET /v1/stats`` answers."""
    spec = figures()
    statuses: Counter[str] = Counter()
    reasons: Counter[tuple[str, str]] = Counter()
    versions: dict[str, Counter[str | None]] = {path: Counter() for path in PATHS.values()}
    tools: Counter[int] = Counter()
    published = 0
    latest = (
        select(runs.c.status, runs.c.reason, runs.c.handshake, runs.c.protocol_version,
               runs.c.metadata_published, runs.c.tool_count)
        .select_from(servers.join(runs, runs.c.id == servers.c.latest_run))
    )  # fmt: skip
    result = await db.stream(latest.execution_options(yield_per=PARTITION))
    async for status, reason, path, version, metadata, count in result:
        statuses[status] += 1
        reasons[(status, reason)] += 1
        if path in versions:
            versions[path][version] += 1
        if status == "auth" and metadata:
            published += 1
        if status == "ok" and count is not None:
            tools[int(count)] += 1
    total = sum(statuses.values())
    up = statuses["ok"] + statuses["auth"]
    return {
        "computed_at": now.isoformat().replace("+00:00", "Z"),
        "servers": total,
        "by_status": [{"status": s, "servers": statuses[s], "share": share(statuses[s], total)} for s in STATUSES],
        "failures": _failures(spec, reasons),
        "protocol_versions": [_path(spec, path, versions[path]) for path in PATHS.values()],
        "auth": {"servers_up": up, "servers": statuses["auth"], "share": share(statuses["auth"], up)},
        "metadata_published": {"servers": published, "share": share(published, statuses["auth"])},
        "tool_counts": _tools(spec, tools),
        "drift": [await _drift(db, now, days) for days in WINDOWS],
        "definitions": dict(spec.definitions),
    }


def _failures(spec: Figures, reasons: Counter[tuple[str, str]]) -> dict[str, Any]:
    counted: Counter[str] = Counter()
    for (status, reason), n in reasons.items():
        key = spec.bucket_of(status, reason)
        if key is not None:
            counted[key] += n
    failing = sum(counted.values())
    buckets = []
    for bucket in spec.buckets:
        keys = sorted(r for r, (status, _) in REASONS.items() if spec.bucket_of(status, r) == bucket.key)
        buckets.append({
            "key": bucket.key, "label": bucket.label, "servers": counted[bucket.key],
            "share": share(counted[bucket.key], failing), "reasons": keys, "definition": bucket.definition,
        })  # fmt: skip
    return {"servers": failing, "buckets": buckets}


def _path(spec: Figures, path: str, answered: Counter[str | None]) -> dict[str, Any]:
    named = [(v, n) for v, n in answered.most_common() if v is not None]
    named.sort(key=lambda item: (-item[1], item[0]))
    shown = named[: spec.protocol_versions]
    rest = sum(n for _, n in named[spec.protocol_versions :])
    rows: list[dict[str, Any]] = [{"version": v, "servers": n} for v, n in shown]
    if rest:
        rows.append({"version": "other", "servers": rest})
    if answered[None]:
        rows.append({"version": None, "servers": answered[None]})  # (the server sent no usable version)
    return {"path": path, "offered": OFFERED[path], "servers": sum(answered.values()), "answered": rows}


def _tools(spec: Figures, counts: Counter[int]) -> dict[str, Any]:
    servers_counted = sum(counts.values())
    binned = [0] * len(spec.tool_counts)
    for count, n in counts.items():
        binned[spec.tool_bucket(count)] += n
    median = _median(counts) if servers_counted else None
    labels = spec.tool_labels()
    bounds = spec.tool_counts
    highs = [bound - 1 for bound in bounds[1:]] + [None]
    buckets = [{"label": labels[i], "min": low, "max": highs[i], "servers": binned[i]} for i, low in enumerate(bounds)]
    return {"servers": servers_counted, "median": median, "buckets": buckets}


def _median(counts: Counter[int]) -> float:
    """The median of the multiset ``counts`` (value -> how often), without expanding it."""
    ordered = sorted(counts.items())
    total = sum(counts.values())
    middle = [(total - 1) // 2, total // 2]
    found: list[int] = []
    seen = 0
    for value, n in ordered:
        while len(found) < 2 and middle[len(found)] < seen + n:
            found.append(value)
        seen += n
    return float(statistics.fmean(found))


async def _drift(db: AsyncConnection, now: datetime, days: int) -> dict[str, Any]:
    breaking = changes.c.verdict == "breaking"
    query = select(
        func.count(),
        func.count(distinct(changes.c.server)),
        func.coalesce(func.sum(case((breaking, 1), else_=0)), 0),
        func.count(distinct(case((breaking, changes.c.server)))),
    ).where(changes.c.observed_at >= now - timedelta(days=days))
    row = (await db.execute(query)).one()
    total, servers_changed, broke, servers_broken = (int(value or 0) for value in row)
    return {
        "days": days, "changes": total, "servers": servers_changed, "breaking": broke,
        "breaking_servers": servers_broken, "breaking_share": share(broke, total),
    }  # fmt: skip
