"""monitors, monitor_runs, webhook_deliveries, webhook_attempts: scheduled checks and their webhooks

Revision ID: 0006
Revises: 0005
Create Date: 2027-01-10 12:00:00.000000

See :mod:`app.db.tables.monitors` and :mod:`app.db.tables.webhooks`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

Key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Moment = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "monitors",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("monitor_id", sa.String(32), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("interval_s", sa.Integer(), nullable=False),
        sa.Column("webhook_url", sa.String(2048), nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("secret_keyid", sa.String(64), nullable=False),
        sa.Column("payment", sa.String(64), nullable=True),
        sa.Column("runs_bought", sa.Integer(), nullable=False),
        sa.Column("runs_left", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("next_due_at", Moment, nullable=False),
        sa.Column("confirmed_status", sa.String(32), nullable=True),
        sa.Column("last_status", sa.String(32), nullable=True),
        sa.Column("certificate_alerted", Moment, nullable=True),
        sa.Column("exhausted_sent", sa.Boolean(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("deleted_at", Moment, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_monitors")),
        sa.UniqueConstraint("monitor_id", name=op.f("uq_monitors_monitor_id")),
        sa.UniqueConstraint("payment", name=op.f("uq_monitors_payment")),
    )
    op.create_index("ix_monitors_state_next_due_at", "monitors", ["state", "next_due_at"])
    op.create_table(
        "monitor_runs",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("monitor", Key, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("due_at", Moment, nullable=False),
        sa.Column("finished_at", Moment, nullable=True),
        sa.Column("status", sa.String(32), nullable=True),
        sa.Column("reason", sa.String(64), nullable=True),
        sa.ForeignKeyConstraint(
            ["monitor"], ["monitors.id"], name=op.f("fk_monitor_runs_monitor_monitors"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_monitor_runs")),
        sa.UniqueConstraint("run_id", name=op.f("uq_monitor_runs_run_id")),
    )
    op.create_index("ix_monitor_runs_monitor_id", "monitor_runs", ["monitor", "id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("delivery_id", sa.String(40), nullable=False),
        sa.Column("monitor", Key, nullable=False),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", Moment, nullable=True),
        sa.Column("first_attempt_at", Moment, nullable=True),
        sa.Column("last_attempt_at", Moment, nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_reason", sa.String(64), nullable=True),
        sa.ForeignKeyConstraint(
            ["monitor"], ["monitors.id"], name=op.f("fk_webhook_deliveries_monitor_monitors"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint("delivery_id", name=op.f("uq_webhook_deliveries_delivery_id")),
    )
    op.create_index("ix_webhook_deliveries_state_next_attempt_at", "webhook_deliveries", ["state", "next_attempt_at"])
    op.create_index("ix_webhook_deliveries_monitor_id", "webhook_deliveries", ["monitor", "id"])
    op.create_table(
        "webhook_attempts",
        sa.Column("id", Key, autoincrement=True, nullable=False),
        sa.Column("delivery", Key, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("attempted_at", Moment, nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(64), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
        sa.UniqueConstraint("delivery", "attempt", name=op.f("uq_webhook_attempts_delivery_attempt")),
    )


def downgrade() -> None:
    op.drop_table("webhook_attempts")
    op.drop_index("ix_webhook_deliveries_monitor_id", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_state_next_attempt_at", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_monitor_runs_monitor_id", table_name="monitor_runs")
    op.drop_table("monitor_runs")
    op.drop_index("ix_monitors_state_next_due_at", table_name="monitors")
    op.drop_table("monitors")
