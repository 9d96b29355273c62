"""What the commands on the history database share (``db``, ``optout``, ``registry``).

The database is ``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file of the data directory.
A command's action is one coroutine given the URL and the settings; whatever it prints is written
once it is done. A fault is one line on stderr, never a traceback, naming the database by its URL
without the password: exit 5 for the database (it cannot be reached, or its schema is not
current: the line names ``mcp-sonde db upgrade``), exit 2 for an error of the command's input
that the command names (its reason key and message).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from app.cli.codes import EXIT_USAGE
from app.errors import SondeError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from app.settings import Settings

EXIT_DATABASE = 5
Action = Callable[[str, "Settings"], Awaitable[str]]


def run_on_database(command: str, act: Action, usage: tuple[type[SondeError], ...] = ()) -> int:
    """Run ``act(url, settings)``, print what it says; the exit code (see the module docs)."""
    import anyio

    from app.cli.check import settings_of
    from app.db.engine import database_url, safe_url
    from app.db.migrate import SchemaOutdated

    settings = settings_of({})
    if settings is None:
        return EXIT_DATABASE
    url = database_url(settings)
    try:
        said = anyio.run(act, url, settings)
    except SchemaOutdated as exc:
        sys.stderr.write(f"mcp-sonde {command}: {safe_url(url)}: {exc.message}\n")
        return EXIT_DATABASE
    except usage as exc:
        sys.stderr.write(f"mcp-sonde {command}: {exc.reason}: {exc.message}\n")
        return EXIT_USAGE
    except Exception as exc:  # any driver, network or migration fault: one line, no traceback
        sys.stderr.write(f"mcp-sonde {command}: {safe_url(url)}: {type(exc).__name__}: {str(exc)[:300]}\n")
        return EXIT_DATABASE
    sys.stdout.write(said)
    return 0


@asynccontextmanager
async def current_database(url: str, settings: Settings) -> AsyncIterator[AsyncEngine]:
    """An engine on the database at the newest revision (the embedded file made or upgraded; a
    configured database behind: :class:`~app.db.migrate.SchemaOutdated`)."""
    from app.db.engine import open_engine
    from app.db.migrate import ensure_current
    from app.directory.rows import MIGRATION_STEPS

    await ensure_current(url, embedded=settings.database_url is None, steps=MIGRATION_STEPS)
    engine = open_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()
