"""monitor_runs.started_at: when a run's job began to contact its target

Revision ID: 0010
Revises: 0009
Create Date: 2027-02-03 12:00:00.000000

A probe job of a monitor run marks its run started before it contacts the target, and only
while the run has no outcome and its monitor is not deleted (:mod:`app.monitors.store`). A run
handed out but never started is the one a lost-run search gives back to its block, and the one
a deleted monitor's runs cancel; a started run is never given back, so a run is either
performed and charged or not performed and refunded. Runs in flight at the upgrade count as
started (they may be running).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("monitor_runs") as table:
        table.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE monitor_runs SET started_at = claimed_at WHERE status IS NULL")


def downgrade() -> None:
    with op.batch_alter_table("monitor_runs") as table:
        table.drop_column("started_at")
