"""monitor_runs.claimed_at, and the runs still waiting for their outcome indexed apart

Revision ID: 0009
Revises: 0008
Create Date: 2027-01-27 12:00:00.000000

Each claim of due monitor runs also looks for runs handed out long ago whose outcome was never
heard, and gives them back to their block (:mod:`app.monitors.store`). How long ago counts from
when a run was handed out (``claimed_at``), not when it was due: a monitor that fell behind is
handed out late. Runs in flight at the upgrade take their due time as that moment. A partial
index on ``claimed_at`` over the rows with no status yet keeps the search to the few runs in
flight, however many finished runs the table holds.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("monitor_runs") as table:
        table.add_column(sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE monitor_runs SET claimed_at = due_at WHERE status IS NULL")
    unreported = sa.text("status IS NULL")
    op.create_index(
        "ix_monitor_runs_unreported",
        "monitor_runs",
        ["claimed_at"],
        postgresql_where=unreported,
        sqlite_where=unreported,
    )


def downgrade() -> None:
    op.drop_index("ix_monitor_runs_unreported", table_name="monitor_runs")
    with op.batch_alter_table("monitor_runs") as table:
        table.drop_column("claimed_at")
