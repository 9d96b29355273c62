"""Reads of the history database from the drill's own (synchronous) code."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.sql import Executable

from app.db.engine import open_engine
from app.db.tables.history import runs
from app.db.tables.monitors import monitor_runs, monitors
from app.db.tables.webhooks import webhook_deliveries


def rows(url: str, statement: Executable) -> list[Any]:
    """Every row of one statement (raises whatever the driver raises when the database is away)."""

    async def run() -> list[Any]:
        engine = open_engine(url)
        try:
            async with engine.connect() as db:
                return list((await db.execute(statement)).all())
        finally:
            await engine.dispose()

    return asyncio.run(run())


def maybe_rows(url: str, statement: Executable) -> list[Any] | None:
    """:func:`rows`, or ``None`` while the database does not answer."""
    try:
        return rows(url, statement)
    except Exception:  # any driver or network fault: not answering now
        return None


def run_ids(url: str) -> list[str]:
    return [row[0] for row in rows(url, select(runs.c.run_id))]


def monitor_run_rows(url: str) -> list[Any]:
    """``(monitor_id, run_id, claimed_at, started_at, finished_at, status, reason)`` of every monitor run."""
    query = select(monitors.c.monitor_id, monitor_runs.c.run_id, monitor_runs.c.claimed_at,
                   monitor_runs.c.started_at, monitor_runs.c.finished_at, monitor_runs.c.status,
                   monitor_runs.c.reason).join(monitors, monitors.c.id == monitor_runs.c.monitor)  # fmt: skip
    return rows(url, query)


def monitor_rows(url: str) -> list[Any]:
    """``(monitor_id, state, runs_bought, runs_left)`` of every monitor."""
    return rows(url, select(monitors.c.monitor_id, monitors.c.state, monitors.c.runs_bought, monitors.c.runs_left))


def delivery_rows(url: str) -> list[Any]:
    """``(delivery_id, event, state, attempts, last_status, last_reason, monitor_id)`` of every webhook delivery."""
    query = select(webhook_deliveries.c.delivery_id, webhook_deliveries.c.event, webhook_deliveries.c.state,
                   webhook_deliveries.c.attempts, webhook_deliveries.c.last_status, webhook_deliveries.c.last_reason,
                   monitors.c.monitor_id).join(monitors, monitors.c.id == webhook_deliveries.c.monitor)  # fmt: skip
    return rows(url, query)


def latest(url: str, column: str) -> datetime | None:
    """The latest ``claimed_at`` or ``finished_at`` of any monitor run (``None``: none, or no answer)."""
    found = maybe_rows(url, select(monitor_runs.c[column]).order_by(monitor_runs.c[column].desc().nulls_last())
                       .limit(1))  # fmt: skip
    if not found or found[0][0] is None:
        return None
    value: datetime = found[0][0]
    return value


def runs_under_way() -> Select[tuple[str]]:
    """The monitor runs started and not finished."""
    return select(monitor_runs.c.run_id).where(monitor_runs.c.started_at.is_not(None),
                                               monitor_runs.c.finished_at.is_(None))  # fmt: skip


def runs_finished_since(moment: datetime) -> Select[tuple[str]]:
    """The monitor runs finished after ``moment``."""
    return select(monitor_runs.c.run_id).where(monitor_runs.c.finished_at > moment)
