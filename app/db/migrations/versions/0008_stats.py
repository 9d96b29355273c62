"""runs.handshake, runs.metadata_published, runs.tool_count, and stats_snapshots: the public statistics

Revision ID: 0008
Revises: 0007
Create Date: 2027-01-20 12:00:00.000000

Three facts of a run that lived only in its compressed result become columns, so the statistics
(:mod:`app.stats`) read them without opening a blob: the request that completed the handshake
(``server/discover`` or ``initialize``), whether protected resource metadata (RFC 9728) was
found, and the number of tools listed. The newest run of every server is filled from its
stored result here (older runs keep ``NULL``: the statistics read only the newest).
``stats_snapshots`` holds the statistics last computed (:mod:`app.db.tables.stats`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from app.db.facts import facts_of

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

Moment = sa.DateTime(timezone=True)
BATCH = 500


def upgrade() -> None:
    with op.batch_alter_table("runs") as table:
        table.add_column(sa.Column("handshake", sa.String(16), nullable=True))
        table.add_column(sa.Column("metadata_published", sa.Boolean(), nullable=True))
        table.add_column(sa.Column("tool_count", sa.Integer(), nullable=True))
    op.create_table(
        "stats_snapshots",
        sa.Column("name", sa.String(16), nullable=False),
        sa.Column("computed_at", Moment, nullable=True),
        sa.Column("claimed_at", Moment, nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_stats_snapshots")),
    )
    _fill_latest()


def _fill_latest() -> None:
    """The newest run of each server gets its facts from its stored result."""
    connection = op.get_bind()
    runs = sa.table(
        "runs",
        sa.column("id", sa.BigInteger()),
        sa.column("result", sa.LargeBinary()),
        sa.column("handshake", sa.String()),
        sa.column("metadata_published", sa.Boolean()),
        sa.column("tool_count", sa.Integer()),
    )
    servers = sa.table("servers", sa.column("latest_run", sa.BigInteger()))
    last = 0
    while True:
        rows = connection.execute(
            sa.select(runs.c.id, runs.c.result)
            .where(runs.c.id.in_(sa.select(servers.c.latest_run).where(servers.c.latest_run.is_not(None))))
            .where(runs.c.id > last)
            .order_by(runs.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        for key, blob in rows:
            found = facts_of(blob, compressed=True)
            connection.execute(
                sa.update(runs)
                .where(runs.c.id == key)
                .values(handshake=found.handshake, metadata_published=found.metadata_published,
                        tool_count=found.tool_count)
            )  # fmt: skip
        last = rows[-1][0]


def downgrade() -> None:
    op.drop_table("stats_snapshots")
    with op.batch_alter_table("runs") as table:
        table.drop_column("tool_count")
        table.drop_column("metadata_published")
        table.drop_column("handshake")
