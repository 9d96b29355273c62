"""The history store on both backends: SQLite in a temporary directory, and PostgreSQL in a
database of its own per test (``MCP_SONDE_TEST_POSTGRES_URL``, default the local server on
127.0.0.1:5432 as ``postgres``), dropped afterwards. Without a PostgreSQL server the PostgreSQL
cases skip, except under ``CI=true``."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import migrate
from app.db.engine import open_engine
from app.directory.rows import refresh
from app.history.store import SqlHistory
from tests.servers.tcp_relay import Relay, relay

POSTGRES = os.environ.get("MCP_SONDE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


async def _admin(sql: str) -> None:
    connection = await asyncpg.connect(POSTGRES, timeout=5)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def postgres_available() -> bool:
    try:
        _run(_admin("SELECT 1"))
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return False
    return True


def need_postgres() -> None:
    """Skip without a PostgreSQL server (fail under ``CI=true``, where one must answer)."""
    if not postgres_available():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no PostgreSQL answers at {POSTGRES}")
        pytest.skip("no PostgreSQL server")


def _run(work: Any) -> None:
    """``asyncio.run(work)``, on a thread of its own when this one already runs an event loop
    (Playwright's sync API keeps one running in the browser tests)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(work)
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(work)
        except BaseException as exc:  # (re-raised on the caller's thread)
            failed.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=120)
    if failed:
        raise failed[0]


@contextmanager
def postgres_database(upgraded: bool = False) -> Iterator[str]:
    """A new PostgreSQL database (``upgraded``: at the newest schema), dropped afterwards: its
    name. :func:`asyncpg_url` makes the URL the store takes of it."""
    need_postgres()
    name = f"sonde_test_{uuid.uuid4().hex[:12]}"
    _run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        if upgraded:
            _run(migrate.upgrade(asyncpg_url(name)))
        yield name
    finally:
        _run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def asyncpg_url(name: str, relay_port: int | None = None) -> str:
    """The SQLAlchemy URL of database ``name`` on the test server (or through a relay on loopback
    port ``relay_port``)."""
    if relay_port is not None:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{relay_port}/{name}"
    return POSTGRES.replace("postgresql://", "postgresql+asyncpg://").rsplit("/", 1)[0] + f"/{name}"


@contextmanager
def relayed_postgres() -> Iterator[tuple[Relay, str]]:
    """A new PostgreSQL database at the newest schema, reached through a relay a test can cut
    (open on entry), dropped afterwards: ``(relay, database URL through it)``."""
    server = urlsplit(POSTGRES)
    with (
        postgres_database(upgraded=True) as name,
        relay((server.hostname or "127.0.0.1", server.port or 5432)) as database,
    ):
        database.open = True
        yield database, asyncpg_url(name, database.port)


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of the parametrised backend (``sqlite`` or ``postgresql``)."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
        return
    with postgres_database() as name:
        yield asyncpg_url(name)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that asks for ``database_url`` (or ``history``) runs on both backends."""
    if "database_url" in metafunc.fixturenames:
        metafunc.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
async def history(database_url: str) -> AsyncIterator[SqlHistory]:
    """A store on an upgraded database of the backend."""
    await migrate.upgrade(database_url)
    store = SqlHistory.open(database_url, on_record=(refresh,))  # (as the service wires it)
    try:
        yield store
    finally:
        await store.aclose()


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an upgraded database of the backend (for the tables of the other parts)."""
    await migrate.upgrade(database_url)
    made = open_engine(database_url)
    try:
        yield made
    finally:
        await made.dispose()
