"""The one task of the queue: a job, as JSON, dispatched by its kind to the registered handler.

Idempotency: a job whose handler returned is marked done in the store (``job-done`` key,
:data:`DONE_TTL_S`, a week), and a delivery of a job marked done is acknowledged without running it
again. A probe job is stored once anyway (its id is the run id, and the history refuses a
second run with it), so a delivery that races the first one's marker costs a probe, never a
second run. A handler that raises :class:`Requeued` has put the job back on the queue (its
host was busy): it is not marked done. Any other exception is logged (its type, never its
text, which may quote a server) and counted ``failed``; the job is acknowledged, not retried
for ever. A handler cancelled by a worker's stop leaves its job unacknowledged: the queue hands
it to another worker (:mod:`app.queue.broker`).
"""

from __future__ import annotations

import asyncio
import logging

from taskiq import AsyncBroker
from taskiq.kicker import AsyncKicker

from app.errors import SondeError
from app.queue import codec
from app.queue.handlers import Context, Registry
from app.queue.model import Job
from app.store import key

logger = logging.getLogger("mcp_sonde.jobs")
#: The task's name on the queue.
TASK_NAME = "mcp_sonde.run_job"
#: How long a finished job's id is remembered (a redelivery within it is not run again), seconds.
DONE_TTL_S = 7 * 86_400


class Requeued(SondeError):
    """The handler put its job back on the queue (raised to the dispatcher, never further)."""

    def __init__(self, message: str) -> None:
        super().__init__("job_requeued", message)


def done_key(job_id: str) -> str:
    """The store key marking ``job_id`` done."""
    return key("job-done", job_id)


class Dispatcher:
    """Runs one job through its handler (see the module docs).

    Args:
        registry: the handlers.
        ctx: what handlers are given.
        concurrency: most jobs run at once (the embedded mode's bound; a worker's receiver has its own).
    """

    def __init__(self, registry: Registry, ctx: Context, concurrency: int | None = None) -> None:
        self.registry = registry
        self.ctx = ctx
        self.taken = 0
        self._slots = asyncio.Semaphore(concurrency) if concurrency else None

    async def run(self, job: str) -> None:
        """The task: run the job in ``job`` (its JSON text) once."""
        self.taken += 1
        try:
            if self._slots is None:
                await self._run(job)
                return
            async with self._slots:
                await self._run(job)
        finally:
            self.taken -= 1

    async def _run(self, job: str) -> None:
        metrics = self.ctx.job_metrics
        try:
            parsed = codec.loads(job)
        except codec.BadJob as exc:
            logger.error("a queued message is not a job: %s", exc.message)
            metrics.job("other", "malformed")
            return
        handler = self.registry.handler(parsed.kind)
        if handler is None:
            logger.error("no handler for jobs of kind %r (job %s)", parsed.kind[:40], parsed.id)
            metrics.job(parsed.kind, "no_handler")
            return
        store = self.ctx.store
        if await store.get(done_key(parsed.id)) is not None:
            metrics.job(parsed.kind, "already_done")
            return
        try:
            await handler(self.ctx, parsed)
        except Requeued:
            metrics.job(parsed.kind, "requeued")
            return
        except Exception as exc:
            logger.error("job %s (%s) failed: %s", parsed.id, parsed.kind, type(exc).__name__)
            metrics.job(parsed.kind, "failed")
            return
        await store.set(done_key(parsed.id), b"1", DONE_TTL_S)
        metrics.job(parsed.kind, "done")


def bind(broker: AsyncBroker, dispatcher: Dispatcher) -> None:
    """Register the dispatcher's task on ``broker`` (a worker's, or the embedded one)."""

    async def run_job(job: str) -> None:
        """Run one job (its JSON text)."""
        await dispatcher.run(job)

    broker.register_task(run_job, task_name=TASK_NAME)


async def kick_patiently(broker: AsyncBroker, job: Job) -> None:
    """:func:`kick`, tried again with backoff (0.2 s up to 5 s) until the queue takes the job: a
    job a handler puts back (its host was busy) is never dropped because Redis restarted. A
    worker's stop cancels the wait; the job it was handling is then not acknowledged and is
    delivered again.

    Raises:
        BadJob: the job cannot travel.
    """
    pause, told = 0.2, False
    while True:
        try:
            await kick(broker, job)
            return
        except codec.BadJob:
            raise
        except Exception as exc:  # (taskiq's SendTaskError around the Redis fault)
            if not told:
                told = True
                logger.warning("the job queue did not take job %s (%s): trying again", job.id, type(exc).__name__)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)


async def kick(broker: AsyncBroker, job: Job) -> None:
    """Put ``job`` on the queue of ``broker`` (the task need not be registered in this process).

    Raises:
        BadJob: the job cannot travel (its id or size).
        RedisError, OSError: the queue did not take it.
    """
    payload = codec.dumps(job)
    kicker: AsyncKicker[[str], None] = AsyncKicker(TASK_NAME, broker, {})
    await kicker.with_task_id(job.id).kiq(payload)
