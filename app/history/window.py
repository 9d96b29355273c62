"""A server's runs of a time window, summarised by the database (``GET /v1/servers/{id}/history``).

Policy: the window is what :meth:`app.history.store.SqlHistory.points` would return (the
server's newest ``limit`` runs observed from ``since`` on), and the database hands back only
what the answer shows, never the runs themselves: a server checked every 5 minutes has 25,920
runs in 90 days, and turning each into a Python object costs more than the whole read may.
One statement of two parts, each an index-only scan of ``ix_runs_server_history`` in the
index's order (newest first, so no sort but the latencies'):

- each run whose status differs from the run before it, oldest first, as
  :func:`app.history.report.status_changes` gives them (``lead`` over the newest first);
- one row: the number of runs, and the nearest-rank p50, p90 and p99 of the handshake latency
  over the runs that reached the server (a latency, and a status other than ``dns``,
  ``unreachable``, ``timeout``) with how many those were. PostgreSQL picks the ranks with
  ``percentile_disc`` (one sort for the three; rank ``ceil(q / 100 * n)``, as
  :func:`app.history.report.percentiles`), SQLite, which has no ordered-set aggregate, by
  ``row_number`` against ``ceil(q * n / 100)`` in integer arithmetic (the same rank for every
  window up to ``POINTS`` runs).

The pure functions of :mod:`app.history.report` stay the definition; the tests hold this
query to them on both backends.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Float, Integer, String, and_, bindparam, case, func, literal, null, select, union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables.history import Moment, runs, servers
from app.history.records import utc
from app.history.report import UNREACHED

QUANTILES = (50, 90, 99)


@dataclass(frozen=True)
class Window:
    """What a server's runs of a window say (see the module docs)."""

    runs: int
    reached: int
    latency: dict[str, float | None]
    status_changes: list[dict[str, str]]


def _typed(value: Any, kind: Any) -> Any:
    return null().cast(kind) if value is None else value


COLUMNS = ("kind", "at", "before", "status", "reason", "p50", "p90", "p99", "reached", "runs")
TYPES = (String(), Moment, String(), String(), String(), Float(), Float(), Float(), Integer(), Integer())


def _row(*values: Any) -> list[Any]:
    return [_typed(value, kind).label(name) for value, kind, name in zip(values, TYPES, COLUMNS, strict=True)]


def _runs() -> Any:
    """The window, newest first (a subquery of its own each time: each use scans the index in its order)."""
    server = select(servers.c.id).where(servers.c.server_id == bindparam("server_id", type_=String())).scalar_subquery()
    return (
        select(runs.c.observed_at, runs.c.status, runs.c.reason, runs.c.latency_ms)
        .where(runs.c.server == server, runs.c.observed_at >= bindparam("since", type_=Moment))
        .order_by(runs.c.observed_at.desc())
        .limit(bindparam("limit", type_=Integer()))
        .subquery("win")
    )


def _summary(dialect: str) -> Any:
    """One row: the latency percentiles, how many runs reached the server, how many runs."""
    win = _runs()
    reached = and_(win.c.latency_ms.is_not(None), win.c.status.not_in(UNREACHED))
    if dialect == "postgresql":  # an ordered-set aggregate: one sort, shared by the three
        picks: list[Any] = [
            func.percentile_disc(q / 100).within_group(win.c.latency_ms).filter(reached) for q in QUANTILES
        ]
        return select(*_row(literal("summary"), None, None, None, None, *picks, func.count().filter(reached),
                            func.count()))  # fmt: skip
    ranked = (
        select(
            win.c.latency_ms,
            func.row_number().over(order_by=win.c.latency_ms).label("rank"),
            func.count().over().label("n"),
        )
        .where(reached)
        .subquery("ranked")
    )
    picks = [func.max(case((ranked.c.rank == (ranked.c.n * q + 99) // 100, ranked.c.latency_ms))) for q in QUANTILES]
    total = select(func.count()).select_from(_runs()).scalar_subquery()
    return select(*_row(literal("summary"), None, None, None, None, *picks, func.max(ranked.c.n), total))


@functools.cache
def statement(dialect: str) -> Any:
    """The statement that sums a window up on ``dialect``, with the parameters ``server_id``,
    ``since`` and ``limit`` (made once: building it costs more than running it for most servers)."""
    win = _runs()
    # (lead over the newest first is lag over the oldest first, in the index's own order: no sort)
    before = func.lead(win.c.status).over(order_by=win.c.observed_at.desc())
    marked = select(win.c.observed_at, win.c.status, win.c.reason, before.label("before")).subquery("marked")
    transitions = select(
        *_row(literal("change"), marked.c.observed_at, marked.c.before, marked.c.status, marked.c.reason, None, None,
              None, None, None)
    ).where(marked.c.before != marked.c.status)  # fmt: skip
    return union_all(transitions, _summary(dialect))


async def window(db: AsyncConnection, server_id: str, since: datetime, limit: int) -> Window:
    """The summary of the server's window (see the module docs); an unknown server has an empty one."""
    parameters = {"server_id": server_id, "since": since, "limit": limit}
    rows = (await db.execute(statement(db.dialect.name), parameters)).all()
    summary = next(row for row in rows if row.kind == "summary")
    latency = {f"p{q}_ms": getattr(summary, f"p{q}") for q in QUANTILES}
    changes = sorted((utc(row.at), row.before, row.status, row.reason) for row in rows if row.kind == "change")
    return Window(
        runs=int(summary.runs),
        reached=int(summary.reached or 0),
        latency=latency,
        status_changes=[
            {"at": at.isoformat().replace("+00:00", "Z"), "from": before, "to": status, "reason": reason}
            for at, before, status, reason in changes
        ],
    )
