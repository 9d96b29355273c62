"""the history store: servers, tool sets, runs, days, changes, baselines

Revision ID: 0001
Revises: (none)
Create Date: 2026-12-01 17:17:05.238059
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "servers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("server_id", sa.String(length=24), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("host", sa.String(length=253), nullable=False),
        sa.Column("addresses", sa.JSON(), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("latest_run", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("latest_status", sa.String(length=32), nullable=True),
        sa.Column("latest_toolset", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_servers")),
        sa.UniqueConstraint("server_id", name=op.f("uq_servers_server_id")),
    )
    op.create_table(
        "toolsets",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("definitions_sha256", sa.String(length=64), nullable=False),
        sa.Column("schema_fingerprint", sa.String(length=64), nullable=True),
        sa.Column("toolset_fingerprint", sa.String(length=64), nullable=True),
        sa.Column("tool_count", sa.Integer(), nullable=False),
        sa.Column("definitions", sa.LargeBinary(), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_toolsets")),
        sa.UniqueConstraint("definitions_sha256", name=op.f("uq_toolsets_definitions_sha256")),
    )
    with op.batch_alter_table("toolsets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_toolsets_schema_fingerprint"), ["schema_fingerprint"], unique=False)

    op.create_table(
        "baselines",
        sa.Column("server", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("toolset", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("approved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("approved_by", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["server"], ["servers.id"], name=op.f("fk_baselines_server_servers"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["toolset"], ["toolsets.id"], name=op.f("fk_baselines_toolset_toolsets")),
        sa.PrimaryKeyConstraint("server", name=op.f("pk_baselines")),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("server", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=64), nullable=False),
        sa.Column("uptime", sa.SmallInteger(), nullable=False),
        sa.Column("protocol_version", sa.String(length=64), nullable=True),
        sa.Column("transport", sa.String(length=32), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("total_ms", sa.Float(), nullable=True),
        sa.Column("toolset", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("attestation_id", sa.String(length=64), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["server"], ["servers.id"], name=op.f("fk_runs_server_servers"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["toolset"], ["toolsets.id"], name=op.f("fk_runs_toolset_toolsets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("run_id", name=op.f("uq_runs_run_id")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index("ix_runs_attestation_id", ["attestation_id"], unique=False)
        batch_op.create_index("ix_runs_observed_at", ["observed_at"], unique=False)
        batch_op.create_index("ix_runs_server_observed_at", ["server", "observed_at"], unique=False)

    op.create_table(
        "server_days",
        sa.Column("server", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("up", sa.Integer(), nullable=False),
        sa.Column("down", sa.Integer(), nullable=False),
        sa.Column("gated", sa.Integer(), nullable=False),
        sa.Column("left_out", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["server"], ["servers.id"], name=op.f("fk_server_days_server_servers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("server", "day", name=op.f("pk_server_days")),
    )
    op.create_table(
        "changes",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("server", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("from_toolset", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("to_toolset", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("diff", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["from_toolset"], ["toolsets.id"], name=op.f("fk_changes_from_toolset_toolsets")),
        sa.ForeignKeyConstraint(["run"], ["runs.id"], name=op.f("fk_changes_run_runs"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["server"], ["servers.id"], name=op.f("fk_changes_server_servers"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["to_toolset"], ["toolsets.id"], name=op.f("fk_changes_to_toolset_toolsets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_changes")),
    )
    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.create_index("ix_changes_server_observed_at", ["server", "observed_at"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.drop_index("ix_changes_server_observed_at")

    op.drop_table("changes")
    op.drop_table("server_days")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_server_observed_at")
        batch_op.drop_index("ix_runs_observed_at")
        batch_op.drop_index("ix_runs_attestation_id")

    op.drop_table("runs")
    op.drop_table("baselines")
    with op.batch_alter_table("toolsets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_toolsets_schema_fingerprint"))

    op.drop_table("toolsets")
    op.drop_table("servers")
