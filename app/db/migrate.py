"""Migrations of the history store (Alembic), and the check ``serve`` makes before it starts.

``mcp-sonde db upgrade`` brings the database to the newest revision (creating it when empty);
``mcp-sonde db current`` prints the revision it is at. ``serve`` refuses to start on a configured
database (``MCP_SONDE_DATABASE_URL``) that is behind or empty (:class:`SchemaOutdated`, reason
``schema_outdated``, naming the command to run): a shared production database is upgraded by
its operator, once, never by whichever replica starts first. The embedded SQLite file in the
data directory is the service's own: ``serve`` makes it, or brings it up to date, by itself
(under a file lock), so a fresh machine and an upgrade of mcp-sonde need no step.

Migrations change the schema only and import nothing of mcp-sonde's. What a package computes
from stored data when a revision adds its table (the directory's rows, from the runs already
kept) is a *data step* its caller passes in (:data:`DataSteps`): it runs on the upgrade's
connection, inside its transaction, after the newest revision is applied, once for every
upgrade that crossed its revision (so it reads the schema the code it belongs to expects).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.engine import make_url

from app.db.engine import open_engine
from app.errors import SondeError
from app.filelock import exclusive

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Data steps by the revision they follow (see the module docs).
DataSteps = Mapping[str, Callable[[Connection], object]]


class SchemaOutdated(SondeError):
    """The database is not at the newest revision (``schema_outdated``)."""


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision of the migrations."""
    revision = ScriptDirectory.from_config(_config()).get_current_head()
    assert revision is not None
    return revision


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def _upgrade(connection: Connection, revision: str = "head") -> None:
    command.upgrade(_config(connection), revision)


async def current(url: str) -> str | None:
    """The revision the database at ``url`` is at (``None``: no schema yet)."""
    engine = open_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_current)
    finally:
        await engine.dispose()


async def upgrade(url: str, revision: str = "head", steps: DataSteps | None = None) -> tuple[str | None, str]:
    """Upgrade the database at ``url`` to ``revision`` (the newest by default), running the data
    ``steps`` of the revisions it crossed; ``(before, after)`` (no statement timeout: a migration
    may build an index over every run)."""
    engine = open_engine(url, statement_timeout_ms=None)
    try:
        async with engine.begin() as connection:
            before = await connection.run_sync(_current)
            await connection.run_sync(_upgrade, revision)
            after = await connection.run_sync(_current)
            assert after is not None
            for follows, step in sorted((steps or {}).items()):
                if (before or "") < follows <= after:
                    await connection.run_sync(step)
    finally:
        await engine.dispose()
    return before, after


async def ensure_current(url: str, *, embedded: bool, steps: DataSteps | None = None) -> None:
    """Check the schema before serving (see the module docs).

    Raises:
        SchemaOutdated: a configured database is behind or empty (the embedded one is upgraded,
            with ``steps``).
    """
    found = await current(url)
    if found == head():
        return
    if embedded:  # the embedded file is this service's own: made, or brought up to date
        database = make_url(url).database
        with exclusive(Path(f"{database}.lock")) if database else contextlib.nullcontext():
            if await current(url) != head():  # (another process may have done it meanwhile)
                await upgrade(url, steps=steps)
        return
    state = "has no schema" if found is None else f"is at revision {found}, not {head()}"
    raise SchemaOutdated("schema_outdated", f"the history database {state}: run `mcp-sonde db upgrade` first")
