"""``mcp-sonde scheduler``: enqueue due work (:mod:`app.queue.scheduler`); one is active at a time.

Start one on each of two machines: the second stands by and takes over within about 20 s
when the active one dies (``scheduler_lock_ttl_s``). Settings and exit codes: :mod:`app.cli.jobs`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any

from app.cli.codes import JOBS_EXIT_HELP
from app.settings import Settings

logger = logging.getLogger("mcp_sonde.jobs")


async def _schedule(settings: Settings, stop: asyncio.Event) -> None:
    from app.checking.services import build_services
    from app.jobs.parts import context_for
    from app.queue.broker import stream_broker
    from app.queue.dispatch import kick
    from app.queue.lock import Lease
    from app.queue.model import Job
    from app.queue.scheduler import Scheduler

    assert settings.redis_url is not None
    services = build_services(settings)
    broker = stream_broker(settings)
    lease = Lease(settings.redis_url, settings.jobs_queue, settings.scheduler_lock_ttl_s, settings.redis_namespace)

    async def enqueue(job: Job) -> None:
        await kick(broker, job)

    async def room() -> int:
        return settings.scheduler_max_backlog - await broker.backlog()

    try:
        ctx = context_for(services)
        ctx.enqueue = enqueue
        scheduler = Scheduler(ctx.registry, settings, ctx.store, enqueue, room, ctx.job_metrics, lease)
        logger.info("scheduler started: %d sources, a tick every %g s", len(ctx.registry.sources),
                    settings.scheduler_tick_s)  # fmt: skip
        await scheduler.run(stop)
        logger.info("scheduler stopped: %d jobs enqueued", scheduler.enqueued)
    finally:
        await lease.aclose()
        await broker.shutdown()
        await services.aclose()


def _run(args: argparse.Namespace) -> int:
    from app.cli.jobs import prepared, run

    settings = prepared("scheduler", {})
    return settings if isinstance(settings, int) else run(settings, _schedule)


def add_parser(commands: Any) -> None:
    """Add ``scheduler`` to the subcommands."""
    parser = commands.add_parser(
        "scheduler",
        help="enqueue due scheduled work (needs REDIS_URL; one active, others stand by)",
        description="Ask every source for due jobs each tick and put them on the Redis job queue; one scheduler "
        "is active at a time (a lock in Redis), others stand by.",
        epilog=JOBS_EXIT_HELP,
    )
    parser.set_defaults(handler=_run)
