"""runs: the history index covers the runs a history read sums up; changes: newest first by id too

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 20:40:00.000000

- ``ix_runs_server_history`` (server, observed_at, status, reason, latency_ms) replaces
  ``ix_runs_server_observed_at``: the history read (:mod:`app.history.window`) is an index-only
  scan, not one heap page per run (25,920 pages for a server checked every 5 minutes).
- ``ix_changes_server_observed_at_id`` (server, observed_at, id) replaces
  ``ix_changes_server_observed_at``: the newest changes of a server are read in the index's order
  (``observed_at``, then ``id``) and stop at the limit, instead of all being read and sorted.

Building the runs index takes about half a minute per 10 million runs on PostgreSQL (writes wait
meanwhile; ``serve`` does not start until the upgrade is done).
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_runs_server_history", ["server", "observed_at", "status", "reason", "latency_ms"], unique=False
        )
        batch_op.drop_index("ix_runs_server_observed_at")

    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.create_index("ix_changes_server_observed_at_id", ["server", "observed_at", "id"], unique=False)
        batch_op.drop_index("ix_changes_server_observed_at")


def downgrade() -> None:

    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.create_index("ix_changes_server_observed_at", ["server", "observed_at"], unique=False)
        batch_op.drop_index("ix_changes_server_observed_at_id")

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index("ix_runs_server_observed_at", ["server", "observed_at"], unique=False)
        batch_op.drop_index("ix_runs_server_history")
