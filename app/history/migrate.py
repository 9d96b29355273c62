"""Migrations of the history store (Alembic), and the check ``serve`` makes before it starts.

``mcp-sonde db upgrade`` brings the database to the newest revision (creating it when empty);
``mcp-sonde db current`` prints the revision it is at. ``serve`` refuses to start on a database
that is behind (:class:`SchemaOutdated`, reason ``schema_outdated``, naming the command to run),
and on an empty embedded SQLite file it upgrades by itself (a fresh machine needs no step);
an empty PostgreSQL database is never created implicitly.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.engine import make_url

from app.errors import SondeError
from app.filelock import exclusive
from app.history.engine import open_engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


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


def _upgrade(connection: Connection) -> None:
    command.upgrade(_config(connection), "head")


async def current(url: str) -> str | None:
    """The revision the database at ``url`` is at (``None``: no schema yet)."""
    engine = open_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_current)
    finally:
        await engine.dispose()


async def upgrade(url: str) -> tuple[str | None, str]:
    """Upgrade the database at ``url`` to the newest revision; ``(before, after)`` (no statement
    timeout: a migration may build an index over every run)."""
    engine = open_engine(url, statement_timeout_ms=None)
    try:
        async with engine.begin() as connection:
            before = await connection.run_sync(_current)
            await connection.run_sync(_upgrade)
            after = await connection.run_sync(_current)
    finally:
        await engine.dispose()
    assert after is not None
    return before, after


async def ensure_current(url: str, *, embedded: bool) -> None:
    """Check the schema before serving (see the module docs).

    Raises:
        SchemaOutdated: the database is behind (or empty, unless ``embedded``).
    """
    found = await current(url)
    if found == head():
        return
    if found is None and embedded:
        database = make_url(url).database
        with exclusive(Path(f"{database}.lock")) if database else contextlib.nullcontext():
            if await current(url) is None:  # (another process may have made it meanwhile)
                await upgrade(url)
        return
    state = "has no schema" if found is None else f"is at revision {found}, not {head()}"
    raise SchemaOutdated("schema_outdated", f"the history database {state}: run `mcp-sonde db upgrade` first")
