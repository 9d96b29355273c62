"""The scheduler: each tick, every registered source's due jobs go on the queue.

One scheduler is active at a time (:class:`~app.queue.lock.Lease` in Redis; the embedded mode
has one process and needs none): its lease is renewed every third of ``scheduler_lock_ttl_s``
by a task of its own, and every enqueue first checks the lease is still held, so a scheduler
that lost it stops enqueueing at once; a standby tries to take it as often and becomes active
within about 1.3 lifetimes of the active one's death (20 s with the default 15 s).

Each tick (``scheduler_tick_s``) asks every source for ``due(now, limit)``: ``limit`` is at
most :data:`BATCH` and what the queue has room for (``scheduler_max_backlog`` minus the
jobs enqueued and not yet done), so a slow fleet of workers holds the sources back instead of
piling work up. A job id is enqueued once: sources claim what they hand out, and the
scheduler also takes a short-lived ``job-enqueued`` marker per id in the store before it puts
the job on the queue (a job id seen again within :data:`ENQUEUED_TTL_S` is skipped). A job the
queue did not take (Redis away) keeps its claim: it is held (up to :data:`HELD_MAX`) and
enqueued again on the next ticks (so is one whose marker the store did not take); a source that
raises is logged and asked again next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from app import background
from app.queue.handlers import Registry
from app.queue.lock import Lease
from app.queue.metrics import JobMetrics
from app.queue.model import Job
from app.settings import Settings
from app.store import Store, StoreError, key

#: Most jobs taken from one source per tick (one tick of a large sweep fills the queue in a few ticks).
BATCH = 500

logger = logging.getLogger("mcp_sonde.jobs")
#: How long a job id's ``job-enqueued`` marker lasts, seconds.
ENQUEUED_TTL_S = 3600.0
#: Most jobs held for another try while the queue does not take them.
HELD_MAX = 10_000

Enqueue = Callable[[Job], Awaitable[None]]
Room = Callable[[], Awaitable[int]]


def enqueued_key(job_id: str) -> str:
    """The store key of ``job_id``'s ``job-enqueued`` marker."""
    return key("job-enqueued", job_id)


class Scheduler:
    """See the module docs.

    Args:
        registry: whose sources are asked.
        settings: tick, batch, backlog and lease settings.
        store: where the ``job-enqueued`` markers live.
        enqueue: puts one job on the queue (raises when the queue does not take it).
        room: how many more jobs the queue may take now.
        metrics: the engine's counters.
        lease: the lock in Redis (``None``: the only scheduler, embedded).
    """

    def __init__(
        self,
        registry: Registry,
        settings: Settings,
        store: Store,
        enqueue: Enqueue,
        room: Room,
        metrics: JobMetrics,
        lease: Lease | None = None,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.store = store
        self._enqueue = enqueue
        self._room = room
        self.metrics = metrics
        self.lease = lease
        self.held: list[Job] = []
        self._marked: set[str] = set()  # held jobs whose job-enqueued marker this scheduler took
        self.enqueued = 0

    @property
    def active(self) -> bool:
        """This scheduler may enqueue now."""
        return self.lease is None or self.lease.held

    async def tick(self, now: datetime | None = None) -> int:
        """One round: held jobs first, then every source's due ones; how many went on the queue."""
        now = now or datetime.now(UTC)
        before = self.enqueued
        held, self.held = self.held, []
        for job in held:
            await self._put(job)
        try:
            room = await self._room()
        except Exception as exc:
            logger.warning("the job queue's backlog is unknown (%s): no new jobs this tick", type(exc).__name__)
            return self.enqueued - before
        for source in self.registry.sources:
            limit = min(BATCH, room - (self.enqueued - before))
            if limit <= 0 or not self.active:
                break
            try:
                jobs = await source.due(now, limit)
            except Exception as exc:
                logger.error("source %s failed to say what is due: %s", source.name, type(exc).__name__)
                continue
            for job in jobs[:limit]:
                await self._put(job)
        return self.enqueued - before

    async def _put(self, job: Job) -> None:
        if not self.active:
            self._hold(job)
            return
        marker = enqueued_key(job.id)
        if job.id not in self._marked:
            try:
                fresh = await self.store.set_nx(marker, b"1", ENQUEUED_TTL_S)
            except StoreError as exc:  # (Redis away: the queue is too; held for the next tick)
                if not self.held:
                    logger.warning("the job-enqueued marker could not be taken (%s): held for the next tick",
                                   type(exc).__name__)  # fmt: skip
                self._hold(job)
                return
            if not fresh:
                logger.info("job %s was enqueued already: not again", job.id)
                return
        try:
            await self._enqueue(job)
        except Exception as exc:
            try:
                await self.store.delete_if_equal(marker, b"1")
                self._marked.discard(job.id)
            except StoreError:  # (the marker stays ours: the next try does not wait for it)
                self._marked.add(job.id)
            if not self.held:
                logger.warning("the job queue did not take a job (%s): held for the next tick", type(exc).__name__)
            self._hold(job)
            return
        self._marked.discard(job.id)
        self.enqueued += 1
        self.metrics.enqueued.labels(source=job.source if self.registry.source(job.source) else "other").inc()

    def _hold(self, job: Job) -> None:
        if len(self.held) >= HELD_MAX:
            logger.error("more than %d jobs wait for the queue: job %s is dropped", HELD_MAX, job.id)
            return
        self.held.append(job)

    async def run(self, stop: asyncio.Event) -> None:
        """Tick until ``stop`` is set (holding the lease meanwhile, when there is one)."""
        keeper = asyncio.create_task(self._keep_lease(stop)) if self.lease is not None else None
        try:
            while not stop.is_set():
                if self.active:
                    await self.tick()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.settings.scheduler_tick_s)
        finally:
            await background.stop(keeper)
            if self.lease is not None:
                await self.lease.release()
            self.metrics.active.set(0)

    async def _keep_lease(self, stop: asyncio.Event) -> None:
        assert self.lease is not None
        period = self.settings.scheduler_lock_ttl_s / 3
        was: bool | None = None  # (so a standby says so at its start too)
        while not stop.is_set():
            now = await self.lease.acquire()
            if now != was:
                logger.info("this scheduler is %s", "active" if now else "standing by (another one is active)")
                self.metrics.active.set(1 if now else 0)
                was = now
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), period)
