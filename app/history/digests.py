"""A history window read day by day: each past UTC day's runs summed up once and kept.

Policy: a window that starts at a UTC midnight (as ``GET /v1/servers/{id}/history`` asks) is
the days from then to today. A past day's runs are kept summed up in ``day_digests``: their
count, the first and the last run's status (with when and why the first was), the status
changes within the day, and the latencies of the runs that reached the server, sorted. A digest
is written by the first read that needs it and is valid while its count equals the day's
counters in ``server_days``, which every stored run raises in its own transaction: a run stored
late (after an outage) for a past day makes that day's digest stale and it is made again; a
prune that took part of a day leaves the day's digest never valid, so that day is read from its
runs each time. Today is always read from its runs. Nothing here changes what a read answers:
the day by day result is :mod:`app.history.window`'s, which the tests hold it to.

A window of fewer than :data:`FROM_RUNS` runs (most servers: one statement over a few hundred
index entries is quicker than the digests' reads) or of more runs than the read's ``limit`` is
not read this way (the caller sums the runs up, :mod:`app.history.window`).
"""

from __future__ import annotations

import itertools
import json
import sys
import zlib
from array import array
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.tables.history import day_digests, runs, server_days, servers
from app.history import report
from app.history.records import utc
from app.history.window import Window

Change = tuple[str, str, str, str]  # (at, from, to, reason)
#: Runs a window holds at least before it is read day by day.
FROM_RUNS = 2_000


@dataclass
class Digest:
    """One day of a server's runs, summed up (see the module docs)."""

    runs: int = 0
    first: tuple[str, str, str] | None = None  # (at, status, reason) of the day's first run
    last: str | None = None  # the day's last status
    changes: list[Change] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def pack(self) -> bytes:
        """``day_digests.digest``: the length of a compressed JSON head, the head (count, first,
        last, changes), then the latencies as little-endian doubles (no text to parse back)."""
        head = zlib.compress(json.dumps([self.runs, self.first, self.last, self.changes]).encode(), 6)
        values = array("d", self.latencies)
        if sys.byteorder != "little":
            values.byteswap()
        return len(head).to_bytes(4, "little") + head + values.tobytes()

    @classmethod
    def unpack(cls, blob: bytes) -> Digest:
        """The digest :meth:`pack` packed."""
        size = int.from_bytes(blob[:4], "little")
        runs_, first, last, changes = json.loads(zlib.decompress(blob[4 : 4 + size]))
        values = array("d")
        values.frombytes(blob[4 + size :])
        if sys.byteorder != "little":
            values.byteswap()
        return cls(
            runs_,
            tuple(first) if first is not None else None,
            last,
            [(at, before, status, reason) for at, before, status, reason in changes],
            values.tolist(),
        )


def _read(blob: bytes) -> Digest | None:
    """A kept digest, or ``None`` for one that does not read back (made again)."""
    try:
        return Digest.unpack(blob)
    except (ValueError, TypeError, zlib.error, IndexError):
        return None


def _iso(moment: datetime) -> str:
    return utc(moment).astimezone(UTC).isoformat().replace("+00:00", "Z")


def _digests_of(rows: list[Any]) -> dict[date, Digest]:
    """The digests of runs ``(observed_at, status, reason, latency_ms)``, oldest first, by UTC day."""
    out: dict[date, Digest] = {}
    for day, group in itertools.groupby(rows, key=lambda row: utc(row.observed_at).astimezone(UTC).date()):
        digest = out.setdefault(day, Digest())
        for row in group:
            if digest.first is None:
                digest.first = (_iso(row.observed_at), row.status, row.reason)
            elif row.status != digest.last:
                digest.changes.append((_iso(row.observed_at), digest.last or "", row.status, row.reason))
            digest.last = row.status
            digest.runs += 1
            if row.latency_ms is not None and row.status not in report.UNREACHED:
                digest.latencies.append(row.latency_ms)
        digest.latencies.sort()
    return out


async def _runs_of(db: AsyncConnection, server: int, first: date, last: date) -> dict[date, Digest]:
    """The digests of the server's days ``first`` to ``last`` (inclusive), read from their runs."""
    start = datetime.combine(first, time(), UTC)
    end = datetime.combine(last + timedelta(days=1), time(), UTC)
    query = (
        select(runs.c.observed_at, runs.c.status, runs.c.reason, runs.c.latency_ms)
        .where(runs.c.server == server, runs.c.observed_at >= start, runs.c.observed_at < end)
        .order_by(runs.c.observed_at)  # (index order: an index-only scan of ix_runs_server_history)
    )
    return _digests_of(list((await db.execute(query)).all()))


def _ranges(days: list[date]) -> list[tuple[date, date]]:
    """Consecutive runs of ``days`` (sorted) as ``(first, last)`` pairs."""
    out: list[tuple[date, date]] = []
    for day in days:
        if out and out[-1][1] + timedelta(days=1) == day:
            out[-1] = (out[-1][0], day)
        else:
            out.append((day, day))
    return out


async def window(
    engine: AsyncEngine, server_id: str, since: datetime, limit: int, today: date | None = None
) -> Window | None:
    """The window from ``since`` read day by day, or ``None`` when it is not read this way (see
    the module docs: not at a midnight, an unknown server, fewer runs than :data:`FROM_RUNS` or
    more than ``limit``); the digests it made are kept."""
    async with engine.connect() as db:
        server = await db.scalar(select(servers.c.id).where(servers.c.server_id == server_id))
        if server is None:
            return None
        counted = select(
            server_days.c.day,
            server_days.c.up + server_days.c.gated + server_days.c.down + server_days.c.left_out,
        ).where(server_days.c.server == server, server_days.c.day >= utc(since).astimezone(UTC).date())
        counts = {day: int(n) for day, n in (await db.execute(counted)).all()}
        found = await by_day(db, server, counts, since, limit, today)
    if found is None:
        return None
    answer, fresh = found
    await keep(engine, server, fresh)
    return answer


async def by_day(
    db: AsyncConnection,
    server: int,
    counts: dict[date, int],
    since: datetime,
    limit: int,
    today: date | None = None,
) -> tuple[Window, dict[date, Digest]] | None:
    """The window from ``since`` of the server whose key is ``server`` and whose days from
    ``since`` on hold ``counts`` runs (from ``server_days``), read day by day; with the digests
    made now that may be kept (:func:`keep`, once the connection is given back). ``None`` when
    the window is not read this way (see :func:`window`)."""
    since = utc(since).astimezone(UTC)
    if since.time() != time() or not FROM_RUNS <= sum(counts.values()) <= limit:
        return None
    today = today or datetime.now(UTC).date()
    kept = select(day_digests.c.day, day_digests.c.runs, day_digests.c.digest).where(
        and_(day_digests.c.server == server, day_digests.c.day >= since.date(), day_digests.c.day < today)
    )
    digests = {
        day: read for day, n, blob in (await db.execute(kept)).all() if counts.get(day) == n and (read := _read(blob))
    }
    wanted = sorted(day for day in counts if day not in digests)
    made: dict[date, Digest] = {}
    for first, last in _ranges(wanted):
        made |= await _runs_of(db, server, first, last)
    fresh = {day: digest for day, digest in made.items() if day < today and counts.get(day) == digest.runs}
    return _combine({**digests, **made}), fresh


async def keep(engine: AsyncEngine, server: int, digests: dict[date, Digest]) -> None:
    """Write the digests just made (a failure only means they are made again next time)."""
    if not digests:
        return
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    rows = [{"server": server, "day": day, "runs": d.runs, "digest": d.pack()} for day, d in digests.items()]
    statement = insert(day_digests).values(rows)
    upsert = statement.on_conflict_do_update(
        index_elements=[day_digests.c.server, day_digests.c.day],
        set_={"runs": statement.excluded.runs, "digest": statement.excluded.digest},
    )
    try:
        async with engine.begin() as db:
            await db.execute(upsert)
    except Exception:  # any fault: the read is answered all the same
        return


def _combine(digests: dict[date, Digest]) -> Window:
    """The window of consecutive days' digests (as :mod:`app.history.window` sums the runs up)."""
    changes: list[Change] = []
    latencies: list[float] = []
    total = 0
    last: str | None = None
    for day in sorted(digests):
        digest = digests[day]
        if digest.first is None:
            continue
        at, status, reason = digest.first
        if last is not None and status != last:
            changes.append((at, last, status, reason))
        changes.extend(digest.changes)
        last = digest.last
        total += digest.runs
        latencies.extend(digest.latencies)
    return Window(
        runs=total,
        reached=len(latencies),
        latency=report.percentiles(latencies),
        status_changes=[{"at": at, "from": before, "to": to, "reason": why} for at, before, to, why in changes],
    )
