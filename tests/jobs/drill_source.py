"""A source for the scheduler drills, loaded into ``mcp-sonde scheduler`` processes through the
``job_parts`` setting: each tick it claims ``DRILL_JOBS_PER_TICK`` new job ids from a counter in
Redis (``INCR``: two schedulers never get the same id, as a claiming source's rows)."""

from __future__ import annotations

import os
from datetime import datetime

import redis.asyncio as aioredis

from app.jobs.context import JobContext
from app.queue.handlers import Registry
from app.queue.model import PROBE, Job, Outcome


class CounterSource:
    """See the module docs."""

    name = "drill"

    def __init__(self, url: str, counter: str, per_tick: int) -> None:
        self.client = aioredis.Redis.from_url(url)
        self.counter = counter
        self.per_tick = per_tick

    async def due(self, now: datetime, limit: int) -> list[Job]:
        jobs = []
        for _ in range(min(limit, self.per_tick)):
            n = await self.client.incr(self.counter)
            jobs.append(Job(PROBE, f"drill-{n}", self.name, str(n), now, url="https://drill.invalid/mcp"))
        return jobs

    async def finished(self, outcome: Outcome) -> None:
        return None


def register(registry: Registry, ctx: JobContext) -> None:
    """Add the drill's source (``REDIS_URL``, ``DRILL_COUNTER``, ``DRILL_JOBS_PER_TICK``)."""
    assert ctx.settings.redis_url is not None
    per_tick = int(os.environ.get("DRILL_JOBS_PER_TICK", "2"))
    registry.add_source(CounterSource(ctx.settings.redis_url, os.environ["DRILL_COUNTER"], per_tick))
