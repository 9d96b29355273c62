"""What ``mcp-sonde worker`` and ``mcp-sonde scheduler`` share: settings checked, the context
built, SIGTERM and SIGINT turned into a stop.

Both need ``REDIS_URL`` (the queue and the scheduler's lock) and the history database
(``MCP_SONDE_DATABASE_URL``, or the embedded SQLite file of the data directory, which only
processes of one machine can share). Exit codes (:mod:`app.cli.codes`): 0 after a stop, 20
when a setting is missing or invalid, 22 when the start fails (no signing key, a database
schema that is behind), 1 for a fault after the start; each failure is one log line.
"""

from __future__ import annotations

import asyncio
import logging
import logging.config
import signal
from collections.abc import Awaitable, Callable

from app.cli.codes import EXIT_INTERNAL, SERVE_EXIT_SETTINGS, SERVE_EXIT_STARTUP
from app.settings import Settings

logger = logging.getLogger("mcp_sonde.jobs")

Body = Callable[[Settings, asyncio.Event], Awaitable[None]]


def prepared(command: str, overrides: dict[str, object]) -> Settings | int:
    """The settings for ``command``, or the exit code after one line saying what is wrong."""
    from app.cli.check import settings_of
    from app.cli.serve import signing_ready
    from app.logs import service_logging

    settings = settings_of(overrides)
    if settings is None:
        return SERVE_EXIT_SETTINGS
    logging.config.dictConfig(service_logging(settings.log_format))
    if not settings.redis_url:
        logger.error("mcp-sonde %s needs REDIS_URL (the job queue); without it `mcp-sonde serve` runs "
                     "scheduled work itself", command)  # fmt: skip
        return SERVE_EXIT_SETTINGS
    if settings.database_url is None:
        logger.warning("no MCP_SONDE_DATABASE_URL: runs go to the SQLite file of %s (this machine only)",
                       settings.data_dir)  # fmt: skip
    refused = signing_ready(settings)
    return refused if refused is not None else settings


def run(settings: Settings, body: Body) -> int:
    """Run ``body`` until SIGTERM or SIGINT sets its stop event; the exit code."""
    from app.errors import SondeError
    from app.http.app import history_at_start

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            await history_at_start(settings)
        except SondeError as exc:
            logger.error("start-up failed: %s: %s", exc.reason, exc.message)
            return SERVE_EXIT_STARTUP
        try:
            await body(settings, stop)
        except SondeError as exc:
            logger.error("stopped: %s: %s", exc.reason, exc.message)
            return EXIT_INTERNAL
        return 0

    try:
        return asyncio.run(main())
    except Exception:
        logger.exception("the %s failed", "process")
        return EXIT_INTERNAL
