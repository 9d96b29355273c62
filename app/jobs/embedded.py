"""The embedded mode: without Redis, ``mcp-sonde serve`` runs the scheduler and a worker itself.

The same task function as a worker's (:class:`~app.queue.dispatch.Dispatcher`) runs through
taskiq's :class:`~taskiq.InMemoryBroker`, on the app's own collaborators (one store, one
history, one key ring), at most ``worker_concurrency`` jobs at once; the scheduler takes from
the sources only what fits twice that, so nothing piles up in memory. Started and stopped
with the app's lifespan: a stop ends the ticks, gives running jobs ``worker_drain_s`` and
cancels the rest (their sources hand them out again, as after any crash of the process).
"""

from __future__ import annotations

import asyncio

from app.background import stop_all
from app.checking.services import Services
from app.jobs.context import JobContext
from app.jobs.parts import context_for
from app.queue.broker import memory_broker
from app.queue.dispatch import Dispatcher, bind, kick
from app.queue.model import Job
from app.queue.scheduler import Scheduler


class Embedded:
    """The in-process scheduler and worker of one app (see the module docs)."""

    def __init__(self, services: Services, parts: tuple[str, ...] | None = None) -> None:
        self.settings = services.settings
        self.ctx: JobContext = context_for(services, parts)
        self.broker = memory_broker()
        self.dispatcher = Dispatcher(self.ctx.registry, self.ctx, self.settings.worker_concurrency)
        bind(self.broker, self.dispatcher)
        self.ctx.wire(self.enqueue)
        self.scheduler = Scheduler(
            self.ctx.registry, self.settings, self.ctx.store, self.enqueue, self.room, self.ctx.job_metrics
        )
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def enqueue(self, job: Job) -> None:
        """Run ``job`` in this process (as soon as one of the worker's places is free)."""
        await kick(self.broker, job)

    async def room(self) -> int:
        """How many more jobs may be taken now."""
        return max(0, 2 * self.settings.worker_concurrency - self.dispatcher.taken)

    async def start(self) -> None:
        """Start ticking."""
        await self.broker.startup()
        self._task = asyncio.create_task(self.scheduler.run(self._stop))

    async def stop(self) -> None:
        """Stop ticking, let running jobs finish within ``worker_drain_s``, cancel the rest."""
        self._stop.set()
        if self._task is not None:
            await self._task
        running = list(self.broker._running_tasks)  # (taskiq's own set of the jobs it started)
        if running:
            _done, pending = await asyncio.wait(running, timeout=self.settings.worker_drain_s)
            await stop_all(list(pending))
        await self.broker.shutdown()
