"""A worker: jobs read from the Redis stream, run through the dispatcher, acknowledged once done.

taskiq's :class:`~taskiq.receiver.Receiver` runs up to ``concurrency`` jobs at once and
acknowledges each after its handler returned (``when_executed``); a stop (``stop`` set, on
SIGTERM) ends the reading, lets the running jobs finish for ``worker_drain_s`` and then cancels
them: a job cancelled so is never acknowledged and goes to another worker
(:mod:`app.queue.broker`).
"""

from __future__ import annotations

import asyncio
import logging

from taskiq import AsyncBroker
from taskiq.acks import AcknowledgeType
from taskiq.receiver import Receiver

from app.queue.dispatch import Dispatcher, bind, kick_patiently
from app.queue.handlers import Context
from app.queue.model import Job

logger = logging.getLogger("mcp_sonde.jobs")


async def work(ctx: Context, broker: AsyncBroker, concurrency: int, stop: asyncio.Event) -> Dispatcher:
    """Run jobs from ``broker`` until ``stop`` is set and the running ones are done (or given back).

    The broker is started here and shut down before this returns.
    """

    async def enqueue(job: Job) -> None:
        await kick_patiently(broker, job)  # (a job put back waits for the queue, never dropped)

    ctx.wire(enqueue)
    dispatcher = Dispatcher(ctx.registry, ctx)
    bind(broker, dispatcher)
    receiver = Receiver(
        broker,
        max_async_tasks=concurrency,
        max_prefetch=0,
        propagate_exceptions=False,
        ack_type=AcknowledgeType.WHEN_EXECUTED,
        wait_tasks_timeout=ctx.settings.worker_drain_s,
    )
    try:
        await receiver.listen(stop)
    finally:
        await broker.shutdown()
    return dispatcher
