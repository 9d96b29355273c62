"""monitor_runs: the runs still waiting for their outcome, indexed apart

Revision ID: 0009
Revises: 0008
Create Date: 2027-01-27 12:00:00.000000

Each claim of due monitor runs also looks for runs handed out long ago whose outcome was never
heard, and gives them back to their block (:mod:`app.monitors.store`). A partial index on
``due_at`` over the rows with no status yet keeps that search to the few runs in flight, however
many finished runs the table holds.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    unreported = sa.text("status IS NULL")
    op.create_index(
        "ix_monitor_runs_unreported",
        "monitor_runs",
        ["due_at"],
        postgresql_where=unreported,
        sqlite_where=unreported,
    )


def downgrade() -> None:
    op.drop_index("ix_monitor_runs_unreported", table_name="monitor_runs")
