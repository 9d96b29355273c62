"""``mcp-sonde worker [--concurrency N]``: run jobs from the Redis job queue (:mod:`app.queue.worker`).

SIGTERM (or Ctrl-C) stops reading, lets the jobs in hand finish within ``worker_drain_s`` and
gives the rest back to the queue. Settings and exit codes: :mod:`app.cli.jobs`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any

from app.cli.codes import JOBS_EXIT_HELP
from app.settings import Settings

logger = logging.getLogger("mcp_sonde.jobs")


async def _work(settings: Settings, stop: asyncio.Event) -> None:
    from app.checking.services import build_services
    from app.jobs.parts import context_for
    from app.queue.broker import stream_broker
    from app.queue.worker import work

    services = build_services(settings)
    try:
        ctx = context_for(services)
        services.recorder.start()  # (runs a job could only leave in the outbox are written from there)
        logger.info("worker started: %d jobs at once from %s", settings.worker_concurrency, settings.jobs_queue)
        await ctx.optouts.warm()  # (the opt-out list read before the first job)
        await work(ctx, stream_broker(settings), settings.worker_concurrency, stop)
        logger.info("worker stopped: %s", ctx.job_metrics.counts or "no jobs")
    finally:
        await services.aclose()


def _run(args: argparse.Namespace) -> int:
    from app.cli.jobs import prepared, run

    overrides: dict[str, Any] = {}
    if args.concurrency is not None:
        overrides["worker_concurrency"] = args.concurrency
    settings = prepared("worker", overrides)
    return settings if isinstance(settings, int) else run(settings, _work)


def add_parser(commands: Any) -> None:
    """Add ``worker`` to the subcommands."""
    parser = commands.add_parser(
        "worker",
        help="run scheduled jobs from the Redis queue (needs REDIS_URL)",
        description="Run jobs (probes, webhook deliveries, registry syncs) from the Redis job queue; "
        "SIGTERM finishes or gives back the jobs in hand.",
        epilog=JOBS_EXIT_HELP,
    )
    parser.add_argument("--concurrency", type=int, help="jobs run at once (default MCP_SONDE_WORKER_CONCURRENCY, 20)")
    parser.set_defaults(handler=_run)
