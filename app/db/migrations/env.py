"""Alembic environment of the history store: run on the connection :mod:`app.db.migrate` passes."""

from __future__ import annotations

from alembic import context

import app.db.tables.directory
import app.db.tables.owners
import app.db.tables.registry
import app.db.tables.stats  # noqa: F401 (their tables, on the same metadata)
from app.db.tables.history import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
