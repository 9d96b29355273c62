"""indexes for pruning: the rows that point to a run or a tool set are found by index

Without them, PostgreSQL's foreign-key checks scan ``changes`` once per run deleted (the cascade
of ``changes.run``) and ``runs``/``changes`` once per tool set deleted: a batch of 2,000 runs
over 20,000 changes took 5 s, and grows with the table.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 20:30:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

INDEXES = (
    ("runs", "ix_runs_toolset", ["toolset"]),
    ("changes", "ix_changes_run", ["run"]),
    ("changes", "ix_changes_from_toolset", ["from_toolset"]),
    ("changes", "ix_changes_to_toolset", ["to_toolset"]),
)


def upgrade() -> None:
    for table, name, columns in INDEXES:
        op.create_index(name, table, columns, unique=False)


def downgrade() -> None:
    for table, name, _columns in reversed(INDEXES):
        op.drop_index(name, table_name=table)
