"""The statistics as published: a snapshot in the database, recomputed at most every few minutes.

Why a snapshot: the figures sum up the newest run of every server, a read that grows with the
directory (about a second at 100,000 servers), while the page and ``GET /v1/stats`` must answer
in milliseconds. So they read one row (``stats_snapshots``, :mod:`app.db.tables.stats`), and the
figures are recomputed when it is older than ``max_age_s`` (setting ``stats_max_age_s``):

- a read that finds the snapshot fresh answers it;
- a read that finds it stale answers it as it is and starts one recomputation in the background,
  after *claiming* it (an ``UPDATE`` that holds only while the snapshot is still the one found
  stale and no other claim younger than :data:`CLAIM_S` stands), so of many processes one
  recomputes at a time, and a snapshot another process has just recomputed is not computed again;
- a read that finds none (a new database) computes it then, once per process at a time
  (others wait for it), bounded by the caller's wait.

Every answer says when its figures were computed (``computed_at``) and ``max_age_s``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from app.background import stop_all
from app.db.tables.stats import stats_snapshots
from app.history.records import utc
from app.stats.compute import compute

logger = logging.getLogger("mcp_sonde.stats")
NAME: Final = "directory"
#: A claim older than this is taken to have died with its process, seconds.
CLAIM_S: Final = 120.0


class StatsSnapshots:
    """See the module docs."""

    def __init__(self, engine: AsyncEngine, max_age_s: float, clock: Callable[[], datetime] | None = None) -> None:
        self.engine = engine
        self.max_age_s = max_age_s
        self.clock = clock or (lambda: datetime.now(UTC))
        self._first = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    async def current(self) -> dict[str, Any]:
        """The published statistics (see the module docs)."""
        now = self.clock()
        found = await self._read()
        if found is None:
            async with self._first:
                found = await self._read()
                if found is None:
                    return await self.refresh()
        computed_at, body = found
        if (now - computed_at).total_seconds() > self.max_age_s and all(t.done() for t in self._tasks):
            task = asyncio.create_task(self._refresh_claimed(now, computed_at))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return body

    async def refresh(self) -> dict[str, Any]:
        """Compute the statistics now and store them as the snapshot."""
        now = self.clock()
        async with self.engine.connect() as db:
            body = await compute(db, now)
        body["max_age_s"] = self.max_age_s
        blob = zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 6)
        insert = postgresql.insert if self.engine.dialect.name == "postgresql" else sqlite.insert
        write = insert(stats_snapshots).values(name=NAME, computed_at=now, claimed_at=None, body=blob)
        write = write.on_conflict_do_update(
            index_elements=[stats_snapshots.c.name], set_={"computed_at": now, "claimed_at": None, "body": blob}
        )
        async with self.engine.begin() as db:
            await db.execute(write)
        return body

    async def _refresh_claimed(self, now: datetime, seen: datetime) -> None:
        # The claim holds only on the snapshot this process found stale (``computed_at`` unchanged):
        # one that another process has recomputed since is fresh, and is not computed again.
        try:
            async with self.engine.begin() as db:
                claimed = await db.execute(
                    update(stats_snapshots)
                    .where(
                        stats_snapshots.c.name == NAME,
                        stats_snapshots.c.computed_at <= seen,
                        or_(stats_snapshots.c.claimed_at.is_(None),
                            stats_snapshots.c.claimed_at < now - timedelta(seconds=CLAIM_S)),
                    )
                    .values(claimed_at=now)
                )  # fmt: skip
            if claimed.rowcount == 1:
                await self.refresh()
        except Exception as exc:  # the database failed: the old snapshot stays, the next stale read tries again
            logger.warning("statistics not recomputed: %s", type(exc).__name__)

    async def _read(self) -> tuple[datetime, dict[str, Any]] | None:
        query = select(stats_snapshots.c.computed_at, stats_snapshots.c.body).where(stats_snapshots.c.name == NAME)
        async with self.engine.connect() as db:
            row = (await db.execute(query)).first()
        if row is None or row.body is None or row.computed_at is None:
            return None
        body: dict[str, Any] = json.loads(zlib.decompress(row.body))
        return utc(row.computed_at), body

    async def aclose(self) -> None:
        """Stop a recomputation under way (the snapshot stays as it was)."""
        await stop_all(list(self._tasks))
