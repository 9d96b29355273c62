"""day_digests: per server and past UTC day, what a history read takes of that day's runs

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 21:50:00.000000

Empty at first: each digest is written by the first history read that needs it
(:mod:`app.history.digests`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

Key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "day_digests",
        sa.Column("server", Key, nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("digest", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["server"], ["servers.id"], name=op.f("fk_day_digests_server_servers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("server", "day", name=op.f("pk_day_digests")),
    )


def downgrade() -> None:
    op.drop_table("day_digests")
