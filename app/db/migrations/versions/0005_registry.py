"""registry mirror, sweep schedule and opt-out list

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-10 10:00:00.000000

The tables of :mod:`app.db.tables.registry`; empty at first (the first registry sync fills them).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

Key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Moment = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "registry_entries",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("published_at", Moment, nullable=True),
        sa.Column("updated_at", Moment, nullable=True),
        sa.Column("latest", sa.Boolean(), nullable=False),
        sa.Column("seen_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registry_entries")),
        sa.UniqueConstraint("name", "version", name=op.f("uq_registry_entries_name_version")),
    )
    op.create_table(
        "registry_endpoints",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("entry", Key, nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("transport", sa.String(32), nullable=False),
        sa.Column("server_id", sa.String(24), nullable=False),
        sa.Column("skip_reason", sa.String(64), nullable=True),
        sa.Column("swept", sa.Boolean(), nullable=False),
        sa.Column("next_due", Moment, nullable=False),
        sa.Column("claimed_job", sa.String(64), nullable=True),
        sa.Column("claimed_at", Moment, nullable=True),
        sa.Column("finished_job", sa.String(64), nullable=True),
        sa.Column("last_status", sa.String(32), nullable=True),
        sa.Column("last_reason", sa.String(64), nullable=True),
        sa.Column("last_probed_at", Moment, nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["entry"],
            ["registry_entries.id"],
            name=op.f("fk_registry_endpoints_entry_registry_entries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registry_endpoints")),
        sa.UniqueConstraint("entry", "url", name=op.f("uq_registry_endpoints_entry_url")),
    )
    op.create_index("ix_registry_endpoints_swept_next_due", "registry_endpoints", ["swept", "next_due"])
    op.create_index("ix_registry_endpoints_server_id", "registry_endpoints", ["server_id"])
    op.create_table(
        "registry_sync",
        sa.Column("registry", sa.String(64), nullable=False),
        sa.Column("next_due", Moment, nullable=False),
        sa.Column("claimed_job", sa.String(64), nullable=True),
        sa.Column("finished_job", sa.String(64), nullable=True),
        sa.Column("full_done", sa.Boolean(), nullable=False),
        sa.Column("newest_updated_at", Moment, nullable=True),
        sa.Column("last_sync_at", Moment, nullable=True),
        sa.Column("last_report", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("registry", name=op.f("pk_registry_sync")),
    )
    op.create_table(
        "optout",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("value", sa.String(2048), nullable=False),
        sa.Column("added_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_optout")),
        sa.UniqueConstraint("kind", "value", name=op.f("uq_optout_kind_value")),
    )


def downgrade() -> None:
    op.drop_table("optout")
    op.drop_table("registry_sync")
    op.drop_index("ix_registry_endpoints_server_id", table_name="registry_endpoints")
    op.drop_index("ix_registry_endpoints_swept_next_due", table_name="registry_endpoints")
    op.drop_table("registry_endpoints")
    op.drop_table("registry_entries")
