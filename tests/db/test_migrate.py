"""Migrations with data steps: an upgrade that crosses a step's revision runs it, once, after the
newest revision is applied; migrations themselves import nothing of mcp-sonde's but app.db."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import func, select

from app.db import migrate
from app.db.engine import open_engine
from app.db.tables.directory import directory
from app.directory.rows import MIGRATION_STEPS
from app.history.store import SqlHistory
from tests.history.test_store import run

pytestmark = pytest.mark.anyio

VERSIONS = Path(migrate.__file__).resolve().parent / "migrations" / "versions"


async def _rows(url: str) -> int:
    engine = open_engine(url)
    try:
        async with engine.connect() as db:
            return int(await db.scalar(select(func.count()).select_from(directory)) or 0)
    finally:
        await engine.dispose()


async def _downgrade(url: str, revision: str) -> None:
    engine = open_engine(url, statement_timeout_ms=None)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(lambda sync: command.downgrade(migrate._config(sync), revision))
    finally:
        await engine.dispose()


async def test_an_upgrade_past_0007_makes_the_directory_rows_of_the_servers_already_stored(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    await migrate.upgrade(url)
    store = SqlHistory.open(url)  # (no directory hook: the rows come from the data step alone)
    try:
        assert await store.record(run(0)) and await store.record(run(1, url="https://other.example.com/mcp"))
    finally:
        await store.aclose()
    await _downgrade(url, "0006")  # (drops the directory's table)
    assert await migrate.upgrade(url) == ("0006", migrate.head())  # no steps given: an empty directory
    assert await _rows(url) == 0
    await _downgrade(url, "0006")
    assert await migrate.upgrade(url, steps=MIGRATION_STEPS) == ("0006", migrate.head())
    assert await _rows(url) == 2
    assert await migrate.upgrade(url, steps=MIGRATION_STEPS) == (migrate.head(), migrate.head())  # not crossed again
    assert await _rows(url) == 2


def test_migrations_import_nothing_of_mcp_sonde_but_the_database_package() -> None:
    for path in VERSIONS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("app.") or name.startswith("app.db."), (path.name, name)
