"""Alembic environment of the history store: run on the connection :mod:`app.history.migrate` passes."""

from __future__ import annotations

from alembic import context

import app.directory.schema
import app.registry.schema
import app.stats.schema  # noqa: F401 (their tables, on the same metadata)
from app.history.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
