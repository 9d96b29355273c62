"""Retention: runs past ``history_retention_days`` are deleted, in batches, by the service on a timer.

Policy:

- :func:`prune` deletes the runs observed before a time :data:`PRUNE_BATCH` at a time, the
  oldest first (``DELETE ... WHERE id IN (SELECT id ... ORDER BY id LIMIT n)``, the same SQL on
  PostgreSQL and SQLite), each batch in a transaction of its own with the changes that cascade
  from its runs. No lock is held for long and no statement meets the statement timeout
  (:mod:`app.db.engine`), however large the backlog. Then the days before the first kept
  day go, then the tool sets nothing points to any more: no run, no change (as its old list), no
  baseline and no server's latest state. A prune cut off half-way keeps the batches it did; the
  next one goes on from there.
- :class:`Pruner` is the service's job: the first prune ``delay_s`` (a minute) after the start (plus a
  random part of up to as much again, at most a minute, so replicas started together do not
  prune together), then one every ``interval_s`` (an hour); each within :data:`PRUNE_TIMEOUT_S`. A prune
  that fails (the database does not answer) or runs out of time is logged and tried again at the
  next turn; the job never stops the service, and stops with it.
- Replicas prune without a lock between them: deleting what is already gone deletes nothing, so
  two prunes at once only share the work (one may count fewer runs than it waited for).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from sqlalchemy import delete, exists, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.background import stop
from app.db.tables.history import baselines, changes, day_digests, runs, server_days, servers, toolsets

logger = logging.getLogger("mcp_sonde.history")

#: Runs deleted per transaction (with the changes that cascade from them): about 70 ms a batch on
#: PostgreSQL over 200,000 runs and changes, so a million runs go in half a minute.
PRUNE_BATCH = 2_000
#: Most one prune of the service's job may take before it is cut off, seconds.
PRUNE_TIMEOUT_S = 300.0
#: Wait after the start before the first prune (plus up to as much again, at most a minute), seconds.
PRUNE_DELAY_S = 60.0
#: Wait between two prunes, seconds.
PRUNE_INTERVAL_S = 3600.0


async def prune(engine: AsyncEngine, before: datetime, batch: int = PRUNE_BATCH) -> int:
    """Delete the runs observed before ``before`` and what only they kept (see the module docs);
    how many runs went."""
    gone = 0
    while True:
        async with engine.begin() as db:
            oldest = select(runs.c.id).where(runs.c.observed_at < before).order_by(runs.c.id).limit(batch)
            deleted = await db.execute(delete(runs).where(runs.c.id.in_(oldest.scalar_subquery())))
        count = int(deleted.rowcount or 0)
        gone += count
        if count < batch:
            break
    async with engine.begin() as db:
        await db.execute(delete(server_days).where(server_days.c.day < (before - timedelta(days=1)).date()))
        await db.execute(delete(day_digests).where(day_digests.c.day < (before - timedelta(days=1)).date()))
    # Tool sets nothing points to, by anti-joins (NOT EXISTS: each an index probe; NOT IN over
    # millions of runs is no hashed subplan once it outgrows PostgreSQL's work_mem, and never
    # ended), in batches like the runs.
    unused = (
        select(toolsets.c.id)
        .where(
            ~exists().where(runs.c.toolset == toolsets.c.id),
            ~exists().where(servers.c.latest_toolset == toolsets.c.id),
            ~exists().where(changes.c.from_toolset == toolsets.c.id),
            ~exists().where(changes.c.to_toolset == toolsets.c.id),
            ~exists().where(baselines.c.toolset == toolsets.c.id),
        )
        .limit(batch)
    )
    while True:
        async with engine.begin() as db:
            deleted = await db.execute(delete(toolsets).where(toolsets.c.id.in_(unused.scalar_subquery())))
        if int(deleted.rowcount or 0) < batch:
            break
    return gone


class Prunable(Protocol):
    """What the job asks of the history store."""

    async def prune(self, before: datetime) -> int:
        """Delete the runs observed before ``before``; how many."""
        ...


class Pruner:
    """The service's pruning job (see the module docs).

    Args:
        history: the store.
        days: the retention, days.
        delay_s: before the first prune, seconds (default :data:`PRUNE_DELAY_S`).
        interval_s: between prunes, seconds (default :data:`PRUNE_INTERVAL_S`).
        timeout_s: most one prune may take, seconds.
        clock: the current time (tests move it).
    """

    def __init__(
        self,
        history: Prunable,
        days: int,
        *,
        delay_s: float | None = None,
        interval_s: float | None = None,
        timeout_s: float = PRUNE_TIMEOUT_S,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.history = history
        self.days = days
        self.delay_s = PRUNE_DELAY_S if delay_s is None else delay_s
        self.interval_s = PRUNE_INTERVAL_S if interval_s is None else interval_s
        self.timeout_s = timeout_s
        self.clock = clock
        self._task: asyncio.Task[None] | None = None
        #: Prunes that ended, by outcome (``done``, ``failed``, ``timeout``), and the runs deleted.
        self.outcomes: dict[str, int] = {"done": 0, "failed": 0, "timeout": 0}
        self.pruned = 0

    def start(self) -> None:
        """Start the job on the running loop (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="history-pruner")

    async def _run(self) -> None:
        await asyncio.sleep(self.delay_s + random.uniform(0, min(self.delay_s, 60.0)))
        while True:
            await self.prune_once()
            await asyncio.sleep(self.interval_s)

    async def prune_once(self) -> int | None:
        """One prune, its failure logged; how many runs went (``None``: it failed)."""
        before = self.clock() - timedelta(days=self.days)
        try:
            async with asyncio.timeout(self.timeout_s):
                gone = await self.history.prune(before)
        except TimeoutError:
            self.outcomes["timeout"] += 1
            logger.warning("pruning the history took longer than %.0f s; the next prune goes on", self.timeout_s)
            return None
        except Exception as exc:  # any driver or network fault: tried again at the next turn
            self.outcomes["failed"] += 1
            logger.warning("the history could not be pruned (%s); trying again later", type(exc).__name__)
            return None
        self.outcomes["done"] += 1
        self.pruned += gone
        if gone:
            logger.info("pruned %d runs observed before %s", gone, before.isoformat())
        return gone

    async def aclose(self) -> None:
        """Stop the job (a prune under way is cut off: its batches done stay done)."""
        await stop(self._task)
        self._task = None
