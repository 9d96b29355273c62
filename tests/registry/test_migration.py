"""The migrations make exactly the tables the schema declares (the registry's of 0005, the monitors'
and webhooks' of 0006, the directory's of 0007 among them), and go back down to 0004."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect

from app.db import migrate
from app.db.engine import open_engine
from app.db.tables import registry as schema
from app.db.tables.directory import TRIGRAM_INDEX
from app.db.tables.history import SCHEMA_REVISION, metadata

pytestmark = pytest.mark.anyio
TABLES = {"registry_entries", "registry_endpoints", "registry_sync", "optout"}
LATER = {"monitors", "monitor_runs", "webhook_deliveries", "webhook_attempts", "directory", "stats_snapshots",
         "claims", "owner_profiles", "owner_hosts", "owner_audit"}  # fmt: skip


def _declared(item: object, name: str | None, kind: str, reflected: bool, compare_to: object) -> bool:
    """Everything but the PostgreSQL trigram index, which only migration 0007 makes (where ``pg_trgm`` is)."""
    return not (kind == "index" and name == TRIGRAM_INDEX)


def _differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True, "include_object": _declared})
    return list(compare_metadata(context, metadata))


async def test_the_migration_matches_the_schema_and_downgrades(database_url: str) -> None:
    assert schema.registry_entries.name in metadata.tables
    await migrate.upgrade(database_url)
    assert migrate.head() == SCHEMA_REVISION
    engine = open_engine(database_url)
    try:
        async with engine.connect() as db:
            assert await db.run_sync(_differences) == []
    finally:
        await engine.dispose()
    from alembic import command

    def down(connection: Connection) -> None:
        config = migrate._config(connection)
        command.downgrade(config, "0004")

    engine = open_engine(database_url)
    try:
        async with engine.begin() as db:
            await db.run_sync(down)
            names = await db.run_sync(lambda c: set(inspect(c).get_table_names()))
        assert not names & (TABLES | LATER) and "runs" in names
    finally:
        await engine.dispose()
