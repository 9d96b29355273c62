"""A server's history read whole, in one connection: ``GET /v1/servers/{id}/history``.

Policy: the answer needs the server row, its days from the window's first day
(``server_days``: the uptime states and, summed, how many runs each day holds), and the
window's runs summed up. The three are read on one pooled connection, in that order, and the
day rows are read once for both uses: they say whether the window is read day by day
(:mod:`app.history.digests`, a server with thousands of runs) or summed up over its runs in
one statement (:mod:`app.history.window`, most servers). A checkout costs a ping and a few
round trips through the async driver; a hot server's read took three before, each with its own
``SELECT 1``. Digests made by the read are written after the connection is given back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Row, Select, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.history import runs, server_days, servers
from app.history import digests
from app.history.records import Day, ServerSummary, utc
from app.history.window import Window
from app.history.window import window as summarised


@dataclass(frozen=True)
class HistoryRead:
    """What a history read found: the server, its days from the window's first day, the window."""

    server: ServerSummary
    days: list[Day]
    window: Window


def summary_of(row: Row[Any]) -> ServerSummary:
    """The :class:`ServerSummary` of a ``servers`` row joined with its latest run's ids."""
    return ServerSummary(
        server_id=row.server_id, url=row.url, host=row.host, addresses=tuple(row.addresses),
        first_seen=utc(row.first_seen), last_seen=utc(row.last_seen), latest_status=row.latest_status,
        latest_run_id=row.run_id, latest_attestation_id=row.attestation_id,
    )  # fmt: skip


def server_query(server_id: str) -> Select[Any]:
    """The server row with its latest run's id and attestation id (a scheduled job's run id is
    its job id, not its attestation's)."""
    return (
        select(servers, runs.c.run_id, runs.c.attestation_id)
        .outerjoin(runs, runs.c.id == servers.c.latest_run)
        .where(servers.c.server_id == server_id)
    )


async def read(engine: AsyncEngine, server_id: str, since: datetime, limit: int) -> HistoryRead | None:
    """The server's history from ``since`` (the window's newest ``limit`` runs), or ``None`` for
    a server not kept here."""
    since = utc(since).astimezone(UTC)
    fresh: dict[date, digests.Digest] = {}
    async with engine.connect() as db:
        row = (await db.execute(server_query(server_id))).first()
        if row is None:
            return None
        query = select(server_days).where(server_days.c.server == row.id, server_days.c.day >= since.date())
        days = [
            Day(day.day, day.up, day.gated, day.down, day.left_out)
            for day in (await db.execute(query.order_by(server_days.c.day))).all()
        ]
        counts = {day.day: day.up + day.gated + day.down + day.left_out for day in days}
        found = await digests.by_day(db, row.id, counts, since, limit)
        if found is None:
            window = await summarised(db, server_id, since, limit)
        else:
            window, fresh = found
    await digests.keep(engine, row.id, fresh)
    return HistoryRead(summary_of(row), days, window)
