"""directory: one denormalised row per server; registry entries keep their title and description

Revision ID: 0007
Revises: 0006
Create Date: 2027-01-20 12:00:00.000000

See :mod:`app.db.tables.directory`. The rows of servers already stored are made from their latest
run and tool set by the upgrade's data step (:data:`app.directory.rows.MIGRATION_STEPS`), after
the newest revision is applied. On PostgreSQL the trigram index needs the ``pg_trgm`` extension
(contrib; trusted since PostgreSQL 13, so the database's owner may create it): where it cannot
be created the index is left out and text search scans (correct, slower).
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

Key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Moment = sa.DateTime(timezone=True)
logger = logging.getLogger("mcp_sonde.history")


def upgrade() -> None:
    with op.batch_alter_table("registry_entries") as batch:
        batch.add_column(sa.Column("title", sa.String(100), nullable=True))
        batch.add_column(sa.Column("description", sa.String(1000), nullable=True))
    op.create_table(
        "directory",
        sa.Column("server", Key, nullable=False),
        sa.Column("server_id", sa.String(24), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("status", sa.String(32), nullable=True),
        sa.Column("reason", sa.String(64), nullable=True),
        sa.Column("protocol_version", sa.String(64), nullable=True),
        sa.Column("transport", sa.String(32), nullable=True),
        sa.Column("auth", sa.String(8), nullable=True),
        sa.Column("last_checked", Moment, nullable=False),
        sa.Column("last_changed", Moment, nullable=True),
        sa.Column("uptime_30d", sa.Float(), nullable=False),
        sa.Column("latest_attestation", sa.String(64), nullable=True),
        sa.Column("toolset_digest", sa.String(64), nullable=True),
        sa.Column("tool_count", sa.Integer(), nullable=True),
        sa.Column("tool_names", sa.Text(), nullable=True),
        sa.Column("tool_category", sa.String(32), nullable=True),
        sa.Column("category", sa.String(32), nullable=True),
        sa.Column("registry_entry", Key, nullable=True),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("title", sa.String(100), nullable=True),
        sa.Column("description", sa.String(1000), nullable=True),
        sa.Column("sort_name", sa.String(253), nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["server"], ["servers.id"], name=op.f("fk_directory_server_servers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("server", name=op.f("pk_directory")),
        sa.UniqueConstraint("server_id", name=op.f("uq_directory_server_id")),
    )
    op.create_index("ix_directory_sort_name_server_id", "directory", ["sort_name", "server_id"])
    op.create_index("ix_directory_last_checked_server_id", "directory", ["last_checked", "server_id"])
    op.create_index("ix_directory_uptime_30d_server_id", "directory", ["uptime_30d", "server_id"])
    op.create_index("ix_directory_status_sort_name", "directory", ["status", "sort_name", "server_id"])
    op.create_index("ix_directory_category_sort_name", "directory", ["category", "sort_name", "server_id"])
    op.create_index("ix_directory_toolset_digest", "directory", ["toolset_digest"])
    op.create_index("ix_directory_registry_entry", "directory", ["registry_entry"])
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        savepoint = bind.begin_nested()
        try:
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
            bind.execute(
                sa.text("CREATE INDEX ix_directory_search_text_trgm ON directory USING gin (search_text gin_trgm_ops)")
            )
            savepoint.commit()
        except sa.exc.DBAPIError as exc:
            savepoint.rollback()
            logger.warning("pg_trgm is not available (%s): directory text search scans", type(exc).__name__)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_directory_search_text_trgm")
    for name in (
        "ix_directory_registry_entry",
        "ix_directory_toolset_digest",
        "ix_directory_category_sort_name",
        "ix_directory_status_sort_name",
        "ix_directory_uptime_30d_server_id",
        "ix_directory_last_checked_server_id",
        "ix_directory_sort_name_server_id",
    ):
        op.drop_index(name, table_name="directory")
    op.drop_table("directory")
    with op.batch_alter_table("registry_entries") as batch:
        batch.drop_column("description")
        batch.drop_column("title")
